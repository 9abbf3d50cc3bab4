"""Declarative formulations of the SRT training problem and its NODEC subproblems.

A formulation says *what* is minimised: its variables, its data, and its
objective.  It evaluates itself with the numpy reference kernels
(:meth:`evaluate`, value and gradient) and renders itself as a symbolic model
(:meth:`render`, CasADi MX with exact derivatives).  It never calls a solver.

Formulations (paper names):

* :class:`SRTObjective` -- E(omega, beta) of eq. (obj), all variables.
* :class:`BranchSubproblem` -- BN step: E restricted to the subtree rooted at t
  and the data I_t (the proxy of section 4.2), over omega_{W_B}.
* :class:`LeafSubproblem` -- LN step: the same proxy over beta_{W_L}, a
  weighted ridge least-squares problem.
* :class:`WLRProxy` -- the weighted logistic regression of eq. (reshuffle) over
  omega_t, used by the data-point reassignment heuristic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from functools import cached_property

import casadi as ca
import numpy as np
from scipy.special import expit

from .. import kernels
from ..tree import Tree
from . import casadi_backend as cb

MIN_ROWS = 32  # smallest padded row count of a rendered subproblem
MEMO_SIZE = 4  # iterates whose E and gradient SRTProblem.objective remembers


def padded_rows(n: int) -> int:
    """Row count of the rendered model: the next power of two >= n.

    Subproblems on I_t change size every iteration; padding with zero-weight
    rows lets one compiled solver per power of two serve them all.
    """
    return max(MIN_ROWS, 1 << max(0, n - 1).bit_length())


def _pad(a: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n,) + a.shape[1:])
    out[: a.shape[0]] = a
    return out


@dataclass
class SRTProblem:
    """Training data of eq. (obj): X in [0,1]^p, standardized y, weights s_i (sum 1)."""

    X: np.ndarray
    y: np.ndarray
    tree: Tree
    mu: float = 1.0
    lambda_w: float = 0.0
    lambda_b: float = 0.0
    weights: np.ndarray | None = None

    def __post_init__(self):
        n = self.X.shape[0]
        self.s = np.full(n, 1.0 / n) if self.weights is None else self.weights / self.weights.sum()
        self._memo: dict = {}
        self._routing: tuple = (None, None)

    @cached_property
    def Z(self) -> np.ndarray:
        return kernels.split_design(self.X)

    @cached_property
    def Xa(self) -> np.ndarray:
        return kernels.leaf_design(self.X)

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    def objective(self, omega, beta, with_grad=False):
        """E of eq. (obj) (and its gradient) at (omega, beta).

        Value and gradient are computed together and remembered for the last few
        iterates: NODEC asks for E and for the gradient's norm at the same points
        (the threshold tests, E after each step), so each point is evaluated once.
        """
        key = (np.asarray(omega, float).tobytes(), np.asarray(beta, float).tobytes(), self.mu, self.lambda_w,
               self.lambda_b)
        if key not in self._memo:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
            self._memo[key] = kernels.objective_and_gradient(
                self.Z, self.Xa, self.y, omega, beta, self.mu, self.lambda_w, self.lambda_b, self.s)
        f, g_w, g_b = self._memo[key]
        return (f, g_w.copy(), g_b.copy()) if with_grad else f

    def hbp_leaves(self, omega) -> np.ndarray:
        """HBP leaf of every training row (remembered for the last omega: the BN and LN
        steps of an inner iteration both route the data)."""
        key = np.asarray(omega, float).tobytes()
        if self._routing[0] != key:
            self._routing = (key, kernels.hbp_leaves(self.Z, omega, self.tree))
        return self._routing[1]

    def full(self, omega, beta) -> "SRTObjective":
        return SRTObjective(self, omega, beta)

    def branch_subproblem(self, omega, beta, root, working, rows, row_weight=1.0) -> "BranchSubproblem":
        return BranchSubproblem(self, omega, beta, root, tuple(working), np.asarray(rows), row_weight=row_weight)

    def leaf_subproblem(self, omega, beta, root, working, rows) -> "LeafSubproblem":
        return LeafSubproblem(self, omega, beta, root, tuple(working), np.asarray(rows))


@dataclass
class SRTObjective:
    """E(omega, beta) of eq. (obj) over all variables x = (vec omega, vec beta)."""

    problem: SRTProblem
    omega: np.ndarray
    beta: np.ndarray
    name: str = "srt_objective"

    def split(self, x):
        k = self.omega.size
        return np.reshape(x[:k], self.omega.shape), np.reshape(x[k:], self.beta.shape)

    def start(self) -> np.ndarray:
        return np.concatenate([self.omega.ravel(), self.beta.ravel()])

    def evaluate(self, x):
        f, g_w, g_b = self.problem.objective(*self.split(np.asarray(x, float)), with_grad=True)
        return f, np.concatenate([g_w.ravel(), g_b.ravel()])

    def render(self) -> cb.CasadiModel:
        pr, tree = self.problem, self.problem.tree
        n, q = pr.Z.shape
        x = ca.MX.sym("x", self.omega.size + self.beta.size)
        Zp, Xp, yp, sp = (ca.MX.sym("Z", n, q), ca.MX.sym("Xa", n, q), ca.MX.sym("y", n), ca.MX.sym("s", n))
        omega = cb.matrix(x[: self.omega.size], tree.n_branch, q)
        beta = cb.matrix(x[self.omega.size:], tree.n_leaves, q)
        S = cb.sigmoid(ca.mtimes(Zp, omega.T), pr.mu)
        R = (ca.mtimes(Xp, beta.T) - ca.repmat(yp, 1, tree.n_leaves)) ** 2
        columns = {t: tree.branch_index(t) for t in tree.branch_nodes}
        f = (cb.soft_loss(S, R, sp, tree, 1, columns)
             + 0.5 * pr.lambda_w * ca.sumsqr(omega) + 0.5 * pr.lambda_b * ca.sumsqr(beta))
        p = ca.vertcat(ca.vec(Zp), ca.vec(Xp), yp, sp)
        names = ([f"omega[{t}][{j}]" for t in tree.branch_nodes for j in range(q)]
                 + [f"beta[{t}][{j}]" for t in tree.leaves for j in range(q)])
        return cb.CasadiModel(self.name, x, p, f, self.render_parameters(), names)

    def render_parameters(self) -> np.ndarray:
        pr = self.problem
        return np.concatenate([pr.Z.ravel("F"), pr.Xa.ravel("F"), pr.y, pr.s])


@dataclass
class _WorkingSetSubproblem:
    """A NODEC subproblem over the block (omega or beta) rows of a working set, on rows I_t."""

    problem: SRTProblem
    omega: np.ndarray
    beta: np.ndarray
    root: int
    working: tuple[int, ...]
    rows: np.ndarray
    block: ClassVar[str]

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @cached_property
    def _working_rows(self) -> list[int]:
        """Rows of omega (BN) or beta (LN) that hold the working set."""
        tree = self.problem.tree
        index = tree.branch_index if self.block == "omega" else tree.leaf_index
        return [index(t) for t in self.working]

    def start(self) -> np.ndarray:
        return getattr(self, self.block)[self._working_rows].ravel()

    def with_x(self, x) -> np.ndarray:
        """The full omega (BN) or beta (LN) with the working-set rows replaced by x."""
        full = getattr(self, self.block).copy()
        full[self._working_rows] = np.reshape(x, (len(self.working), -1))
        return full


@dataclass
class BranchSubproblem(_WorkingSetSubproblem):
    """BN step proxy (section 4.2): min over omega_{W_B} of the error of the subtree
    rooted at ``root`` on the rows I_t, beta fixed, plus lambda_w/2 ||omega_{W_B}||^2.

    Probabilities of the path above ``root`` are taken as 1 and the weights
    s_i keep the 1/N of the full objective, so lambda_w keeps its meaning.
    With root 1 and all rows it equals E up to terms constant in omega_{W_B}.
    When ``rows`` is a random subsample of I_t (the paper allows "only a subset of
    data points"), ``row_weight`` = |I_t| / |rows| scales s_i to keep that balance.
    """

    name: str = "bn_subproblem"
    row_weight: float = 1.0
    block: ClassVar[str] = "omega"

    @cached_property
    def weights(self) -> np.ndarray:
        """s_i of the rows (times ``row_weight``)."""
        return self.problem.s[self.rows] * self.row_weight

    @cached_property
    def _Z(self) -> np.ndarray:
        return self.problem.Z[self.rows]

    @cached_property
    def _local(self) -> Tree:
        return Tree(self.problem.tree.subtree_depth(self.root))

    @cached_property
    def _losses(self) -> np.ndarray:
        pr = self.problem
        leaves = [pr.tree.leaf_index(t) for t in pr.tree.descendants_leaves(self.root)]
        return kernels.leaf_losses(pr.Xa[self.rows], pr.y[self.rows], self.beta[leaves])

    def evaluate(self, x):
        pr = self.problem
        x = np.asarray(x, float)
        Z = self._Z
        S = kernels.split_probabilities(Z, self.with_x(x), pr.mu)
        f, G = kernels.soft_loss(S, self._losses, self.weights, pr.tree, self.root, pr.mu)
        g = (G.T @ Z)[self._working_rows].ravel() + pr.lambda_w * x
        return f + 0.5 * pr.lambda_w * x @ x, g

    @property
    def structure_key(self) -> tuple:
        """Subproblems with the same key share one symbolic model (and solver)."""
        local = self._local_nodes()
        return ("bn", self._local.depth, tuple(local[t] for t in self.working),
                padded_rows(self.n_rows), self.problem.Z.shape[1])

    def _local_nodes(self) -> dict[int, int]:
        """Subtree node -> node of a depth-d tree rooted at 1 (same shape)."""
        tree = self.problem.tree
        out = {}
        for a in tree.subtree_branch(self.root) + tree.descendants_leaves(self.root):
            k = tree.node_depth(a) - tree.node_depth(self.root)
            out[a] = a - self.root * 2**k + 2**k
        return out

    def render(self) -> cb.CasadiModel:
        pr = self.problem
        local, tree = self._local_nodes(), self._local
        n, q = padded_rows(self.n_rows), pr.Z.shape[1]
        nodes, fixed = self.problem.tree.subtree_branch(self.root), self._fixed_nodes()
        x = ca.MX.sym("omega_W", len(self.working) * q)
        Zp, Rp, sp = ca.MX.sym("Z", n, q), ca.MX.sym("R", n, tree.n_leaves), ca.MX.sym("s", n)
        Fp, mu, lam = ca.MX.sym("omega_fixed", len(fixed) * q), ca.MX.sym("mu"), ca.MX.sym("lambda_w")
        cols = {a: x[i * q:(i + 1) * q] for i, a in enumerate(self.working)}
        cols.update({a: Fp[i * q:(i + 1) * q] for i, a in enumerate(fixed)})
        S = cb.sigmoid(ca.mtimes(Zp, ca.horzcat(*[cols[a] for a in nodes])), mu)
        columns = {local[a]: j for j, a in enumerate(nodes)}
        f = cb.soft_loss(S, Rp, sp, tree, 1, columns) + 0.5 * lam * ca.sumsqr(x)
        p = ca.vertcat(ca.vec(Zp), ca.vec(Rp), sp, Fp, mu, lam)
        names = [f"omega[{t}][{j}]" for t in self.working for j in range(q)]
        return cb.CasadiModel(self.name, x, p, f, self.render_parameters(), names)

    def _fixed_nodes(self):
        return [a for a in self.problem.tree.subtree_branch(self.root) if a not in self.working]

    def render_parameters(self) -> np.ndarray:
        """Values of the rendered model's parameters (data padded to the row bucket)."""
        pr, n = self.problem, padded_rows(self.n_rows)
        fixed = [pr.tree.branch_index(a) for a in self._fixed_nodes()]
        return np.concatenate([
            _pad(pr.Z[self.rows], n).ravel("F"), _pad(self._losses, n).ravel("F"),
            _pad(self.weights, n), self.omega[fixed].ravel(), [pr.mu, pr.lambda_w]])


@dataclass
class LeafSubproblem(_WorkingSetSubproblem):
    """LN step: min over beta_{W_L} of sum_l sum_{i in I_t} s_i P_il (Xa_i beta_l - y_i)^2
    + lambda_b/2 ||beta_{W_L}||^2 with omega fixed (P_il of the subtree proxy rooted at
    ``root``).  A convex weighted ridge least-squares problem, separable by leaf.
    """

    name: str = "ln_subproblem"
    block: ClassVar[str] = "beta"

    @cached_property
    def leaf_weights(self) -> np.ndarray:
        """Q_il = s_i P_il for the working leaves, shape (|I_t|, |W_L|)."""
        pr = self.problem
        S = kernels.split_probabilities(pr.Z[self.rows], self.omega, pr.mu)
        P = kernels.leaf_probabilities(S, pr.tree, self.root)
        leaves = pr.tree.descendants_leaves(self.root)
        return pr.s[self.rows, None] * P[:, [leaves.index(t) for t in self.working]]

    def evaluate(self, x):
        pr = self.problem
        B = np.reshape(np.asarray(x, float), (len(self.working), -1))
        Xa, y, Q = pr.Xa[self.rows], pr.y[self.rows], self.leaf_weights
        residual = Xa @ B.T - y[:, None]
        f = float(np.sum(Q * residual**2)) + 0.5 * pr.lambda_b * np.sum(B**2)
        g = 2.0 * (Q * residual).T @ Xa + pr.lambda_b * B
        return f, g.ravel()

    @property
    def structure_key(self) -> tuple:
        return ("ln", len(self.working), padded_rows(self.n_rows), self.problem.Xa.shape[1])

    def render(self) -> cb.CasadiModel:
        pr = self.problem
        n, q, m = padded_rows(self.n_rows), pr.Xa.shape[1], len(self.working)
        x = ca.MX.sym("beta_W", m * q)
        Xp, yp, Qp, lam = ca.MX.sym("Xa", n, q), ca.MX.sym("y", n), ca.MX.sym("Q", n, m), ca.MX.sym("lambda_b")
        B = cb.matrix(x, m, q)
        residual = ca.mtimes(Xp, B.T) - ca.repmat(yp, 1, m)
        f = ca.sum1(ca.sum2(Qp * residual**2)) + 0.5 * lam * ca.sumsqr(x)
        p = ca.vertcat(ca.vec(Xp), yp, ca.vec(Qp), lam)
        names = [f"beta[{t}][{j}]" for t in self.working for j in range(q)]
        return cb.CasadiModel(self.name, x, p, f, self.render_parameters(), names)

    def render_parameters(self) -> np.ndarray:
        pr, n = self.problem, padded_rows(self.n_rows)
        return np.concatenate([_pad(pr.Xa[self.rows], n).ravel("F"), _pad(pr.y[self.rows], n),
                               _pad(self.leaf_weights, n).ravel("F"), [pr.lambda_b]])


def omega_from_logistic(intercept, coef, mu: float) -> np.ndarray:
    """omega_t of the split whose left probability is the logistic model sigma(b + c.x).

    F(omega_0 + (1/p) omega.x) = sigma(mu omega_0 + (mu/p) omega.x), so
    omega_0 = b / mu and omega_j = p c_j / mu.
    """
    coef = np.ravel(coef)
    return np.r_[np.ravel(intercept)[:1] / mu, coef * len(coef) / mu]


@dataclass
class WLRProxy:
    """Weighted logistic regression of eq. (reshuffle) over omega_t:

        -(1/N_t) sum_{i in I_t} w_i [c_i ln p_it + (1 - c_i) ln(1 - p_it)]
        + alpha/2 ||omega_t[1:]||^2

    ``alpha`` (default 0, the paper's equation) adds the ridge term that a
    regularised logistic-regression solver uses on the non-intercept
    coefficients; it makes the minimiser finite on separable data.
    """

    Z: np.ndarray
    c: np.ndarray
    w: np.ndarray
    mu: float
    omega_t: np.ndarray
    alpha: float = 0.0
    name: str = "wlr_proxy"

    def start(self) -> np.ndarray:
        return np.asarray(self.omega_t, float).copy()

    def evaluate(self, x):
        x = np.asarray(x, float)
        u = self.mu * (self.Z @ x)
        n = len(self.c)
        # ln p = -softplus(-u), ln(1-p) = -softplus(u)
        loss = self.w * (self.c * np.logaddexp(0, -u) + (1 - self.c) * np.logaddexp(0, u))
        p = expit(u)
        f = loss.sum() / n + 0.5 * self.alpha * x[1:] @ x[1:]
        g = self.Z.T @ (self.w * (p - self.c)) * self.mu / n
        g[1:] += self.alpha * x[1:]
        return float(f), g

    def hessian(self, x) -> np.ndarray:
        """Exact Hessian of the WLR objective: mu^2/N_t Z^T diag(w p (1 - p)) Z + alpha on omega_{1:}."""
        p = expit(self.mu * (self.Z @ np.asarray(x, float)))
        H = (self.Z.T * (self.w * p * (1.0 - p))) @ self.Z * (self.mu**2 / len(self.c))
        H[1:, 1:] += self.alpha * np.eye(len(x) - 1)
        return H

    @property
    def structure_key(self) -> tuple:
        return ("wlr", padded_rows(len(self.c)), self.Z.shape[1])

    def render(self) -> cb.CasadiModel:
        n, q = padded_rows(len(self.c)), self.Z.shape[1]
        x = ca.MX.sym("omega_t", q)
        Zp, cp, wp = ca.MX.sym("Z", n, q), ca.MX.sym("c", n), ca.MX.sym("w", n)
        mu, alpha, inv_n = ca.MX.sym("mu"), ca.MX.sym("alpha"), ca.MX.sym("inv_Nt")
        u = mu * ca.mtimes(Zp, x)
        loss = wp * (cp * cb.softplus(-u) + (1 - cp) * cb.softplus(u))
        f = inv_n * ca.sum1(loss) + 0.5 * alpha * ca.sumsqr(x[1:])
        p = ca.vertcat(ca.vec(Zp), cp, wp, mu, alpha, inv_n)
        names = [f"omega_t[{j}]" for j in range(q)]
        return cb.CasadiModel(self.name, x, p, f, self.render_parameters(), names)

    def render_parameters(self) -> np.ndarray:
        n = padded_rows(len(self.c))
        return np.concatenate([_pad(self.Z, n).ravel("F"), _pad(self.c, n), _pad(self.w, n),
                               [self.mu, self.alpha, 1.0 / len(self.c)]])
