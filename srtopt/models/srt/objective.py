"""E(omega, beta) of eq. (obj) over all variables, as a formulation."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from .. import casadi_backend as cb
from ..constraints.blocks import CoefficientRows, FullBlock
from .base import AllVariables, _variable_names

if TYPE_CHECKING:
    from .problem import SRTProblem


@dataclass
class SRTObjective(AllVariables):
    """E(omega, beta) of eq. (obj) over all variables x = (vec omega, vec beta)."""

    problem: SRTProblem
    omega: np.ndarray
    beta: np.ndarray
    name: str = "srt_objective"

    def evaluate_smooth(self, x):
        f, g_w, g_b = self.problem.smooth_objective(*self.split(x))
        return f, np.concatenate([g_w.ravel(), g_b.ravel()])

    def bounds(self):
        bounds = self.problem.constraint_set.bounds
        if bounds is None:
            return None
        lo_w, hi_w, lo_b, hi_b = bounds
        return np.concatenate([lo_w.ravel(), lo_b.ravel()]), np.concatenate([hi_w.ravel(), hi_b.ravel()])

    @cached_property
    def constraint_blocks(self) -> tuple:
        """The soft means over all variables, then the rows on every leaf's coefficients (if any)."""
        rows = self.problem.constraint_set.leaf_rows
        return self._soft_blocks + (() if rows is None else
                                    (CoefficientRows(rows, self.problem.tree.n_leaves, self.omega.size),))

    @cached_property
    def _soft_blocks(self) -> tuple:
        return tuple(FullBlock(term, self) for term in self.problem.constraint_set.soft)

    @property
    def structure_key(self) -> tuple:
        pr = self.problem
        return ("srt", pr.tree.depth, *pr.Z.shape, pr.Xa.shape[1], pr.leaf_model.key, self._penalty_key(),
                *self.constraint_key())

    def render(self) -> cb.CasadiModel:
        pr, tree = self.problem, self.problem.tree
        (n, q), q_leaf, q_beta = pr.Z.shape, pr.Xa.shape[1], self.beta.shape[1]
        x = ca.MX.sym("x", self.omega.size + self.beta.size)
        Zp, Xp, sp = ca.MX.sym("Z", n, q), ca.MX.sym("Xa", n, q_leaf), ca.MX.sym("s", n)
        yp = ca.MX.sym("y", n, pr.leaf_model.target_width())
        omega = cb.matrix(x[: self.omega.size], tree.n_branch, q)
        beta = cb.matrix(x[self.omega.size:], tree.n_leaves, q_beta)
        S = cb.sigmoid(ca.mtimes(Zp, omega.T), pr.mu)
        R = pr.leaf_model.casadi(Xp, yp, beta)
        columns = {t: tree.branch_index(t) for t in tree.branch_nodes}
        f = cb.soft_loss(S, R, sp, tree, 1, columns) + sum(term.casadi(omega, beta) for term in pr.terms)
        p = ca.vertcat(ca.vec(Zp), ca.vec(Xp), ca.vec(yp), sp)
        names = _variable_names(tree, tree.branch_nodes, q) + _variable_names(tree, tree.leaves, q_beta, "beta")
        rows = [block.render(S, lambda leaves: leaves.casadi(Xp, yp, beta), tree) for block in self._soft_blocks]
        rows += [block.render(beta) for block in self.constraint_blocks[len(self._soft_blocks):]]
        return self.casadi_model(x, p, f, names, rows)

    def render_parameters(self) -> np.ndarray:
        pr = self.problem
        return np.concatenate([pr.Z.ravel("F"), pr.Xa.ravel("F"), pr.targets.ravel("F"), pr.s,
                               self.constraint_parameters()])

    def render_pyomo(self):
        """eq. (obj) in Pyomo: sum_i s_i sum_l P_il loss(yhat_il - y_i) + the penalty terms."""
        from .. import pyomo_backend as pb

        pr, tree = self.problem, self.problem.tree
        q, q_beta = pr.Z.shape[1], self.beta.shape[1]
        names = _variable_names(tree, tree.branch_nodes, q) + _variable_names(tree, tree.leaves, q_beta, "beta")
        m = pb.model(self.name, self.start(), names)
        W = pb.rows_of(m.x, tree.n_branch, q)
        B = pb.rows_of(m.x, tree.n_leaves, q_beta, self.omega.size)
        splits = dict(zip(tree.branch_nodes, W))
        data = [float(pr.s[i]) * pb.point_sweep(pb.split_exprs(pr.Z[i], splits, pr.mu),
                                                [pr.leaf_model.pyomo(pr.Xa[i], pr.targets[i], b) for b in B],
                                                tree, 1)
                for i in range(pr.Z.shape[0]) if pr.s[i] != 0]
        rows = [row for block in self._soft_blocks for row in block.pyomo(W, B)]
        rows += [row for block in self.constraint_blocks[len(self._soft_blocks):] for row in block.pyomo(B)]
        self.pyomo_constraints(m, rows)
        return pb.finish(m, data, [term.pyomo(W, B) for term in pr.terms], names)
