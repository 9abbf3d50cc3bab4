"""Clustering-based initialization procedure (paper section 4.4, "Initialization procedure").

r repetitions of hierarchical 2-means from the root to the branch nodes at
depth D-1; keep the partition of the points into leaves with the lowest
Davies-Bouldin index; then a logistic regression per branch node (left child's
points = class 1, since p_it is the probability of the left branch) gives
omega^0 and a linear regression per leaf gives beta^0.

Two measured departures keep it fast without changing what it computes:

* 2-means is Lloyd's algorithm from a k-means++ start, written here in numpy
  (the r x (2^D - 1) calls are small; scikit-learn's ``KMeans`` spent most of
  its time in per-call set-up);
* on more than ``max_rows`` training rows the clustering, the Davies-Bouldin
  index and the logistic regressions use a random subsample of ``max_rows``
  rows (drawn with probabilities proportional to the sample weights); every row
  is then routed by the hierarchy's nearest centroids, and the leaf
  regressions use all rows.

The logistic regressions are the WLR formulation of eq. (reshuffle) with the
ridge of scikit-learn's ``LogisticRegression(C=1)``, solved by the WLR solver
(exact Newton by default).

Two departures start from hard splits made soft (:func:`soft_tree_start`) and the
same leaf regressions: :class:`ModelTreeInitialization` (the estimators' default,
``init="model-tree"``), a greedy tree whose splits are chosen for linear leaves
(:func:`linear_split`), and :class:`CartInitialization` (``init="cart"``), CART's
splits (docs/departures.md, "A greedy model tree").

An initialization is any callable ``init(problem, random_state)`` returning
(omega^0, beta^0) or (omega^0, beta^0, info dict) for an
:class:`~srtopt.models.srt.SRTProblem` (X scaled to [0, 1], y standardized);
:class:`ClusterInitialization` is the paper's, the estimators' ``init="cluster"``.  One that
also takes a keyword ``deadline`` is given the fit's :class:`~srtopt.solvers.deadline.Deadline`
(:func:`initialize`): the searches of the model tree and the clustering's repetitions stop at it.
The three split only on the features the constraints leave to the splits (not a monotone
feature); the rest of the constraints is restored after them
(:func:`~srtopt.training.feasibility.restore`).
"""

from __future__ import annotations

import hashlib
import inspect
import math
import time
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils import check_random_state

from .. import kernels
from ..models.srt import SRTProblem, WLRProxy
from ..solvers.deadline import Deadline
from ..bases import LinearBasis
from ..linalg import weighted_ridge
from ..solvers.newton import NewtonSolver
from ..tree import Tree

SPLIT_BIAS = 1.0  # omega_0t sending every point to the only non-empty child
MAX_ROWS = 50_000  # rows clustered when the training set is larger (a weighted subsample)
SOFT_SLOPE = 20.0  # slope of a softened hard split on a feature scaled to [0, 1]
MIN_LEAF = 0.05  # least share of the rows on each side of a hard split
MODEL_TREE_RIDGE = 1e-3  # ridge per row of the model tree's split regressions
WIDE = 64  # on more features, the model tree's split search screens features and leaf columns
TIE = 1e-12  # relative gap below which a row is at the same distance from two 2-means centroids


@dataclass
class Hierarchy:
    """C_t (row indices) for every node t, and the two centroids used to split each branch node."""

    C: dict
    centroids: dict


def two_means(X, w, rng, max_iter=100) -> tuple[np.ndarray, np.ndarray]:
    """Weighted 2-means (Lloyd's algorithm, k-means++ start): (labels in {0, 1}, centroids (2, p)).

    A row goes to centroid 1 iff it is nearer to it (:func:`nearer_second`), one matrix-vector
    product per iteration; the iterations stop when no label changes."""
    prob = w / w.sum()
    first = X[rng.choice(len(X), p=prob)]
    d2 = _sq_dist(X, first)
    if not prob @ d2 > 0:  # every row of positive weight at the first centre: one cluster
        return np.zeros(len(X), dtype=int), np.vstack([first, first])
    centers = np.vstack([first, X[rng.choice(len(X), p=prob * d2 / (prob @ d2))]])
    labels = None
    for _ in range(max_iter):
        c0, c1 = centers
        new = nearer_second(X, c0, c1).astype(int)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        w1 = w * labels
        mass = np.array([w.sum() - w1.sum(), w1.sum()])
        sums = np.vstack([X.T @ (w - w1), X.T @ w1])
        centers = np.where(mass[:, None] > 0, sums / np.where(mass > 0, mass, 1.0)[:, None], centers)
    return labels, centers


def nearer_second(X, c0, c1) -> np.ndarray:
    """The rows of X nearer to c1 than to c0: x.(c1 - c0) > (|c1|^2 - |c0|^2) / 2 by more than
    :data:`TIE` of the terms' scale.  A row at the same distance from both (data on a grid has
    them) goes to c0 whatever the rounding of the products, which differs between BLAS builds."""
    margin = X @ (c1 - c0) - 0.5 * (c1 @ c1 - c0 @ c0)
    scale = np.abs(X) @ np.abs(c1 - c0) + 0.5 * (c1 @ c1 + c0 @ c0)
    return margin > TIE * scale


def _sq_dist(X, center):
    return np.einsum("ij,ij->i", X - center, X - center)


def hierarchical_two_means(X, tree, weights, rng) -> Hierarchy:
    """Recursive 2-means from the root to the branch nodes at depth D-1."""
    C, centroids = {1: np.arange(X.shape[0])}, {}
    for t in tree.branch_nodes:
        idx = C[t]
        labels = np.zeros(len(idx), dtype=int)
        if len(idx) >= 2 and np.any(weights[idx] > 0):
            labels, centroids[t] = two_means(X[idx], weights[idx], rng)
        C[2 * t], C[2 * t + 1] = idx[labels == 0], idx[labels == 1]
    return Hierarchy(C, centroids)


def route(X, hierarchy, tree) -> dict[int, np.ndarray]:
    """C_t of all rows of X: each row follows the nearer centroid down the hierarchy."""
    C = {1: np.arange(X.shape[0])}
    for t in tree.branch_nodes:
        idx = C[t]
        right = np.zeros(len(idx), dtype=bool)  # no split was made here: every row goes left
        if t in hierarchy.centroids:
            right = nearer_second(X[idx], *hierarchy.centroids[t])
        C[2 * t], C[2 * t + 1] = idx[~right], idx[right]
    return C


def davies_bouldin(X, labels) -> float:
    """Davies-Bouldin index of a partition (Davies and Bouldin 1979; the value of
    scikit-learn's ``davies_bouldin_score``, which spent milliseconds per call validating
    its input): the mean over clusters k of max_l (s_k + s_l) / |c_k - c_l|, with c_k the
    centroid and s_k the mean distance of cluster k's points to it."""
    clusters = np.unique(labels)
    centroids = np.array([X[labels == k].mean(axis=0) for k in clusters])
    spread = np.array([np.mean(np.sqrt(_sq_dist(X[labels == k], c))) for k, c in zip(clusters, centroids)])
    gaps = np.sqrt(np.maximum(np.sum((centroids[:, None] - centroids[None]) ** 2, axis=2), 0.0))
    if np.allclose(spread, 0) or np.allclose(gaps, 0):
        return 0.0
    gaps[gaps == 0] = np.inf  # the diagonal (and coinciding centroids) never give the maximum
    return float(np.mean(np.max((spread[:, None] + spread[None]) / gaps, axis=1)))


def leaf_labels(C, tree, n) -> np.ndarray:
    labels = np.empty(n, dtype=int)
    for leaf in tree.leaves:
        labels[C[leaf]] = leaf
    return labels


def split_from_logistic(X, left, right, weights, mu, solver, bounds=None) -> np.ndarray:
    """omega_t from a logistic regression separating C_left (class 1) from C_right: the WLR
    formulation with scikit-learn's default ridge (C = 1, weights with mean 1); ``bounds``:
    (lower, upper) of omega_t from the constraints."""
    p = X.shape[1]
    if len(left) == 0 or len(right) == 0:
        return np.r_[SPLIT_BIAS if len(right) == 0 else -SPLIT_BIAS, np.zeros(p)]
    idx = np.concatenate([left, right])
    c = np.r_[np.ones(len(left)), np.zeros(len(right))]
    wlr = WLRProxy(kernels.split_design(X[idx]), c, weights[idx], mu, np.zeros(p + 1), mu**2 / (len(idx) * p**2),
                   variable_bounds=bounds)
    return solver.solve(wlr, wlr.start()).x


def leaf_start(problem: SRTProblem, rows_of) -> np.ndarray:
    """beta^0: for every leaf t its leaf model's start on the rows ``rows_of(t)`` (every initialization's
    leaf models: a weighted regression for value leaves, the smoothed class frequencies for classification
    leaves, :meth:`srtopt.leaf_model.LeafModel.start`), which the first LN steps refine."""
    return np.array([problem.leaf_model.start(problem, rows_of(t)) for t in problem.tree.leaves])


def initialize(init, problem: SRTProblem, random_state, deadline: Deadline) -> tuple:
    """``init(problem, random_state)``: (omega^0, beta^0) or (omega^0, beta^0, info); ``deadline`` is
    passed as a keyword to an initialization that takes one (module docstring)."""
    takes = "deadline" in inspect.signature(init).parameters
    return init(problem, random_state, deadline=deadline) if takes else init(problem, random_state)


def cluster_initialization(problem: SRTProblem, n_init: int = 10, random_state=None, wlr_solver=None,
                           max_rows: int | None = MAX_ROWS, split_scale: float = 1.0, n_jobs=None,
                           deadline: Deadline | None = None):
    """(omega^0, beta^0, Davies-Bouldin index of the chosen partition).

    ``split_scale`` multiplies the logistic regressions' omega^0 (1: the paper).  Those
    regressions separate well-separated clusters, so their splits are sharp: most rows
    sit where the logistic CDF is flat and the BN gradient is tiny (docs/departures.md,
    "The clustering start's own settings"); a factor below 1 starts from softer splits with the same
    hyperplanes.  ``n_jobs`` threads run the r repetitions (each has its own seed drawn
    from ``random_state``, so the result does not depend on ``n_jobs``); once ``deadline``
    (None: none) is nearer than twice the last batch's time, no further batch of repetitions
    starts (the first always runs).  The logistic regressions always finish (a handful of
    Newton steps each)."""
    deadline = deadline or Deadline()
    X, y, tree = problem.X, problem.y, problem.tree
    # the sample weights as given: the logistic regressions' ridge is scikit-learn's C = 1, a row of weight k as k rows
    w = problem.counts
    rng = check_random_state(random_state)
    sample = _subsample(problem, rng, max_rows)
    seeds = rng.randint(np.iinfo(np.int32).max, size=n_init)
    partitions = []
    with Parallel(n_jobs=n_jobs, prefer="threads") as parallel:
        batch = max(1, effective_n_jobs(n_jobs))
        batch_seconds = 0.0
        for first in range(0, n_init, batch):
            # time_limit: keep the repetitions done when the next batch and the regressions
            # after it (about one batch's time) would not end before the deadline
            if partitions and deadline.left() < 2 * batch_seconds:
                break
            started = time.perf_counter()
            partitions += parallel(delayed(_partition)(X[sample], tree, w[sample], seed)
                                   for seed in seeds[first:first + batch])
            batch_seconds = time.perf_counter() - started
    best_db, best = min(partitions, key=lambda partition: partition[0])
    solver = wlr_solver or NewtonSolver()
    subsampled = len(sample) < len(y)
    Xs, ws = X[sample], (np.ones(len(sample)) if subsampled else w)
    split_bounds = problem.constraint_set.split_bounds()
    omega = split_scale * np.array([split_from_logistic(Xs, best.C[2 * t], best.C[2 * t + 1], ws, problem.mu,
                                                        solver, split_bounds) for t in tree.branch_nodes])
    C = route(X, best, tree) if subsampled else best.C
    return omega, leaf_start(problem, C.__getitem__), best_db


def _partition(X, tree, weights, seed) -> tuple[float, Hierarchy]:
    """One repetition: (Davies-Bouldin index of the leaf partition, the hierarchy)."""
    hierarchy = hierarchical_two_means(X, tree, weights, np.random.RandomState(seed))
    labels = leaf_labels(hierarchy.C, tree, X.shape[0])
    n_clusters = len(np.unique(labels))
    return (davies_bouldin(X, labels) if 2 <= n_clusters < X.shape[0] else np.inf), hierarchy


@dataclass
class ClusterInitialization:
    """The paper's clustering-based initialization as an object: ``init(problem, random_state)``
    -> (omega^0, beta^0, {"davies_bouldin": index}) (see :func:`cluster_initialization`)."""

    n_init: int = 10
    split_scale: float = 1.0
    max_rows: int | None = MAX_ROWS
    wlr_solver: object = None
    n_jobs: int | None = None

    def __call__(self, problem: SRTProblem, random_state=None, deadline: Deadline | None = None):
        omega, beta, db = cluster_initialization(problem, self.n_init, random_state, self.wlr_solver, self.max_rows,
                                                 self.split_scale, self.n_jobs, deadline)
        return omega, beta, {"davies_bouldin": db}


@dataclass
class WarmStart:
    """Start from given (omega^0, beta^0) in the scaled space of the training data, e.g. the
    ``omega_``, ``beta_`` of a tree fitted on the same data (a regularization path: each
    strength starts from the previous one's tree)."""

    omega: np.ndarray
    beta: np.ndarray

    @classmethod
    def from_estimator(cls, estimator) -> "WarmStart":
        return cls(np.array(estimator.omega_, float), np.array(estimator.beta_, float))

    def __call__(self, problem: SRTProblem, random_state=None):
        tree, q = problem.tree, problem.n_features + 1
        leaf_width = problem.Xa.shape[1] * problem.leaf_model.n_outputs
        if self.omega.shape != (tree.n_branch, q) or self.beta.shape != (tree.n_leaves, leaf_width):
            raise ValueError(f"warm start omega {self.omega.shape} and beta {self.beta.shape} do not fit a depth-"
                             f"{tree.depth} tree with {q - 1} features and leaves of {leaf_width} coefficients")
        return self.omega.copy(), self.beta.copy()


def cart_initialization(problem: SRTProblem, slope: float = SOFT_SLOPE, min_leaf: float = MIN_LEAF,
                        random_state=None, max_rows: int | None = MAX_ROWS, deadline: Deadline | None = None):
    """(omega^0, beta^0, CART's training score): the splits of a depth-D CART tree (the leaf model's
    ``partition_tree``: scikit-learn's ``DecisionTreeRegressor``, or ``DecisionTreeClassifier`` on the class
    codes of a classification problem; leaves of at least ``min_leaf`` of the rows), each made soft
    (:func:`soft_tree_start`).  On more than ``max_rows`` rows CART is fitted on a weighted
    subsample of ``max_rows`` rows, and of fewer when it would not end in half the time left before
    ``deadline`` (None: none; :func:`_cart_rows`); the leaf models use all rows."""
    X, y = problem.X, problem.y
    rng = check_random_state(random_state)
    features = np.flatnonzero(problem.constraint_set.split_features())
    seconds = (deadline or Deadline()).left() / 2
    sample = _subsample(problem, rng, _cart_rows(max_rows, len(y), len(features), seconds))
    weighted = len(sample) == len(y)  # the rows count by their weights (a row of weight k as k rows)
    cart = problem.leaf_model.partition_tree(
        max_depth=problem.tree.depth, random_state=rng.randint(2**31 - 1),
        **({"min_weight_fraction_leaf": min_leaf} if weighted else {"min_samples_leaf": min_leaf}))
    # the weights relative to the largest: CART's impurities square weighted counts, which overflow from ~1e154
    relative = problem.counts / problem.counts.max() if weighted else None
    cart.fit(X[sample][:, features], y[sample], sample_weight=relative)
    splits, node = {}, {1: 0}  # heap index t -> CART node id
    for t in problem.tree.branch_nodes:
        c = node.get(t, -1)
        if c >= 0 and cart.tree_.children_left[c] >= 0:
            splits[t] = (features[cart.tree_.feature[c]], cart.tree_.threshold[c])
            node[2 * t], node[2 * t + 1] = cart.tree_.children_left[c], cart.tree_.children_right[c]
    omega, beta = soft_tree_start(problem, splits, slope)
    return omega, beta, cart.score(X[sample][:, features], y[sample])


def model_tree_initialization(problem: SRTProblem, slope: float = SOFT_SLOPE, min_leaf: float = MIN_LEAF,
                              bins: int = 16, random_state=None, max_rows: int | None = MAX_ROWS, top=None,
                              deadline: Deadline | None = None):
    """(omega^0, beta^0, number of splits): a depth-D model tree grown greedily, each split
    x_j <= c chosen (:func:`linear_split`) so that ridge regressions on its two sides fit
    best, i.e. for linear leaves, as SRT has (CART chooses for constant leaves); each split
    made soft (:func:`soft_tree_start`).  A node splits only if both sides keep at least
    ``min_leaf`` of the rows and 2 (p + 1); on more than ``max_rows`` rows the splits are
    chosen on a weighted subsample.  With more than ``WIDE`` features the regressions of the
    split search use the intercept and the ``WIDE`` features most correlated with y, only the
    ``WIDE // 2`` features whose best constant-leaf split lowers the residuals' error most are
    tried as split features, at half the cuts (otherwise the search costs O(p^3) per feature;
    measured in docs/departures.md, "Leaf ridge").  At ``deadline`` (the fit's ``time_limit``;
    None: none) the splits found so far are kept.

    ``top``: the split weights omega (2^d - 1, p + 1) of a shallower tree, d < D, kept as the
    top d levels; the model tree grows below each of its leaves from the rows HBP routes
    there (a deeper tree grown from a fitted one, :class:`GrowInitialization`).

    The splits of the last ``MEMORY`` problems are remembered (keyed by the data, the depth
    and the parameters), and the soft start made from them: the leaf-ridge guard's fits of one
    fold and the final fit start alike."""
    deadline = deadline or Deadline()
    drawn = max_rows is not None and len(problem.y) > max_rows  # a subsample, drawn with probabilities s_i
    key = None if top is not None else _memory_key(problem, slope, min_leaf, bins, random_state if drawn else None,
                                                   max_rows)
    if key in _SPLITS:
        omega, beta = _remembered_start(problem, key, _SPLITS[key], slope)
        return omega, beta, len(_SPLITS[key])
    sample = _subsample(problem, check_random_state(random_state), max_rows)  # random_state matters if drawn
    sample = sample[problem.s[sample] > 0]  # a row of weight 0 neither splits nor fits
    X, y = problem.X[sample], problem.y[sample]
    Xa = LinearBasis(problem.n_features).design(X)  # the splits are chosen for linear leaves, whatever the leaf model
    w = np.ones(len(sample)) if drawn else problem.counts[sample]  # drawn: equal weights
    columns = _leaf_columns(X, y, w)
    Xa = Xa[:, columns]
    allowed = problem.constraint_set.split_features()
    min_rows = max(min_leaf * w.sum(), 2 * Xa.shape[1])  # rows counted by their weights
    C, splits = {1: np.arange(len(sample))}, {}
    if top is not None:
        shallow = Tree(top.shape[0].bit_length())
        leaves = kernels.hbp_leaves(problem.Z[sample], top, shallow)
        C = {t: np.flatnonzero(leaves == t) for t in shallow.leaves}
    for t in problem.tree.branch_nodes:
        if t not in C:
            continue  # a node of top, or below a node that did not split
        rows = C.pop(t)
        split = (linear_split(X[rows], Xa[rows], y[rows], w[rows], bins, min_rows, MODEL_TREE_RIDGE * w[rows].sum(),
                              allowed, deadline) if w[rows].sum() >= 2 * min_rows and not deadline.passed() else None)
        if split is not None:
            splits[t] = split
            left = X[rows, split[0]] <= split[1]
            C[2 * t], C[2 * t + 1] = rows[left], rows[~left]
    if key is not None and not deadline.passed():  # a search the deadline cut short is not remembered
        _SPLITS[key] = splits
        while len(_SPLITS) > MEMORY:
            _SPLITS.pop(next(iter(_SPLITS)))
    omega, beta = soft_tree_start(problem, splits, slope, top)
    return omega, beta, len(splits)


MEMORY = 8  # problems whose model-tree splits (and soft starts) are remembered
_SPLITS: dict = {}
_STARTS: dict = {}


def _remembered_start(problem, key, splits, slope):
    """:func:`soft_tree_start` of remembered splits, itself remembered (by ``key``, mu, the leaf model and
    lambda_b: it depends on nothing else), as copies: the leaf-ridge guard's fits on a fold start alike."""
    start_key = (key, float(problem.mu), problem.leaf_model.key, problem.lambda_b)
    if start_key not in _STARTS:
        _STARTS[start_key] = soft_tree_start(problem, splits, slope)
        while len(_STARTS) > MEMORY:
            _STARTS.pop(next(iter(_STARTS)))
    omega, beta = _STARTS[start_key]
    return omega.copy(), beta.copy()


def _memory_key(problem, *parameters) -> tuple:
    """The data (a digest of X, y, s and the features a split may use), the depth and ``parameters``."""
    digest = hashlib.blake2b(digest_size=16)
    for array in (problem.X, problem.y, problem.s, problem.constraint_set.split_features()):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.digest(), problem.X.shape, problem.tree.depth, repr(parameters)


def linear_split(X, Xa, y, w, bins, min_rows, ridge, allowed=None, deadline: Deadline | None = None):
    """(j, c) of the split x_j <= c, c midway between one of the ``bins``-quantiles of x_j and the
    next larger value of x_j (so that no row lies on the softened split, where HBP's routing would
    be decided by rounding), that minimizes the sum
    over its two sides of min_b sum_i w_i (Xa_i b - y_i)^2 + ridge |b_1..p|^2 (the intercept
    is not penalized); None if no split leaves ``min_rows`` rows on each side.  ``allowed``:
    a boolean mask of the features a split may use (None: all).  The normal equations of
    every cut come from cumulative per-bin Gram matrices (one pass over the rows per feature).
    Rows count by their weights w (the quantiles and ``min_rows`` too: a row of weight k as k rows).
    At ``deadline`` (None: none) the best split of the features scanned so far."""
    deadline = deadline or Deadline()
    wX = Xa * w[:, None]
    wy2 = w * y * y
    G_all, h_all, yy_all = wX.T @ Xa, wX.T @ y, wy2.sum()
    R = ridge * np.eye(Xa.shape[1])
    R[0, 0] = 0.0
    best, found = np.inf, None
    if X.shape[1] > WIDE:  # wide data: half the cuts, as the candidate features are screened
        bins = max(2, bins // 2)
    quantiles = weighted_quantiles(X, np.linspace(0, 1, bins + 1)[1:-1], w)
    for j in _split_candidates(X, Xa, y, w, quantiles):
        if deadline.passed():
            break
        if allowed is not None and not allowed[j]:
            continue
        x = X[:, j]
        cuts = np.unique(quantiles[:, j])
        cuts = cuts[cuts < x.max()]
        if len(cuts) == 0:
            continue
        b = np.searchsorted(cuts, x)  # bin k holds the rows with cuts[k-1] < x <= cuts[k]
        order = np.argsort(b, kind="stable")
        bounds = np.r_[0, np.searchsorted(b[order], np.arange(len(cuts)), side="right")]
        wXs, Xs, ys, wy2s = wX[order], Xa[order], y[order], wy2[order]  # the bins are consecutive slices
        parts = list(zip(bounds[:-1], bounds[1:]))
        G = np.cumsum([wXs[a:z].T @ Xs[a:z] for a, z in parts], axis=0)  # left side of cut k: bins 0..k
        h = np.cumsum([wXs[a:z].T @ ys[a:z] for a, z in parts], axis=0)
        yy = np.cumsum([wy2s[a:z].sum() for a, z in parts])
        n_left = np.cumsum([w[order][a:z].sum() for a, z in parts])
        ok = (n_left >= min_rows) & (w.sum() - n_left >= min_rows)
        if not ok.any():
            continue
        A = np.concatenate([G[ok], G_all - G[ok]]) + R  # both sides of every cut in one batched solve
        r = np.concatenate([h[ok], h_all - h[ok]])
        try:
            coef = np.linalg.solve(A, r[..., None])[..., 0]
        except np.linalg.LinAlgError:  # a side whose rows leave the system singular
            coef = np.stack([np.linalg.lstsq(a, b, rcond=None)[0] for a, b in zip(A, r)])
        fit = np.einsum("kq,kq->k", coef, r)
        left, right = np.split(fit, 2)
        sse = (yy[ok] - left) + (yy_all - yy[ok] - right)
        k = int(np.argmin(sse))
        if sse[k] < best:
            cut = cuts[ok][k]
            best, found = sse[k], (j, (cut + x[x > cut].min()) / 2)
    return found


def weighted_quantiles(X, q, w) -> np.ndarray:
    """The quantiles ``q`` of every column of X (numpy's linear method) with the rows repeated by their
    weights w (fractional weights count in proportion); with unit weights :func:`numpy.quantile`."""
    if np.all(w == 1):
        return np.quantile(X, q, axis=0)
    out = np.empty((len(q), X.shape[1]))
    h = (w.sum() - 1) * np.asarray(q)  # the index of each quantile among the repeated rows
    for j in range(X.shape[1]):
        order = np.argsort(X[:, j], kind="stable")
        x, ends = X[order, j], np.cumsum(w[order])

        def value(k):
            return x[np.minimum(np.searchsorted(ends, k, side="right"), len(x) - 1)]

        low = np.floor(h)
        out[:, j] = value(low) + (h - low) * (value(low + 1) - value(low))
    return out


def _leaf_columns(X, y, w) -> np.ndarray:
    """Columns of Xa = [1, X] for the split search's regressions: all, or with more than
    ``WIDE`` features the intercept and the ``WIDE`` features most correlated with y."""
    p = X.shape[1]
    if p <= WIDE:
        return np.arange(p + 1)
    Xc, yc = X - np.average(X, axis=0, weights=w), y - np.average(y, weights=w)
    score = np.abs((w * yc) @ Xc) / np.sqrt(np.maximum(w @ Xc**2, 1e-300))
    return np.r_[0, 1 + np.sort(np.argsort(-score)[:WIDE])]


def _split_candidates(X, Xa, y, w, quantiles) -> np.ndarray:
    """The features the split search tries: all, or with more than ``WIDE`` features the
    ``WIDE // 2`` whose best constant-leaf split on the quantile cuts lowers most the weighted
    squared error of the residuals of one ridge regression on Xa."""
    p = X.shape[1]
    if p <= WIDE:
        return np.arange(p)
    coef = weighted_ridge(Xa, y, w / 2, MODEL_TREE_RIDGE * w.sum())
    r = y - Xa @ coef
    gains = np.zeros(p)
    for j in range(p):
        left = X[:, j][:, None] <= quantiles[:, j][None, :]
        wl, wr = w @ left, w @ ~left
        sl, sr = (w * r) @ left, (w * r) @ ~left
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where((wl > 0) & (wr > 0), sl**2 / wl + sr**2 / wr, 0.0)
        gains[j] = gain.max()
    return np.sort(np.argsort(-gains)[:WIDE // 2])


def soft_split(j: int, c: float, p: int, mu: float, slope: float = SOFT_SLOPE) -> np.ndarray:
    """omega_t of the hard split "x_j <= c goes left", softened: u_t = (slope / mu) (c - x_j),
    i.e. omega_0t = slope c / mu and omega_jt = -slope p / mu (the split uses x_j / p)."""
    omega_t = np.zeros(p + 1)
    omega_t[0], omega_t[1 + j] = slope * c / mu, -slope * p / mu
    return omega_t


def soft_tree_start(problem: SRTProblem, splits: dict, slope: float, top=None):
    """(omega^0, beta^0) from hard splits {t: (j, c)} "x_j <= c goes left", softened
    (:func:`soft_split`); a node without a split sends every row left (omega_0t =
    SPLIT_BIAS), so its right subtree starts empty; ``top``: the first rows of omega, as
    they are.  beta^0: the leaf regressions of the paper's initialization on the rows each
    leaf receives (the mean where none)."""
    tree, p = problem.tree, problem.n_features
    omega = np.zeros((tree.n_branch, p + 1))
    omega[:, 0] = SPLIT_BIAS
    for t, (j, c) in splits.items():
        omega[t - 1] = soft_split(j, c, p, problem.mu, slope)
    if top is not None:
        omega[: len(top)] = top
    leaves = kernels.hbp_leaves(problem.Z, omega, tree)
    return omega, leaf_start(problem, lambda t: np.flatnonzero(leaves == t))


#: seconds per row x feature x log2(rows) of a CART fit of depth 3 (2.6e-8 to 3.4e-8 measured on 50 to 66,000
#: rows of 20 to 2000 features, benchmarks/results/time_limits.md), a little above
CART_SECONDS = 4e-8
#: the rows CART is fitted on at least, however short the time left
CART_MIN_ROWS = 200


def _cart_rows(max_rows, n: int, p: int, seconds: float):
    """``max_rows`` (None: every row), fewer when CART on p features would not split them in ``seconds``
    (``CART_SECONDS`` n p log2 n), but at least ``CART_MIN_ROWS``."""
    if not math.isfinite(seconds):
        return max_rows
    rows = max(seconds, 0.0) / (CART_SECONDS * max(p, 1))
    for _ in range(3):  # n = seconds / (c p log2 n), to a few percent
        rows = max(seconds, 0.0) / (CART_SECONDS * max(p, 1) * max(math.log2(max(rows, 2.0)), 1.0))
    return int(min(max_rows or n, max(rows, CART_MIN_ROWS)))


def _subsample(problem, rng, max_rows) -> np.ndarray:
    """All row indices, or ``max_rows`` drawn without replacement with probabilities s_i."""
    n = len(problem.y)
    if max_rows is None or n <= max_rows:
        return np.arange(n)
    return np.sort(rng.choice(n, size=max_rows, replace=False, p=problem.s))


@dataclass
class CartInitialization:
    """Softened CART splits as the initial tree: ``init(problem, random_state)`` ->
    (omega^0, beta^0, {"cart_score": CART's training score, its R^2 or its accuracy}) (see
    :func:`cart_initialization`).
    Not the paper's procedure; the estimators' ``init="cart"``."""

    slope: float = SOFT_SLOPE
    min_leaf: float = MIN_LEAF
    max_rows: int | None = MAX_ROWS

    def __call__(self, problem: SRTProblem, random_state=None, deadline: Deadline | None = None):
        omega, beta, score = cart_initialization(problem, self.slope, self.min_leaf, random_state, self.max_rows,
                                                 deadline)
        return omega, beta, {"cart_score": score}


@dataclass
class GrowInitialization:
    """A deeper tree grown from a fitted shallower one: its split weights omega as the top
    levels, and below each of its leaves a greedy model tree on the rows that leaf receives
    (:func:`model_tree_initialization` with ``top``).  ``init(problem, random_state)`` ->
    (omega^0, beta^0, {"model_tree_splits": new splits}).

    ``tree``: a fitted :class:`~srtopt.estimators.SoftRegressionTree` of a smaller depth, fitted
    on the same X (its omega lives in the space the training data's scaling defines).

    >>> import numpy as np
    >>> from srtopt import SoftRegressionTree
    >>> X = np.random.default_rng(0).random((300, 2)); y = np.sin(6 * X[:, 0]) + X[:, 1]
    >>> shallow = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    >>> deep = SoftRegressionTree(depth=3, init=GrowInitialization(shallow), random_state=0).fit(X, y)
    >>> deep.get_depth()
    3
    """

    tree: object
    slope: float = SOFT_SLOPE
    min_leaf: float = MIN_LEAF
    max_rows: int | None = MAX_ROWS

    def __call__(self, problem: SRTProblem, random_state=None, deadline: Deadline | None = None):
        top = np.asarray(getattr(self.tree, "omega_", None) if self.tree is not None else None, dtype=float)
        if top.ndim != 2 or top.shape[1] != problem.n_features + 1 or not 1 <= len(top) < problem.tree.n_branch:
            raise ValueError(f"GrowInitialization needs a fitted tree of depth < {problem.tree.depth} on "
                             f"{problem.n_features} features, got {self.tree!r}")
        omega, beta, count = model_tree_initialization(problem, self.slope, self.min_leaf, random_state=random_state,
                                                       max_rows=self.max_rows, top=top, deadline=deadline)
        return omega, beta, {"model_tree_splits": count}


@dataclass
class ModelTreeInitialization:
    """A greedy model tree's splits, softened, as the initial tree: ``init(problem,
    random_state)`` -> (omega^0, beta^0, {"model_tree_splits": count}) (see
    :func:`model_tree_initialization`).  Not the paper's procedure; the estimators'
    ``init="model-tree"``."""

    slope: float = SOFT_SLOPE
    min_leaf: float = MIN_LEAF
    bins: int = 16
    max_rows: int | None = MAX_ROWS

    def __call__(self, problem: SRTProblem, random_state=None, deadline: Deadline | None = None):
        omega, beta, count = model_tree_initialization(problem, self.slope, self.min_leaf, self.bins, random_state,
                                                       self.max_rows, deadline=deadline)
        return omega, beta, {"model_tree_splits": count}
