"""Reading a fitted tree: node table, text, Graphviz DOT and the HBP decision path.

Works for :class:`~srtopt.SoftRegressionTree` and :class:`~srtopt.ORRTRegressor`
(both have oblique splits ``omega_`` and linear leaves ``beta_`` in the scaled
space) and, for the text export and the decision path, for
:class:`~srtopt.MILOTreeRegressor` (axis-aligned splits).  ORRT predicts with the
probability-weighted sum of all leaves; the routing shown for it is the HBP path
of the same splits, meaningful for display only.

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
"""

from __future__ import annotations

import numpy as np

from .tree import Tree
from .view import FittedTree

UNITS = ("original", "scaled")


# ----------------------------------------------------------------- model access
def _view(model) -> FittedTree:
    """The :class:`~srtopt.view.FittedTree` of a fitted estimator (itself if it is one already)."""
    if isinstance(model, FittedTree):
        return model
    if hasattr(model, "best_estimator_"):
        raise ValueError(f"{type(model).__name__} wraps the tree it chose: pass model.best_estimator_")
    try:
        return model.tree_view()
    except AttributeError as exc:  # no tree_view, or scikit-learn's NotFittedError (an AttributeError)
        raise ValueError(f"{type(model).__name__} is not a fitted SoftRegressionTree, ORRTRegressor or "
                         f"MILOTreeRegressor (call fit first)") from exc


def _tree(model) -> Tree:
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
    return _view(model).reach


def _structure(model, max_depth=None):
    """(root, {split: (left, right)}, folded) of the tree a view draws: unreachable subtrees
    left out and every split that sends all rows one way replaced by the node it sends them
    to; with ``max_depth``, the splits ``max_depth`` drawn levels below the root are not
    expanded but ``folded`` (a view draws each as one box for its subtree)."""
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0):
        raise ValueError(f"max_depth must be None or an int >= 0, got {max_depth!r}")
    reach, tree = model.reach, _tree(model)

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


def _folded_text(model, t) -> str:
    """What a view writes for a folded split t: the size of its subtree."""
    reach, tree = model.reach, _tree(model)
    leaves = sum(bool(reach[leaf - 1]) for leaf in tree.descendants_leaves(t))
    return f"subtree of {leaves} leaves, folded"


def _pruned_note(model) -> str | None:
    """One line naming the subtrees no input reaches (None when every node is reachable)."""
    reach, tree = model.reach, _tree(model)
    roots = [t for t in range(2, 2 ** (tree.depth + 1)) if not reach[t - 1] and reach[t // 2 - 1]]
    if not roots:
        return None
    many = len(roots) > 1
    why = ("the node above has no split and sends every row right" if model.kind == "milo" else
           f"no training row reached {'them' if many else 'it'}: the split above sends every row to the other side")
    return (f"pruned: the subtree{'s' if many else ''} at node{'s' if many else ''} {', '.join(map(str, roots))} "
            f"({why}; that node is not drawn); {int(reach[np.asarray(tree.leaves) - 1].sum())} of "
            f"{tree.n_leaves} leaves remain")


def _feature_names(model, feature_names=None) -> list[str]:
    p = model.n_features_in_
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    names = [str(n) for n in feature_names] if feature_names is not None else [f"x{j}" for j in range(p)]
    if len(names) != p:
        raise ValueError(f"feature_names has {len(names)} names, the model has {p} features")
    return names


def _scaling(model):
    """(x_min, x_span, y_mean, y_std) of the model's internal scaling."""
    s = model.scaler_
    return s.x_min, s.x_scale, s.y_mean, s.y_std


def original_units(model):
    """(split, leaf): the oblique splits and leaf models in raw feature units.

    ``split`` (2^D - 1, p + 1): row t-1 holds (a_0, a_1..a_p), node t goes left
    iff a_0 + a . x >= 0.  ``leaf`` (2^D, p + 1): row holds (c_0, c_1..c_p),
    y = c_0 + c . x.  See the module docstring for the formulas.

    Parameters
    ----------
    model : SoftRegressionTree or ORRTRegressor
        A fitted oblique tree.

    Returns
    -------
    split : ndarray of shape (2^D - 1, p + 1)
        Row t - 1: (a_0, a_1..a_p) of branch node t.
    leaf : ndarray of shape (2^D, p + 1)
        Row t - 2^D: (c_0, c_1..c_p) of leaf t, y in its own units.

    Raises
    ------
    ValueError
        If ``model`` is a MILOTreeRegressor (already in original units) or not a fitted tree.
    """
    model = _view(model)
    if model.kind != "oblique":
        raise ValueError("original_units applies to oblique trees (omega_/beta_); MILOTreeRegressor "
                         "stores its thresholds and leaf models in original units already")
    x_min, span, y_mean, y_std = _scaling(model)
    p = model.n_features_in_
    a = model.omega_[:, 1:] / (p * span)
    split = np.column_stack([model.omega_[:, 0] - a @ x_min, a])
    c = y_std * model.beta_[:, 1:] / span
    leaf = np.column_stack([y_mean + y_std * (model.beta_[:, 0] - (model.beta_[:, 1:] / span) @ x_min), c])
    return split, leaf


def _node_counts(model, X=None):
    """Rows routed through each node (index t-1): from X if given, else the counts stored at fit."""
    tree = _tree(model)
    if X is not None:
        from . import kernels

        return kernels.node_counts(np.asarray(model.apply(X)), tree)
    counts = getattr(model, "node_counts_", None)
    return None if counts is None else np.asarray(counts)


def decision_path(model, X):
    """Sparse CSR indicator (n_samples, 2^(D+1) - 1) of the nodes on each row's path.

    Column j is node j + 1 in the paper's numbering (root first, then 2, 3, ...),
    as scikit-learn's ``decision_path``; every row has D + 1 ones, the root's
    column is all ones and the leaf columns reproduce ``apply``.  For SRT the
    path is the HBP path that makes the prediction.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor, MILOTreeRegressor or FittedTree
        A fitted tree, or its view (:func:`srtopt.persistence.read_view` reads one from a file).
    X : array-like of shape (n_samples, p)
        Rows in original feature units.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, 2^(D+1) - 1)
        The int64 node indicator.

    Raises
    ------
    ValueError
        If ``model`` is not a fitted tree of these classes (a SoftRegressionTreeCV: pass its
        ``best_estimator_``), or ``X`` is not valid input for it.
    """
    return _view(model).decision_path(X)


# ------------------------------------------------------------------- summary
def summary(model, X=None, y=None, units="original", feature_names=None):
    """One row per node (paper numbering), as a pandas DataFrame.

    Columns: ``node``, ``kind`` ("split"/"leaf"), ``depth``, ``parent`` (<NA> for
    the root), ``n_samples`` (training rows whose HBP path visits the node,
    stored at fit; or rows of ``X`` when given), ``intercept`` and one column per
    feature (split coefficients of the hyperplane "go left iff intercept + sum >=
    0" for a split, leaf model coefficients for a leaf; ``units`` "original" =
    raw feature units and y's units, "scaled" = ``omega_``/``beta_`` rows as
    stored), ``leaf_mse`` and ``leaf_r2`` (training MSE in y's units and R^2 of
    the leaf's linear model on its rows; with X and y given, on those rows),
    ``reachable`` (False below a split that sends every row to the other side:
    :func:`reachable_nodes`).

    Parameters
    ----------
    model : SoftRegressionTree or ORRTRegressor
        A fitted oblique tree.
    X : array-like of shape (n_samples, p) or None, default=None
        Rows in original units for ``n_samples``, ``leaf_mse`` and ``leaf_r2``; None: the fit-time values.
    y : array-like of shape (n_samples,) or None, default=None
        Targets of the rows of ``X`` (given together with ``X``).
    units : {"original", "scaled"}, default="original"
        Coordinate system of the coefficient columns.
    feature_names : sequence of str or None, default=None
        Names of the p features; None: the model's ``feature_names_in_``, else x0, x1, ...

    Returns
    -------
    pandas.DataFrame
        One row per node 1 .. 2^(D+1) - 1, the columns above.

    Raises
    ------
    ValueError
        If ``model`` is a MILOTreeRegressor or not a fitted tree, ``units`` is unknown, only one of ``X``
        and ``y`` is given, or ``feature_names`` does not have p names.

    Examples
    --------
    >>> import numpy as np
    >>> from srtopt import SoftRegressionTree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 3))
    >>> y = np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2])
    >>> tree = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    >>> table = summary(tree)
    >>> list(table["kind"]), int(table.loc[0, "n_samples"])
    (['split', 'split', 'split', 'leaf', 'leaf', 'leaf', 'leaf'], 200)
    """
    model = _view(model)
    import pandas as pd

    if model.kind != "oblique":
        raise ValueError("summary applies to SoftRegressionTree and ORRTRegressor; use export_text "
                         "for MILOTreeRegressor")
    if units not in UNITS:
        raise ValueError(f"units must be one of {UNITS}, got {units!r}")
    if (X is None) != (y is None):
        raise ValueError("summary needs both X and y, or neither (then the fit-time statistics)")
    tree, names = _tree(model), _feature_names(model, feature_names)
    split, leaf = original_units(model) if units == "original" else (model.omega_, model.beta_)
    counts, reach = _node_counts(model, X), model.reach
    mse, r2 = getattr(model, "leaf_mse_", None), getattr(model, "leaf_r2_", None)
    if X is not None:
        mse, r2 = _leaf_scores(model, X, np.asarray(y, dtype=float), tree)
    rows = []
    for t in range(1, 2 ** (tree.depth + 1)):
        is_leaf = tree.is_leaf(t)
        coef = leaf[tree.leaf_index(t)] if is_leaf else split[tree.branch_index(t)]
        row = {"node": t, "kind": "leaf" if is_leaf else "split", "depth": tree.node_depth(t),
               "parent": tree.parent(t) if t > 1 else None,
               "n_samples": int(counts[t - 1]) if counts is not None else None,
               "intercept": float(coef[0])}
        row.update({name: float(v) for name, v in zip(names, coef[1:])})
        li = tree.leaf_index(t) if is_leaf else None
        row["leaf_mse"] = float(mse[li]) if is_leaf and mse is not None else np.nan
        row["leaf_r2"] = float(r2[li]) if is_leaf and r2 is not None else np.nan
        row["reachable"] = bool(reach[t - 1])
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["parent"] = frame["parent"].astype("Int64")
    frame["n_samples"] = frame["n_samples"].astype("Int64")
    return frame


def _leaf_scores(model, X, y, tree):
    """Per-leaf MSE and R^2 of the HBP leaf's own linear model on the rows routed there."""
    leaves = np.asarray(model.apply(X))
    _, leaf = original_units(model)
    Xa = np.column_stack([np.ones(len(leaves)), np.asarray(X, dtype=float)])
    mse, r2 = np.full(tree.n_leaves, np.nan), np.full(tree.n_leaves, np.nan)
    for t in tree.leaves:
        rows = leaves == t
        if not rows.any():
            continue
        pred = Xa[rows] @ leaf[tree.leaf_index(t)]
        sse = np.mean((y[rows] - pred) ** 2)
        sst = np.var(y[rows])
        mse[tree.leaf_index(t)] = sse
        if rows.sum() > 1 and sst > 0:
            r2[tree.leaf_index(t)] = 1 - sse / sst
    return mse, r2


# ------------------------------------------------------------------------ text
#: How every view (text, DOT, plot, HTML) orders the terms of a split or leaf.
RANKING = ("terms in order of |raw coefficient| x training range of the feature, i.e. of |scaled "
           "coefficient| (scale-free: the same order in both units)")


def _fmt(v) -> str:
    return f"{v:+.4g}"


def _ranked_terms(coef, scaled, names, top):
    """Terms "+1.2*name" of ``coef`` in order of the scale-free weight |scaled| (the same row in
    the scaled space), the ``top`` first (None: all), and how many nonzero terms were left out."""
    nonzero = np.flatnonzero(scaled)
    order = nonzero[np.argsort(-np.abs(scaled[nonzero]), kind="stable")]
    shown = order if top is None else order[:top]
    return [f"{_fmt(coef[j])}*{names[j]}" for j in shown], len(order) - len(shown)


def _terms(coef, scaled, names, top) -> str:
    """The ranked terms on one line, "... (k more)" for those left out."""
    terms, rest = _ranked_terms(coef, scaled, names, top)
    return " ".join(terms + ([f"... ({rest} more)"] if rest else [])) or "+0"


def export_text(model, feature_names=None, top=3, X=None, units="both", max_depth=None) -> str:
    """Indented text tree of a fitted SRT, ORRT or MILO tree.

    Each split shows its hyperplane (go left iff ... >= 0) and each leaf its
    linear model; ``units`` "both" (default) prints the scaled-space
    coefficients the model works in *and* the same formula in original feature
    units, each on its own labelled line ("scaled:", "original:"); "scaled" or
    "original" print one of them.  Terms are ranked by their scale-free weight,
    the size of the coefficient in the scaled space (= raw coefficient x the
    feature's training range), so both lines list the same features in the same
    order; ``top`` (None: all) keeps the first ones.  Node counts are the training
    rows routed there by HBP (stored at fit) or, with ``X``, the rows of X.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor, MILOTreeRegressor or FittedTree
        A fitted tree, or its view (:func:`srtopt.persistence.read_view` reads one from a file).
    feature_names : sequence of str or None, default=None
        Names of the p features; None: the model's ``feature_names_in_``, else x0, x1, ...
    top : int or None, default=3
        Terms shown per split or leaf, the largest-weight first; None: all.
    X : array-like of shape (n_samples, p) or None, default=None
        Rows in original units whose HBP routing gives the node counts; None: the fit-time counts.
    units : {"both", "original", "scaled"}, default="both"
        Which coefficients are printed.
    max_depth : int or None, default=None
        Levels drawn below the root; a split deeper down is written as one line, its subtree
        folded (for deep trees). None: every level.

    Returns
    -------
    str
        The indented text, lines joined by newlines (no trailing newline).

    Raises
    ------
    ValueError
        If ``units`` is unknown, ``feature_names`` does not have p names, or ``model`` is not a fitted
        tree of these classes (a SoftRegressionTreeCV: pass its ``best_estimator_``), or
        ``max_depth`` is not None or an int >= 0.

    Examples
    --------
    >>> import numpy as np
    >>> from srtopt import SoftRegressionTree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 3))
    >>> y = np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2])
    >>> tree = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    >>> text = export_text(tree, feature_names=["dose", "age", "weight"])
    >>> print(text.splitlines()[0])
    SoftRegressionTree(depth=2), 3 features
    >>> for line in text.splitlines():
    ...     if line.lstrip().startswith(("node", "leaf")):
    ...         print(line)
    node 1 [200 rows]: go left (to 2) if
      node 2 [... rows]: go left (to 4) if
        leaf 4 [... rows]:
        leaf 5 [... rows]:
      node 3 [... rows]: go left (to 6) if
        leaf 6 [... rows]:
        leaf 7 [... rows]:
    """
    model = _view(model)
    if units not in UNITS + ("both",):
        raise ValueError(f"units must be 'both', 'original' or 'scaled', got {units!r}")
    root, children, folded = _structure(model, max_depth)
    if model.kind == "milo":
        return _export_text_milo(model, feature_names, top, X, units, (root, children, folded))
    tree, names, p = _tree(model), _feature_names(model, feature_names), model.n_features_in_
    x_min, span, y_mean, y_std = _scaling(model)
    split, leaf = original_units(model)
    counts = _node_counts(model, X)
    name = model.estimator
    lines = [f"{name}(depth={tree.depth}), {p} features"]
    if name == "ORRTRegressor":
        lines.append("  note: ORRT predicts sum_t P_t(x) yhat_t(x) over all leaves; the routing and "
                     "counts below follow the HBP path of its splits (display only)")
    if units in ("both", "scaled"):
        lines.append(f"  scaled:   x_s = (x - min) / (max - min) of the training data, "
                     f"y_s = (y - {y_mean:.6g}) / {y_std:.6g}")
    if units in ("both", "original"):
        lines.append("  original: raw feature units, y in its own units")
    lines.append(f"  {RANKING}")
    if note := _pruned_note(model):
        lines.append(f"  {note}")

    def walk(t, indent):
        pad = "  " * indent
        n = f" [{counts[t - 1]} rows]" if counts is not None else ""
        if t in folded:
            lines.append(f"{pad}node {t}{n}: {_folded_text(model, t)}")
            return
        if tree.is_leaf(t):
            b, c = model.beta_[tree.leaf_index(t)], leaf[tree.leaf_index(t)]
            lines.append(f"{pad}leaf {t}{n}:")
            if units in ("both", "scaled"):
                lines.append(f"{pad}    scaled:   y_s = {_fmt(b[0])} {_terms(b[1:], b[1:], names, top)}")
            if units in ("both", "original"):
                lines.append(f"{pad}    original: y = {_fmt(c[0])} {_terms(c[1:], b[1:], names, top)}")
            return
        w, a = model.omega_[tree.branch_index(t)], split[tree.branch_index(t)]
        left, right = children[t]
        lines.append(f"{pad}node {t}{n}: go left (to {left}) if")
        if units in ("both", "scaled"):
            lines.append(f"{pad}    scaled:   {_fmt(w[0])} + (1/{p}) ({_terms(w[1:], w[1:], names, top)}) >= 0")
        if units in ("both", "original"):
            lines.append(f"{pad}    original: {_fmt(a[0])} {_terms(a[1:], w[1:], names, top)} >= 0")
        walk(left, indent + 1)
        walk(right, indent + 1)

    walk(root, 0)
    return "\n".join(lines + export_constraints(model).splitlines())


def export_constraints(model) -> str:
    """The fitted model's constraints (``constraint_report_``) as a table: every row with its bound,
    its value for the soft model of the training objective and for ``predict()`` on the training
    data, and whether it holds; empty without constraints.

    Parameters
    ----------
    model : SoftRegressionTree
        A fitted tree.

    Returns
    -------
    str
        The table, one line per constraint row under a header line ("" without constraints).
    """
    model = _view(model)
    report = getattr(model, "constraint_report_", None) or []
    if not report:
        return ""
    rows = [("constraint", "row", "bound", "soft model", "predict()", "holds")]
    rows += [(r["constraint"], r["row"], r["bound"], f"{r['soft']:.6g}", f"{r['predict']:.6g}",
              "yes" if r["holds"] else "NO") for r in report]
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    lines = ["constraints (training data):"]
    lines += ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _export_text_milo(model, feature_names, top, X, units, structure):
    tree, names = _tree(model), _feature_names(model, feature_names)
    counts = _node_counts(model, X)
    lines = [f"MILOTreeRegressor(depth={tree.depth}), {model.n_features_in_} features, axis-aligned splits",
             f"  scaled:   x_s = (x - min) / (max - min), y_s = (y - {model.scaler_.y_mean:.6g}) / "
             f"{model.scaler_.y_std:.6g}",
             "  original: raw feature units, y in its own units", f"  {RANKING}"]
    root, children, folded = structure
    if note := _pruned_note(model):
        lines.append(f"  {note}")

    def walk(t, indent):
        pad = "  " * indent
        n = f" [{counts[t - 1]} rows]" if counts is not None else ""
        if t in folded:
            lines.append(f"{pad}node {t}{n}: {_folded_text(model, t)}")
            return
        if tree.is_leaf(t):
            i = tree.leaf_index(t)
            scaled = model.leaf_coef_scaled_[i]
            lines.append(f"{pad}leaf {t}{n}:")
            if units in ("both", "scaled"):
                lines.append(f"{pad}    scaled:   y_s = {_fmt(model.leaf_intercept_scaled_[i])} "
                             f"{_terms(scaled, scaled, names, top)}")
            if units in ("both", "original"):
                lines.append(f"{pad}    original: y = {_fmt(model.leaf_intercept_[i])} "
                             f"{_terms(model.leaf_coef_[i], scaled, names, top)}")
            return
        j, (left, right) = int(model.split_feature_[t - 1]), children[t]
        parts = []
        if units in ("both", "original"):
            parts.append(f"original: {names[j]} < {model.split_threshold_[t - 1]:.6g}")
        if units in ("both", "scaled"):
            parts.append(f"scaled: {names[j]}_s < {model.split_threshold_scaled_[t - 1]:.6g}")
        lines.append(f"{pad}node {t}{n}: go left (to {left}) if " + "; ".join(parts))
        walk(left, indent + 1)
        walk(right, indent + 1)

    walk(root, 0)
    return "\n".join(lines)


# ------------------------------------------------------------------- graphviz
def _node_labels(model, feature_names, top, X, units, folded=()):
    """{node: label lines} for DOT and matplotlib rendering: one coordinate system, one term
    per line, terms in the order :data:`RANKING` states."""
    tree, names = _tree(model), _feature_names(model, feature_names)
    counts = _node_counts(model, X)
    labels = {}
    kind = model.kind
    if kind == "oblique":
        split, leaf = original_units(model) if units == "original" else (model.omega_, model.beta_)

    def term_lines(coef, scaled):
        terms, rest = _ranked_terms(coef, scaled, names, top)
        return terms + ([f"... ({rest} more)"] if rest else [])

    for t in range(1, 2 ** (tree.depth + 1)):
        head = f"{'leaf' if tree.is_leaf(t) else 'node'} {t}"
        lines = [head + (f"  n={counts[t - 1]}" if counts is not None else "")]
        if t in folded:
            labels[t] = lines + [_folded_text(model, t)]
            continue
        y_name = "y" if units == "original" else "y_s"
        if kind == "milo":
            if tree.is_leaf(t):
                i = tree.leaf_index(t)
                scaled = model.leaf_coef_scaled_[i]
                b0, b = ((model.leaf_intercept_[i], model.leaf_coef_[i]) if units == "original"
                         else (model.leaf_intercept_scaled_[i], scaled))
                lines += [f"{y_name} = {_fmt(b0)}"] + term_lines(b, scaled)
            else:
                j = int(model.split_feature_[t - 1])
                thr = model.split_threshold_ if units == "original" else model.split_threshold_scaled_
                lines.append("no split" if j < 0 else f"{names[j]} < {thr[t - 1]:.4g}")
        elif tree.is_leaf(t):
            c = leaf[tree.leaf_index(t)]
            lines += [f"{y_name} = {_fmt(c[0])}"] + term_lines(c[1:], model.beta_[tree.leaf_index(t), 1:])
        else:
            a = split[tree.branch_index(t)]
            lines.append("left if " + _fmt(a[0]) + ("" if units == "original"
                                                    else f" + (1/{model.n_features_in_}) *"))
            terms = term_lines(a[1:], model.omega_[tree.branch_index(t), 1:]) or ["+0"]
            lines += terms + [">= 0"] if terms[-1].endswith("more)") else terms[:-1] + [terms[-1] + " >= 0"]
        labels[t] = lines
    return labels


# ------------------------------------------------------------------------ html
def export_html(model, path=None, feature_names=None, X=None, y=None) -> str:
    """One self-contained HTML page of a fitted SoftRegressionTree or ORRTRegressor; returns
    it and writes it to ``path`` when given.  Everything (style, script, model) is inside the
    file: it needs no network to be viewed.

    The page shows the tree as collapsible nodes (click a node to fold its subtree), each
    split and leaf formula in full in original and scaled units (terms ranked as
    :data:`RANKING` says), the rows routed to every node by HBP (training rows stored at
    fit, or the rows of ``X``), each leaf's R^2 and MSE on its rows (fit-time values, or on
    ``X``, ``y``), the feature importances, and a form that routes a row given in original
    units (or in the address, ``?name=value&...`` or ``?row=v1,v2,...``): its HBP path with
    the split value u, the branch probabilities p and their product along the path, the
    leaf probabilities P_it and the prediction.

    Parameters
    ----------
    model : SoftRegressionTree or ORRTRegressor
        A fitted oblique tree.
    path : str, path-like or None, default=None
        File to write the page to (UTF-8, replaced if it exists); None: only return it.
    feature_names : sequence of str or None, default=None
        Names of the p features; None: the model's ``feature_names_in_``, else x0, x1, ...
    X : array-like of shape (n_samples, p) or None, default=None
        Rows in original units for the node counts (and, with ``y``, the leaf scores); None: fit-time values.
    y : array-like of shape (n_samples,) or None, default=None
        Targets of the rows of ``X`` for the leaf R^2 and MSE.

    Returns
    -------
    str
        The HTML page.

    Raises
    ------
    ValueError
        If ``model`` is a MILOTreeRegressor or not a fitted tree, ``y`` is given without ``X``, or
        ``feature_names`` does not have p names.

    Examples
    --------
    >>> import numpy as np
    >>> from srtopt import SoftRegressionTree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 3))
    >>> y = np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2])
    >>> tree = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    >>> page = export_html(tree)
    >>> page.startswith("<!DOCTYPE html>"), page.count('<details class="node')
    (True, 7)
    """
    model = _view(model)
    import html
    import json
    import re
    from importlib import resources

    if model.kind != "oblique":
        raise ValueError("export_html applies to SoftRegressionTree and ORRTRegressor; use export_text "
                         "for MILOTreeRegressor")
    if y is not None and X is None:
        raise ValueError("export_html: y needs X (the leaf scores are computed on the rows of X)")
    tree, names, p = _tree(model), _feature_names(model, feature_names), model.n_features_in_
    x_min, span, y_mean, y_std = _scaling(model)
    counts = _node_counts(model, X)
    mse, r2 = getattr(model, "leaf_mse_", None), getattr(model, "leaf_r2_", None)
    if y is not None:
        mse, r2 = _leaf_scores(model, X, np.asarray(y, dtype=float), tree)
    soft = model.estimator == "ORRTRegressor"
    page = resources.files("srtopt").joinpath("data/tree_page.html").read_text("utf-8")
    data = {"depth": tree.depth, "p": p, "n_leaves": tree.n_leaves, "mu": float(model.mu), "features": names,
            "x_min": x_min.tolist(), "x_scale": span.tolist(), "y_mean": float(y_mean), "y_std": float(y_std),
            "omega": model.omega_.tolist(), "beta": model.beta_.tolist(), "prediction": "soft" if soft else "hbp",
            "leaves": [t for t in tree.leaves if model.reach[t - 1]]}
    parts = {
        "__TITLE__": html.escape(f"{model.estimator}, depth {tree.depth}, {p} features"),
        "__FACTS__": _html_facts(model, counts, y_mean, y_std, soft),
        "__TREE__": _html_tree(model, names, counts, mse, r2),
        "__FORM__": "\n".join(f'<label>{html.escape(name)} <input type="number" step="any" id="x-{j}" '
                              f'name="{html.escape(name)}" value="{x_min[j] + span[j] / 2:.6g}"></label>'
                              for j, name in enumerate(names)),
        "__IMPORTANCES__": _html_importances(model, names),
        "__MODEL__": json.dumps(data).replace("<", "\\u003c"),
    }
    page = re.sub("|".join(parts), lambda match: parts[match.group(0)], page)  # one pass: names stay as given
    if path is not None:
        from pathlib import Path

        Path(path).write_text(page, encoding="utf-8")
    return page


def _html_facts(model, counts, y_mean, y_std, soft):
    import html

    rule = ("ORRT predicts sum_t P_it y_t(x) over all leaves; the routing and counts follow the HBP path of "
            "its splits (display only)." if soft else
            "A row is predicted by the linear model of the single leaf of its highest-branch-probability "
            "(HBP) path.")
    rows = "" if counts is None else f"{counts[0]} training rows routed by HBP. "
    return "\n".join(f'<p class="facts">{html.escape(text)}</p>' for text in (
        rule,
        f"{rows}Scaled units: x_s = (x - min) / (max - min) of the training data, "
        f"y_s = (y - {y_mean:.6g}) / {y_std:.6g}; split t goes left iff p_t = F(mu u_t) >= 0.5 with "
        f"u_t = omega_0t + (1/p) sum_j omega_jt x_s,j, F the logistic CDF, mu = {float(model.mu):g}.",
        f"Formulas in full; {RANKING}."))


def _html_tree(model, names, counts, mse, r2):
    """Nested <details> of every node: its formulas, statistics and (for a split) its subtrees."""
    import html

    tree, p = _tree(model), model.n_features_in_
    split, leaf = original_units(model)
    root, structure, _ = _structure(model)

    def node(t):
        share = "" if counts is None else (f" · {counts[t - 1]} rows"
                                           f" ({100 * counts[t - 1] / max(counts[0], 1):.1f} %)")
        if tree.is_leaf(t):
            i = tree.leaf_index(t)
            b, c = model.beta_[i], leaf[i]
            score = "" if r2 is None else " · " + " · ".join(
                f"{name} {value:.4g}" if np.isfinite(value) else f"{name} n/a" for name, value in
                (("leaf R^2", r2[i]), ("MSE", mse[i])))
            head = f"leaf {t}{share}{score} · y = {_fmt(c[0])} {_terms(c[1:], b[1:], names, 3)}"
            formulas = [("original", f"y = {_fmt(c[0])} {_terms(c[1:], b[1:], names, None)}"),
                        ("scaled", f"y_s = {_fmt(b[0])} {_terms(b[1:], b[1:], names, None)}")]
            children = ""
        else:
            w, a = model.omega_[tree.branch_index(t)], split[tree.branch_index(t)]
            left, right = structure[t]
            head = f"node {t}{share} · go left (to {left}) if {_fmt(a[0])} {_terms(a[1:], w[1:], names, 3)} >= 0"
            formulas = [("original", f"{_fmt(a[0])} {_terms(a[1:], w[1:], names, None)} >= 0"),
                        ("scaled", f"{_fmt(w[0])} + (1/{p}) ({_terms(w[1:], w[1:], names, None)}) >= 0")]
            children = node(left) + node(right)
        body = "".join(f'<div class="formula"><span class="units">{units}</span>{html.escape(text)}</div>'
                       for units, text in formulas)
        kind = "leaf" if tree.is_leaf(t) else "split"
        return (f'<details class="node {kind}" id="node-{t}" data-node="{t}" open><summary>{html.escape(head)}'
                f"</summary>{body}{children}</details>\n")

    note = _pruned_note(model)
    return (f'<p class="note">{html.escape(note)}</p>\n' if note else "") + node(root)


def _html_importances(model, names):
    import html

    importances = getattr(model, "feature_importances_", None)
    if importances is None:
        return ""
    rows = "".join(f'<tr><td class="name">{html.escape(names[j])}</td><td>{importances[j]:.4f}</td>'
                   f'<td><span class="bar" style="width:{12 * importances[j] / max(importances.max(), 1e-300):.2f}em">'
                   f"</span></td></tr>" for j in np.argsort(-importances, kind="stable"))
    return ("<h2>Feature importances</h2>\n<p class=\"note\">sum over the splits t of m_t |omega_jt|, normalized "
            "to 1: m_t is the share of the training rows reaching t (soft routing), omega_jt the split weight "
            "in the scaled space.</p>\n<table><thead><tr><th>feature</th><th>importance</th><th></th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")


def export_graphviz(model, feature_names=None, top=3, X=None, units="original", max_depth=None) -> str:
    """Graphviz DOT source of the tree (one box per node, "yes"/"no" edges for left/right).

    Splits show the hyperplane as its ``top`` largest-weight features (None:
    all; ranked as :data:`RANKING` says), leaves their linear model and every
    node its row count; ``units`` "original" (raw feature units) or "scaled"
    (the model's space).  Render with
    :func:`render_graphviz` (needs the ``dot`` executable) or any Graphviz tool.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor, MILOTreeRegressor or FittedTree
        A fitted tree, or its view (:func:`srtopt.persistence.read_view` reads one from a file).
    feature_names : sequence of str or None, default=None
        Names of the p features; None: the model's ``feature_names_in_``, else x0, x1, ...
    top : int or None, default=3
        Terms shown per split or leaf, the largest-weight first; None: all.
    X : array-like of shape (n_samples, p) or None, default=None
        Rows in original units whose HBP routing gives the node counts; None: the fit-time counts.
    units : {"original", "scaled"}, default="original"
        Coordinate system of the coefficients shown.
    max_depth : int or None, default=None
        Levels drawn below the root; a split deeper down is one box, its subtree folded. None: every level.

    Returns
    -------
    str
        The DOT source of a ``digraph``, the reachable nodes only.

    Raises
    ------
    ValueError
        If ``units`` is unknown, ``feature_names`` does not have p names, ``model`` is not a fitted
        tree of these classes, or ``max_depth`` is not None or an int >= 0.
    """
    model = _view(model)
    if units not in UNITS:
        raise ValueError(f"units must be 'original' or 'scaled', got {units!r}")
    tree = _tree(model)
    root, children, folded = _structure(model, max_depth)
    labels = _node_labels(model, feature_names, top, X, units, folded)
    title = f"{model.estimator} depth {tree.depth} ({units} units; {RANKING})"
    out = ["digraph srt {", f'  label="{_dot_escape(title)}"; labelloc=t;',
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=9];']
    for t in _drawn(root, children):
        color = "#e8f4e8" if tree.is_leaf(t) else "#f0f0f0" if t in folded else "#e8eef8"
        label = "\\n".join(_dot_escape(line) for line in labels[t])
        out.append(f'  n{t} [label="{label}", fillcolor="{color}"];')
    for t, (left, right) in sorted(children.items()):
        out.append(f'  n{t} -> n{left} [label="yes"];')
        out.append(f'  n{t} -> n{right} [label="no"];')
    out.append("}")
    return "\n".join(out) + "\n"


def _drawn(root, children) -> list[int]:
    """The nodes a view draws, in increasing order."""
    return sorted({root, *(child for pair in children.values() for child in pair)})


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def render_graphviz(dot_source: str, path, format: str = "png") -> None:
    """Render DOT source to ``path`` with the ``dot`` executable (RuntimeError if it is absent).

    Parameters
    ----------
    dot_source : str
        Graphviz DOT source, e.g. from :func:`export_graphviz`.
    path : str or path-like
        The output file.
    format : str, default="png"
        Output format of ``dot -T`` ("png", "svg", "pdf", ...).

    Raises
    ------
    RuntimeError
        If the ``dot`` executable is not on PATH.
    subprocess.CalledProcessError
        If ``dot`` fails (e.g. on invalid source or an unknown format).
    """
    import shutil
    import subprocess

    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError("the Graphviz 'dot' executable was not found on PATH; write the DOT source "
                           "instead or use srtopt.plotting.plot_tree")
    subprocess.run([dot, f"-T{format}", "-o", str(path)], input=dot_source.encode(), check=True)


__all__ = ["RANKING", "decision_path", "export_constraints", "export_graphviz", "export_html", "export_text",
           "original_units", "reachable_nodes", "render_graphviz", "summary"]
