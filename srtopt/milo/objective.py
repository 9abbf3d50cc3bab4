"""The MILO tree's objective E (:class:`AxisObjective`), evaluated on a tree with its leaves
fitted exactly, and how rows reach the leaves of a deterministic axis-aligned tree (at branch
node t with feature f_t >= 0 a row goes left iff x_f < b_t; f_t = -1 sends every row right)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from srtopt.milo import kernels
from srtopt.tree import Tree

__all__ = ["LOSSES", "AxisObjective", "feature_epsilons", "route", "subtree_value", "tree_objective"]

LOSSES = ("squared", "absolute")


@dataclass(frozen=True)
class AxisObjective:
    r"""The objective of the MILO tree, in scaled units (X in [0, 1], y standardized):

    .. math::
        E = \frac{1}{N}\sum_i \ell(y_i - \hat y_i) + l_1 \sum_{t \in \tau_L} \|\beta_t\|_1
            + l_2 \sum_{t \in \tau_L} \|\beta_t\|_2^2 + c_p\,|\{t \in \tau_B : d_t = 1\}|

    with :math:`\ell(r) = r^2` (``loss="squared"``, the loss of ORT-L and of SRT) or
    :math:`|r|` (``"absolute"``, which keeps the MILO a MILP), :math:`\beta_t` the slopes
    of leaf t (intercepts are not penalized) and :math:`d_t = 1` when node t splits.  A
    tree is feasible when no leaf holds between 1 and ``min_samples_leaf - 1`` training
    points (an empty leaf is allowed: a node may send every point one way).  With
    ``loss="absolute"`` the leaf slopes are bounded by ``coef_bound`` (the MILP's bound)
    and ``l2`` must be 0.

    Frozen: the fields are the attributes of the same names.

    Parameters
    ----------
    loss : {"squared", "absolute"}, default="squared"
        The loss of the residuals in E: the square or the absolute value.
    l1 : float, default=1e-3
        Weight :math:`l_1` of the l1 penalty on the leaf slopes.
    l2 : float, default=0.0
        Weight :math:`l_2` of the squared l2 penalty on the leaf slopes; 0 with
        ``loss="absolute"``.
    cp : float, default=0.0
        Complexity penalty :math:`c_p` per branch node that splits.
    min_samples_leaf : int, default=1
        A leaf holds no training point or at least this many.
    coef_bound : float, default=math.inf
        Bound on every leaf slope's absolute value with ``loss="absolute"`` (inf: none);
        not used with the squared loss.

    Raises
    ------
    ValueError
        If ``loss`` is neither "squared" nor "absolute"; if ``l1``, ``l2`` or ``cp`` is not an
        int or float (subclasses such as ``numpy.float64`` included) that is finite and >= 0;
        if ``loss="absolute"`` and ``l2`` is not 0; if ``min_samples_leaf`` is not an integer
        (int or ``numpy.integer``) >= 1.
    """

    loss: str = "squared"
    l1: float = 1e-3
    l2: float = 0.0
    cp: float = 0.0
    min_samples_leaf: int = 1
    coef_bound: float = math.inf

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        for name in ("l1", "l2", "cp"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.loss == "absolute" and self.l2 != 0:
            raise ValueError("l2 must be 0 with loss='absolute' (the MILO stays linear)")
        if not (isinstance(self.min_samples_leaf, (int, np.integer)) and self.min_samples_leaf >= 1):
            raise ValueError(f"min_samples_leaf must be an integer >= 1, got {self.min_samples_leaf!r}")


def _squared_fits(objective, X, y, leaf_index, n_leaves, n_total, deadline):
    coef, value, counts = kernels.leaf_fits(X, y, leaf_index, n_leaves, objective.l1 * n_total, objective.l2 * n_total)
    return coef, value, counts


def _absolute_fits(objective, X, y, leaf_index, n_leaves, n_total, deadline):
    from srtopt.solvers.least_absolute import lad_lasso_fit

    p = X.shape[1]
    coef = np.zeros((n_leaves, p + 1))
    value = np.zeros(n_leaves)
    counts = np.bincount(leaf_index, minlength=n_leaves)
    for leaf in np.flatnonzero(counts):
        rows = leaf_index == leaf
        coef[leaf], value[leaf] = lad_lasso_fit(X[rows], y[rows], objective.l1 * n_total, objective.coef_bound,
                                                deadline)
    return coef, value, counts


def subtree_value(objective, X, y, rows, features, thresholds, root, depth, n_total, deadline=None):
    """(coef, value) of the subtree of ``root`` on ``rows``: its leaves fitted exactly (the absolute
    loss's linear programs by ``deadline``, :func:`~srtopt.solvers.least_absolute.lad_lasso_fit`); value
    in sum units (N times E's share), inf when a leaf breaks ``min_samples_leaf``."""
    levels = depth - Tree.node_depth(root)
    index = kernels.subtree_leaves(X, rows, features, thresholds, root, levels)
    fits = _squared_fits if objective.loss == "squared" else _absolute_fits
    coef, value, counts = fits(objective, X[rows], y[rows], index, 2**levels, n_total, deadline)
    if np.any((counts > 0) & (counts < objective.min_samples_leaf)):
        return coef, math.inf
    splits = sum(1 for s in Tree(depth).subtree_branch(root) if features[s - 1] >= 0)
    return coef, float(value.sum()) + objective.cp * n_total * splits


def tree_objective(objective, X, y, features, thresholds, depth, deadline=None):
    """E of the tree (:class:`AxisObjective`) and its leaf models (2^D, p+1).

    Parameters
    ----------
    objective : AxisObjective
        The objective E.
    X : ndarray of shape (N, p), dtype float64
        Inputs, min-max scaled to [0, 1].
    y : ndarray of shape (N,), dtype float64
        Targets, standardized.
    features : ndarray of shape (2^D - 1,), dtype int64
        Split feature of branch node t at index t - 1; -1 when the node does not split.
    thresholds : ndarray of shape (2^D - 1,), dtype float
        Threshold of branch node t at index t - 1: a row goes left iff its feature value
        is < the threshold.
    depth : int
        Tree depth D.
    deadline : Deadline or None, default=None
        When the absolute loss's leaf fits must end (their least-squares fits after it); None: no
        limit.

    Returns
    -------
    value : float
        E of the tree with its leaves fitted exactly; inf when a leaf holds between 1 and
        ``objective.min_samples_leaf - 1`` rows.
    coef : ndarray of shape (2^D, p + 1)
        The leaf models: row l is leaf 2^D + l, column 0 its intercept; zeros for a leaf
        no row reaches.

    Raises
    ------
    ValueError
        If ``depth`` is 0 or not a Python int (e.g. ``numpy.int64``) and the leaves are
        feasible (:class:`srtopt.tree.Tree` rejects it when the splits are counted).
    """
    n = X.shape[0]
    coef, value = subtree_value(objective, X, y, np.arange(n), features, thresholds, 1, depth, n, deadline)
    return value / n, coef


def feature_epsilons(X: np.ndarray, min_epsilon: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature epsilon (smallest positive gap between sorted distinct values,
    at least ``min_epsilon``).

    Returns ``(eps, splittable)``; features with fewer than two distinct values
    get eps = 1 and ``splittable = False``.

    Parameters
    ----------
    X : array-like of shape (N, p)
        The (scaled) training inputs.
    min_epsilon : float, default=0.0
        Floor on every eps_j.

    Returns
    -------
    eps : ndarray of shape (p,)
        eps_j of each feature.
    splittable : ndarray of bool, shape (p,)
        Whether feature j has at least two distinct values.
    """
    X = np.asarray(X, dtype=float)
    p = X.shape[1]
    eps = np.ones(p)
    splittable = np.zeros(p, dtype=bool)
    for j in range(p):
        v = np.unique(X[:, j])
        if v.size >= 2:
            gaps = np.diff(v)
            eps[j] = max(float(gaps[gaps > 0].min()), float(min_epsilon))
            splittable[j] = True
    return eps, splittable


def route(X: np.ndarray, features: np.ndarray, thresholds: np.ndarray, depth: int) -> np.ndarray:
    """Leaf (paper numbering) reached by each row of scaled ``X``.

    ``features[t-1]`` is the feature of branch node t (-1: no split, everyone
    goes right) and ``thresholds[t-1]`` its threshold; x_j < b goes left,
    x_j >= b goes right, exactly as in the MILP's ``route_left``/``route_right``
    (computed by :func:`srtopt.milo.kernels.route`).

    Parameters
    ----------
    X : array-like of shape (N, p)
        Rows in the scaled space.
    features : array-like of int, shape (2^D - 1,)
        Feature of each branch node (index t - 1), -1 for no split.
    thresholds : array-like of float, shape (2^D - 1,)
        Threshold b_t of each branch node (index t - 1), scaled units.
    depth : int
        Tree depth D.

    Returns
    -------
    ndarray of int64, shape (N,)
        The leaf of each row, in 2^D .. 2^(D+1) - 1.
    """
    return kernels.route(np.ascontiguousarray(X, dtype=float), np.asarray(features, dtype=np.int64),
                              np.asarray(thresholds, dtype=float), int(depth))
