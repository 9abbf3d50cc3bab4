"""Clustering-based initialization procedure (paper section 4.4, "Initialization procedure").

r repetitions of hierarchical 2-means from the root to the branch nodes at
depth D-1; keep the partition of the points into leaves with the lowest
Davies-Bouldin index; then a logistic regression per branch node (left child's
points = class 1, since p_it is the probability of the left branch) gives
omega^0 and a linear regression per leaf gives beta^0.
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import davies_bouldin_score
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from ..models.srt import SRTProblem, omega_from_logistic

SPLIT_BIAS = 1.0  # omega_0t sending every point to the only non-empty child


def hierarchical_two_means(X, tree, weights, seed) -> dict[int, np.ndarray]:
    """C_t for every node t: the rows assigned to t by recursive 2-means."""
    C = {1: np.arange(X.shape[0])}
    for t in tree.branch_nodes:
        idx = C[t]
        labels = np.zeros(len(idx), dtype=int)
        if len(idx) >= 2 and len(np.unique(X[idx], axis=0)) >= 2:
            km = KMeans(n_clusters=2, n_init=1, random_state=seed)
            labels = km.fit_predict(X[idx], sample_weight=weights[idx])
        C[2 * t], C[2 * t + 1] = idx[labels == 0], idx[labels == 1]
    return C


def leaf_labels(C, tree, n) -> np.ndarray:
    labels = np.empty(n, dtype=int)
    for leaf in tree.leaves:
        labels[C[leaf]] = leaf
    return labels


def split_from_logistic(X, left, right, weights, mu) -> np.ndarray:
    """omega_t from a logistic regression separating C_left (class 1) from C_right."""
    p = X.shape[1]
    if len(left) == 0 or len(right) == 0:
        return np.r_[SPLIT_BIAS if len(right) == 0 else -SPLIT_BIAS, np.zeros(p)]
    idx = np.concatenate([left, right])
    c = np.r_[np.ones(len(left)), np.zeros(len(right))]
    model = LogisticRegression().fit(X[idx], c, sample_weight=weights[idx])
    return omega_from_logistic(model.intercept_, model.coef_, mu)


def leaf_from_regression(X, y, rows, weights) -> np.ndarray:
    """beta_t from a linear regression on the points of leaf t (0 model if empty)."""
    if len(rows) == 0:
        return np.r_[np.average(y, weights=weights), np.zeros(X.shape[1])]
    model = LinearRegression().fit(X[rows], y[rows], sample_weight=weights[rows])
    return np.r_[model.intercept_, model.coef_]


def cluster_initialization(problem: SRTProblem, n_init: int = 10, random_state=None):
    """(omega^0, beta^0, Davies-Bouldin index of the chosen partition)."""
    X, y, tree = problem.X, problem.y, problem.tree
    # weights with mean 1: scikit-learn's regularised logistic regression is not invariant
    # to their scale (weights summing to 1 would let the l2 term flatten every split)
    w = problem.s * len(problem.s)
    rng = check_random_state(random_state)
    # one thread, limited once: 2-means is too small for OpenMP to pay off (6x faster on 2 busy
    # cores), and entering threadpool_limits re-reads the loaded libraries each time
    with threadpool_limits(1):
        return _best_partition_model(X, y, tree, w, rng, n_init, problem.mu)


def _best_partition_model(X, y, tree, w, rng, n_init, mu):
    best, best_db = None, np.inf
    for _ in range(n_init):
        C = hierarchical_two_means(X, tree, w, rng.randint(np.iinfo(np.int32).max))
        labels = leaf_labels(C, tree, X.shape[0])
        n_clusters = len(np.unique(labels))
        db = davies_bouldin_score(X, labels) if 2 <= n_clusters < X.shape[0] else np.inf
        if best is None or db < best_db:
            best, best_db = C, db
    omega = np.array([split_from_logistic(X, best[2 * t], best[2 * t + 1], w, mu)
                      for t in tree.branch_nodes])
    beta = np.array([leaf_from_regression(X, y, best[t], w) for t in tree.leaves])
    return omega, beta, best_db
