"""A soft mean as each formulation sees it: over omega_W (BN), over beta_W (LN), over all variables; and the
linear rows on each leaf's coefficients that bound a curve's slope (:class:`CoefficientRows`).

Each block gives numpy values, Jacobians and Hessians (the reference), a CasADi rendering and a
Pyomo rendering.  The three are written by hand: the numpy versions are the hot path and use the
sweep kernels' closed forms (the derivatives of the whole subtree in one pass), which no symbolic
expression yields at that cost, while the CasADi and Pyomo renderings are the expressions the
tests compare them against (tests/models/constraints/test_blocks.py)."""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from ... import kernels
from ...tree import Tree
from .. import casadi_backend as cb
from ..leaves import leaf_hessian
from ..terms.operations import NUMPY
from .base import REACH_FLOOR
from .soft_means import SoftMean, shaped


class SplitBlock:
    """A soft mean as the BN subproblem over omega_W (rooted at ``root``) sees it: g over every
    training row, the rest of the tree fixed.  With P_i(r) the probability of reaching the root r
    (fixed), g_k(x) = c_k + sum_i W_ik P_i(r) sum_{l below r} P_il|r(x) V_kil, the sum the BN proxy's
    data term also has (:func:`srtopt.kernels.subtree_loss`), V_kil = A_kl (v_il - c_k) the values
    of row k at every leaf of the tree (one array per group of rows, :attr:`SoftMean.row_groups`);
    c holds the leaves outside the subtree and the rows with P_i(r) < REACH_FLOOR (at their
    current values)."""

    has_hessian = True

    def __init__(self, term: SoftMean, sub):
        pr, tree, root = sub.problem, sub.problem.tree, sub.root
        S = pr.split_probabilities(sub.omega)
        reach = kernels.reach_probabilities(S, tree, root)
        V = term.leaves.losses(pr.Xa, pr.targets, sub.beta)
        P = pr.leaf_probabilities(sub.omega)
        under = np.zeros(tree.n_leaves, dtype=bool)
        under[[tree.leaf_index(leaf) for leaf in tree.descendants_leaves(root)]] = True
        keep = reach >= REACH_FLOOR
        self.term, self.mu = term, pr.mu
        self.c, self.V = np.empty(term.n_rows), []
        for rows, a, shift in term.row_groups:
            Va = shaped(V, a, shift)
            PV = P * Va
            self.c[rows] = term.W[:, rows].T @ (PV[:, ~under].sum(axis=1) + np.where(keep, 0.0, PV[:, under].sum(axis=1)))
            self.V.append((rows, Va[keep][:, under]))
        columns, self.positions = sub._subtree
        self.rows = np.flatnonzero(keep)
        self.Z = pr.Z[keep]
        self.weights = term.W[keep] * reach[keep, None]
        self.fixed = S[keep][:, columns]
        self.local, self.n_working = sub._local_working, len(sub.working)
        self._last = (None, None)
        # the subproblem of E itself has these rows: its probabilities serve both
        self._shared = sub if np.array_equal(sub.rows, self.rows) else None
        if self._shared is not None:
            self.rows = sub.rows

    @property
    def linear(self) -> bool:
        return False

    def probabilities(self, x) -> np.ndarray:
        """p of the subtree's splits (rows ``rows``, local heap order) at x, for the last x."""
        if self._shared is not None:
            return self._shared._split_probabilities(x)
        key = np.asarray(x, float).tobytes()
        if self._last[0] != key:
            S = self.fixed.copy()
            S[:, self.positions] = kernels.split_probabilities(self.Z, np.reshape(x, (self.n_working, -1)), self.mu)
            self._last = (key, S)
        return self._last[1]

    def value(self, x) -> np.ndarray:
        S, g = self.probabilities(x), self.c.copy()
        for rows, V in self.V:
            g[rows] += [kernels.subtree_loss(S, V, self.weights[:, k], self.mu, False)[0] for k in rows]
        return g

    def jacobian(self, x) -> np.ndarray:
        S, J = self.probabilities(x), np.empty((len(self.c), self.Z.shape[1] * self.n_working))
        for rows, V in self.V:
            G = kernels.subtree_loss(S, V, np.ones(len(V)), self.mu)[1][:, self.positions]
            for k in rows:
                J[k] = ((self.weights[:, k, None] * G).T @ self.Z).ravel()
        return J

    def hessian(self, x, lam) -> np.ndarray:
        S, lam = self.probabilities(x), np.asarray(lam, float)
        C = sum(kernels.branch_curvatures(S, V, self.weights[:, rows] @ lam[rows], self.mu, self.local)
                for rows, V in self.V)
        return kernels.branch_hessian(self.Z, C, self.local)

    def weighted_values(self, lam) -> np.ndarray:
        """sum_k lam_k W_ik P_i(r) V_kil (rows ``rows``, the subtree's leaves): the values whose sweep's
        curvatures are the Hessian of lam . g (:func:`~srtopt.kernels.branch_curvatures` is linear in them)."""
        lam = np.asarray(lam, float)
        return sum((self.weights[:, rows] @ lam[rows])[:, None] * V for rows, V in self.V)

    def render(self, X, mu):
        """(g, parameter symbols) in CasADi: X (|W| x q MX) the working splits' weights; the data are
        parameters (values: :meth:`parameter_values`), padded to :func:`~.casadi_backend.padded_rows` rows."""
        n, q, m = cb.padded_rows(len(self.Z)), self.Z.shape[1], self.weights.shape[1]
        Zp, Wp = ca.MX.sym("Z_all", n, q), ca.MX.sym("W_all", n, m)
        Vp = [ca.MX.sym(f"V_all_{g}", n, V.shape[1]) for g, (_, V) in enumerate(self.V)]
        Fp, cp = ca.MX.sym("S_fixed", n, self.fixed.shape[1]), ca.MX.sym("c", m)
        columns = [Fp[:, a] for a in range(self.fixed.shape[1])]
        for i, position in enumerate(self.positions):
            columns[position] = cb.sigmoid(ca.mtimes(Zp, X[i, :].T), mu)
        local = Tree(self.fixed.shape[1].bit_length())
        g = [None] * m
        for (rows, _), V in zip(self.V, Vp):
            V_root = cb.sweep(ca.horzcat(*columns), V, local, 1, {a: a - 1 for a in local.branch_nodes})
            for k in map(int, rows):
                g[k] = cp[k] + ca.mtimes(Wp[:, k].T, V_root)
        return ca.vertcat(*g), [Zp, *Vp, Wp, Fp, cp]

    def parameter_values(self) -> list:
        n = cb.padded_rows(len(self.Z))
        return [cb.pad(a, n) for a in (self.Z, *(V for _, V in self.V), self.weights, self.fixed)] + [self.c]

    def pyomo(self, X) -> list:
        """The rows of g in Pyomo: X the rows of Pyomo variables of the working splits."""
        from .. import pyomo_backend as pb

        local = Tree(self.fixed.shape[1].bit_length())
        g = [None] * len(self.c)
        for rows, V in self.V:
            sweeps = []
            for i in range(len(self.Z)):
                split = {a: float(self.fixed[i, a - 1]) for a in local.branch_nodes}
                split.update({p + 1: pb.sigmoid(pb.linear(self.Z[i], X[k]), self.mu)
                              for k, p in enumerate(self.positions)})
                sweeps.append(pb.point_sweep(split, [float(v) for v in V[i]], local, 1))
            for k in rows:
                w = self.weights[:, k]
                g[k] = float(self.c[k]) + sum(float(w[i]) * s for i, s in enumerate(sweeps) if w[i] != 0)
        return g


@dataclass(frozen=True)
class Routing:
    """Hard predictions: the leaf of every training row (HBP, as ``predict()`` routes it), and the
    rows whose prediction is held at a value (``held`` mask, ``values`` in training units: a
    prediction clipped to the training range does not move with beta)."""

    leaves: np.ndarray
    held: np.ndarray | None = None
    values: np.ndarray | None = None

    def matrix(self, tree) -> np.ndarray:
        """The leaf indicator (n, |tau_L|), zero in the held rows."""
        P = np.zeros((len(self.leaves), tree.n_leaves))
        P[np.arange(len(self.leaves)), tree.leaf_rows(self.leaves)] = 1.0
        if self.held is not None:
            P[self.held] = 0.0
        return P


class LeafBlock:
    """A soft mean as the LN subproblem over beta_W sees it: g_k(x) = c_k + sum_i sum_{l in W}
    Q_kil v_il(x_l) with Q_kil = W_ik P_il A_kl over every training row, omega and the other leaves
    fixed (c: their part and the shifts; v_il the term's leaf function, e.g. v(Xa_i x_l, y_i)).  With a :class:`Routing`,
    the same constraint on hard predictions: P the indicator of its leaves (``predict()``'s
    routing), its held rows in c at their values."""

    has_hessian = True

    def __init__(self, term: SoftMean, sub, routing: Routing | None = None):
        pr = sub.problem
        P = pr.leaf_probabilities(sub.omega) if routing is None else routing.matrix(pr.tree)
        working = np.zeros(pr.tree.n_leaves, dtype=bool)
        working[sub._working_rows] = True
        V = term.leaves.losses(pr.Xa, pr.targets, sub.beta[~working])
        self.term, self.c = term, np.empty(term.n_rows)
        held = routing is not None and routing.held is not None and routing.held.any()
        if held:
            values = term.leaf_values(routing.values[routing.held], pr.y[routing.held], NUMPY)
            leaf_of_held = pr.tree.leaf_rows(routing.leaves[routing.held])
        A = np.empty((term.n_rows, pr.tree.n_leaves))
        for rows, a, shift in term.row_groups:
            self.c[rows] = term.W[:, rows].T @ np.sum(P[:, ~working] * shaped(V, a[~working], shift), axis=1)
            if held:
                self.c[rows] += term.W[routing.held][:, rows].T @ shaped(values, a[leaf_of_held], shift)
            A[rows] = a
        P = P[:, sub._working_rows]
        keep = np.any(term.W != 0, axis=1) & np.any(P != 0, axis=1)
        self.Xa, self.T = pr.Xa[keep], pr.targets[keep]
        self.Q = term.W[keep].T[:, :, None] * P[keep][None]  # Q_kil = W_ik P_il A_kl
        if np.any(A != 1):
            self.Q = self.Q * A[:, None, sub._working_rows]
        for rows, _, shift in term.row_groups:
            if shift:  # the working leaves' sum of Q_kil (v_il - c_k): its constant part
                self.c[rows] -= shift * self.Q[rows].sum(axis=(1, 2))

    @property
    def linear(self) -> bool:
        return self.term.linear

    def _beta(self, x):
        return np.reshape(x, (self.Q.shape[2], -1))

    def _losses(self, x, order: int) -> tuple:
        """The term's leaf values at x and their derivatives up to ``order``, kept for the last x (a solver asks
        for the rows, their Jacobian and their Hessian at one point)."""
        key = np.asarray(x, float).tobytes()
        last = getattr(self, "_last", (None, -1, None))
        if last[0] != key or last[1] < order:
            values = self.term.leaves.losses(self.Xa, self.T, self._beta(x), order=order)
            self._last = (key, order, values if order else (values,))
        return self._last[2]

    def value(self, x) -> np.ndarray:
        return self.c + np.einsum("kil,il->k", self.Q, self._losses(x, 0)[0])

    def jacobian(self, x) -> np.ndarray:
        D = self._losses(x, 1)[1]
        return np.array([self.term.leaves.gradient(self.Xa, Q, D).ravel() for Q in self.Q])

    def hessian(self, x, lam) -> np.ndarray:
        C = self._losses(x, 2)[2]
        return leaf_hessian(self.Xa, C * np.einsum("k,kil->il", np.asarray(lam, float), self.Q))

    def render(self, B):
        """(g, parameter symbols) in CasADi: B (|W| x q MX) the working leaves' coefficients; the data
        are parameters (values: :meth:`parameter_values`), padded to :func:`~.casadi_backend.padded_rows`
        rows."""
        n, q = cb.padded_rows(len(self.T)), self.Xa.shape[1]
        k, _, m = self.Q.shape
        Xp, cp = ca.MX.sym("Xa_all", n, q), ca.MX.sym("c", k)
        yp = ca.MX.sym("y_all", n, self.term.leaves.target_width())
        Qp = [ca.MX.sym(f"Q_{row}", n, m) for row in range(k)]
        V = self.term.leaves.casadi(Xp, yp, B)
        return cp + ca.vertcat(*[ca.sum1(ca.sum2(Q * V)) for Q in Qp]), [Xp, yp, cp, *Qp]

    def parameter_values(self) -> list:
        n = cb.padded_rows(len(self.T))
        return [cb.pad(self.Xa, n), cb.pad(self.T, n), self.c, *(cb.pad(Q, n) for Q in self.Q)]

    def pyomo(self, B) -> list:
        """The rows of g in Pyomo: B the rows of Pyomo variables of the working leaves."""
        V = [[self.term.leaves.pyomo(self.Xa[i], self.T[i], b) for b in B] for i in range(len(self.T))]
        return [float(c) + sum(float(Q[i, l]) * V[i][l] for i in range(len(self.T)) for l in range(len(B))
                               if Q[i, l] != 0) for c, Q in zip(self.c, self.Q)]


class FullBlock:
    """A soft mean over all variables x = (vec omega, vec beta) (the SRT problem of eq. obj)."""

    has_hessian = False

    def __init__(self, term: SoftMean, formulation):
        self.term, self.formulation = term, formulation

    @property
    def linear(self) -> bool:
        return False

    def value(self, x) -> np.ndarray:
        return self.term.values(self.formulation.problem, *self.formulation.split(x))

    def jacobian(self, x) -> np.ndarray:
        return self.term.jacobian(self.formulation.problem, *self.formulation.split(x))

    def render(self, S, R_of, tree):
        """(g, parameter symbols) in CasADi: ``S`` the split probabilities (n x |tau_B| MX),
        ``R_of(leaves)`` a leaf function's values at every row and leaf as an n x |tau_L| MX; the
        weights W are a parameter."""
        Wp = ca.MX.sym("W", *self.term.W.shape)
        V = R_of(self.term.leaves)
        g = [None] * self.term.n_rows
        for rows, a, shift in self.term.row_groups:
            Va = (V - shift) * ca.repmat(ca.DM(a).T, V.shape[0], 1) if shift or np.any(a != 1) else V
            V_root = cb.sweep(S, Va, tree, 1, {t: tree.branch_index(t) for t in tree.branch_nodes})
            for k in map(int, rows):
                g[k] = ca.mtimes(Wp[:, k].T, V_root)
        return ca.vertcat(*g), [Wp]

    def parameter_values(self) -> list:
        return [self.term.W]

    def pyomo(self, W, B) -> list:
        """The rows of g in Pyomo: W and B the rows of Pyomo variables of omega and beta."""
        from .. import pyomo_backend as pb

        pr = self.formulation.problem
        splits = dict(zip(pr.tree.branch_nodes, W))
        g = [None] * self.term.n_rows
        for rows, a, shift in self.term.row_groups:
            sweeps = [pb.point_sweep(pb.split_exprs(pr.Z[i], splits, pr.mu),
                                     [float(a_l) * (self.term.leaves.pyomo(pr.Xa[i], pr.targets[i], b) - shift)
                                      if shift or a_l != 1 else self.term.leaves.pyomo(pr.Xa[i], pr.targets[i], b)
                                      for a_l, b in zip(a, B)],
                                     pr.tree, 1) for i in range(len(pr.y))]
            for k in rows:
                w = self.term.W[:, k]
                g[k] = sum(float(w[i]) * s for i, s in enumerate(sweeps) if w[i] != 0)
        return g


@dataclass(frozen=True)
class RowBounds:
    """The bounds of a :class:`CoefficientRows` block (the ``term`` its formulation reads): ``lower``, ``upper``
    of every row, its ``name`` and ``key``."""

    lower: np.ndarray
    upper: np.ndarray
    key: tuple
    name: str = "curve slopes"


class CoefficientRows:
    """The rows lower <= A beta_l <= upper on the coefficients of each of m leaves (the slopes of the bounded
    curves, :attr:`~.sets.ConstraintSet.leaf_rows`), the leaves' rows of beta at ``offset`` in the flat x
    (0 for the LN subproblem over beta_W; omega's size over all variables).  Linear: the same in numpy, CasADi
    and Pyomo, no parameters."""

    has_hessian = True
    linear = True

    def __init__(self, rows: tuple, n_leaves: int, offset: int = 0):
        self.A, lower, upper = rows
        self.m, self.offset = n_leaves, offset
        self.term = RowBounds(np.tile(lower, n_leaves), np.tile(upper, n_leaves),
                              ("curve slopes", self.A.shape, self.A.tobytes(), lower.tobytes(), upper.tobytes()))

    def _beta(self, x) -> np.ndarray:
        return np.reshape(np.asarray(x, float)[self.offset:self.offset + self.m * self.A.shape[1]], (self.m, -1))

    def value(self, x) -> np.ndarray:
        return (self._beta(x) @ self.A.T).ravel()

    def jacobian(self, x) -> np.ndarray:
        J = np.zeros((len(self.term.lower), np.size(x)))
        J[:, self.offset:self.offset + self.m * self.A.shape[1]] = np.kron(np.eye(self.m), self.A)
        return J

    def hessian(self, x, lam) -> np.ndarray:
        return np.zeros((np.size(x), np.size(x)))

    def render(self, B):
        """(g, no parameter symbols) in CasADi: B (m x q MX) the leaves' coefficients."""
        return ca.vec(ca.mtimes(ca.DM(self.A), B.T)), []

    def parameter_values(self) -> list:
        return []

    def pyomo(self, B) -> list:
        """The rows in Pyomo: B the rows of Pyomo variables of the leaves."""
        from .. import pyomo_backend as pb

        return [pb.linear(row, b) for b in B for row in self.A]
