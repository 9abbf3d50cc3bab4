r"""Certified optima and lower bounds for the MILO tree by structure-only branch and bound.

The MILO tree's objective (:class:`~srtopt.milo.objective.AxisObjective`, squared
loss) is a sum over the leaves of exact leaf fits, and a split is a choice of feature and
position in the sorted order of that feature.  Write OPT_d(S) for the best value (in sum
units) of a depth-d subtree on the rows S.  Then

* OPT_0(S) is the exact leaf fit (:func:`srtopt.milo.kernels.leaf_fits`), and OPT_1(S) is
  found by enumerating every feature and every threshold between two distinct values
  (:func:`srtopt.milo.kernels.scan_splits` without its coarse screening): exact;
* OPT_d(S) = min( OPT_{d-1}(S)  [the root sends every row right],
  min_{j, k} OPT_{d-1}(L_jk) + OPT_{d-1}(R_jk) + cp N )  with L_jk the first k rows of S
  in the order of feature j and R_jk the others.

Without the ``min_samples_leaf`` constraint (the *relaxed* problem) OPT_d is monotone in
S: adding a row adds a non-negative term to every tree's value.  So for the positions k
in [a, b] of feature j,  OPT_{d-1}(L_jk) + OPT_{d-1}(R_jk) >= OPT^rel_{d-1}(L_ja) +
OPT^rel_{d-1}(R_jb), a lower bound valid for the constrained problem too.  The search keeps
intervals of positions in a heap by that bound, splits the lowest, evaluates single
positions exactly, and stops when no interval's bound is below the incumbent (the tree is
then certified optimal) or at the deadline, when the lowest bound left is a valid lower
bound on the optimum.  Depth 1 is certified by enumeration alone; depth 2 costs one exact
depth-1 enumeration per explored position, practical up to a few thousand rows.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from srtopt.milo.kernels import leaf_fits, scan_splits
from srtopt.milo.objective import feature_epsilons, tree_objective

__all__ = ["Certificate", "certify"]

EXACT = 2**62  # scan_splits' coarse: every position
CHUNK = 50_000  # rows x features scanned between two looks at the clock


@dataclass
class Certificate:
    """The best tree the search evaluated (``features``, ``thresholds``, leaf ``coef``, its
    ``objective`` E) and a proven lower ``bound`` on E over every feasible tree;
    ``complete`` when the search finished (then bound = objective up to rounding).

    Returned by :func:`certify`; D is the tree depth, p the number of features, and every
    quantity is in scaled units (X in [0, 1], y standardized).  The fields are the
    attributes of the same names.

    Parameters
    ----------
    features : ndarray of shape (2^D - 1,), dtype int64
        Split feature of branch node t at index t - 1; -1 when the node does not split
        (every row goes right).
    thresholds : ndarray of shape (2^D - 1,), dtype float
        Threshold of branch node t at index t - 1: a row goes left iff its feature value
        is < the threshold; 0.0 where the node does not split.
    coef : ndarray of shape (2^D, p + 1)
        Exact leaf models of that tree (from :func:`~srtopt.milo.objective.tree_objective`):
        row l is leaf 2^D + l, column 0 its intercept; zeros for a leaf no row reaches.
    objective : float
        E of that tree (:class:`~srtopt.milo.objective.AxisObjective`).
    bound : float
        A proven lower bound on E over every feasible tree of depth D; never above
        ``objective`` nor the ``incumbent`` given to :func:`certify`, and lowered by a
        relative 1e-9 against rounding.
    complete : bool
        True when the search finished before the deadline: then ``bound`` equals the lower
        of ``objective`` and the incumbent up to rounding (the better tree is optimal).  False
        when the deadline stopped it: ``bound`` is the lowest bound left in the search.
    """

    features: np.ndarray
    thresholds: np.ndarray
    coef: np.ndarray
    objective: float
    bound: float
    complete: bool


class _TimeUp(Exception):
    pass


@dataclass
class _Subtree:
    """A solved subproblem: value (sum units), its lower bound, and the splits of its nodes
    relative to its root: {relative node: (feature, threshold)} (1 = its root)."""

    value: float
    bound: float
    splits: dict


def certify(X, y, depth, objective, deadline, incumbent=math.inf):
    """Branch and bound of the module docstring on scaled data; None when it does not apply
    (the absolute loss).  ``incumbent``: E of a known tree, used to prune.

    Parameters
    ----------
    X : ndarray of shape (N, p), dtype float64
        Training inputs, min-max scaled to [0, 1].
    y : ndarray of shape (N,), dtype float64
        Training targets, standardized.
    depth : int
        Tree depth D >= 1.  Depth 1 is solved by exact enumeration alone.
    objective : AxisObjective
        The objective E to bound; only ``loss="squared"`` is handled.
    deadline : Deadline
        The search stops at its next check of the clock after it (between subproblems or
        between chunks of a depth-1 scan).
    incumbent : float, default=math.inf
        E of a known feasible tree (e.g. the local search's).  Intervals whose bound is not
        below it are pruned, and the returned bound never exceeds it.

    Returns
    -------
    Certificate or None
        The best tree evaluated, its E and a lower bound on E.  None when
        ``objective.loss`` is not "squared", when the deadline passes before the search of
        the root holds a first bound (at depth 1: before the enumeration ends), or when no
        feasible tree was found.

    Raises
    ------
    ValueError
        If ``depth`` is 0 or not a Python int (e.g. ``numpy.int64``): :class:`srtopt.tree.Tree`
        rejects it when the tree found is evaluated, after the search.
    """
    if objective.loss != "squared":
        return None
    n = X.shape[0]
    search = _Search(X, y, objective, deadline, depth)
    try:
        root = search.solve(np.arange(n), depth, objective.min_samples_leaf, incumbent * n)
        complete = True
    except _TimeUp:
        root, complete = search.partial, False
    if root is None or not math.isfinite(root.value):
        return None
    features, thresholds = _arrays(root.splits, depth)
    value, coef = tree_objective(objective, X, y, features, thresholds, depth)
    bound = min(root.bound / n, value, incumbent)
    return Certificate(features, thresholds, coef, value, bound - 1e-9 * abs(bound), complete)


def _arrays(splits, depth):
    features = np.full(2**depth - 1, -1, np.int64)
    thresholds = np.zeros(2**depth - 1)
    for node, (j, b) in splits.items():
        features[node - 1], thresholds[node - 1] = j, b
    return features, thresholds


def _shifted(splits, side):
    """The splits of a child's subtree, renumbered under a new root (side 0: left, 1: right)."""
    out = {}
    for node, split in splits.items():
        level = node.bit_length() - 1
        out[(2 + side) * 2**level + (node - 2**level)] = split
    return out


class _Search:
    def __init__(self, X, y, objective, deadline, depth):
        self.X, self.y, self.objective, self.deadline, self.depth = X, y, objective, deadline, depth
        self.n = X.shape[0]
        self.mu1, self.mu2 = objective.l1 * self.n, objective.l2 * self.n
        self.split_cost = objective.cp * self.n
        self.eps = feature_epsilons(X, 1e-5)[0]
        self.cache = {}
        self.partial = None  # the top search's state when time runs out

    def _check_time(self):
        if self.deadline.passed():
            raise _TimeUp

    def solve(self, rows, depth, min_leaf, incumbent=math.inf) -> _Subtree:
        """OPT_depth(rows) with the given min_leaf (1: the relaxed problem)."""
        key = (depth, min_leaf, rows.size, hash(rows.tobytes()))
        if key in self.cache:
            return self.cache[key]
        self._check_time()
        if depth == 0:
            result = self._leaf(rows, min_leaf)
        elif depth == 1:
            result = self._depth_one(rows, min_leaf)
        else:
            result = self._branch(rows, depth, min_leaf, incumbent)
        self.cache[key] = result
        return result

    def _leaf(self, rows, min_leaf):
        if 0 < rows.size < min_leaf:
            return _Subtree(math.inf, math.inf, {})
        _, value, _ = leaf_fits(self.X[rows], self.y[rows], np.zeros(rows.size, np.int64), 1, self.mu1, self.mu2)
        return _Subtree(float(value[0]), float(value[0]), {})

    def _depth_one(self, rows, min_leaf):
        none = self._leaf(rows, min_leaf)
        if rows.size < 2:
            return none
        zeros = np.zeros(self.n, np.int64)
        value, threshold = np.full(self.X.shape[1], np.inf), np.zeros(self.X.shape[1])
        for chunk in np.array_split(np.arange(self.X.shape[1]), max(1, rows.size * self.X.shape[1] // CHUNK)):
            self._check_time()  # a scan of many rows takes seconds: stop between chunks of features
            v, b, _ = scan_splits(self.X, self.y, rows, zeros, 1, zeros, 1, self.mu1, self.mu2, min_leaf, self.eps,
                                  EXACT, 0, chunk)
            value[chunk], threshold[chunk] = v[chunk], b[chunk]
        j = int(np.argmin(value))
        if value[j] + self.split_cost < none.value:
            v = float(value[j]) + self.split_cost
            return _Subtree(v, v, {1: (j, float(threshold[j]))})
        return none

    def _branch(self, rows, depth, min_leaf, incumbent):
        """Best-first search over (feature, interval of positions) for the root of a depth >= 2 subtree."""
        right_only = self.solve(rows, depth - 1, min_leaf)
        best = _Subtree(right_only.value, right_only.bound, _shifted(right_only.splits, 1))
        cutoff = min(incumbent, best.value)
        heap = []
        orders = {}
        for j in range(self.X.shape[1]):
            order = rows[np.argsort(self.X[rows, j], kind="mergesort")]
            values = self.X[order, j]
            cuts = np.flatnonzero(values[:-1] < values[1:]) + 1
            cuts = cuts[(cuts >= min_leaf) & (cuts <= rows.size - min_leaf)]
            if cuts.size:
                orders[j] = (order, cuts)
                heapq.heappush(heap, (self._interval_bound(order, cuts[0], cuts[-1], depth), j, 0, cuts.size - 1))
        top = depth == self.depth and rows.size == self.n
        while heap and heap[0][0] < min(cutoff, best.value):
            if top:
                self.partial = _Subtree(best.value, min(heap[0][0], best.value), best.splits)
            self._check_time()
            _, j, lo, hi = heapq.heappop(heap)
            order, cuts = orders[j]
            if lo == hi:
                candidate = self._evaluate(order, cuts[lo], j, depth, min_leaf)
                if candidate.value < best.value:
                    best = candidate
                continue
            mid = (lo + hi) // 2
            for a, b in ((lo, mid), (mid + 1, hi)):
                heapq.heappush(heap, (self._interval_bound(order, cuts[a], cuts[b], depth), j, a, b))
        return _Subtree(best.value, min(heap[0][0], best.value) if heap else best.value, best.splits)

    def _interval_bound(self, order, a, b, depth):
        """Relaxed lower bound of every position in [a, b] (module docstring)."""
        left = self.solve(np.sort(order[:a]), depth - 1, 1)
        right = self.solve(np.sort(order[b:]), depth - 1, 1)
        return left.bound + right.bound + self.split_cost

    def _evaluate(self, order, k, j, depth, min_leaf):
        left = self.solve(np.sort(order[:k]), depth - 1, min_leaf)
        right = self.solve(np.sort(order[k:]), depth - 1, min_leaf)
        value = left.value + right.value + self.split_cost
        lo, hi = self.X[order[k - 1], j], self.X[order[k], j]
        splits = {1: (j, max(0.5 * (lo + hi), min(lo + self.eps[j], hi))), **_shifted(left.splits, 0),
                  **_shifted(right.splits, 1)}
        return _Subtree(value, left.bound + right.bound + self.split_cost, splits)
