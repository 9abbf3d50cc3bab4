"""What every writer of :mod:`srtopt.export` reads from a fitted tree, whatever its leaves: its
:class:`~srtopt.view.FittedTree`, the nodes a view draws, the feature names, the splits in
original units, a leaf score's formula, the row counts and the ranked terms of a formula.  What
differs between value leaves and class leaves is read by :mod:`.leaf_readers`.

Two coordinate systems, always labelled:

* **scaled**: the space the model is trained in, x_s = (x - min) / (max - min)
  in [0, 1] (training statistics; a constant column has span 1) and
  y_s = (y - mean) / std.  A split goes left iff
  omega_0 + (1/p) sum_j omega_j x_s,j >= 0 and a leaf predicts
  y_s = beta_0 + sum_j beta_j x_s,j.
* **original**: the same hyperplanes and leaf models written in the raw
  feature units, from substituting x_s,j = (x_j - min_j) / span_j:
  split  a_0 + sum_j a_j x_j >= 0 with a_j = omega_j / (p span_j),
  a_0 = omega_0 - sum_j a_j min_j (same sign, so the same side goes left);
  leaf  y = c_0 + sum_j c_j x_j with c_j = std beta_j / span_j,
  c_0 = mean + std (beta_0 - sum_j beta_j min_j / span_j).

A classifier's leaf l gives the class probabilities p_l(x) = softmax of its K' class scores
(K' = 1 for two classes: the score is logit p(classes_[1]), the first class's being 0); a score is
b_0 + sum_j b_j x_s,j (logistic leaves) or b_0 (constant leaves), written in raw units as the leaf
models above with mean 0 and std 1 (a classifier's y statistics).
"""

from __future__ import annotations

import numpy as np

from ..tree import Tree
from ..view import FittedTree
from .curves import curve_effects, curve_frame, pair_effects

UNITS = ("original", "scaled")


# ----------------------------------------------------------------- model access
def as_view(model) -> FittedTree:
    """The :class:`~srtopt.view.FittedTree` of a fitted estimator (itself if it is one already)."""
    if isinstance(model, FittedTree):
        return model
    if hasattr(model, "best_estimator_"):
        raise ValueError(f"{type(model).__name__} wraps the tree it chose: pass model.best_estimator_")
    try:
        return model.tree_view()
    except AttributeError as exc:  # no tree_view, or scikit-learn's NotFittedError (an AttributeError)
        raise ValueError(f"{type(model).__name__} is not a fitted SoftRegressionTree, ORRTRegressor, "
                         f"MILOTreeRegressor or SoftClassificationTree (call fit first)") from exc


def tree_of(model) -> Tree:
    return Tree(int(model.depth))


def reachable_nodes(model) -> np.ndarray:
    """Mask (index t - 1) of the nodes of a fitted tree that some input reaches.

    SRT: a split with all slopes zero sends every row one way
    (:func:`srtopt.view.oblique_reach`; SoftRegressionTree closes the splits that
    route no training row to one side); MILO: a node without a split sends every row right;
    ORRT: every node, as its prediction sums over all leaves.  The views draw the reachable
    nodes only.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor, MILOTreeRegressor or FittedTree
        A fitted tree, or its view (:func:`srtopt.persistence.read_view` reads one from a file).

    Returns
    -------
    ndarray of bool, shape (2^(D+1) - 1,)
        True at index t - 1 when node t is reachable.

    Raises
    ------
    ValueError
        If ``model`` is not a fitted tree of these classes (a SoftRegressionTreeCV: pass its
        ``best_estimator_``).
    """
    return as_view(model).reach


def drawn_tree(model, max_depth=None):
    """(root, {split: (left, right)}, folded) of the tree a view draws: unreachable subtrees
    left out and every split that sends all rows one way replaced by the node it sends them
    to; with ``max_depth``, the splits ``max_depth`` drawn levels below the root are not
    expanded but ``folded`` (a view draws each as one box for its subtree)."""
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0):
        raise ValueError(f"max_depth must be None or an int >= 0, got {max_depth!r}")
    reach, tree = model.reach, tree_of(model)

    def shown(t):
        while tree.is_branch(t) and reach[2 * t - 1] != reach[2 * t]:
            t = 2 * t if reach[2 * t - 1] else 2 * t + 1
        return t

    children, folded, stack = {}, set(), [(shown(1), 0)]
    while stack:
        t, level = stack.pop()
        if tree.is_leaf(t):
            continue
        if max_depth is not None and level >= max_depth:
            folded.add(t)
            continue
        children[t] = (shown(2 * t), shown(2 * t + 1))
        stack.extend((child, level + 1) for child in children[t])
    return shown(1), children, folded


def folded_text(model, t) -> str:
    """What a view writes for a folded split t: the size of its subtree."""
    reach, tree = model.reach, tree_of(model)
    leaves = sum(bool(reach[leaf - 1]) for leaf in tree.descendants_leaves(t))
    return f"subtree of {leaves} leaves, folded"


def pruned_note(model) -> str | None:
    """One line naming the subtrees no input reaches (None when every node is reachable)."""
    reach, tree = model.reach, tree_of(model)
    roots = [t for t in range(2, 2 ** (tree.depth + 1)) if not reach[t - 1] and reach[t // 2 - 1]]
    if not roots:
        return None
    many = len(roots) > 1
    why = ("the node above has no split and sends every row right" if model.kind == "milo" else
           f"no training row reached {'them' if many else 'it'}: the split above sends every row to the other side")
    return (f"pruned: the subtree{'s' if many else ''} at node{'s' if many else ''} {', '.join(map(str, roots))} "
            f"({why}; that node is not drawn); {int(reach[np.asarray(tree.leaves) - 1].sum())} of "
            f"{tree.n_leaves} leaves remain")


def feature_names_of(model, feature_names=None) -> list[str]:
    p = model.n_features_in_
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    names = [str(n) for n in feature_names] if feature_names is not None else [f"x{j}" for j in range(p)]
    if len(names) != p:
        raise ValueError(f"feature_names has {len(names)} names, the model has {p} features")
    return names


def scaling_of(model):
    """(x_min, x_span, y_mean, y_std) of the model's internal scaling."""
    s = model.scaler_
    return s.x_min, s.x_scale, s.y_mean, s.y_std


def original_splits(model) -> np.ndarray:
    """The oblique splits in raw feature units, shape (2^D - 1, p + 1): row t - 1 holds (a_0, a_1..a_p) of
    branch node t, which goes left iff a_0 + a . x >= 0 (module docstring); the splits' half of
    :func:`~.leaf_readers.original_units`.  ValueError for a MILO tree (already in original units)."""
    model = as_view(model)
    if model.kind != "oblique":
        raise ValueError("original_units applies to oblique trees (omega_/beta_); MILOTreeRegressor "
                         "stores its thresholds and leaf models in original units already")
    x_min, span, _, _ = scaling_of(model)
    a = model.omega_[:, 1:] / (model.n_features_in_ * span)
    return np.column_stack([model.omega_[:, 0] - a @ x_min, a])


def linear_in_original(B, x_min, span, y_mean, y_std):
    """Linear models of x_s, rows (b_0, b_1..b_p) of ``B`` (..., p + 1), in raw units: c_j = std
    b_j / span_j, c_0 = mean + std (b_0 - sum_j b_j min_j / span_j); rows (b_0,) (a constant
    classification leaf's scores) become mean + std b_0."""
    if B.shape[-1] == 1:
        return y_mean + y_std * B
    c = y_std * B[..., 1:] / span
    return np.concatenate([(y_mean + y_std * (B[..., 0] - (B[..., 1:] / span) @ x_min))[..., None], c], axis=-1)


def score_terms(model, coef, k, names, top, units) -> tuple[str, list[str]]:
    """("name = b_0", its terms) of the vector ``coef`` (q,) of score k in ``units`` ("original": mean + std u,
    the link's units; "scaled": u itself), named by the link: the linear terms of a linear or constant basis
    ranked as :data:`RANKING` says ("+1.2*x"), or for a basis with curves the value at the median row and each
    feature's effect over the bulk of its training rows, "+f(x)[lowest, highest]", and each pair's,
    "+f(a & b)[lowest, highest]", the largest first (:mod:`.curves`); "... (k more)" for the terms past ``top``."""
    leaves = model.leaf_model_
    mean, std = leaves.link.score_units(model.scaler_) if units == "original" else (0.0, 1.0)
    shown = leaves.link.score_names(model.classes_, scaled=units == "scaled")[k]
    if not leaves.curved(model.beta_):
        x_min, span, _, _ = scaling_of(model)
        linear = leaves.basis.linear_part(coef)
        c = linear_in_original(linear, x_min, span, mean, std) if units == "original" else linear
        terms, rest = ranked_terms(c[1:], linear[1:], names, top)
        return f"{shown} = {fmt(c[0])}", terms + ([f"... ({rest} more)"] if rest else [])
    frame = curve_frame(leaves.basis, model.n_features_in_)
    base, low, high = curve_effects(leaves.basis, coef, frame)
    effects = [(names[j], low[j], high[j]) for j in range(len(low))] + [
        (f"{names[j]} & {names[k]}", a, b) for j, k, a, b in pair_effects(leaves.basis, coef, frame)]
    order = [effect for effect in sorted(effects, key=lambda e: e[1] - e[2]) if effect[2] > effect[1]]  # stable
    kept = order if top is None else order[:top]
    terms = [f"+f({name})[{std * a:+.4g}, {std * b:+.4g}]" for name, a, b in kept]
    rest = [f"... ({len(order) - len(kept)} more)"] if len(order) > len(kept) else []
    return f"{shown} = {fmt(mean + std * base)} ({frame.baseline})", terms + rest


def score_formula(model, coef, k, names, top, units) -> str:
    """:func:`score_terms` on one line."""
    head, terms = score_terms(model, coef, k, names, top, units)
    return " ".join([head] + terms)


def node_counts(model, X=None):
    """Rows routed through each node (index t-1): from X if given, else the counts stored at fit."""
    tree = tree_of(model)
    if X is not None:
        from .. import kernels

        return kernels.node_counts(np.asarray(model.apply(X)), tree)
    counts = getattr(model, "node_counts_", None)
    return None if counts is None else np.asarray(counts)


#: How every view (text, DOT, plot, HTML) orders the terms of a split or leaf.
RANKING = ("terms in order of |raw coefficient| x training range of the feature, i.e. of |scaled "
           "coefficient| (scale-free: the same order in both units)")


def fmt(v) -> str:
    return f"{v:+.4g}"


def ranked_terms(coef, scaled, names, top):
    """Terms "+1.2*name" of ``coef`` in order of the scale-free weight |scaled| (the same row in
    the scaled space), the ``top`` first (None: all), and how many nonzero terms were left out."""
    nonzero = np.flatnonzero(scaled)
    order = nonzero[np.argsort(-np.abs(scaled[nonzero]), kind="stable")]
    shown = order if top is None else order[:top]
    return [f"{fmt(coef[j])}*{_term_name(names[j])}" for j in shown], len(order) - len(shown)


def _term_name(name: str) -> str:
    """An encoded column's name in a term: "[Home = owner]", "[Age (missing)]" (a plain name as it is)."""
    return f"[{name}]" if " = " in name or name.endswith(" (missing)") else name


def terms_text(coef, scaled, names, top) -> str:
    """The ranked terms on one line, "... (k more)" for those left out."""
    terms, rest = ranked_terms(coef, scaled, names, top)
    return " ".join(terms + ([f"... ({rest} more)"] if rest else [])) or "+0"


def shown_lines(units, **lines) -> list[str]:
    """The ``lines`` {units: text} that ``units`` ("both", "original" or "scaled") shows, in their order."""
    return [text for kind, text in lines.items() if units in ("both", kind)]


def constraint_table(model) -> list[tuple[str, ...]]:
    """The rows of the constraints' table (``constraint_report_``) as text, the header first (empty
    without constraints): each row's bound, its value for the soft model and for ``predict()`` on
    the training data, whether it holds, and, when the report has them (SoftRegressionTreeCV), the
    ``predict()`` values on the held-out folds (their mean, then each fold's)."""
    report = getattr(model, "constraint_report_", None) or []
    if not report:
        return []
    held = any("held_out" in row for row in report)
    header = ("constraint", "row", "bound", "soft model", "predict()", "holds") + (("held-out predict()",) if held else ())
    rows = [header]
    for r in report:
        cells = (r["constraint"], r["row"], r["bound"], f"{r['soft']:.6g}", f"{r['predict']:.6g}",
                 "yes" if r["holds"] else "NO")
        if held:
            folds = r.get("held_out") or []
            cells += (f"{np.mean(folds):.4g} ({', '.join(f'{v:.4g}' for v in folds)})" if folds else "",)
        rows.append(cells)
    return rows


def drawn_nodes(root, children) -> list[int]:
    """The nodes a view draws, in increasing order."""
    return sorted({root, *(child for pair in children.values() for child in pair)})


__all__ = ["RANKING", "UNITS", "reachable_nodes"]
