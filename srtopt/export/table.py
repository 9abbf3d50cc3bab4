"""Tables of a fitted tree: one row per node (:func:`summary`) and the nodes on each row's HBP
path (:func:`decision_path`).
"""

from __future__ import annotations

import numpy as np

from .nodes import (UNITS, as_view, class_names, feature_names_of, leaf_class_counts, leaf_class_mix, leaf_scores,
                    node_counts, original_units, tree_of)


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
    return as_view(model).decision_path(X)


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

    For a SoftClassificationTree the leaves have no coefficient columns (NaN; their class scores
    are :func:`~srtopt.export.original_units`' second array) and no ``leaf_mse``, ``leaf_r2``;
    instead, per class c, ``n(c)`` is the rows of class c the node receives by HBP (weighted
    training rows stored at fit, or the rows of ``X``, ``y``) and ``p(c)`` a leaf's probability of
    c (a constant leaf's; a logistic leaf's averaged over its training rows, or over the rows of
    ``X``; NaN for a split).

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor or SoftClassificationTree
        A fitted oblique tree.
    X : array-like of shape (n_samples, p) or None, default=None
        Rows in original units for ``n_samples``, ``leaf_mse`` and ``leaf_r2``; None: the fit-time values.
    y : array-like of shape (n_samples,) or None, default=None
        Targets (a classifier's: labels) of the rows of ``X`` (given together with ``X``).
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
    >>> from srtopt.datasets import example_tree
    >>> tree, X, y = example_tree()  # depth 2, on 200 rows: y = 2 x1 where x0 > 0.5, else -x2
    >>> table = summary(tree)
    >>> list(table["kind"]), int(table.loc[0, "n_samples"])
    (['split', 'split', 'split', 'leaf', 'leaf', 'leaf', 'leaf'], 200)
    """
    model = as_view(model)
    import pandas as pd

    if model.kind != "oblique":
        raise ValueError("summary applies to SoftRegressionTree and ORRTRegressor; use export_text "
                         "for MILOTreeRegressor")
    if units not in UNITS:
        raise ValueError(f"units must be one of {UNITS}, got {units!r}")
    if (X is None) != (y is None):
        raise ValueError("summary needs both X and y, or neither (then the fit-time statistics)")
    tree, names = tree_of(model), feature_names_of(model, feature_names)
    split, leaf = original_units(model) if units == "original" else (model.omega_, model.beta_)
    counts, reach = node_counts(model, X), model.reach
    if model.is_classifier:
        statistics = _class_columns(model, X, y, tree)
    else:
        mse, r2 = getattr(model, "leaf_mse_", None), getattr(model, "leaf_r2_", None)
        if X is not None:
            mse, r2 = leaf_scores(model, X, np.asarray(y, dtype=float), tree)
        statistics = {"leaf_mse": _leaf_columns(mse, tree), "leaf_r2": _leaf_columns(r2, tree)}
    rows = []
    for t in range(1, 2 ** (tree.depth + 1)):
        is_leaf = tree.is_leaf(t)
        coef = (np.full(len(names) + 1, np.nan) if is_leaf and model.is_classifier else
                leaf[tree.leaf_index(t)] if is_leaf else split[tree.branch_index(t)])
        row = {"node": t, "kind": "leaf" if is_leaf else "split", "depth": tree.node_depth(t),
               "parent": tree.parent(t) if t > 1 else None,
               "n_samples": int(counts[t - 1]) if counts is not None else None,
               "intercept": float(coef[0])}
        row.update({name: float(v) for name, v in zip(names, coef[1:])})
        row.update({column: float(values[t - 1]) if values is not None else np.nan
                    for column, values in statistics.items()})
        row["reachable"] = bool(reach[t - 1])
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["parent"] = frame["parent"].astype("Int64")
    frame["n_samples"] = frame["n_samples"].astype("Int64")
    return frame


def _leaf_columns(values, tree):
    """Per-leaf ``values`` (2^D, ...) at index t - 1 of every node, NaN at the splits (None stays None)."""
    if values is None:
        return None
    values = np.asarray(values, dtype=float)
    return np.concatenate([np.full((tree.n_leaves - 1,) + values.shape[1:], np.nan), values])


def _class_columns(model, X, y, tree) -> dict:
    """{column: values at index t - 1}: a classifier's rows of each class at every node ("n(c)",
    a split's the sums over its leaves) and each leaf's class mix ("p(c)")."""
    counts, names = leaf_class_counts(model, X, y), class_names(model)
    at_nodes = _leaf_columns(counts, tree)
    for t in reversed(tree.branch_nodes) if counts is not None else ():  # children before parents
        at_nodes[t - 1] = at_nodes[2 * t - 1] + at_nodes[2 * t]
    shares = _leaf_columns(leaf_class_mix(model, X), tree)
    columns = {f"n({name})": None if at_nodes is None else at_nodes[:, k] for k, name in enumerate(names)}
    return columns | {f"p({name})": shares[:, k] for k, name in enumerate(names)}


__all__ = ["decision_path", "summary"]
