"""The BN subproblem of NODEC (section 4.2): E over omega_{W_B} on the rows I_t of a subtree."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import casadi as ca
import numpy as np

from ... import kernels
from ...tree import Tree
from .. import casadi_backend as cb
from ..casadi_backend import pad as _pad
from ..casadi_backend import padded_rows
from .base import MEMO_SIZE, _variable_names
from .working_set import WorkingSetSubproblem


@dataclass
class BranchSubproblem(WorkingSetSubproblem):
    """BN step proxy (section 4.2): min over omega_{W_B} of the error of the subtree
    rooted at ``root`` on the rows I_t, beta fixed, plus the penalty terms on omega_{W_B}
    (lambda_w/2 ||omega_{W_B}||^2 for the l2 term).

    ``working`` may be any branch nodes of the subtree (the other nodes of the subtree
    stay fixed).  Probabilities of the path above ``root`` are taken as 1 and the
    weights s_i keep the 1/N of the full objective, so lambda_w keeps its meaning.
    With root 1 and all rows it equals E up to terms constant in omega_{W_B}.
    When ``rows`` is a random subsample of I_t (the paper allows "only a subset of
    data points"), ``row_weight`` = |I_t| / |rows| scales s_i to keep that balance.
    ``row_weight`` may also be one factor per row: with every row and the probabilities
    P_i(root) of reaching the root (:meth:`SRTProblem.exact_branch_subproblem`) the
    subproblem is E itself up to terms constant in omega_{W_B}, no proxy.
    """

    name: str = "bn_subproblem"
    row_weight: float | np.ndarray = 1.0
    block: ClassVar[str] = "omega"

    def __post_init__(self):
        outside = set(self.working) - set(self.problem.tree.subtree_branch(self.root))
        if outside:
            raise ValueError(f"working set {self.working} has nodes {sorted(outside)} outside the subtree of "
                             f"node {self.root}")

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
        """R_il = loss(yhat_il - y_i) of the rows and the leaves below ``root`` (beta is fixed)."""
        pr = self.problem
        leaves = [pr.tree.leaf_index(t) for t in pr.tree.descendants_leaves(self.root)]
        return pr.leaf_model.losses(pr.Xa[self.rows], pr.targets[self.rows], self.beta[leaves])

    @cached_property
    def _subtree(self) -> tuple[np.ndarray, list[int]]:
        """Branch indices of the subtree's nodes (local heap order) and the positions of the
        working set among them."""
        columns = kernels.subtree_columns(self.problem.tree, self.root)
        return columns, [int(np.flatnonzero(columns == r)[0]) for r in self._working_rows]

    @property
    def _local_working(self) -> list[int]:
        """Local heap ids (1 = ``root``) of the working nodes."""
        return [position + 1 for position in self._subtree[1]]

    def variable_scale(self) -> np.ndarray:
        """Typical size of each variable: 1 for omega_0t, p for omega_jt (which act on x_j / p).
        Solvers that are not invariant to the variables' scales (L-BFGS-B) solve in x / scale:
        about half the evaluations of L-BFGS-B on the BN subproblems (docs/departures.md)."""
        p = self.problem.n_features
        return np.tile(np.r_[1.0, np.full(p, float(p))], len(self.working))

    def _data(self, x, with_grad=True):
        """(value, gradient) of the data term, remembered for the last few x: the BN step
        compares the solver's answer and the start on the value, points the solver evaluated."""
        key = np.asarray(x, float).tobytes()
        f, g = self._evaluated.get(key, (None, None))
        if f is None or (with_grad and g is None):
            if len(self._evaluated) >= MEMO_SIZE:
                self._evaluated.pop(next(iter(self._evaluated)))
            f, g = self._evaluated[key] = self._compute_data(x, with_grad)
        return f, (g.copy() if with_grad else None)

    @cached_property
    def _evaluated(self) -> dict:
        return {}

    def _compute_data(self, x, with_grad):
        S, working = self._split_probabilities(x), self._subtree[1]
        f, G = kernels.subtree_loss(S, self._losses, self.weights, self.problem.mu, with_grad)
        return f, (G[:, working].T @ self._Z).ravel() if with_grad else None

    def _split_probabilities(self, x) -> np.ndarray:
        """p_ia of the rows and the subtree's nodes (local heap order) at omega_{W_B} = x: only the
        working nodes' columns change with x (remembered for the last x; do not modify it)."""
        key = np.asarray(x, float).tobytes()
        if self._probabilities_at[0] != key:
            S = self._fixed_probabilities.copy()
            S[:, self._subtree[1]] = kernels.split_probabilities(self._Z, self._matrix(x), self.problem.mu)
            self._probabilities_at[:] = key, S
        return self._probabilities_at[1]

    @cached_property
    def _probabilities_at(self) -> list:
        return [None, None]

    @cached_property
    def _fixed_probabilities(self) -> np.ndarray:
        return kernels.split_probabilities(self._Z, self.omega[self._subtree[0]], self.problem.mu)

    @property
    def hessian(self):
        """x -> the exact Hessian of the BN proxy when the penalties on omega are diagonal
        quadratics (the l2 term, feature_l1's majorizer); else None.

        In u_ia = z_i . omega_a the data term's second derivatives per row are
        :func:`~srtopt.kernels.branch_curvatures` (0 for nodes on separate branches); the
        Hessian in omega is Z^T diag(.) Z per pair of working nodes, plus diag(ridge)."""
        ridge = self.ridge()
        if ridge is None or self.nonsmooth:
            return None

        def hessian(x):
            local = self._local_working
            C = kernels.branch_curvatures(self._split_probabilities(x), self._losses, self.weights, self.problem.mu,
                                          local)
            return kernels.branch_hessian(self._Z, C, local) + np.diag(ridge.ravel())

        return hessian

    def lagrangian_hessian(self, x, lam_f, lam):
        """The Hessian of the Lagrangian (:meth:`~.constraints.Constrained.lagrangian_hessian`) in one
        pass: the curvatures of a sum s_i sum_l P_il R_il are linear in s_i R_il
        (:func:`~srtopt.kernels.branch_curvatures`), so the objective's and the rows' sums are added
        per row (over the rows of either) and their Hessian assembled once."""
        blocks = self.constraint_blocks
        if not blocks:
            return lam_f * self.hessian(x)
        parts = [(self.rows, self._split_probabilities(x), lam_f * self.weights[:, None] * self._losses)]
        parts += [(block.rows, block.probabilities(x), block.weighted_values(multipliers))
                  for block, multipliers in zip(blocks, self._per_block(lam))]
        if all(block.rows is self.rows for block in blocks):  # E's own subproblem: the rows of its constraints
            S, R, Z = parts[0][1], sum(values for _, _, values in parts), self._Z
        else:
            used = np.zeros(len(self.problem.y), dtype=bool)
            for rows, _, _ in parts:
                used[rows] = True
            place = np.cumsum(used) - 1  # row i's place among the rows used
            S, R = np.empty((int(used.sum()), parts[0][1].shape[1])), np.zeros((int(used.sum()), parts[0][2].shape[1]))
            for rows, probabilities, values in parts:  # the rows of a part are distinct
                S[place[rows]], R[place[rows]] = probabilities, R[place[rows]] + values
            Z = self.problem.Z[used]
        local = self._local_working
        C = kernels.branch_curvatures(S, R, np.ones(len(S)), self.problem.mu, local)
        return kernels.branch_hessian(Z, C, local) + lam_f * np.diag(self.ridge().ravel())

    @property
    def has_minimizer(self) -> bool:
        """Whether the subproblem is coercive, hence has a minimizer: its penalty on omega_W is
        a ridge with every entry > 0 (the paper's argument for lambda_w > 0).  With lambda_w = 0
        (plain SRT) a split that separates its rows better as omega grows improves without
        end, and a Newton method follows that direction to saturation."""
        ridge = self.ridge()
        return ridge is not None and bool(np.all(ridge > 0))

    @property
    def structure_key(self) -> tuple:
        """Subproblems with the same key share one symbolic model (and solver)."""
        local = self._local_nodes()
        return ("bn", self._local.depth, tuple(local[t] for t in self.working),
                padded_rows(self.n_rows), self.problem.Z.shape[1], self._penalty_key(), *self.constraint_key())

    def _local_nodes(self) -> dict[int, int]:
        """Subtree node -> node of a depth-d tree rooted at 1 (same shape)."""
        tree = self.problem.tree
        out = {}
        for a in tree.subtree_branch(self.root) + tree.descendants_leaves(self.root):
            k = tree.node_depth(a) - tree.node_depth(self.root)
            out[a] = a - self.root * 2**k + 2**k
        return out

    def render(self) -> cb.CasadiModel:
        pr, tree = self.problem, self.problem.tree
        local, sub = self._local_nodes(), self._local
        n, q = padded_rows(self.n_rows), pr.Z.shape[1]
        nodes = tree.subtree_branch(self.root)
        x = ca.MX.sym("omega_W", len(self.working) * q)
        Zp, Rp, sp = ca.MX.sym("Z", n, q), ca.MX.sym("R", n, sub.n_leaves), ca.MX.sym("s", n)
        Op, Bp, mu = ca.MX.sym("omega", tree.n_branch, q), ca.MX.sym("beta", *self.beta.shape), ca.MX.sym("mu")
        cols = {a: Op[tree.branch_index(a), :].T for a in nodes}
        cols.update({a: x[i * q:(i + 1) * q] for i, a in enumerate(self.working)})
        S = cb.sigmoid(ca.mtimes(Zp, ca.horzcat(*[cols[a] for a in nodes])), mu)
        columns = {local[a]: j for j, a in enumerate(nodes)}
        X = cb.matrix(x, len(self.working), q)
        f = cb.soft_loss(S, Rp, sp, sub, 1, columns) + self._casadi_penalties(X, Op, Bp)
        p = ca.vertcat(ca.vec(Zp), ca.vec(Rp), sp, ca.vec(Op), ca.vec(Bp), mu)
        rows = [block.render(X, mu) for block in self.constraint_blocks]
        return self.casadi_model(x, p, f, _variable_names(tree, self.working, q), rows)

    def _fixed_nodes(self):
        return [a for a in self.problem.tree.subtree_branch(self.root) if a not in self.working]

    def render_parameters(self) -> np.ndarray:
        """Values of the rendered model's parameters (data padded to the row bucket)."""
        pr, n = self.problem, padded_rows(self.n_rows)
        return np.concatenate([
            _pad(self._Z, n).ravel("F"), _pad(self._losses, n).ravel("F"), _pad(self.weights, n),
            self.omega.ravel("F"), self.beta.ravel("F"), [pr.mu], self.constraint_parameters()])

    def render_pyomo(self):
        """The BN proxy in Pyomo: sum_i s_i sum_l P_il R_il over the subtree + the penalties."""
        from .. import pyomo_backend as pb

        pr, tree = self.problem, self.problem.tree
        q = pr.Z.shape[1]
        names = _variable_names(tree, self.working, q)
        m = pb.model(self.name, self.start(), names)
        X = pb.rows_of(m.x, len(self.working), q)
        columns = dict(zip(self.working, X))
        columns.update({a: list(self.omega[tree.branch_index(a)]) for a in self._fixed_nodes()})
        Z, R, s = self._Z, self._losses, self.weights
        data = [float(s[i]) * pb.point_sweep(pb.split_exprs(Z[i], columns, pr.mu), [float(r) for r in R[i]],
                                             tree, self.root)
                for i in range(len(self.rows)) if s[i] != 0]
        self.pyomo_constraints(m, [row for block in self.constraint_blocks for row in block.pyomo(X)])
        return pb.finish(m, data, self._pyomo_penalties(X), names)
