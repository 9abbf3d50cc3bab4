"""The LN subproblem of NODEC (section 4.2): E over beta_{W_L}, omega fixed."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import casadi as ca
import numpy as np

from ... import kernels
from .. import casadi_backend as cb
from ..casadi_backend import pad as _pad
from ..casadi_backend import padded_rows
from ..constraints.blocks import LeafBlock
from ..terms.losses import Loss
from .base import _variable_names
from .working_set import WorkingSetSubproblem


@dataclass
class LeafSubproblem(WorkingSetSubproblem):
    """LN step: min over beta_{W_L} of sum_l sum_{i in I_t} s_i P_il loss(Xa_i beta_l - y_i)
    + the penalty terms on beta_{W_L}, omega fixed (P_il of the subtree proxy rooted at
    ``root``).  For the squared loss and the l2 term, a convex weighted ridge
    least-squares problem, separable by leaf.
    """

    name: str = "ln_subproblem"
    block: ClassVar[str] = "beta"
    hard: tuple = ()
    zero_columns: tuple = ()  # columns of beta fixed to 0 (features left out of the leaves)

    def _blocks(self) -> tuple:
        """The soft means, and the constraints on hard predictions in ``hard``: pairs (a soft-mean
        term bound to the problem, a :class:`~.constraints.Routing`, e.g. the HBP leaf of every
        training row, ``predict()``'s)."""
        return super()._blocks() + tuple(LeafBlock(term, self, routing) for term, routing in self.hard)

    @cached_property
    def leaf_weights(self) -> np.ndarray:
        """Q_il = s_i P_il for the working leaves, shape (|I_t|, |W_L|)."""
        pr = self.problem
        S = kernels.split_probabilities(pr.Z[self.rows], self.omega, pr.mu)
        P = kernels.leaf_probabilities(S, pr.tree, self.root)
        leaves = pr.tree.descendants_leaves(self.root)
        return pr.s[self.rows, None] * P[:, [leaves.index(t) for t in self.working]]

    @property
    def loss(self) -> Loss:
        return self.problem.loss

    def l2_strength(self) -> float | None:
        """lambda when the ridge is lambda everywhere (the l2 term alone), else None."""
        ridge = self.ridge()
        return float(ridge.flat[0]) if ridge is not None and np.all(ridge == ridge.flat[0]) else None

    @cached_property
    def design(self) -> tuple[np.ndarray, np.ndarray]:
        """(Xa, y) of the rows I_t."""
        return self.problem.Xa[self.rows], self.problem.y[self.rows]

    def residuals(self, x) -> np.ndarray:
        """r_il = Xa_i beta_l - y_i, shape (|I_t|, |W_L|)."""
        return kernels.leaf_residuals(*self.design, self._matrix(x))

    def _data(self, x, with_grad=True):
        residual = self.residuals(x)
        Q = self.leaf_weights
        f = float(np.sum(Q * self.loss.value(residual)))
        if not with_grad:
            return f, None
        g = (Q * self.loss.derivative(residual)).T @ self.design[0]
        return f, g.ravel()

    @property
    def hessian(self):
        """x -> the exact Hessian, block diagonal over the working leaves l:
        Xa^T diag(Q_il loss''(r_il)) Xa + diag(ridge_l); None when a penalty term on beta is
        not a diagonal quadratic (:meth:`ridge`) or the objective is nonsmooth."""
        ridge = self.ridge()
        if ridge is None or self.nonsmooth:
            return None

        def hessian(x):
            Xa = self.design[0]
            curvature = self.leaf_weights * self.loss.second_derivative(self.residuals(x))
            q = Xa.shape[1]
            H = np.zeros((len(self.working) * q, len(self.working) * q))
            for l in range(len(self.working)):
                H[l * q:(l + 1) * q, l * q:(l + 1) * q] = (Xa.T * curvature[:, l]) @ Xa + np.diag(ridge[l])
            return H
        return hessian

    @property
    def structure_key(self) -> tuple:
        return ("ln", len(self.working), padded_rows(self.n_rows), self.problem.Xa.shape[1], self.loss.key,
                self._penalty_key(), *self.constraint_key())

    def render(self) -> cb.CasadiModel:
        pr, tree = self.problem, self.problem.tree
        n, q, m = padded_rows(self.n_rows), pr.Xa.shape[1], len(self.working)
        x = ca.MX.sym("beta_W", m * q)
        Xp, yp, Qp = ca.MX.sym("Xa", n, q), ca.MX.sym("y", n), ca.MX.sym("Q", n, m)
        Op, Bp = ca.MX.sym("omega", tree.n_branch, q), ca.MX.sym("beta", tree.n_leaves, q)
        B = cb.matrix(x, m, q)
        residual = ca.mtimes(Xp, B.T) - ca.repmat(yp, 1, m)
        f = ca.sum1(ca.sum2(Qp * self.loss.casadi(residual))) + self._casadi_penalties(B, Op, Bp)
        p = ca.vertcat(ca.vec(Xp), yp, ca.vec(Qp), ca.vec(Op), ca.vec(Bp))
        rows = [block.render(B) for block in self.constraint_blocks]
        return self.casadi_model(x, p, f, _variable_names(tree, self.working, q, "beta"), rows)

    def render_parameters(self) -> np.ndarray:
        pr, n = self.problem, padded_rows(self.n_rows)
        return np.concatenate([_pad(pr.Xa[self.rows], n).ravel("F"), _pad(pr.y[self.rows], n),
                               _pad(self.leaf_weights, n).ravel("F"), self.omega.ravel("F"), self.beta.ravel("F"),
                               self.constraint_parameters()])

    def render_pyomo(self):
        """The LN problem in Pyomo: sum_i sum_l Q_il loss(Xa_i beta_l - y_i) + the penalties."""
        from .. import pyomo_backend as pb

        pr = self.problem
        q = pr.Xa.shape[1]
        names = _variable_names(pr.tree, self.working, q, "beta")
        m = pb.model(self.name, self.start(), names)
        B = pb.rows_of(m.x, len(self.working), q)
        (Xa, y), Q = self.design, self.leaf_weights
        data = [float(Q[i, l]) * self.loss.pyomo(pb.linear(Xa[i], B[l]) - float(y[i]))
                for i in range(len(self.rows)) for l in range(len(self.working)) if Q[i, l] != 0]
        self.pyomo_constraints(m, [row for block in self.constraint_blocks for row in block.pyomo(B)])
        return pb.finish(m, data, self._pyomo_penalties(B), names)
