r"""Local search for deterministic axis-aligned trees with linear leaves (ORT-L).

The primal method of the MILO tree (:class:`srtopt.MILOTreeRegressor`): the local search
of Bertsimas & Dunn (*Machine Learning under a Modern Optimization Lens*, 2019, ch. 8;
Dunn's thesis, 2018) with linear leaves.  It minimizes the MILO tree's objective
(:class:`AxisObjective`) over trees of depth D on min-max scaled X and standardized y:

* visit the branch nodes in a random order; at node t, with the points that reach t,
  compare the current subtree with (a) the best split of t over every feature and every
  threshold between two distinct values, the subtrees below kept
  (:func:`srtopt.milo.kernels.scan_splits`, each candidate's leaves refit), (b) t not
  splitting (every point goes right), (c) t replaced by its left or its right child's
  subtree; take the best if it lowers the objective (leaves refit exactly);
* repeat until a whole pass changes nothing: a local optimum;
* restart from random trees (a random feature and the value of a random point at every
  node) and keep the best local optimum, until ``n_restarts`` or the deadline (a
  :class:`~srtopt.solvers.deadline.Deadline`, handed to every node visit, so that the absolute
  loss's leaf fits stop at it too).

The first descent starts from the tree without splits, visiting the root first, so it
grows the greedy top-down tree with linear leaves before improving it.  ``starts`` adds
trees of the caller's (e.g. a CART structure).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from srtopt.milo.kernels import route, scan_splits, subtree_leaves
from srtopt.milo.objective import feature_epsilons, subtree_value, tree_objective
from srtopt.solvers.deadline import Deadline
from srtopt.tree import Tree

__all__ = ["LocalSearch", "LocalSearchResult"]

@dataclass
class LocalSearchResult:
    """The best tree found: ``features`` / ``thresholds`` by branch index t - 1 (feature -1:
    the node does not split), its objective E and leaf models ``coef``, the number of
    descents run, and ``log``: (seconds, descent, E) each time the best improved.

    Returned by :meth:`LocalSearch.run`; D is the tree depth, p the number of features, and
    every quantity is in scaled units.  The fields are the attributes of the same names.

    Parameters
    ----------
    features : ndarray of shape (2^D - 1,), dtype int64
        Split feature of branch node t at index t - 1; -1 when the node does not split
        (every point goes right).
    thresholds : ndarray of shape (2^D - 1,), dtype float
        Threshold of branch node t at index t - 1: a point goes left iff its feature value
        is < the threshold; unused where the node does not split.
    objective : float
        E of the tree (:class:`AxisObjective`), from :func:`tree_objective`.
    coef : ndarray of shape (2^D, p + 1)
        Leaf models: row l is leaf 2^D + l, column 0 its intercept.
    descents : int
        Number of descents run in all (:meth:`LocalSearch.run` sets it when it returns).
    log : list of (float, int, float), default=[]
        (seconds since the run began, number of the descent (from 1), E) each time the
        best tree improved.
    """

    features: np.ndarray
    thresholds: np.ndarray
    objective: float
    coef: np.ndarray
    descents: int
    log: list = field(default_factory=list)


class LocalSearch:
    """The local search of the module docstring on scaled data (X in [0, 1], y standardized).

    Parameters
    ----------
    X : array-like of shape (N, p)
        The training inputs, min-max scaled to [0, 1]; stored as C-contiguous float64.
    y : array-like of shape (N,)
        The training targets, standardized; stored as C-contiguous float64.
    depth : int
        Tree depth D >= 1.
    objective : AxisObjective
        The objective E to minimize.
    random_state : None, int or numpy.random.Generator, default=None
        Anything :func:`numpy.random.default_rng` accepts; drives the node orders and the
        random restarts.
    coarse : int, default=128
        The threshold screening of :func:`srtopt.milo.kernels.scan_splits`: a feature with
        more candidate positions than this is first evaluated at about this many evenly
        spaced ones.
    refine : int, default=3
        The screening's second step: for this many features with the lowest values, every
        position between the two neighbours of the best one.
    candidates : int, default=3
        With ``loss="absolute"``: how many features' best thresholds (screened with the
        squared loss) are evaluated exactly at every visit (1 with the squared loss).

    Attributes
    ----------
    tree : srtopt.tree.Tree
        The tree of depth D (node numbering).
    n, p : int
        Number of rows and features of ``X``.
    rng : numpy.random.Generator
        The generator built from ``random_state``.
    eps : ndarray of shape (p,)
        Per-feature smallest gap between distinct values (at least 1e-5), from
        :func:`srtopt.milo.objective.feature_epsilons`.

    Raises
    ------
    ValueError
        If ``depth`` is smaller than 1 (from :class:`srtopt.tree.Tree`).
    """

    def __init__(self, X, y, depth, objective, *, random_state=None, coarse=128, refine=3, candidates=3):
        self.X = np.ascontiguousarray(X, dtype=float)
        self.y = np.ascontiguousarray(y, dtype=float)
        self.depth, self.objective = int(depth), objective
        self.tree = Tree(self.depth)
        self.n, self.p = self.X.shape
        self.rng = np.random.default_rng(random_state)
        self.eps = feature_epsilons(self.X, 1e-5)[0]
        self.coarse, self.refine, self.candidates = int(coarse), int(refine), int(candidates)
        self.features = np.arange(self.p, dtype=np.int64)

    # ------------------------------------------------------------ the search
    def run(self, *, n_restarts=100, deadline=None, starts=()) -> LocalSearchResult:
        """Descend from the empty tree, from each of ``starts`` ((features, thresholds)),
        then from random trees, ``n_restarts`` descents in all or until ``deadline``
        (a :class:`~srtopt.solvers.deadline.Deadline`); the best local optimum.

        Parameters
        ----------
        n_restarts : int, default=100
            Number of descents in all, the one from the empty tree and those from
            ``starts`` included (at least 1 is run).
        deadline : Deadline or None, default=None
            No descent starts after it except the first, a descent under way stops visiting
            nodes when it passes, and the leaf fits of the absolute loss stop at it
            (:func:`~srtopt.solvers.least_absolute.lad_lasso_fit`); None: no limit.
        starts : iterable of (features, thresholds), default=()
            Caller's trees, as the arrays of :class:`LocalSearchResult` (length 2^D - 1);
            descended from after the empty tree, in order, within ``n_restarts``.

        Returns
        -------
        LocalSearchResult
            The tree of lowest E over the descents (a later one replaces it only if lower
            by more than a relative 1e-12), ``descents`` the number run and ``log`` the
            improvements.
        """
        deadline = Deadline() if deadline is None else deadline
        began = time.perf_counter()
        empty = (np.full(self.tree.n_branch, -1, np.int64), np.zeros(self.tree.n_branch))
        queue = [empty, *((np.asarray(f, np.int64), np.asarray(b, float)) for f, b in starts)]
        best, log, descents = None, [], 0
        while descents < max(n_restarts, 1) and (descents == 0 or not deadline.passed()):
            features, thresholds = (a.copy() for a in queue[descents]) if descents < len(queue) else self._random()
            self.descend(features, thresholds, deadline)
            value, coef = tree_objective(self.objective, self.X, self.y, features, thresholds, self.depth, deadline)
            descents += 1
            if best is None or value < best.objective - 1e-12 * max(1.0, abs(best.objective)):
                best = LocalSearchResult(features, thresholds, value, coef, descents, log)
                log.append((time.perf_counter() - began, descents, value))
        best.descents = descents
        return best

    def descend(self, features, thresholds, deadline=None) -> None:
        """Visit the nodes in random orders (the root first in the first pass) until a pass
        changes nothing or the deadline; ``features``/``thresholds`` change in place.

        Parameters
        ----------
        features : ndarray of shape (2^D - 1,), dtype int64
            Split feature of branch node t at index t - 1 (-1: no split); updated in place.
        thresholds : ndarray of shape (2^D - 1,), dtype float
            Threshold of branch node t at index t - 1; updated in place.
        deadline : Deadline or None, default=None
            Checked before every node visit, and given to its leaf fits; None: no limit.

        Returns
        -------
        None
        """
        deadline = Deadline() if deadline is None else deadline
        first = True
        while True:
            order = self.rng.permutation(np.arange(1, self.tree.n_branch + 1))
            if first:
                order = np.concatenate([[1], order[order != 1]])
                first = False
            improved = False
            for t in order:
                if deadline.passed():
                    return
                improved |= self.visit(features, thresholds, int(t), deadline)
            if not improved:
                return

    def visit(self, features, thresholds, t, deadline=None) -> bool:
        """Re-optimize the subtree of node t (module docstring); True if it changed.

        Parameters
        ----------
        features : ndarray of shape (2^D - 1,), dtype int64
            Split feature of branch node t at index t - 1 (-1: no split); updated in place.
        thresholds : ndarray of shape (2^D - 1,), dtype float
            Threshold of branch node t at index t - 1; updated in place.
        t : int
            The branch node, 1 to 2^D - 1 (1 the root, 2t and 2t + 1 its children).
        deadline : Deadline or None, default=None
            When the absolute loss's leaf fits must end (:func:`~.objective.subtree_value`); None:
            no limit.

        Returns
        -------
        bool
            True if a candidate lowered the subtree's value and replaced it; False otherwise,
            also when no training point reaches t.
        """
        rows = self._rows_at(features, thresholds, t)
        if rows.size == 0:
            return False
        _, current = self._value(features, thresholds, t, rows, deadline)
        trials = [self._with_split(features, thresholds, t, -1, 0.0)]
        for j, b in self._best_splits(features, thresholds, t, rows):
            trials.append(self._with_split(features, thresholds, t, j, b))
        if self.tree.subtree_depth(t) >= 2:
            trials += [self._promoted(features, thresholds, t, child) for child in (2 * t, 2 * t + 1)]
        best, chosen = current, None
        for trial in trials:
            _, value = self._value(*trial, t, rows, deadline)
            if value < best - 1e-10 * max(1.0, abs(best)):
                best, chosen = value, trial
        if chosen is None:
            return False
        features[:], thresholds[:] = chosen
        return True

    # --------------------------------------------------------------- helpers
    def _value(self, features, thresholds, t, rows, deadline):
        return subtree_value(self.objective, self.X, self.y, rows, features, thresholds, t, self.depth, self.n,
                             deadline)

    def _rows_at(self, features, thresholds, t):
        leaf = route(self.X, features, thresholds, self.depth)
        levels = self.depth - Tree.node_depth(t)
        first = t * 2**levels
        return np.flatnonzero((leaf >= first) & (leaf < first + 2**levels)).astype(np.int64)

    def _best_splits(self, features, thresholds, t, rows):
        """(feature, threshold) candidates at t from the scan, best first."""
        levels = self.depth - Tree.node_depth(t) - 1
        left = np.zeros(self.n, np.int64)
        right = np.zeros(self.n, np.int64)
        left[rows] = subtree_leaves(self.X, rows, features, thresholds, 2 * t, levels)
        right[rows] = subtree_leaves(self.X, rows, features, thresholds, 2 * t + 1, levels)
        o = self.objective
        value, threshold, _ = scan_splits(self.X, self.y, rows, left, 2**levels, right, 2**levels, o.l1 * self.n,
                                          o.l2 * self.n, o.min_samples_leaf, self.eps, self.coarse, self.refine,
                                          self.features)
        keep = 1 if o.loss == "squared" else self.candidates
        return [(int(j), float(threshold[j])) for j in np.argsort(value)[:keep] if np.isfinite(value[j])]

    @staticmethod
    def _with_split(features, thresholds, t, j, b):
        features, thresholds = features.copy(), thresholds.copy()
        features[t - 1], thresholds[t - 1] = j, b
        return features, thresholds

    def _promoted(self, features, thresholds, t, child):
        """The tree with the subtree of ``child`` moved up to t (its last level not splitting)."""
        features, thresholds = features.copy(), thresholds.copy()
        levels = self.tree.subtree_depth(t)
        for level in range(levels):
            for offset in range(2**level):
                target = t * 2**level + offset
                if level < levels - 1:
                    source = child * 2**level + offset
                    features[target - 1], thresholds[target - 1] = features[source - 1], thresholds[source - 1]
                else:
                    features[target - 1], thresholds[target - 1] = -1, 0.0
        return features, thresholds

    def _random(self):
        features = self.rng.integers(0, self.p, self.tree.n_branch).astype(np.int64)
        thresholds = self.X[self.rng.integers(0, self.n, self.tree.n_branch), features]
        return features, thresholds.astype(float)
