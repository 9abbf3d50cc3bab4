"""The indented text of a fitted tree (:func:`export_text`) and the table of its constraints
(:func:`export_constraints`).
"""

from __future__ import annotations

from .nodes import (RANKING, UNITS, as_view, class_names, class_rule, class_titles, classes_text, constraint_table,
                    count_text, drawn_tree, feature_names_of, fmt, folded_text, leaf_class_counts, leaf_class_mix, node_counts,
                    original_units, pruned_note, scaling_of, score_formula, shown_scores, terms_text, tree_of)


def export_text(model, feature_names=None, top=3, X=None, units="both", max_depth=None) -> str:
    """Indented text tree of a fitted SRT, ORRT, MILO tree or soft classification tree.

    Each split shows its hyperplane (go left iff ... >= 0) and each leaf its
    linear model (a classifier's leaf: its class probabilities, e.g. "leaf 4 [50 rows]:
    82.0% A, 18.0% B", its training rows by class and, for logistic leaves, its class
    scores); ``units`` "both" (default) prints the scaled-space
    coefficients the model works in *and* the same formula in original feature
    units, each on its own labelled line ("scaled:", "original:"); "scaled" or
    "original" print one of them.  Terms are ranked by their scale-free weight,
    the size of the coefficient in the scaled space (= raw coefficient x the
    feature's training range), so both lines list the same features in the same
    order; ``top`` (None: all) keeps the first ones.  Node counts are the training
    rows routed there by HBP (stored at fit) or, with ``X``, the rows of X.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor, MILOTreeRegressor, SoftClassificationTree or FittedTree
        A fitted tree, or its view (:func:`srtopt.persistence.read_view` reads one from a file).
    feature_names : sequence of str or None, default=None
        Names of the p features; None: the model's ``feature_names_in_``, else x0, x1, ...
    top : int or None, default=3
        Terms shown per split or leaf, the largest-weight first (a classifier's leaf: its classes
        of largest share, and the terms of each class score); None: all.
    X : array-like of shape (n_samples, p) or None, default=None
        Rows in original units whose HBP routing gives the node counts; None: the fit-time counts
        (a classifier's logistic leaves then show their class probabilities averaged over the rows
        of X, and no training rows by class).
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
    >>> from srtopt.datasets import example_tree
    >>> tree, X, y = example_tree()  # depth 2, on 200 rows: y = 2 x1 where x0 > 0.5, else -x2
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
    model = as_view(model)
    if units not in UNITS + ("both",):
        raise ValueError(f"units must be 'both', 'original' or 'scaled', got {units!r}")
    root, children, folded = drawn_tree(model, max_depth)
    if model.kind == "milo":
        return _export_text_milo(model, feature_names, top, X, units, (root, children, folded))
    if model.is_classifier:
        return _export_text_classifier(model, feature_names, top, X, units, (root, children, folded))
    tree, names, p = tree_of(model), feature_names_of(model, feature_names), model.n_features_in_
    _, _, y_mean, y_std = scaling_of(model)
    split = original_units(model)[0]
    counts = node_counts(model, X)
    name = model.estimator
    lines = [f"{name}(depth={tree.depth}{_leaf_note(model)}), {p} features"]
    if name == "ORRTRegressor":
        lines.append("  note: ORRT predicts sum_t P_t(x) yhat_t(x) over all leaves; the routing and "
                     "counts below follow the HBP path of its splits (display only)")
    if units in ("both", "scaled"):
        lines.append(f"  scaled:   x_s = (x - min) / (max - min) of the training data, "
                     f"y_s = (y - {y_mean:.6g}) / {y_std:.6g}")
    if units in ("both", "original"):
        lines.append("  original: raw feature units, y in its own units")
    lines.append(f"  {RANKING}")
    if model.leaf_model_.curved(model.beta_):
        lines.append(f"  {CURVES}")
    if note := pruned_note(model):
        lines.append(f"  {note}")

    def split_text(t):
        return _oblique_split(model, split, names, top, units, t)

    def leaf_text(t):
        b = model.beta_[tree.leaf_index(t)]
        return [""] + _shown(units, scaled=f"scaled:   {score_formula(model, b, 0, names, top, 'scaled')}",
                             original=f"original: {score_formula(model, b, 0, names, top, 'original')}")

    lines += _node_lines(model, (root, children, folded), counts, split_text, leaf_text)
    return "\n".join(lines + export_constraints(model).splitlines())


def export_constraints(model) -> str:
    """The fitted model's constraints (``constraint_report_``) as a table: every row with its bound,
    its value for the soft model of the training objective and for ``predict()`` on the training
    data, and whether it holds; empty without constraints.  A SoftRegressionTreeCV's (and the tree it
    chose) add the ``predict()`` values on the held-out folds.

    Parameters
    ----------
    model : SoftRegressionTree, SoftClassificationTree or SoftRegressionTreeCV
        A fitted tree.

    Returns
    -------
    str
        The table, one line per constraint row under a header line ("" without constraints).
    """
    rows = constraint_table(model if hasattr(model, "best_estimator_") else as_view(model))
    if not rows:
        return ""
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    lines = ["constraints (training data):"]
    lines += ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _export_text_milo(model, feature_names, top, X, units, structure):
    tree, names = tree_of(model), feature_names_of(model, feature_names)
    counts = node_counts(model, X)
    lines = [f"MILOTreeRegressor(depth={tree.depth}), {model.n_features_in_} features, axis-aligned splits",
             f"  scaled:   x_s = (x - min) / (max - min), y_s = (y - {model.scaler_.y_mean:.6g}) / "
             f"{model.scaler_.y_std:.6g}",
             "  original: raw feature units, y in its own units", f"  {RANKING}"]
    if note := pruned_note(model):
        lines.append(f"  {note}")

    def split_text(t):
        j = int(model.split_feature_[t - 1])
        return [" " + "; ".join(_shown(units, original=f"original: {names[j]} < {model.split_threshold_[t - 1]:.6g}",
                                       scaled=f"scaled: {names[j]}_s < {model.split_threshold_scaled_[t - 1]:.6g}"))]

    def leaf_text(t):
        i = tree.leaf_index(t)
        scaled = model.leaf_coef_scaled_[i]
        return [""] + _shown(units, scaled=f"scaled:   y_s = {fmt(model.leaf_intercept_scaled_[i])} "
                                           f"{terms_text(scaled, scaled, names, top)}",
                             original=f"original: y = {fmt(model.leaf_intercept_[i])} "
                                      f"{terms_text(model.leaf_coef_[i], scaled, names, top)}")

    return "\n".join(lines + _node_lines(model, structure, counts, split_text, leaf_text))


def _export_text_classifier(model, feature_names, top, X, units, structure):
    tree, names, p = tree_of(model), feature_names_of(model, feature_names), model.n_features_in_
    classes, mix, class_counts = class_titles(model), leaf_class_mix(model, X), leaf_class_counts(model, X)
    split = original_units(model)[0]
    scaled_scores = model.class_scores()
    lines = [f"{model.estimator}(depth={tree.depth}{_leaf_note(model)}), {p} features, {len(classes)} classes: "
             f"{', '.join(class_names(model))}",
             ("  note: ORCT predicts the class of largest sum_t P_t(x) C_t over all leaves; the routing and counts "
              "below follow the HBP path of its splits (display only)" if model.estimator == "ORCTClassifier" else
              "  a row is predicted by the leaf of its HBP path: the class of largest probability there"),
             f"  {class_rule(model)}"]
    if units in ("both", "scaled"):
        lines.append("  scaled:   x_s = (x - min) / (max - min) of the training data")
    if units in ("both", "original"):
        lines.append("  original: raw feature units")
    lines.append(f"  {RANKING}")
    if note := pruned_note(model):
        lines.append(f"  {note}")

    def split_text(t):
        return _oblique_split(model, split, names, top, units, t)

    def leaf_text(t):
        i = tree.leaf_index(t)
        lines = [" " + classes_text(mix[i], classes, top)]
        if class_counts is not None:
            lines.append("training rows: " + classes_text(class_counts[i], classes, top, count_text, nonzero=True))
        if model.leaf_kind != "constant":
            for k in shown_scores(model, mix[i], top):
                b = scaled_scores[i, k]
                lines += _shown(units, scaled=f"scaled:   {score_formula(model, b, k, names, top, 'scaled')}",
                                original=f"original: {score_formula(model, b, k, names, top, 'original')}")
        return lines

    counts = node_counts(model, X)
    return "\n".join(lines + _node_lines(model, structure, counts, split_text, leaf_text)
                     + export_constraints(model).splitlines())


#: what a leaf with curves shows (:func:`~.nodes.score_terms`)
CURVES = ("curves: a leaf reads u = u(mid-range) + sum of f(x) over its features, each f 0 at the middle of the "
          "feature's training range; f(x)[a, b] gives the lowest and highest effect over that range (in the "
          "score's units), the largest range first")


def _leaf_note(model) -> str:
    """", leaf=spline" and the like in a title (nothing for the SRT's linear leaves, nor ORRT's)."""
    name = model.leaf_model_.leaf_name
    return "" if name == "linear" else f", leaf={name}"


def _oblique_split(model, split, names, top, units, t) -> list[str]:
    """The lines of oblique split t ("" for the head, then scaled and original), ``split`` its
    original-units rows."""
    i, p = tree_of(model).branch_index(t), model.n_features_in_
    w, a = model.omega_[i], split[i]
    return [""] + _shown(units, scaled=f"scaled:   {fmt(w[0])} + (1/{p}) ({terms_text(w[1:], w[1:], names, top)}) >= 0",
                         original=f"original: {fmt(a[0])} {terms_text(a[1:], w[1:], names, top)} >= 0")


def _shown(units, **lines) -> list[str]:
    """The ``lines`` {units: text} that ``units`` ("both", "original" or "scaled") shows, in their order."""
    return [text for kind, text in lines.items() if units in ("both", kind)]


def _node_lines(model, structure, counts, split_text, leaf_text) -> list[str]:
    """The indented lines of the drawn tree ``structure`` = (root, children, folded), root first:
    each node's head ("node t [n rows]: go left (to l) if" + the first of ``split_text(t)``,
    "leaf t [n rows]:" + the first of ``leaf_text(t)``) and below it their other lines."""
    root, children, folded = structure
    tree, lines = tree_of(model), []

    def walk(t, indent):
        pad = "  " * indent
        head = f"{pad}{'leaf' if tree.is_leaf(t) else 'node'} {t}" + (
            f" [{counts[t - 1]} rows]" if counts is not None else "")
        if t in folded:
            lines.append(f"{head}: {folded_text(model, t)}")
        elif tree.is_leaf(t):
            first, *rest = leaf_text(t)
            lines.extend([f"{head}:{first}"] + [f"{pad}    {line}" for line in rest])
        else:
            left, right = children[t]
            first, *rest = split_text(t)
            lines.extend([f"{head}: go left (to {left}) if{first}"] + [f"{pad}    {line}" for line in rest])
            walk(left, indent + 1)
            walk(right, indent + 1)

    walk(root, 0)
    return lines


__all__ = ["export_constraints", "export_text"]
