"""The indented text of a fitted tree (:func:`export_text`) and the table of its constraints
(:func:`export_constraints`).
"""

from __future__ import annotations

from .leaf_readers import reader_of
from .nodes import (RANKING, UNITS, as_view, constraint_table, drawn_tree, feature_names_of, fmt, folded_text,
                    node_counts, original_splits, pruned_note, shown_lines, terms_text, tree_of)


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
    return _export_text_oblique(model, feature_names, top, X, units, (root, children, folded))


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
        original, scaled = model.split_threshold_[t - 1], model.split_threshold_scaled_[t - 1]
        return [" " + "; ".join(shown_lines(units, original=f"original: {names[j]} < {original:.6g}",
                                            scaled=f"scaled: {names[j]}_s < {scaled:.6g}"))]

    def leaf_text(t):
        i = tree.leaf_index(t)
        scaled = model.leaf_coef_scaled_[i]
        return [""] + shown_lines(units, scaled=f"scaled:   y_s = {fmt(model.leaf_intercept_scaled_[i])} "
                                                f"{terms_text(scaled, scaled, names, top)}",
                                  original=f"original: y = {fmt(model.leaf_intercept_[i])} "
                                           f"{terms_text(model.leaf_coef_[i], scaled, names, top)}")

    return "\n".join(lines + _node_lines(model, structure, counts, split_text, leaf_text))


def _export_text_oblique(model, feature_names, top, X, units, structure):
    """The text of a soft tree (SRT, ORRT, soft classification tree, ORCT): its head, where its leaves' reader
    (:func:`~.leaf_readers.reader_of`) writes the classes, the prediction rule and the units, then the splits
    and the leaves."""
    tree, names, reader = tree_of(model), feature_names_of(model, feature_names), reader_of(model, X)
    split = original_splits(model)
    lines = [f"{model.estimator}(depth={tree.depth}{_leaf_note(model)}), {model.n_features_in_} features"
             f"{reader.text_title_note()}", *reader.text_rule(), *reader.units_lines(units), f"  {RANKING}",
             *reader.text_notes(names, units)]
    if note := pruned_note(model):
        lines.append(f"  {note}")

    def split_text(t):
        return _oblique_split(model, split, names, top, units, t)

    def leaf_text(t):
        return reader.text_leaf(tree.leaf_index(t), names, top, units)

    return "\n".join(lines + _node_lines(model, structure, node_counts(model, X), split_text, leaf_text)
                     + export_constraints(model).splitlines())


def _leaf_note(model) -> str:
    """", leaf=spline" and the like in a title (nothing for the SRT's linear leaves, nor ORRT's)."""
    name = model.leaf_model_.leaf_name
    return "" if name == "linear" else f", leaf={name}"


def _oblique_split(model, split, names, top, units, t) -> list[str]:
    """The lines of oblique split t ("" for the head, then scaled and original), ``split`` its
    original-units rows."""
    i, p = tree_of(model).branch_index(t), model.n_features_in_
    w, a = model.omega_[i], split[i]
    return [""] + shown_lines(units,
                              scaled=f"scaled:   {fmt(w[0])} + (1/{p}) ({terms_text(w[1:], w[1:], names, top)}) >= 0",
                              original=f"original: {fmt(a[0])} {terms_text(a[1:], w[1:], names, top)} >= 0")


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
