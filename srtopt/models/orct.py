"""The ORCT training problem: optimal randomized classification trees of Blanquero, Carrizosa,
Molero-Rio and Romero Morales (Computers & OR, 2021), the classification twin of :mod:`srtopt.models.orrt`.

Same soft oblique splits as SRT (eq. cdf, ``Z = [1, X/p]``); leaf t holds class-assignment
variables C_tk in [0, 1] with sum_k C_tk = 1 (the continuous relaxation of one class per leaf
that the paper solves), and the objective is the expected misclassification cost of the soft
tree:

    E_ORCT(omega, C) = sum_i s_i sum_{t in tau_L} P_it sum_k W[y_i, k] C_tk + lambda_w/2 ||omega||^2

with W the cost matrix (rows: the true class, columns: the predicted one; 0 on the diagonal and
1 off it by default, the expected error rate), s_i the row weights (summing to 1) and an optional
l2 term on omega (not in the paper).  The paper's constraints: sum_k C_tk = 1 for every leaf, and
sum_t C_tk >= 1 for every class (each class is predicted by some leaf) when there are no more
classes than leaves; its bounds omega in [-1, 1] (a_jt and mu_t there), C in [0, 1].

The numpy evaluator is one sweep of :func:`srtopt.kernels.subtree_loss` with leaf values
R_it = sum_k W[y_i, k] C_tk; the CasADi rendering the sweep of :mod:`.casadi_backend` and the
Pyomo rendering :func:`.pyomo_backend.point_sweep` -- neither restates the leaf probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import casadi as ca
import numpy as np

from .. import kernels
from ..tree import Tree
from . import casadi_backend as cb
from .constraints.constrained import Constrained
from .terms.class_losses import MisclassificationCost
from .terms.penalties import L2


def class_scores(Z: np.ndarray, omega: np.ndarray, C: np.ndarray, mu: float, tree: Tree) -> np.ndarray:
    """sum_{t in tau_L} P_it C_tk, shape (n, K): ORCT's prediction scores (the class of the largest
    is the prediction; a distribution over the classes when every row of C sums to 1).  ``Z`` is
    the split design of :mod:`srtopt.kernels`."""
    return kernels.leaf_probabilities(kernels.split_probabilities(Z, omega, mu), tree) @ C


class AssignmentRows:
    """The linear rows on C of ORCT (a constraint block of :class:`ORCTObjective`): sum_k C_tk = 1
    for every leaf t and, with ``cover``, sum_t C_tk >= 1 for every class k.

    Parameters
    ----------
    offset : int
        Position of C_{first leaf, class 0} in x (the number of split weights).
    n_leaves, n_classes : int
        |tau_L| and K; C is stored leaf by leaf (C_tk at offset + t K + k).
    cover : bool
        Whether the class rows are present.
    """

    name = "class_assignment"
    linear = True
    has_hessian = True

    def __init__(self, offset: int, n_leaves: int, n_classes: int, cover: bool):
        self.offset, self.n_leaves, self.n_classes, self.cover = offset, n_leaves, n_classes, bool(cover)
        cells = offset + np.arange(n_leaves * n_classes).reshape(n_leaves, n_classes)
        self.rows = list(cells) + (list(cells.T) if cover else [])
        self.lower = np.ones(len(self.rows))
        self.upper = np.r_[np.ones(n_leaves), np.full(len(self.rows) - n_leaves, np.inf)]

    @property
    def term(self):
        return self

    @property
    def key(self) -> tuple:
        return (self.name, self.n_leaves, self.n_classes, self.cover)

    def value(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        return np.array([x[row].sum() for row in self.rows])

    def jacobian(self, x) -> np.ndarray:
        J = np.zeros((len(self.rows), np.size(x)))
        for r, row in enumerate(self.rows):
            J[r, row] = 1.0
        return J

    def hessian(self, x, lam) -> np.ndarray:
        return np.zeros((np.size(x), np.size(x)))

    def render(self, x):
        """(the rows as a CasADi MX column, no parameter symbols)."""
        return ca.vertcat(*[ca.sum1(x[[int(j) for j in row]]) for row in self.rows]), []

    def parameter_values(self) -> list:
        return []

    def pyomo(self, x) -> list:
        """The rows as Pyomo expressions of the flat variable ``x``."""
        return [sum(x[int(j)] for j in row) for row in self.rows]


@dataclass
class ORCTObjective(Constrained):
    """E_ORCT(omega, C) over x = (vec omega, vec C), both row-major like ``ndarray.ravel`` (omega
    (2^D - 1, p + 1), C (2^D, K): leaf t's class assignments in row t - 2^D), with the paper's
    constraint rows and bounds (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Inputs, scaled to [0, 1].
    codes : ndarray of shape (n,)
        Class codes 0..K-1.
    tree : Tree
        The maximal tree of depth D.
    n_classes : int
        K, at least 2.
    omega, C : ndarray
        The start; they fix the shapes.
    mu : float, default=512.0
        Slope of the logistic CDF of the splits.
    lambda_w : float, default=0.0
        l2 weight on omega (intercepts included).
    cost : array-like of shape (K, K) or None, default=None
        W, as :class:`~.terms.class_losses.MisclassificationCost` takes it (None: 1 off the diagonal).
    weights : ndarray of shape (n,) or None, default=None
        Row weights before normalization (None: 1/n each).
    omega_bound : float or None, default=1.0
        |omega_jt| <= omega_bound (the paper's [-1, 1]); None: unbounded.
    """

    X: np.ndarray
    codes: np.ndarray
    tree: Tree
    n_classes: int
    omega: np.ndarray
    C: np.ndarray
    mu: float = 512.0
    lambda_w: float = 0.0
    cost: object = None
    weights: np.ndarray | None = None
    omega_bound: float | None = 1.0
    name: str = "orct_objective"

    def __post_init__(self):
        self.X, self.codes = np.asarray(self.X, float), np.asarray(self.codes, dtype=np.int64)
        n = self.X.shape[0]
        self.s = np.full(n, 1.0 / n) if self.weights is None else np.asarray(self.weights, float) / np.sum(self.weights)
        self.W = MisclassificationCost(self.cost).matrix(self.n_classes)
        self.penalty = L2(self.lambda_w, 0.0)

    @cached_property
    def Z(self) -> np.ndarray:
        return kernels.split_design(self.X)

    @cached_property
    def T(self) -> np.ndarray:
        """W[y_i, :] of every row, (n, K): R_it = T_i . C_t."""
        return self.W[self.codes]

    @property
    def n_variables(self) -> int:
        return self.omega.size + self.C.size

    def split(self, x):
        """(omega, C) from a flat x."""
        x, k = np.asarray(x, float), self.omega.size
        return np.reshape(x[:k], self.omega.shape), np.reshape(x[k:], self.C.shape)

    def start(self) -> np.ndarray:
        return np.concatenate([self.omega.ravel(), self.C.ravel()])

    def hessian(self, x) -> np.ndarray:
        """The exact Hessian of E_ORCT at x (IPOPT's oracle route uses it).

        In omega: Z^T diag(.) Z per pair of branch nodes on one branch, with the per-row curvatures
        of :func:`srtopt.kernels.branch_curvatures` (leaf values R = T C^T), + lambda_w I.  Between
        omega_a and C_t: Z^T diag(M_.at) T, with M_iat = dG_ia / dR_it = s_i F'(u_ia) P_ia (P_i(t | 2a)
        if t lies below a's left child, -P_i(t | 2a + 1) below its right one, else 0), P_i(t | c)
        the branch probabilities from c down to t.  In C: 0 (E is linear in C).
        """
        omega, C = self.split(x)
        tree, (n, q), K = self.tree, self.Z.shape, self.n_classes
        S = kernels.split_probabilities(self.Z, omega, self.mu)
        nodes = np.asarray(tree.branch_nodes)
        H = np.zeros((self.n_variables, self.n_variables))
        k = self.omega.size
        H[:k, :k] = (kernels.branch_hessian(self.Z, kernels.branch_curvatures(S, self.T @ C.T, self.s, self.mu, nodes),
                                            nodes) + self.lambda_w * np.eye(k))
        for a in tree.branch_nodes:
            p = S[:, a - 1]
            slope = self.s * self.mu * p * (1.0 - p) * kernels.reach_probabilities(S, tree, a)
            for child, sign in ((2 * a, 1.0), (2 * a + 1, -1.0)):
                below = kernels.leaf_probabilities(S, tree, child) if child in tree.branch_nodes else np.ones((n, 1))
                for t, reach in zip(tree.descendants_leaves(child), below.T):
                    block = self.Z.T @ ((sign * slope * reach)[:, None] * self.T)
                    leaf = tree.leaf_index(t)
                    rows, cols = slice((a - 1) * q, a * q), slice(k + leaf * K, k + (leaf + 1) * K)
                    H[rows, cols], H[cols, rows] = block, block.T
        return H

    nonsmooth = ()

    def repair(self, x) -> np.ndarray:
        """x with omega clipped to its bounds and each C_t clipped to [0, 1] and scaled to sum 1
        (uniform if it was all 0): a solve stopped early may end slightly off the rows."""
        lower, upper = self.bounds()
        omega, C = self.split(np.clip(x, lower, upper))
        total = C.sum(axis=1, keepdims=True)
        C = np.where(total > 0, C / np.where(total > 0, total, 1.0), 1.0 / self.n_classes)
        return np.concatenate([omega.ravel(), C.ravel()])

    def evaluate(self, x):
        """(E_ORCT, its gradient) at x with the numpy kernels.

        With R = T C^T, one sweep gives E, the leaf probabilities P and G = dE/du; then
        dE/domega_t = Z^T G[:, t] (+ lambda_w omega_t) and dE/dC_tk = sum_i s_i P_it W[y_i, k].
        """
        omega, C = self.split(x)
        S = kernels.split_probabilities(self.Z, omega, self.mu)
        f, G, P = kernels.subtree_loss(S, self.T @ C.T, self.s, self.mu, with_leaves=True)
        d_omega, d_C = self.penalty.gradient(omega, C)
        g_omega, g_C = G.T @ self.Z + d_omega, (self.s[:, None] * P).T @ self.T + d_C
        return f + self.penalty.value(omega, C), np.concatenate([g_omega.ravel(), g_C.ravel()])

    @cached_property
    def constraint_blocks(self) -> tuple:
        cover = self.n_classes <= self.tree.n_leaves
        return (AssignmentRows(self.omega.size, self.tree.n_leaves, self.n_classes, cover),)

    def bounds(self):
        b = np.inf if self.omega_bound is None else float(self.omega_bound)
        return (np.r_[np.full(self.omega.size, -b), np.zeros(self.C.size)],
                np.r_[np.full(self.omega.size, b), np.ones(self.C.size)])

    @property
    def structure_key(self) -> tuple:
        """Problems with the same key share one symbolic model: data, costs and mu are parameters."""
        return ("orct", self.tree.depth, *self.Z.shape, self.n_classes, self.penalty.key, *self.constraint_key())

    def _names(self) -> list[str]:
        q = self.Z.shape[1]
        return ([f"omega[{t}][{j}]" for t in self.tree.branch_nodes for j in range(q)]
                + [f"C[{t}][{k}]" for t in self.tree.leaves for k in range(self.n_classes)])

    def render(self) -> cb.CasadiModel:
        """Vectorised CasADi MX model of E_ORCT with the data (Z, T = W[y], s) and mu as parameters,
        the rows of :class:`AssignmentRows` and the bounds."""
        tree, (n, q), K = self.tree, self.Z.shape, self.n_classes
        x = ca.MX.sym("x", self.n_variables)
        Zp, Tp, sp, mu = ca.MX.sym("Z", n, q), ca.MX.sym("T", n, K), ca.MX.sym("s", n), ca.MX.sym("mu")
        omega = cb.matrix(x[: self.omega.size], tree.n_branch, q)
        C = cb.matrix(x[self.omega.size:], tree.n_leaves, K)
        S = cb.sigmoid(ca.mtimes(Zp, omega.T), mu)
        columns = {t: tree.branch_index(t) for t in tree.branch_nodes}
        f = cb.soft_loss(S, ca.mtimes(Tp, C.T), sp, tree, 1, columns) + self.penalty.casadi(omega, C)
        p = ca.vertcat(ca.vec(Zp), ca.vec(Tp), sp, mu)
        return self.casadi_model(x, p, f, self._names(), [block.render(x) for block in self.constraint_blocks])

    def render_parameters(self) -> np.ndarray:
        """Values of the rendered model's parameters, in the order of ``render().p``."""
        return np.concatenate([self.Z.ravel("F"), self.T.ravel("F"), self.s, [self.mu], self.constraint_parameters()])

    def render_pyomo(self):
        """E_ORCT in Pyomo: s_i sum_t P_it sum_k W[y_i, k] C_tk per row, the l2 term, the rows and bounds."""
        from . import pyomo_backend as pb

        tree, q, K = self.tree, self.Z.shape[1], self.n_classes
        names = self._names()
        m = pb.model(self.name, self.start(), names)
        W = pb.rows_of(m.x, tree.n_branch, q)
        C = pb.rows_of(m.x, tree.n_leaves, K, self.omega.size)
        splits = dict(zip(tree.branch_nodes, W))
        data = [float(self.s[i]) * pb.point_sweep(pb.split_exprs(self.Z[i], splits, self.mu),
                                                  [pb.linear(self.T[i], c) for c in C], tree, 1)
                for i in range(self.Z.shape[0]) if self.s[i] != 0]
        self.pyomo_constraints(m, [row for block in self.constraint_blocks for row in block.pyomo(m.x)])
        return pb.finish(m, data, [self.penalty.pyomo(W, C)], names)
