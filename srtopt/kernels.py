"""Vectorised numpy kernels of the SRT model: the reference evaluator.

Every symbolic rendering in :mod:`srtopt.models` is tested against these
functions.  Notation follows the paper (section 3):

* ``Z = [1, X/p]`` is the split design matrix, so that
  ``u_it = omega_0t + (1/p) sum_j omega_jt x_ij = Z_i . omega_t``;
* ``Xa = [1, X]`` is the leaf design matrix, ``yhat_it = Xa_i . beta_t``;
* ``p_it = F(u_it) = 1 / (1 + exp(-mu u_it))`` (eq. cdf), the probability of
  the LEFT branch at branch node t;
* ``P_it`` the probability that x_i falls into leaf t (product along the path).

Data weights ``s_i`` replace the paper's 1/N (``s_i = 1/N`` gives eq. obj).
"""

from __future__ import annotations

import numba
import numpy as np
from scipy.special import expit

from .routing import (CHUNK_ROWS, bounded_rows, class_probabilities, hbp_leaves, hbp_predict, leaf_design,  # noqa: F401
                      row_chunks, split_design)
from .tree import Tree

def split_probabilities(Z: np.ndarray, omega: np.ndarray, mu: float) -> np.ndarray:
    """p_it = F(z_i . omega_t) for every branch node (eq. cdf), shape (n, |tau_B|)."""
    return expit(mu * (Z @ omega.T))


def mixture_probabilities(model, Xs, omega, beta, tree: Tree, mu: float) -> np.ndarray:
    """The soft model's class probabilities sum_l P_il p_l(x_i), (n, K), of the scaled rows ``Xs``
    (:func:`bounded_rows`): every leaf's, under the classification leaf model ``model`` (its design and
    link, :mod:`srtopt.leaf_model`), weighted by the probability of reaching the leaf."""
    Xs = bounded_rows(Xs)
    P = leaf_probabilities(split_probabilities(split_design(Xs), omega, mu), tree)
    Xa = model.design(Xs)
    U = np.einsum("iq,lkq->ilk", Xa, beta.reshape(tree.n_leaves, model.n_outputs, Xa.shape[1]))
    return np.einsum("il,ilk->ik", P, model.link(U))


def leaf_probabilities(S: np.ndarray, tree: Tree, root: int = 1) -> np.ndarray:
    """P_it for the leaves D_L(root), shape (n, |D_L(root)|).

    With ``root > 1`` this is the subtree proxy of section 4.2: the
    probabilities of the path above ``root`` are taken as 1.

    >>> import numpy as np
    >>> S = np.array([[0.8, 0.5, 0.1]])  # p_i1, p_i2, p_i3 of one point, depth 2
    >>> leaf_probabilities(S, Tree(2)).round(3)  # P_i4 = p_1 p_2, P_i5 = p_1 (1 - p_2), ...
    array([[0.4 , 0.4 , 0.02, 0.18]])
    """
    return _level_probabilities(S, tree, root)[-1]


def _level_probabilities(S, tree, root):
    """[P at depth 0, 1, ..., d] of the subtree rooted at ``root`` (depth d): P at depth k has
    one column per node root 2^k + j (j = 0 .. 2^k - 1), the product of the branch
    probabilities from ``root`` down to it.  The children of column j are columns 2j
    (left, times p) and 2j + 1 (right, times 1 - p) of the next depth."""
    levels = [np.ones((S.shape[0], 1))]
    for k in range(tree.subtree_depth(root)):
        p = S[:, _level_columns(root, k)]
        children = np.empty((S.shape[0], 2 ** (k + 1)))
        np.multiply(levels[-1], p, out=children[:, 0::2])
        np.multiply(levels[-1], 1.0 - p, out=children[:, 1::2])
        levels.append(children)
    return levels


def _level_columns(root, k) -> slice:
    """Columns of S (branch index t - 1) of the nodes at depth k below ``root``: contiguous."""
    first = root * 2**k - 1
    return slice(first, first + 2**k)


def _node_probabilities(S, tree, root) -> dict:
    """{node t: P_i(t | root)} for every node of the subtree rooted at ``root``: the product of
    the branch probabilities from ``root`` down to t (1 at ``root``)."""
    return {root * 2**k + j: level[:, j] for k, level in enumerate(_level_probabilities(S, tree, root))
            for j in range(level.shape[1])}


def reach_probabilities(S: np.ndarray, tree: Tree, t: int) -> np.ndarray:
    """P_i(t): the product of the branch probabilities on the path from the root to node t
    (1 at the root), shape (n,): p_ia for a in A_L(t), 1 - p_ia for a in A_R(t)."""
    reach = np.ones(S.shape[0])
    for a in tree.ancestors_left(t):
        reach *= S[:, a - 1]
    for a in tree.ancestors_right(t):
        reach *= 1.0 - S[:, a - 1]
    return reach


def node_shares(S: np.ndarray, tree: Tree, s: np.ndarray) -> np.ndarray:
    """m_t = sum_i s_i P_i(t) / sum_i s_i for every node t (index t - 1), where P_i(t) is the
    product of the branch probabilities on the path from the root to t (P_it at a leaf):
    the soft share of the data that reaches node t."""
    P = _node_probabilities(S, tree, 1)
    return np.array([s @ P[t] for t in range(1, 2 ** (tree.depth + 1))]) / np.sum(s)


def feature_importances(omega: np.ndarray, shares: np.ndarray, tree: Tree) -> np.ndarray:
    """Importance of feature j: sum_t m_t |omega_jt| over the branch nodes t, normalized to sum 1.

    ``omega`` lives in the scaled space (x_j in [0, 1]), so |omega_jt| is the change of
    p * u_it when x_j crosses its training range: scale-free, comparable across features.
    ``shares`` are the m_t of :func:`node_shares`.  All zeros when no split uses a feature.
    """
    weight = shares[: tree.n_branch] @ np.abs(omega[:, 1:])
    total = weight.sum()
    return weight / total if total > 0 else weight


def leaf_residuals(Xa: np.ndarray, y: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """r_it = yhat_it - y_i for every leaf, shape (n, |tau_L|); a loss term maps them to R_it."""
    return Xa @ beta.T - y[:, None]


def subtree_columns(tree: Tree, root: int) -> np.ndarray:
    """Branch indices (t - 1) of the branch nodes of the subtree rooted at ``root``, in the
    local heap order of :func:`subtree_loss` (the subtree's root first, then depth by depth,
    left to right)."""
    levels = [_level_columns(root, k) for k in range(tree.subtree_depth(root))]
    return np.array([t for level in levels for t in range(level.start, level.stop)], dtype=np.int64)


def soft_loss(S, R, s, tree: Tree, root: int, mu: float, with_grad: bool = True):
    """f = sum_i s_i sum_{l in D_L(root)} P_il R_il, and df/du (n, |tau_B|).

    ``R`` has one column per leaf of D_L(root).  The gradient with respect to
    omega_a is ``Z.T @ G[:, a]``; columns of branch nodes outside the subtree
    are zero.  :func:`subtree_loss` on the subtree's columns of S.
    """
    columns = subtree_columns(tree, root)
    f, G_local = subtree_loss(S[:, columns], R, s, mu, with_grad)
    if not with_grad:
        return f, None
    G = np.zeros_like(S)
    G[:, columns] = G_local
    return f, G


def subtree_loss(S, R, s, mu: float, with_grad: bool = True, with_leaves: bool = False):
    """f = sum_i s_i sum_l P_il R_il over the leaves of a subtree, and G = df/du (n, m); with
    ``with_leaves`` also P (n, m + 1), the leaves' path probabilities (:func:`leaf_probabilities`).

    ``S`` holds p_it of the subtree's m = 2^d - 1 branch nodes in local heap order (local
    node a has children 2a and 2a + 1; column a - 1; :func:`subtree_columns`), ``R`` the
    R_il of its 2^d leaves, left to right.  One upward sweep (the conditional losses V of
    the nodes) and one downward sweep (the path probabilities P) per row, compiled: no
    division, stable for saturated splits.  df/du_ia = s_i P_ia (V_i,2a - V_i,2a+1) F'(u_ia)
    with F' = mu p (1 - p) (eq. cdf).
    """
    S, R, s = (np.ascontiguousarray(a, dtype=float) for a in (S, R, s))
    if R.shape[1] != S.shape[1] + 1:
        raise ValueError(f"a subtree with {S.shape[1]} branch nodes has {S.shape[1] + 1} leaves, R has "
                         f"{R.shape[1]} columns")
    with _Interruptible():
        f, G, P = _sweep(S, R, s, float(mu), bool(with_grad), bool(with_leaves))
    out = (f, G if with_grad else None)
    return (*out, P) if with_leaves else out


class _Interruptible:
    """Ctrl-C during a compiled kernel surfaces as a SystemError of numba's dispatcher caused,
    possibly through another SystemError, by the KeyboardInterrupt: raise that instead.  (A
    class, not contextlib.contextmanager: entered thousands of times per fit.)"""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if kind is not None and issubclass(kind, SystemError):
            cause = exc.__cause__
            while cause is not None and not isinstance(cause, KeyboardInterrupt):
                cause = cause.__cause__
            if cause is not None:
                raise KeyboardInterrupt from None
        return False


# The sweep's three formulas, for one row (S_i: its split probabilities, V_i, P_i indexed by
# heap node: branch node a has children 2a and 2a + 1):
@numba.njit(cache=True)
def _up(S_i, V_i, a):
    """V_ia = p_ia V_i,2a + (1 - p_ia) V_i,2a+1: the conditional loss of branch node a."""
    V_i[a] = S_i[a - 1] * V_i[2 * a] + (1.0 - S_i[a - 1]) * V_i[2 * a + 1]


@numba.njit(cache=True)
def _down(S_i, P_i, a):
    """P_i,2a = P_ia p_ia, P_i,2a+1 = P_ia (1 - p_ia): the probabilities of reaching a's children."""
    P_i[2 * a] = P_i[a] * S_i[a - 1]
    P_i[2 * a + 1] = P_i[a] * (1.0 - S_i[a - 1])


@numba.njit(cache=True)
def _dfdu(S_i, V_i, P_i, a, s_i, mu):
    """df/du_ia = s_i P_ia (V_i,2a - V_i,2a+1) F'(u_ia), F' = mu p (1 - p) (eq. cdf)."""
    p = S_i[a - 1]
    return s_i * P_i[a] * (V_i[2 * a] - V_i[2 * a + 1]) * mu * p * (1.0 - p)


@numba.njit(cache=True)
def _upward(S, R, i, V):
    """V[a] = the conditional loss of local node a for row i: R_il at the leaves (local nodes
    m+1 .. 2m+1), p V[2a] + (1 - p) V[2a+1] at branch node a (V[0] is not set)."""
    m = S.shape[1]
    for leaf in range(m + 1):
        V[m + 1 + leaf] = R[i, leaf]
    for a in range(m, 0, -1):
        _up(S[i], V, a)


@numba.njit(cache=True)
def _sweep(S, R, s, mu, with_grad, with_leaves):
    n, m = S.shape
    G = np.zeros((n if with_grad else 0, m))
    leaves = np.empty((n if with_leaves else 0, m + 1))
    V = np.empty(2 * m + 2)  # V[a]: conditional loss of local node a (leaves m+1 .. 2m+1)
    P = np.empty(2 * m + 2)  # P[a]: probability of reaching local node a from the root
    f = 0.0
    for i in range(n):
        _upward(S, R, i, V)
        f += s[i] * V[1]
        if with_grad or with_leaves:
            P[1] = 1.0
            for a in range(1, m + 1):
                _down(S[i], P, a)
                if with_grad:
                    G[i, a - 1] = _dfdu(S[i], V, P, a, s[i], mu)
            if with_leaves:
                leaves[i] = P[m + 1:]
    return f, G, leaves


@numba.njit(cache=True)
def _resweep(S, R, s, mu, V, P, G, r, h):
    """The sweep of the whole tree (S: (n, m), R: (n, m + 1), V, P: (n, 2m + 2), G: (n, m)),
    redone in place below node r (its subtree has depth h) and on r's ancestors: V of the
    subtree and of the ancestors, P below r, G of the subtree's branch nodes and of the
    ancestors.  P[:, r] must hold the probabilities of reaching r (1 at the root)."""
    n, m = S.shape
    for i in range(n):
        S_i, V_i, P_i = S[i], V[i], P[i]
        for leaf in range(r << h, (r + 1) << h):
            V_i[leaf] = R[i, leaf - m - 1]
        for k in range(h - 1, -1, -1):
            for a in range(r << k, (r + 1) << k):
                _up(S_i, V_i, a)
        a = r >> 1
        while a >= 1:
            _up(S_i, V_i, a)
            G[i, a - 1] = _dfdu(S_i, V_i, P_i, a, s[i], mu)
            a >>= 1
        for k in range(h):
            for a in range(r << k, (r + 1) << k):
                _down(S_i, P_i, a)
                G[i, a - 1] = _dfdu(S_i, V_i, P_i, a, s[i], mu)


def branch_curvatures(S, R, s, mu: float, nodes) -> np.ndarray:
    """C (n, k, k): the second derivatives s_i d^2(sum_l P_il R_il) / du_ia du_ib of a subtree's
    error for the local nodes a, b in ``nodes`` (local heap ids; ``S``, ``R`` and ``s`` as in
    :func:`subtree_loss`).  With F' = mu p (1 - p), F'' = mu^2 p (1 - p) (1 - 2p) (eq. cdf),
    P_ia the probability of reaching a and D_ia = V_i,2a - V_i,2a+1 the gap of its
    children's conditional losses: s_i P_ia D_ia F''(u_ia) on the diagonal,
    +- s_i P_ia F'(u_ia) P_i(b | c) D_ib F'(u_ib) when b lies below a's child c (+ left,
    - right), 0 for nodes on separate branches.  One compiled pass per row."""
    with _Interruptible():
        return _curvatures(np.ascontiguousarray(S, dtype=float), np.ascontiguousarray(R, dtype=float),
                           np.ascontiguousarray(s, dtype=float), float(mu), np.asarray(nodes, dtype=np.int64))


def branch_hessian(Z: np.ndarray, C: np.ndarray, nodes) -> np.ndarray:
    """The Hessian in (omega_a for a in ``nodes``) of a subtree sum whose second derivatives in
    u_ia = z_i . omega_a are C (:func:`branch_curvatures`): Z^T diag(C[:, a, b]) Z for each pair of
    nodes on one branch, 0 for nodes on separate branches; exactly symmetric."""
    q, k = Z.shape[1], len(nodes)
    H = np.zeros((k * q, k * q))
    for i, a in enumerate(nodes):
        for j, b in enumerate(nodes[i:], start=i):
            if Tree.common_ancestor([a, b]) in (a, b):  # else 0: separate branches
                H[i * q:(i + 1) * q, j * q:(j + 1) * q] = (Z.T * C[:, i, j]) @ Z
                H[j * q:(j + 1) * q, i * q:(i + 1) * q] = H[i * q:(i + 1) * q, j * q:(j + 1) * q].T
    return 0.5 * (H + H.T)  # BLAS rounds Z^T D Z: symmetrize


@numba.njit(cache=True)
def _curvatures(S, R, s, mu, nodes):
    n, m = S.shape
    k = nodes.shape[0]
    C = np.zeros((n, k, k))
    V = np.empty(2 * m + 2)
    P = np.empty(2 * m + 2)
    for i in range(n):
        _upward(S, R, i, V)
        P[1] = 1.0
        for a in range(1, m + 1):
            P[2 * a] = P[a] * S[i, a - 1]
            P[2 * a + 1] = P[a] * (1.0 - S[i, a - 1])
        for x in range(k):
            a = nodes[x]
            p_a = S[i, a - 1]
            slope_a = s[i] * P[a] * mu * p_a * (1.0 - p_a)
            C[i, x, x] = slope_a * (V[2 * a] - V[2 * a + 1]) * mu * (1.0 - 2.0 * p_a)
            for y in range(k):
                b = nodes[y]
                if b <= a:
                    continue  # an ancestor has the smaller heap id
                reach, node = 1.0, b  # P_i(b | c): the branch probabilities from b up to a's child c
                while node > a and node // 2 != a:
                    parent = node // 2
                    reach *= S[i, parent - 1] if node == 2 * parent else 1.0 - S[i, parent - 1]
                    node = parent
                if node // 2 != a:
                    continue  # separate branches
                p_b = S[i, b - 1]
                sign = 1.0 if node == 2 * a else -1.0
                C[i, x, y] = C[i, y, x] = sign * slope_a * reach * (V[2 * b] - V[2 * b + 1]) * mu * p_b * (1.0 - p_b)
    return C


def weighted_logistic(Z, c, w, mu: float, x, with_curvature: bool = False):
    """(L, dL/dx, h) of the weighted logistic loss L = sum_i w_i [c_i softplus(-u_i) +
    (1 - c_i) softplus(u_i)], u_i = mu z_i . x (the data term of the WLR proxy, eq. reshuffle,
    before its 1/N_t), with ``h`` = w_i p_i (1 - p_i), p_i = F(u_i), when ``with_curvature``
    (d^2 L/dx^2 = mu^2 Z^T diag(h) Z; an empty array otherwise).  Stable for any u: softplus
    and p from exp(-|u|).  One compiled pass over the rows."""
    with _Interruptible():
        return _logistic(np.ascontiguousarray(Z, dtype=float), np.ascontiguousarray(c, dtype=float),
                         np.ascontiguousarray(w, dtype=float), float(mu), np.ascontiguousarray(x, dtype=float),
                         bool(with_curvature))


@numba.njit(cache=True)
def _logistic(Z, c, w, mu, x, with_curvature):
    n, q = Z.shape
    f = 0.0
    g = np.zeros(q)
    h = np.empty(n if with_curvature else 0)
    for i in range(n):
        u = 0.0
        for j in range(q):
            u += Z[i, j] * x[j]
        u *= mu
        e = np.exp(-abs(u))
        tail = np.log1p(e)  # softplus(u) = max(u, 0) + log(1 + exp(-|u|))
        f += w[i] * (c[i] * (max(-u, 0.0) + tail) + (1.0 - c[i]) * (max(u, 0.0) + tail))
        p = 1.0 / (1.0 + e) if u >= 0.0 else e / (1.0 + e)
        r = w[i] * (p - c[i]) * mu
        for j in range(q):
            g[j] += r * Z[i, j]
        if with_curvature:
            h[i] = w[i] * p * (1.0 - p)
    return f, g, h


def objective_and_gradient(Z, Xa, y, omega, beta, mu, s, leaves, start=(0.0, 0.0, 0.0), with_grad=True):
    """The data term of eq. (obj), sum_i s_i sum_t P_it R_it, on the designs Z, Xa with data
    weights s and targets y, added to ``start`` = (value, gradient in omega, gradient in beta)
    (the penalty terms); returns (f, grad_omega, grad_beta) in the shapes of omega, beta
    (None, None without ``with_grad``).  ``leaves`` is the leaf model giving R_it and its
    derivatives (:mod:`srtopt.models.leaves`: R_it = loss(yhat_it - y_i) for linear leaves).

    The data term is a sum over rows, accumulated over blocks of ``CHUNK_ROWS`` rows so
    that the temporaries stay small however many rows there are."""
    f, g_omega, g_beta = start
    for rows in row_chunks(len(y)):
        S = split_probabilities(Z[rows], omega, mu)  # columns in heap order: the whole tree's local order
        if not with_grad:
            f += subtree_loss(S, leaves.losses(Xa[rows], y[rows], beta), s[rows], mu, with_grad=False)[0]
            continue
        R, D = leaves.losses(Xa[rows], y[rows], beta, order=1)
        f_rows, G, P = subtree_loss(S, R, s[rows], mu, with_leaves=True)
        f += f_rows
        g_omega = g_omega + G.T @ Z[rows]
        g_beta = g_beta + leaves.gradient(Xa[rows], s[rows, None] * P, D)
    return (f, g_omega, g_beta) if with_grad else (f, None, None)


class IncrementalObjective:
    """The data term of eq. (obj) and its gradient, as :func:`objective_and_gradient`, keeping
    the per-row quantities of the last point evaluated (p_it, the losses and their
    derivatives, the sweep's V and P, df/du).  The next point, when it differs from that one
    only in the rows of omega and beta of one subtree (a NODEC inner iteration's BN and LN
    steps change the subtree of its node), costs O(N (|subtree| + depth) p) instead of
    O(N 2^D p): only that subtree and the path above it are redone, and of its p_it and
    leaf losses only those of the rows of omega and beta that changed (a BN step changes no
    leaf, an LN step no split, the root's step one split).  Above ``max_entries``
    numbers per kept array (N x (2^(D+1))) nothing is kept and every point is evaluated in
    full, by blocks of rows.
    """

    def __init__(self, Z, Xa, y, s, mu, leaves, tree: Tree, max_entries: int = 1 << 22):
        self.Z, self.Xa, self.y, self.s, self.mu, self.leaves, self.tree = Z, Xa, y, s, float(mu), leaves, tree
        self.keeps = len(y) * (1 + leaves.n_outputs) * (tree.n_branch + 1) <= max_entries
        self._at = None  # (omega, beta) of the kept quantities

    def __call__(self, omega, beta):
        """(f, grad_omega, grad_beta) of the data term at (omega, beta)."""
        omega, beta = np.array(omega, dtype=float), np.array(beta, dtype=float)
        if not self.keeps:
            return objective_and_gradient(self.Z, self.Xa, self.y, omega, beta, self.mu, self.s, self.leaves)
        changed = self._changed(omega, beta)
        if changed is not None:
            self._redo(omega, beta, *changed)
        return self._f, self._g_omega.copy(), self._g_beta.copy()

    def _changed(self, omega, beta):
        """(r, branch, leaves): the root r of the smallest subtree holding every row that differs
        from the kept point, and the indices of the rows of omega and of beta that differ (r = 1
        and all of them when nothing is kept); None when nothing differs."""
        n, m = len(self.y), self.tree.n_branch
        if self._at is None:
            self.S, self.R = np.empty((n, m)), np.empty((n, m + 1))
            self.D = np.empty((self.leaves.n_outputs, n, m + 1))
            self.V, self.P, self.G = np.empty((n, 2 * m + 2)), np.empty((n, 2 * m + 2)), np.zeros((n, m))
            self.P[:, 1] = 1.0
            self._g_omega, self._g_beta = np.zeros_like(omega), np.zeros_like(beta)
            return 1, np.arange(m), np.arange(m + 1)
        branch = np.flatnonzero(np.any(omega != self._at[0], axis=1))
        leaves = np.flatnonzero(np.any(beta != self._at[1], axis=1))
        if len(branch) == 0 and len(leaves) == 0:
            return None
        return Tree.common_ancestor([int(a) + 1 for a in branch] + [m + 1 + int(l) for l in leaves]), branch, leaves

    def _redo(self, omega, beta, r, branch, leaves):
        """p_it of the splits ``branch`` and the losses of the leaves ``leaves`` (the rows that
        changed; the others are kept), then the sweep below r and on r's ancestors and the
        gradient rows that depend on it."""
        tree, Z, Xa = self.tree, self.Z, self.Xa
        if len(branch):
            self.S[:, branch] = split_probabilities(Z, omega[branch], self.mu)
        if len(leaves):
            self.R[:, leaves], self.D[:, :, leaves] = self.leaves.losses(Xa, self.y, beta[leaves], order=1)
        with _Interruptible():
            _resweep(self.S, self.R, self.s, self.mu, self.V, self.P, self.G, int(r), tree.subtree_depth(r))
        self._f = float(self.s @ self.V[:, 1])
        below = np.array(tree.subtree_branch(r) if tree.is_branch(r) else (), dtype=np.int64) - 1
        rows = np.concatenate([below, np.array(tree.path(r), dtype=np.int64) - 1])
        self._g_omega[rows] = self.G[:, rows].T @ Z
        reached = np.array(tree.descendants_leaves(r), dtype=np.int64) - tree.n_branch - 1
        P_leaves = self.P[:, tree.n_branch + 1 + reached]
        self._g_beta[reached] = self.leaves.gradient(Xa, self.s[:, None] * P_leaves, self.D[:, :, reached])
        self._at = (omega, beta)


CLOSED_SPLIT = 40.0  # mu * |omega_0t| of a closed split: F(40) rounds to 1 in double precision


def close_unreached(omega: np.ndarray, counts: np.ndarray, tree: Tree, mu: float) -> np.ndarray:
    """``omega`` with every split t that HBP routes no row of ``counts`` (rows through each
    node, index t - 1) to one child made constant towards the other child: slopes 0 and
    omega_0t = +-CLOSED_SPLIT / mu, so p_it is 1 or 0 to double precision.  The HBP leaf of
    every counted row is unchanged; the empty subtree becomes unreachable for every input."""
    omega = np.array(omega, dtype=np.float64)
    for t in tree.branch_nodes:
        if counts[t - 1] == 0:
            continue
        for child, sign in ((2 * t, -1.0), (2 * t + 1, 1.0)):
            if counts[child - 1] == 0:
                omega[tree.branch_index(t)] = 0.0
                omega[tree.branch_index(t), 0] = sign * CLOSED_SPLIT / mu
    return omega


def node_counts(leaves: np.ndarray, tree: Tree) -> np.ndarray:
    """Rows whose HBP path (ending in ``leaves``) visits node t, at index t - 1."""
    counts = np.zeros(2 ** (tree.depth + 1) - 1, dtype=np.int64)
    for level in range(tree.depth + 1):
        np.add.at(counts, (np.asarray(leaves) >> level) - 1, 1)
    return counts


def hbp_contains(leaves: np.ndarray, tree: Tree, t: int) -> np.ndarray:
    """Mask of the rows whose HBP path (ending in ``leaves``) contains node t: I_t."""
    return (leaves >> (tree.depth - tree.node_depth(t))) == t


