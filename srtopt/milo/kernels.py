"""Compiled kernels of deterministic axis-aligned trees with linear leaves (the MILO tree).

Routing follows :func:`srtopt.milo.objective.route`: at branch node t with feature
f_t >= 0 a point goes LEFT iff x_f < b_t; a node with f_t = -1 sends every point
right.  The leaf model of leaf l is the elastic-net fit on the leaf design
``z = [1, x]`` (intercept unpenalized):

    v_l = min_beta  sum_{i in l} (y_i - z_i . beta)^2 + mu1 ||beta_S||_1 + mu2 ||beta_S||^2,

S the slopes, written through the leaf's Gram matrix G = Z'Z, c = Z'y and
yy = y'y as  yy - 2 c'beta + beta'G beta + penalties, and solved exactly by the
feature-sign search (:func:`_leaf_fit`).  The split search (:func:`scan_splits`)
evaluates every threshold of every feature at one node with the subtrees below it
fixed: sorted by the feature, the points are *added* one at a time to the leaf
they reach (one pass left to right fills the left subtree's leaves, one pass right
to left the right subtree's); after each point only that leaf's Gram matrix changes
(O(q^2), q = p + 1) and its fit is re-solved from the previous one (a warm-started
feature-sign search, usually one linear solve on the active set).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["route", "scan_splits", "leaf_fits", "subtree_leaf", "subtree_leaves"]

@numba.njit(cache=True, nogil=True)
def route(X, features, thresholds, depth):
    """Leaf (paper numbering) of every row of scaled ``X``: x_f < b goes left."""
    out = np.empty(X.shape[0], np.int64)
    for i in range(X.shape[0]):
        out[i] = subtree_leaf(X, i, features, thresholds, 1, depth) + 2**depth
    return out


@numba.njit(cache=True, nogil=True)
def subtree_leaf(X, i, features, thresholds, root, levels):
    """Index 0..2^levels - 1 of the leaf that row i reaches from node ``root``, ``levels``
    levels above the leaves."""
    t = root
    for _ in range(levels):
        f = features[t - 1]
        t = 2 * t if (f >= 0 and X[i, f] < thresholds[t - 1]) else 2 * t + 1
    return t - root * 2**levels


@numba.njit(cache=True, nogil=True)
def _workspace(q):
    """Buffers of :func:`_leaf_fit` for q coefficients (no allocation in the hot loop)."""
    return (np.zeros(q, np.bool_), np.zeros(q), np.zeros(q), np.zeros(q, np.int64),
            np.zeros((q, q)), np.zeros(q), np.zeros(q))


@numba.njit(cache=True, nogil=True)
def subtree_leaves(X, rows, features, thresholds, root, levels):
    """:func:`subtree_leaf` of every row in ``rows``."""
    out = np.empty(rows.shape[0], np.int64)
    for k in range(rows.shape[0]):
        out[k] = subtree_leaf(X, rows[k], features, thresholds, root, levels)
    return out


@numba.njit(cache=True, nogil=True)
def _leaf_fit(G, c, yy, mu1, mu2, beta, ws):
    """Minimize f(b) = yy - 2 c'b + b'G b + mu1 ||b_S||_1 + mu2 ||b_S||^2 over b (b[0] the
    unpenalized intercept, S the slopes) from ``beta`` (in place); return f at the optimum.

    The feature-sign search of Lee, Battle, Raina & Ng (2007), exact in a finite number
    of steps: on the active set A with signs theta it solves the quadratic model
    (G_AA + mu2 I) b_A = c_A - (mu1 / 2) theta_A and moves towards its minimizer to the
    lowest f on the segment (a coefficient that reaches 0 there leaves A); then it
    activates the zero coefficient that violates |g_a| <= mu1 / 2 most (g = G b - c) until
    none does.  A floor of 1e-12 G_00 on mu2 keeps the linear systems regular.  ``ws``:
    buffers from :func:`_workspace`."""
    q = G.shape[0]
    if G[0, 0] <= 0.0:
        beta[:] = 0.0
        return yy
    active = ws[0]
    ridge = max(mu2, 1e-12 * G[0, 0])
    tol = 1e-10 * (np.sqrt(yy * G[0, 0]) + 1.0)
    active[0] = True
    for a in range(1, q):
        active[a] = beta[a] != 0.0
    for _ in range(4 * q + 20):
        _feature_sign_steps(G, c, yy, mu1, ridge, beta, ws)
        worst, enter = tol, -1
        for a in range(1, q):
            if not active[a]:
                g = abs(_half_gradient(G, c, beta, a)) - 0.5 * mu1
                if g > worst:
                    worst, enter = g, a
        if enter < 0:
            break
        active[enter] = True
    return _value(G, c, yy, mu1, mu2, beta)


@numba.njit(cache=True, nogil=True)
def _half_gradient(G, c, beta, a):
    """(G b - c)_a: half the gradient of yy - 2 c'b + b'G b in coordinate a."""
    g = -c[a]
    for b in range(G.shape[0]):
        g += G[a, b] * beta[b]
    return g


@numba.njit(cache=True, nogil=True)
def _feature_sign_steps(G, c, yy, mu1, mu2, beta, ws):
    """Feature-sign steps on the active set until the minimizer of its quadratic model keeps
    every sign (a coefficient just activated, still 0, takes the sign that lowers f)."""
    active, theta, trial, A, M, rhs, target = ws
    q = G.shape[0]
    for _ in range(4 * q + 20):
        m = 0
        for a in range(q):
            if active[a]:
                A[m] = a
                m += 1
        for u in range(1, m):
            a = A[u]
            theta[a] = np.sign(beta[a]) if beta[a] != 0.0 else -np.sign(_half_gradient(G, c, beta, a))
        for u in range(m):
            rhs[u] = c[A[u]] - (0.5 * mu1 * theta[A[u]] if u > 0 else 0.0)
            for v in range(m):
                M[u, v] = G[A[u], A[v]]
            if u > 0:
                M[u, u] += mu2
        _cholesky_solve(M, rhs, m, target, 1e-12 * G[0, 0] + 1e-300)
        trial[:] = beta
        for u in range(m):
            trial[A[u]] = target[u]
        best_t, best_f, leaving = 1.0, _value(G, c, yy, mu1, mu2, trial), -1
        for u in range(1, m):  # where a nonzero coefficient would change sign: stop at 0
            a = A[u]
            if beta[a] != 0.0 and target[u] * beta[a] < 0.0:
                t = beta[a] / (beta[a] - target[u])
                for v in range(m):
                    trial[A[v]] = beta[A[v]] + t * (target[v] - beta[A[v]])
                trial[a] = 0.0
                f = _value(G, c, yy, mu1, mu2, trial)
                if f < best_f:
                    best_t, best_f, leaving = t, f, a
        consistent = True
        for u in range(m):
            beta[A[u]] += best_t * (target[u] - beta[A[u]])
            if u > 0 and target[u] * theta[A[u]] <= 0.0:
                consistent = False
        if leaving >= 0:
            beta[leaving] = 0.0
            active[leaving] = False
        elif consistent:
            return
        for u in range(1, m):
            if beta[A[u]] == 0.0:
                active[A[u]] = False


@numba.njit(cache=True, nogil=True)
def _cholesky_solve(M, rhs, m, out, floor):
    """Solve M[:m, :m] x = rhs[:m] (M symmetric positive definite) into ``out``; the
    factor overwrites M's lower triangle.  A pivot below ``floor`` is raised to it."""
    for j in range(m):
        d = M[j, j]
        for k in range(j):
            d -= M[j, k] * M[j, k]
        d = np.sqrt(max(d, floor))
        M[j, j] = d
        for i in range(j + 1, m):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / d
    for i in range(m):
        s = rhs[i]
        for k in range(i):
            s -= M[i, k] * out[k]
        out[i] = s / M[i, i]
    for i in range(m - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, m):
            s -= M[k, i] * out[k]
        out[i] = s / M[i, i]


@numba.njit(cache=True, nogil=True)
def _value(G, c, yy, mu1, mu2, beta):
    """f(b) of :func:`_leaf_fit` (at least 0: it is a sum of squares and penalties)."""
    q = G.shape[0]
    value = yy
    for a in range(q):
        if beta[a] == 0.0:
            continue
        value -= 2.0 * c[a] * beta[a]
        for b in range(q):
            value += beta[a] * G[a, b] * beta[b]
        if a > 0:
            value += mu1 * abs(beta[a]) + mu2 * beta[a] * beta[a]
    return max(value, 0.0)


@numba.njit(cache=True, nogil=True)
def _add_point(G, c, z, X, i, yi):
    """G += z z', c += y z for z = [1, x_i] (``z`` a buffer with z[0] = 1; the whole square
    is updated: a loop that vectorizes is faster than half the work)."""
    q = G.shape[0]
    for a in range(1, q):
        z[a] = X[i, a - 1]
    for a in range(q):
        za = z[a]
        c[a] += yi * za
        for b in range(q):
            G[a, b] += za * z[b]


@numba.njit(cache=True, nogil=True)
def _fill(X, y, order, leaf, n_leaves, mu1, mu2, min_leaf, forward, evaluate, total, admissible):
    """One pass over the node's points in ``order`` (backwards unless ``forward``), adding
    each to its leaf.  At every position k with ``evaluate[k]`` (k = the number of points
    on the LEFT side of the threshold) the leaves are re-fitted and ``total[k]`` is the
    summed value of the points added so far, ``admissible[k]`` whether every leaf holds 0
    or >= ``min_leaf`` of them."""
    n, q = order.shape[0], X.shape[1] + 1
    G = np.zeros((n_leaves, q, q))
    c = np.zeros((n_leaves, q))
    yy = np.zeros(n_leaves)
    beta = np.zeros((n_leaves, q))
    value = np.zeros(n_leaves)
    counts = np.zeros(n_leaves, np.int64)
    stale = np.zeros(n_leaves, np.bool_)
    ws = _workspace(q)
    z = np.ones(q)
    for step in range(n):
        i = order[step] if forward else order[n - 1 - step]
        l = leaf[i]
        _add_point(G[l], c[l], z, X, i, y[i])
        yy[l] += y[i] * y[i]
        counts[l] += 1
        stale[l] = True
        k = step + 1 if forward else n - 1 - step
        if not evaluate[k]:
            continue
        ok = True
        running = 0.0
        for m in range(n_leaves):
            if stale[m]:
                value[m] = _leaf_fit(G[m], c[m], yy[m], mu1, mu2, beta[m], ws)
                stale[m] = False
            running += value[m]
            if 0 < counts[m] < min_leaf:
                ok = False
        total[k] = running
        admissible[k] = ok


@numba.njit(cache=True, nogil=True)
def _best_position(X, j, order, left_total, left_ok, right_total, right_ok, positions, side, eps):
    """The best admissible position among ``positions`` (k: the first k points go left) and
    its value and threshold (the midpoint of the two values it separates, at least eps
    above the left one); position -1 if none."""
    n = order.shape[0]
    best_k, best_v, best_b = -1, np.inf, np.nan
    for k in positions:
        if side <= k <= n - side and left_ok[k] and right_ok[k]:
            v = left_total[k] + right_total[k]
            if v < best_v:
                lo, hi = X[order[k - 1], j], X[order[k], j]
                best_k, best_v, best_b = k, v, max(0.5 * (lo + hi), min(lo + eps, hi))
    return best_k, best_v, best_b


@numba.njit(cache=True, nogil=True)
def _cuts(X, j, order, side):
    """Positions k in [side, n - side] between two distinct values of feature j."""
    n = order.shape[0]
    out = np.empty(max(n - 2 * side + 1, 0), np.int64)
    m = 0
    for k in range(side, n - side + 1):
        if X[order[k - 1], j] < X[order[k], j]:
            out[m] = k
            m += 1
    return out[:m]


@numba.njit(cache=True, nogil=True)
def scan_splits(X, y, rows, leaf_left, n_left, leaf_right, n_right, mu1, mu2, min_leaf, eps, coarse, refine,
                features):
    """Best threshold of every feature in ``features`` at one node, its subtrees fixed.

    ``rows`` are the node's points; ``leaf_left[i]`` (``leaf_right[i]``) is the leaf, as an
    index in 0..n_left-1 (0..n_right-1), that row i reaches when the node sends it left
    (right).  Returns ``(value, threshold, value_none)``: ``value[j]`` the summed leaf value
    of the best admissible threshold on feature j (inf if none or j not in ``features``),
    ``threshold[j]`` that threshold (the midpoint of the two values it separates, at least
    ``eps[j]`` above the left one), and ``value_none`` the value with every point sent right (the node not
    splitting; inf if not admissible).  Admissible: at least ``min_leaf`` points on each
    side and no leaf of the subtree with between 1 and ``min_leaf - 1`` points.

    Every position between two distinct values is a candidate.  When a feature has more
    than ``coarse`` of them, the leaves are re-fitted at about ``coarse`` evenly spaced
    ones; then, for the ``refine`` features with the lowest values, at every position
    between the two neighbours of the best one: a screening (the chosen split is
    re-evaluated exactly by the caller).
    """
    n, p = rows.shape[0], X.shape[1]
    value = np.full(p, np.inf)
    threshold = np.full(p, np.nan)
    left_total = np.zeros(n + 1)
    right_total = np.zeros(n + 1)
    left_ok = np.ones(n + 1, np.bool_)
    right_ok = np.ones(n + 1, np.bool_)
    evaluate = np.zeros(n + 1, np.bool_)
    keys = np.empty(n)
    side = max(min_leaf, 1)
    evaluate[0] = True
    _fill(X, y, rows, leaf_right, n_right, mu1, mu2, min_leaf, False, evaluate, right_total, right_ok)
    value_none = right_total[0] if right_ok[0] else np.inf
    orders = np.empty((p, n), np.int64)
    best_k = np.full(p, -1, np.int64)
    strides = np.ones(p, np.int64)
    for j in features:
        for s in range(n):
            keys[s] = X[rows[s], j]
        orders[j] = rows[np.argsort(keys, kind="mergesort")]
        cuts = _cuts(X, j, orders[j], side)
        if cuts.shape[0] == 0:
            continue
        strides[j] = max(1, cuts.shape[0] // coarse)
        chosen = cuts[::strides[j]]
        _scan_positions(X, y, j, orders[j], leaf_left, n_left, leaf_right, n_right, mu1, mu2, min_leaf, chosen,
                        side, eps, evaluate, left_total, left_ok, right_total, right_ok, value, threshold, best_k)
    for j in np.argsort(value)[:refine]:  # refine the best features between coarse positions
        if strides[j] > 1 and best_k[j] >= 0:
            cuts = _cuts(X, j, orders[j], side)
            at = np.searchsorted(cuts, best_k[j])
            window = cuts[max(at - strides[j], 0):min(at + strides[j] + 1, cuts.shape[0])]
            _scan_positions(X, y, j, orders[j], leaf_left, n_left, leaf_right, n_right, mu1, mu2, min_leaf,
                            window, side, eps, evaluate, left_total, left_ok, right_total, right_ok, value,
                            threshold, best_k)
    return value, threshold, value_none


@numba.njit(cache=True, nogil=True)
def _scan_positions(X, y, j, order, leaf_left, n_left, leaf_right, n_right, mu1, mu2, min_leaf, positions, side,
                    eps, evaluate, left_total, left_ok, right_total, right_ok, value, threshold, best_k):
    """Evaluate the thresholds of feature j at ``positions``; keep the best in value[j],
    threshold[j], best_k[j] if it beats them."""
    evaluate[:] = False
    evaluate[positions] = True
    _fill(X, y, order, leaf_left, n_left, mu1, mu2, min_leaf, True, evaluate, left_total, left_ok)
    _fill(X, y, order, leaf_right, n_right, mu1, mu2, min_leaf, False, evaluate, right_total, right_ok)
    k, v, b = _best_position(X, j, order, left_total, left_ok, right_total, right_ok, positions, side, eps[j])
    if v < value[j]:
        value[j], threshold[j], best_k[j] = v, b, k


@numba.njit(cache=True, nogil=True)
def leaf_fits(X, y, leaf, n_leaves, mu1, mu2):
    """The fit of every leaf (``leaf[i]`` in 0..n_leaves-1 for row i): ``(coef, value, counts)``
    with coef (n_leaves, q), coef[:, 0] the intercept; an empty leaf has coefficients 0."""
    q = X.shape[1] + 1
    G = np.zeros((n_leaves, q, q))
    c = np.zeros((n_leaves, q))
    yy = np.zeros(n_leaves)
    counts = np.zeros(n_leaves, np.int64)
    z = np.ones(q)
    for i in range(X.shape[0]):
        l = leaf[i]
        _add_point(G[l], c[l], z, X, i, y[i])
        yy[l] += y[i] * y[i]
        counts[l] += 1
    coef = np.zeros((n_leaves, q))
    value = np.zeros(n_leaves)
    ws = _workspace(q)
    for l in range(n_leaves):
        if counts[l] > 0:
            value[l] = _leaf_fit(G[l], c[l], yy[l], mu1, mu2, coef[l], ws)
    return coef, value, counts
