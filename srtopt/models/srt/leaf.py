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
from ..constraints.blocks import CoefficientRows, LeafBlock
from ..leaves import block_diagonal, leaf_hessian_blocks, row_outer_products
from ..terms.losses import Loss
from .base import _variable_names
from .working_set import WorkingSetSubproblem


@dataclass
class LeafSubproblem(WorkingSetSubproblem):
    """LN step: min over beta_{W_L} of sum_l sum_{i in I_t} s_i P_il R_il(beta_l) + the penalty terms
    on beta_{W_L}, omega fixed (P_il of the subtree proxy rooted at ``root``; R_il the leaf model's
    loss, :mod:`..leaves`: loss(Xa_i beta_l - y_i) for linear leaves).  Separable by leaf; for the
    squared loss and the l2 term, a convex weighted ridge least-squares problem; for a
    classification leaf and the log loss, a weighted multinomial logistic regression (convex).
    """

    name: str = "ln_subproblem"
    block: ClassVar[str] = "beta"
    hard: tuple = ()
    zero_columns: tuple = ()  # columns of beta fixed to 0 (features left out of the leaves)

    def _blocks(self) -> tuple:
        """The soft means, the constraints on hard predictions in ``hard``: pairs (a soft-mean
        term bound to the problem, a :class:`~.constraints.Routing`, e.g. the HBP leaf of every
        training row, ``predict()``'s), and the rows on each working leaf's coefficients (the slopes of
        bounded curves)."""
        rows = self.problem.constraint_set.leaf_rows
        return super()._blocks() + tuple(LeafBlock(term, self, routing) for term, routing in self.hard) + \
            (() if rows is None else (CoefficientRows(rows, len(self.working)),))

    @cached_property
    def leaf_weights(self) -> np.ndarray:
        """Q_il = s_i P_il for the working leaves, shape (|I_t|, |W_L|)."""
        pr = self.problem
        S = kernels.split_probabilities(pr.Z[self.rows], self.omega, pr.mu)
        P = kernels.leaf_probabilities(S, pr.tree, self.root)
        leaves = pr.tree.descendants_leaves(self.root)
        return pr.s[self.rows, None] * P[:, [leaves.index(t) for t in self.working]]

    @property
    def residual_loss(self) -> Loss | None:
        """The leaf model's ``residual_loss``: the loss of R_il = loss(Xa_i . beta_l - T_i), or None (what the
        closed-form LN solvers, least squares and the QP, ask)."""
        return self.problem.leaf_model.residual_loss

    def l2_strength(self) -> float | None:
        """lambda when the ridge is lambda everywhere (the l2 term alone), else None."""
        ridge = self.ridge()
        return float(ridge.flat[0]) if ridge is not None and np.all(ridge == ridge.flat[0]) else None

    @cached_property
    def design(self) -> tuple[np.ndarray, np.ndarray]:
        """(Xa, targets) of the rows I_t (the targets: y for linear leaves)."""
        return self.problem.Xa[self.rows], self.problem.targets[self.rows]

    def _losses(self, x, order: int) -> tuple:
        """R of the rows at the working leaves at x and its derivatives in the scores up to ``order``, kept for
        the last x (a solver asks for the value, the gradient and the Hessian at one point)."""
        key = np.asarray(x, float).tobytes()
        last = getattr(self, "_last_losses", (None, -1, None))
        if last[0] != key or last[1] < order:
            values = self.problem.leaf_model.losses(*self.design, self._matrix(x), order=order)
            self._last_losses = (key, order, values if order else (values,))
        return self._last_losses[2]

    def _data(self, x, with_grad=True):
        leaves, Q = self.problem.leaf_model, self.leaf_weights
        if not with_grad:
            return float(np.sum(Q * self._losses(x, 0)[0])), None
        R, D = self._losses(x, 1)[:2]
        return float(np.sum(Q * R)), leaves.gradient(self.design[0], Q, D).ravel()

    @property
    def hessian(self):
        """x -> the exact Hessian, block diagonal over the working leaves l (:attr:`hessian_blocks` on
        the diagonal); None when a penalty term on beta is not a diagonal quadratic (:meth:`ridge`) or
        the objective is nonsmooth."""
        blocks = self.hessian_blocks
        return None if blocks is None else (lambda x: block_diagonal(blocks(x)))

    @property
    def hessian_blocks(self):
        """x -> the Hessian's diagonal blocks (|W_L|, K' q, K' q), one per working leaf l: sum_i Q_il H_il (x)
        Xa_i Xa_i^T + diag(ridge_l), H_il the second derivatives of R_il in the leaf's scores
        (loss''(r_il) for linear leaves: Xa^T diag(Q_il loss''(r_il)) Xa); None as for :attr:`hessian`.
        The subproblem separates by leaf: Newton's method factorizes the blocks one by one."""
        ridge = self.ridge()
        if ridge is None or self.nonsmooth:
            return None

        def blocks(x):
            C = self._losses(x, 2)[2]
            H = leaf_hessian_blocks(self.design[0], C * self.leaf_weights, self._outer)
            diagonal = np.arange(H.shape[1])
            H[:, diagonal, diagonal] += ridge
            return H
        return blocks

    @cached_property
    def _outer(self):
        """The rows' Xa_i Xa_i^T for the Hessian of several scores per leaf (computed once per subproblem)."""
        return row_outer_products(self.design[0]) if self.problem.leaf_model.n_outputs > 1 else None

    @property
    def structure_key(self) -> tuple:
        return ("ln", len(self.working), padded_rows(self.n_rows), self.problem.Xa.shape[1], self.problem.leaf_model.key,
                self._penalty_key(), *self.constraint_key())

    def render(self) -> cb.CasadiModel:
        pr, tree = self.problem, self.problem.tree
        n, q, m, q_beta = padded_rows(self.n_rows), pr.Xa.shape[1], len(self.working), self.beta.shape[1]
        x = ca.MX.sym("beta_W", m * q_beta)
        Xp, yp, Qp = ca.MX.sym("Xa", n, q), ca.MX.sym("y", n, pr.leaf_model.target_width()), ca.MX.sym("Q", n, m)
        Op, Bp = ca.MX.sym("omega", *self.omega.shape), ca.MX.sym("beta", tree.n_leaves, q_beta)
        B = cb.matrix(x, m, q_beta)
        f = ca.sum1(ca.sum2(Qp * pr.leaf_model.casadi(Xp, yp, B))) + self._casadi_penalties(B, Op, Bp)
        p = ca.vertcat(ca.vec(Xp), ca.vec(yp), ca.vec(Qp), ca.vec(Op), ca.vec(Bp))
        rows = [block.render(B) for block in self.constraint_blocks]
        return self.casadi_model(x, p, f, _variable_names(tree, self.working, q_beta, "beta"), rows)

    def render_parameters(self) -> np.ndarray:
        pr, n = self.problem, padded_rows(self.n_rows)
        return np.concatenate([_pad(pr.Xa[self.rows], n).ravel("F"), _pad(pr.targets[self.rows], n).ravel("F"),
                               _pad(self.leaf_weights, n).ravel("F"), self.omega.ravel("F"), self.beta.ravel("F"),
                               self.constraint_parameters()])

    def render_pyomo(self):
        """The LN problem in Pyomo: sum_i sum_l Q_il R_il(beta_l) + the penalties."""
        from .. import pyomo_backend as pb

        pr = self.problem
        q_beta = self.beta.shape[1]
        names = _variable_names(pr.tree, self.working, q_beta, "beta")
        m = pb.model(self.name, self.start(), names)
        B = pb.rows_of(m.x, len(self.working), q_beta)
        (Xa, T), Q = self.design, self.leaf_weights
        data = [float(Q[i, l]) * pr.leaf_model.pyomo(Xa[i], T[i], B[l])
                for i in range(len(self.rows)) for l in range(len(self.working)) if Q[i, l] != 0]
        self.pyomo_constraints(m, [row for block in self.constraint_blocks for row in block.pyomo(B)])
        return pb.finish(m, data, self._pyomo_penalties(B), names)
