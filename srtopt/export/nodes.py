"""What every writer of :mod:`srtopt.export` reads from a fitted tree: its
:class:`~srtopt.view.FittedTree`, the nodes a view draws, the feature names, the
coefficients in original units, the row counts and the ranked terms of a formula.

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

import re

import numpy as np

from ..routing import class_probabilities
from ..tree import Tree
from ..view import FittedTree

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


def original_units(model):
    """(split, leaf): the oblique splits and leaf models in raw feature units.

    ``split`` (2^D - 1, p + 1): row t-1 holds (a_0, a_1..a_p), node t goes left
    iff a_0 + a . x >= 0.  ``leaf`` (2^D, p + 1): row holds (c_0, c_1..c_p),
    y = c_0 + c . x; for a classifier, (2^D, K', q): leaf l's K' class scores, each
    (c_0, c_1..c_p) (logistic leaves) or (c_0,) (constant leaves).  See the module
    docstring for the formulas.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor or SoftClassificationTree
        A fitted oblique tree.

    Returns
    -------
    split : ndarray of shape (2^D - 1, p + 1)
        Row t - 1: (a_0, a_1..a_p) of branch node t.
    leaf : ndarray of shape (2^D, p + 1), or (2^D, K', q) for a classifier
        Row t - 2^D: (c_0, c_1..c_p) of leaf t, y in its own units; a classifier's class scores.

    Raises
    ------
    ValueError
        If ``model`` is a MILOTreeRegressor (already in original units) or not a fitted tree.
    """
    model = as_view(model)
    if model.kind != "oblique":
        raise ValueError("original_units applies to oblique trees (omega_/beta_); MILOTreeRegressor "
                         "stores its thresholds and leaf models in original units already")
    x_min, span, _, _ = scaling_of(model)
    p = model.n_features_in_
    a = model.omega_[:, 1:] / (p * span)
    split = np.column_stack([model.omega_[:, 0] - a @ x_min, a])
    leaves = model.leaf_model_
    scores = linear_in_original(leaves.linear_part(model.beta_), x_min, span, *leaves.link.score_units(model.scaler_))
    return split, scores if model.is_classifier else scores[:, 0]


def linear_in_original(B, x_min, span, y_mean, y_std):
    """Linear models of x_s, rows (b_0, b_1..b_p) of ``B`` (..., p + 1), in raw units: c_j = std
    b_j / span_j, c_0 = mean + std (b_0 - sum_j b_j min_j / span_j); rows (b_0,) (a constant
    classification leaf's scores) become mean + std b_0."""
    if B.shape[-1] == 1:
        return y_mean + y_std * B
    c = y_std * B[..., 1:] / span
    return np.concatenate([(y_mean + y_std * (B[..., 0] - (B[..., 1:] / span) @ x_min))[..., None], c], axis=-1)


#: points of the training range (scaled) on which a curve's effect is read
CURVE_GRID = np.linspace(0.0, 1.0, 65)


def curve_effects(model, coef) -> tuple[float, np.ndarray, np.ndarray]:
    """A score vector ``coef`` (q,) of a leaf with curves, read as u = u_0 + sum_j f_j(x_j) with every f_j 0 at the
    middle of its feature's training range: (u_0, the lowest and the highest f_j over that range (p,)), in
    scaled units.  A feature without a curve has f_j = b_j (x_s - 1/2)."""
    basis, p = model.leaf_model_.basis, model.n_features_in_
    low, high, middle = np.zeros(p), np.zeros(p), 0.0
    for j in range(p):
        values = basis.curve(j, coef, CURVE_GRID) if j in basis.curves else coef[1 + j] * CURVE_GRID
        at_middle = float(values[len(CURVE_GRID) // 2])
        middle += at_middle
        low[j], high[j] = values.min() - at_middle, values.max() - at_middle
    return float(coef[0] + middle), low, high


def score_terms(model, coef, k, names, top, units) -> tuple[str, list[str]]:
    """("name = b_0", its terms) of the vector ``coef`` (q,) of score k in ``units`` ("original": mean + std u,
    the link's units; "scaled": u itself), named by the link: the linear terms of a linear or constant basis
    ranked as :data:`RANKING` says ("+1.2*x"), or for a basis with curves the value at the middle of every
    feature's training range and each feature's effect over that range, "+f(x)[lowest, highest]", the largest
    first; "... (k more)" for the terms past ``top``."""
    leaves = model.leaf_model_
    mean, std = leaves.link.score_units(model.scaler_) if units == "original" else (0.0, 1.0)
    shown = leaves.link.score_names(model.classes_, scaled=units == "scaled")[k]
    if not leaves.curved(model.beta_):
        x_min, span, _, _ = scaling_of(model)
        linear = leaves.basis.linear_part(coef)
        c = linear_in_original(linear, x_min, span, mean, std) if units == "original" else linear
        terms, rest = ranked_terms(c[1:], linear[1:], names, top)
        return f"{shown} = {fmt(c[0])}", terms + ([f"... ({rest} more)"] if rest else [])
    middle, low, high = curve_effects(model, coef)
    order = np.argsort(-(high - low), kind="stable")
    order = order[(high - low)[order] > 0]
    kept = order if top is None else order[:top]
    terms = [f"+f({names[j]})[{std * low[j]:+.4g}, {std * high[j]:+.4g}]" for j in kept]
    rest = [f"... ({len(order) - len(kept)} more)"] if len(order) > len(kept) else []
    return f"{shown} = {fmt(mean + std * middle)} (mid-range)", terms + rest


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


def leaf_scores(model, X, y, tree):
    """Per-leaf MSE and R^2 of the HBP leaf's own model on the rows routed there."""
    leaves = np.asarray(model.apply(X))
    pred = np.asarray(model.predict(X), dtype=float)
    mse, r2 = np.full(tree.n_leaves, np.nan), np.full(tree.n_leaves, np.nan)
    for t in tree.leaves:
        rows = leaves == t
        if not rows.any():
            continue
        sse = np.mean((y[rows] - pred[rows]) ** 2)
        sst = np.var(y[rows])
        mse[tree.leaf_index(t)] = sse
        if rows.sum() > 1 and sst > 0:
            r2[tree.leaf_index(t)] = 1 - sse / sst
    return mse, r2


# ------------------------------------------------------------------ classifiers
def class_names(model) -> list[str]:
    """A classifier's class labels as text (column names, formulas: "p(B)")."""
    return [str(c) for c in model.classes_]


def class_titles(model) -> list[str]:
    """A classifier's class labels as a list of shares or counts writes them: the label, or "class 1"
    for a label that reads as a number ("82.0% class 1", not "82.0% 1")."""
    return [f"class {name}" if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|True|False", name) else name
            for name in class_names(model)]


def leaf_class_mix(model, X=None) -> np.ndarray:
    """(2^D, K): the class mix each leaf of a classifier shows: a constant leaf's probabilities, a
    logistic leaf's averaged over its training rows (``leaf_class_proba_``; NaN where unknown) or,
    with ``X``, over the rows of X it receives by HBP."""
    if X is not None and model.leaf_kind != "constant":
        tree = tree_of(model)
        rows = tree.leaf_rows(np.asarray(model.apply(X)))
        mass = np.zeros((tree.n_leaves, model.n_classes_))
        np.add.at(mass, rows, model.predict_proba(X))
        with np.errstate(invalid="ignore"):
            return mass / np.bincount(rows, minlength=tree.n_leaves)[:, None]
    if model.leaf_kind == "constant":
        return class_probabilities(model.class_scores()[..., 0], model.n_classes_)
    mix = model.leaf_class_proba_
    return np.full((tree_of(model).n_leaves, model.n_classes_), np.nan) if mix is None else np.asarray(mix)


def leaf_class_counts(model, X=None, y=None):
    """(2^D, K): the rows of each class each leaf receives by HBP: those stored at fit (weighted
    training rows), or those of ``X`` with labels ``y``; None if unknown (``X`` without ``y``)."""
    if X is None:
        counts = model.leaf_class_counts_
        return None if counts is None else np.asarray(counts)
    if y is None:
        return None
    tree, index = tree_of(model), {label: k for k, label in enumerate(model.classes_.tolist())}
    unknown = [label for label in np.asarray(y).tolist() if label not in index]
    if unknown:
        raise ValueError(f"y holds the label {unknown[0]!r}, which is not a class of the model (classes: "
                         f"{', '.join(class_names(model))})")
    codes = np.array([index[label] for label in np.asarray(y).tolist()], dtype=np.int64)
    counts = np.zeros((tree.n_leaves, model.n_classes_))
    np.add.at(counts, (tree.leaf_rows(np.asarray(model.apply(X))), codes), 1.0)
    return counts


def classes_note(model) -> str:
    """What a title adds for a classifier: ", logistic leaves, 3 classes: A, B, C" ("" for a regressor)."""
    if not model.is_classifier:
        return ""
    return f", {model.leaf_model_.describe()}, {model.n_classes_} classes: {', '.join(class_names(model))}"


def share_text(v, name) -> str:
    """A class's share as the views write it: "82.0% B"."""
    return f"{100 * v:.1f}% {name}"


def count_text(v, name) -> str:
    """A class's rows as the views write them: "120 B"."""
    return f"{v:g} {name}"


def ranked_classes(values, names, top, text=share_text, nonzero=False) -> list[str]:
    """Entries text(value, name) of the classes in decreasing order of ``values``, the ``top`` first
    (None: all) and "... (k more)" for the rest; NaN values (a leaf without rows) and, if
    ``nonzero``, zero ones are left out; ["no rows"] when nothing is left."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable")
    order = order[~np.isnan(values[order]) & ((values[order] != 0) if nonzero else True)]
    shown = order if top is None else order[:top]
    rest = [f"... ({len(order) - len(shown)} more)"] if len(order) > len(shown) else []
    return [text(values[k], names[k]) for k in shown] + rest if len(order) else ["no rows"]


def classes_text(values, names, top, text=share_text, nonzero=False) -> str:
    """:func:`ranked_classes` on one line."""
    return ", ".join(ranked_classes(values, names, top, text, nonzero))


def shown_scores(model, mix_row, top) -> list[int]:
    """The class scores a view shows for a leaf with class mix ``mix_row``: the one logit of two
    classes, else those of the ``top`` classes of largest share (None: all)."""
    if model.n_classes_ == 2:
        return [0]
    order = np.argsort(-np.nan_to_num(mix_row, nan=-np.inf), kind="stable")
    return [int(k) for k in (order if top is None else order[:top])]


def class_rule(model) -> str:
    """One sentence: how a classifier's leaves give the class probabilities and what a view shows."""
    two = model.n_classes_ == 2
    scores = (f"the leaf's logit p({class_names(model)[1]}) = log(p({class_names(model)[1]}) / "
              f"p({class_names(model)[0]}))" if two else "p = softmax of the leaf's class scores")
    if model.leaf_kind == "constant":
        return (f"constant leaves: each leaf holds one class-probability vector ({scores}, a constant); each "
                f"leaf shows it, then its training rows by class (HBP)")
    shape = "linear in x" if model.leaf_kind == "linear" else "a curve per feature"
    return (f"{model.leaf_model_.describe()}: {scores}, {shape}; each leaf shows its class probabilities averaged "
            f"over its training rows, its training rows by class (HBP), then its class scores")


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


def node_labels(model, feature_names, top, X, units, folded=()):
    """{node: label lines} for DOT and matplotlib rendering: one coordinate system, one term
    per line, terms in the order :data:`RANKING` states."""
    tree, names = tree_of(model), feature_names_of(model, feature_names)
    counts = node_counts(model, X)
    labels = {}
    kind = model.kind
    if kind == "oblique":
        split = original_units(model)[0] if units == "original" else model.omega_

    def term_lines(coef, scaled):
        terms, rest = ranked_terms(coef, scaled, names, top)
        return terms + ([f"... ({rest} more)"] if rest else [])

    for t in range(1, 2 ** (tree.depth + 1)):
        head = f"{'leaf' if tree.is_leaf(t) else 'node'} {t}"
        lines = [head + (f"  n={counts[t - 1]}" if counts is not None else "")]
        if t in folded:
            labels[t] = lines + [folded_text(model, t)]
            continue
        y_name = "y" if units == "original" else "y_s"
        if kind == "milo":
            if tree.is_leaf(t):
                i = tree.leaf_index(t)
                scaled = model.leaf_coef_scaled_[i]
                b0, b = ((model.leaf_intercept_[i], model.leaf_coef_[i]) if units == "original"
                         else (model.leaf_intercept_scaled_[i], scaled))
                lines += [f"{y_name} = {fmt(b0)}"] + term_lines(b, scaled)
            else:
                j = int(model.split_feature_[t - 1])
                thr = model.split_threshold_ if units == "original" else model.split_threshold_scaled_
                lines.append("no split" if j < 0 else f"{names[j]} < {thr[t - 1]:.4g}")
        elif tree.is_leaf(t) and model.is_classifier:
            lines += class_leaf_lines(model, tree.leaf_index(t), names, top, units, X)
        elif tree.is_leaf(t):
            head, terms = score_terms(model, model.beta_[tree.leaf_index(t)], 0, names, top, units)
            lines += [head] + terms
        else:
            a = split[tree.branch_index(t)]
            lines.append("left if " + fmt(a[0]) + ("" if units == "original"
                                                    else f" + (1/{model.n_features_in_}) *"))
            terms = term_lines(a[1:], model.omega_[tree.branch_index(t), 1:]) or ["+0"]
            lines += terms + [">= 0"] if terms[-1].endswith("more)") else terms[:-1] + [terms[-1] + " >= 0"]
        labels[t] = lines
    return labels


def class_leaf_lines(model, i, names, top, units, X=None) -> list[str]:
    """The label lines of a classifier's leaf of row i (DOT, plot): its ``top`` classes by share,
    one per line, its training rows by class (not with ``X``), and for a logistic leaf the class
    scores of its ``top`` classes (``units``), one term per line, ranked as :data:`RANKING` says."""
    mix, counts, classes = leaf_class_mix(model, X)[i], leaf_class_counts(model, X), class_titles(model)
    lines = ranked_classes(mix, classes, top)
    if counts is not None:
        lines.append("rows: " + classes_text(counts[i], classes, top, count_text, nonzero=True))
    if model.leaf_kind != "constant":
        scores = model.class_scores()[i]
        for k in shown_scores(model, mix, top):
            head, terms = score_terms(model, scores[k], k, names, top, units)
            lines += [head] + [f"  {term}" for term in terms]
    return lines


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


__all__ = ["RANKING", "UNITS", "original_units", "reachable_nodes"]
