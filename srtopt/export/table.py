"""Tables of a fitted tree: one row per node (:func:`summary`) and the nodes on each row's HBP
path (:func:`decision_path`).
"""

from __future__ import annotations

import numpy as np

from .leaf_readers import reader_of
from .nodes import UNITS, as_view, feature_names_of, node_counts, original_splits, tree_of


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
    tree, names, reader = tree_of(model), feature_names_of(model, feature_names), reader_of(model, X, y)
    split = original_splits(model) if units == "original" else model.omega_
    leaf, statistics = reader.table_leaves(units), reader.table_columns()
    counts, reach = node_counts(model, X), model.reach
    rows = []
    for t in range(1, 2 ** (tree.depth + 1)):
        is_leaf = tree.is_leaf(t)
        coef = leaf[tree.leaf_index(t)] if is_leaf else split[tree.branch_index(t)]
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


__all__ = ["decision_path", "summary"]
