"""Declarative formulations of the SRT training problem and its NODEC subproblems.

A formulation says *what* is minimised: its variables, its data, and its
objective, composed of a loss term and penalty terms (:mod:`.terms`).  It
evaluates itself with the numpy reference kernels (:meth:`evaluate`, value and
gradient), renders itself as a CasADi model (:meth:`render`, MX with exact
derivatives) and as a Pyomo model (:meth:`render_pyomo`); the three live in the
formulation's class.  It never calls a solver.

Formulations (paper names):

* :class:`SRTObjective` -- E(omega, beta) of eq. (obj), all variables.
* :class:`BranchSubproblem` -- BN step: E restricted to the subtree rooted at t
  and the data I_t (the proxy of section 4.2), over omega_{W_B} (any branch nodes of
  that subtree).
* :class:`LeafSubproblem` -- LN step: the same proxy over beta_{W_L} (a weighted
  ridge least-squares problem for the squared loss and the l2 penalty).
* :class:`WLRProxy` -- the weighted logistic regression of eq. (reshuffle) over
  omega_t, used by the data-point reassignment heuristic.

With a nonsmooth penalty (``split_l1``, ``feature_l1``) a formulation is the sum of
a smooth part (``evaluate_smooth``) and a nonsmooth part (``nonsmooth_value``,
``prox``); its ``evaluate`` then returns the value and the *stationarity gradient*,
the proximal-gradient mapping (x - prox(x - t g, t)) / t for a small t, which is the
gradient where the penalty is differentiable and vanishes exactly at stationary
points.  ``nonsmooth`` lists the nonsmooth terms (empty: a smooth problem that every
NLP solver accepts).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import casadi as ca
import numpy as np

from .. import kernels
from ..tree import Tree
from . import casadi_backend as cb
from .casadi_backend import pad as _pad, padded_rows
from .constraints import REACH_FLOOR, Constrained, ConstraintSet, FullBlock, LeafBlock, SplitBlock
from .terms import L2, SQUARED, Loss, Penalty

MEMO_SIZE = 4  # iterates whose E and gradient SRTProblem.objective remembers
STATIONARITY_STEP = 1e-6  # t of the proximal-gradient mapping of nonsmooth formulations


def stationarity_gradient(x, g, prox, step=STATIONARITY_STEP):
    """(x - prox(x - step g, step)) / step: the proximal-gradient mapping, g + the subgradient
    of the nonsmooth part closest to -g (so 0 exactly at a stationary point)."""
    return (x - prox(x - step * g, step)) / step


@dataclass
class SRTProblem:
    """Training data of eq. (obj): X in [0,1]^p, standardized y, weights s_i (sum 1), the loss
    term (default: squared) and the penalty terms beside the l2 term of lambda_w, lambda_b; the
    constraint terms (:mod:`.constraints`, in the problem's units) and the protected group of each
    row (integer codes 0, 1, ...; needed by the group constraints)."""

    X: np.ndarray
    y: np.ndarray
    tree: Tree
    mu: float = 1.0
    lambda_w: float = 0.0
    lambda_b: float = 0.0
    weights: np.ndarray | None = None
    loss: Loss = SQUARED
    penalties: tuple = ()
    constraints: tuple = ()
    groups: np.ndarray | None = None

    def __post_init__(self):
        n = self.X.shape[0]
        self.s = np.full(n, 1.0 / n) if self.weights is None else self.weights / self.weights.sum()
        self.penalties = tuple(self.penalties)
        self._memo: dict = {}
        self._routing: tuple = (None, None)
        self._probabilities: tuple = (None, None)
        self._terms: tuple = (None, ())
        self._incremental: tuple = (None, None)
        if self.groups is not None:
            self.groups = np.asarray(self.groups, dtype=np.int64)
        self.constraints = tuple(term.bind(self) for term in self.constraints)
        self.constraint_set = ConstraintSet(self.constraints, self.X.shape[1] + 1, self.tree.n_branch,
                                            self.tree.n_leaves)

    @cached_property
    def Z(self) -> np.ndarray:
        return kernels.split_design(self.X)

    @cached_property
    def Xa(self) -> np.ndarray:
        return kernels.leaf_design(self.X)

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def terms(self) -> tuple[Penalty, ...]:
        """The penalty terms of E: the l2 term of eq. (obj) first, then ``penalties``."""
        key = (self.lambda_w, self.lambda_b, self.penalties)
        if self._terms[0] != key:
            self._terms = (key, (L2(self.lambda_w, self.lambda_b), *self.penalties))
        return self._terms[1]

    @property
    def nonsmooth(self) -> tuple[Penalty, ...]:
        """The nonsmooth penalty terms, in the order their proximal operators compose."""
        return tuple(sorted((p for p in self.penalties if not p.smooth), key=lambda p: p.order))

    def objective(self, omega, beta, with_grad=False):
        """E of eq. (obj) (and its gradient; the stationarity gradient with a nonsmooth penalty).

        Value and gradient are computed together and remembered for the last few
        iterates: NODEC asks for E and for the gradient's norm at the same points
        (the threshold tests, E after each step), so each point is evaluated once.
        """
        f, g_w, g_b = self._remembered(omega, beta)
        return (f, g_w.copy(), g_b.copy()) if with_grad else f

    def smooth_objective(self, omega, beta):
        """(value, gradient in omega, gradient in beta) of the smooth part of E."""
        return self._remembered(omega, beta, smooth=True)

    def _remembered(self, omega, beta, smooth=False):
        key = (np.asarray(omega, float).tobytes(), np.asarray(beta, float).tobytes(), self.mu, self.lambda_w,
               self.lambda_b)
        if key not in self._memo:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
            self._memo[key] = self._evaluate(omega, beta)
        total, smooth_part = self._memo[key]
        return smooth_part if smooth else total

    def _evaluate(self, omega, beta):
        """((E, gradient), (smooth part, its gradient)) at (omega, beta)."""
        f, g_w, g_b = 0.0, 0.0, 0.0
        for term in self.terms:
            if term.smooth:
                d_omega, d_beta = term.gradient(omega, beta)
                f, g_w, g_b = f + term.value(omega, beta), g_w + d_omega, g_b + d_beta
        data_f, data_w, data_b = self._data_term(omega, beta)
        smooth = (f + data_f, g_w + data_w, g_b + data_b)
        if not self.nonsmooth:
            return smooth, smooth
        f, g_w, g_b = smooth
        f = f + sum(term.value(omega, beta) for term in self.nonsmooth)
        k = omega.size
        x, g = np.concatenate([omega.ravel(), beta.ravel()]), np.concatenate([g_w.ravel(), g_b.ravel()])
        G = stationarity_gradient(x, g, lambda v, step: np.concatenate(
            [a.ravel() for a in self.prox(v[:k].reshape(omega.shape), v[k:].reshape(beta.shape), step)]))
        return (f, G[:k].reshape(omega.shape), G[k:].reshape(beta.shape)), smooth

    def _data_term(self, omega, beta):
        """(value, gradient in omega, gradient in beta) of the data term, by a
        :class:`~srtopt.kernels.IncrementalObjective` (one per mu and loss): NODEC's
        successive points differ in one subtree, which is all it recomputes."""
        key = (self.mu, self.loss)
        if self._incremental[0] != key:
            self._incremental = (key, kernels.IncrementalObjective(self.Z, self.Xa, self.y, self.s, self.mu,
                                                                  self.loss, self.tree))
        return self._incremental[1](omega, beta)

    def prox(self, omega, beta, step):
        """The proximal operator of the nonsmooth penalty terms over all variables."""
        for term in self.nonsmooth:
            omega, beta = term.prox(omega, beta, step)
        return omega, beta

    def block_prox(self, kind, rows, omega, beta):
        """(x, step) -> the proximal operator of the nonsmooth terms over the rows ``rows`` of
        omega (``kind`` "omega") or beta, flat, the other rows fixed at ``omega``, ``beta``."""
        blocks = [term.exact_block(kind, rows, omega, beta) for term in self.nonsmooth if kind in term.blocks]

        def prox(x, step):
            X = np.reshape(x, (len(rows), -1))
            for block in blocks:
                X = block.prox(X, step)
            return np.ravel(X)
        return prox

    def split_probabilities(self, omega) -> np.ndarray:
        """p_it of every training row (remembered for the last omega)."""
        return self._probabilities_at(omega)[0]

    def leaf_probabilities(self, omega) -> np.ndarray:
        """P_it of every training row and leaf (remembered for the last omega)."""
        return self._probabilities_at(omega)[1]

    def _probabilities_at(self, omega):
        key = np.asarray(omega, float).tobytes()
        if self._probabilities[0] != key:
            S = kernels.split_probabilities(self.Z, omega, self.mu)
            self._probabilities = (key, (S, kernels.leaf_probabilities(S, self.tree)))
        return self._probabilities[1]

    def constraint_values(self, omega, beta) -> np.ndarray:
        """The rows g of the soft-mean constraints at (omega, beta), concatenated."""
        soft = self.constraint_set.soft
        return np.concatenate([c.values(self, omega, beta) for c in soft]) if soft else np.zeros(0)

    def violation(self, omega, beta) -> float:
        """The largest violation of a constraint at (omega, beta): 0 when they all hold (and
        without constraints)."""
        if not self.constraints:
            return 0.0
        return self.full(omega, beta).violation(np.concatenate([np.ravel(omega), np.ravel(beta)]))

    def project(self, omega, beta):
        """(omega, beta) clipped to the variable bounds of the constraints."""
        return self.constraint_set.project(omega, beta)

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

    def exact_branch_subproblem(self, omega, beta, root, working) -> "BranchSubproblem":
        """The BN subproblem of E itself over omega_{W_B} (no proxy): every row that reaches ``root``
        with probability at least :data:`~.constraints.REACH_FLOOR`, weighted by that probability
        (the rows below it change E by less than the floor)."""
        reach = kernels.reach_probabilities(self.split_probabilities(omega), self.tree, root)
        rows = np.flatnonzero(reach >= REACH_FLOOR)
        return self.branch_subproblem(omega, beta, root, working, rows, row_weight=reach[rows])

    def leaf_subproblem(self, omega, beta, root, working, rows, hard=(), zero_columns=()) -> "LeafSubproblem":
        return LeafSubproblem(self, omega, beta, root, tuple(working), np.asarray(rows), hard=tuple(hard),
                              zero_columns=tuple(zero_columns))


def _variable_names(tree, nodes, q, array="omega"):
    return [f"{array}[{t}][{j}]" for t in nodes for j in range(q)]


class Composite(Constrained):
    """:meth:`evaluate` of a formulation whose objective is :meth:`evaluate_smooth` plus
    nonsmooth terms (``nonsmooth``, ``nonsmooth_value`` and ``prox`` from the subclass);
    constraints from :class:`~.constraints.Constrained` (none unless the subclass sets them)."""

    def evaluate(self, x):
        """(value, gradient); with nonsmooth terms, (value, stationarity gradient)."""
        f, g = self.evaluate_smooth(x)
        if not self.nonsmooth:
            return f, g
        return f + self.nonsmooth_value(x), stationarity_gradient(np.asarray(x, float), g, self.prox)


class AllVariables(Composite):
    """A formulation over all variables x = (vec omega, vec beta), both row-major like
    ``ndarray.ravel``; subclasses give ``problem``, ``omega``, ``beta`` and
    :meth:`evaluate_smooth` (the data term and the smooth penalties)."""

    @property
    def n_variables(self) -> int:
        return self.omega.size + self.beta.size

    def split(self, x):
        """(omega, beta) from a flat x."""
        k = self.omega.size
        x = np.asarray(x, float)
        return np.reshape(x[:k], self.omega.shape), np.reshape(x[k:], self.beta.shape)

    def start(self) -> np.ndarray:
        return np.concatenate([self.omega.ravel(), self.beta.ravel()])

    @property
    def nonsmooth(self) -> tuple:
        return self.problem.nonsmooth

    def nonsmooth_value(self, x) -> float:
        omega, beta = self.split(x)
        return sum(term.value(omega, beta) for term in self.nonsmooth)

    def prox(self, x, step):
        return np.concatenate([a.ravel() for a in self.problem.prox(*self.split(x), step)])

    def _penalty_key(self) -> tuple:
        return tuple(term.key for term in self.problem.terms)


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
        return tuple(FullBlock(term, self) for term in self.problem.constraint_set.soft)

    @property
    def structure_key(self) -> tuple:
        pr = self.problem
        return ("srt", pr.tree.depth, *pr.Z.shape, pr.loss.key, self._penalty_key(), *self.constraint_key())

    def render(self) -> cb.CasadiModel:
        pr, tree = self.problem, self.problem.tree
        n, q = pr.Z.shape
        x = ca.MX.sym("x", self.omega.size + self.beta.size)
        Zp, Xp, yp, sp = (ca.MX.sym("Z", n, q), ca.MX.sym("Xa", n, q), ca.MX.sym("y", n), ca.MX.sym("s", n))
        omega = cb.matrix(x[: self.omega.size], tree.n_branch, q)
        beta = cb.matrix(x[self.omega.size:], tree.n_leaves, q)
        S = cb.sigmoid(ca.mtimes(Zp, omega.T), pr.mu)
        R = pr.loss.casadi(ca.mtimes(Xp, beta.T) - ca.repmat(yp, 1, tree.n_leaves))
        columns = {t: tree.branch_index(t) for t in tree.branch_nodes}
        f = cb.soft_loss(S, R, sp, tree, 1, columns) + sum(term.casadi(omega, beta) for term in pr.terms)
        p = ca.vertcat(ca.vec(Zp), ca.vec(Xp), yp, sp)
        names = _variable_names(tree, tree.branch_nodes, q) + _variable_names(tree, tree.leaves, q, "beta")
        leaf_values = lambda v: v(ca.mtimes(Xp, beta.T), ca.repmat(yp, 1, tree.n_leaves))  # noqa: E731
        rows = [block.render(S, leaf_values, tree) for block in self.constraint_blocks]
        return self.casadi_model(x, p, f, names, rows)

    def render_parameters(self) -> np.ndarray:
        pr = self.problem
        return np.concatenate([pr.Z.ravel("F"), pr.Xa.ravel("F"), pr.y, pr.s, self.constraint_parameters()])

    def render_pyomo(self):
        """eq. (obj) in Pyomo: sum_i s_i sum_l P_il loss(yhat_il - y_i) + the penalty terms."""
        from . import pyomo_backend as pb

        pr, tree = self.problem, self.problem.tree
        q = pr.Z.shape[1]
        names = _variable_names(tree, tree.branch_nodes, q) + _variable_names(tree, tree.leaves, q, "beta")
        m = pb.model(self.name, self.start(), names)
        W = pb.rows_of(m.x, tree.n_branch, q)
        B = pb.rows_of(m.x, tree.n_leaves, q, self.omega.size)
        splits = dict(zip(tree.branch_nodes, W))
        data = [float(pr.s[i]) * pb.point_sweep(pb.split_exprs(pr.Z[i], splits, pr.mu),
                                                [pr.loss.pyomo(pb.linear(pr.Xa[i], b) - float(pr.y[i])) for b in B],
                                                tree, 1)
                for i in range(pr.Z.shape[0]) if pr.s[i] != 0]
        self.pyomo_constraints(m, [row for block in self.constraint_blocks for row in block.pyomo(W, B)])
        return pb.finish(m, data, [term.pyomo(W, B) for term in pr.terms], names)


@dataclass
class _WorkingSetSubproblem(Composite):
    """A NODEC subproblem over the block (omega or beta) rows of a working set, on rows I_t.

    The penalty terms that depend on the block enter as :class:`~.terms.BlockPenalty`
    (the other rows fixed); the subclass gives the data term (``_data``)."""

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

    def _matrix(self, x):
        return np.reshape(np.asarray(x, float), (len(self.working), -1))

    def bounds(self):
        """(lower, upper) of the block's variables from the constraints' bounds (None: unbounded)."""
        return self._bounds

    @cached_property
    def _bounds(self):
        bounds, zero = self.problem.constraint_set.bounds, list(getattr(self, "zero_columns", ()))
        if bounds is None and not zero:
            return None
        q = getattr(self, self.block).shape[1]
        if bounds is None:
            lower, upper = np.full((len(self.working), q), -np.inf), np.full((len(self.working), q), np.inf)
        else:
            lower, upper = (bounds[0], bounds[1]) if self.block == "omega" else (bounds[2], bounds[3])
            lower, upper = lower[self._working_rows], upper[self._working_rows]
        if zero:
            lower, upper = lower.copy(), upper.copy()
            lower[:, zero] = upper[:, zero] = 0.0
        return lower.ravel(), upper.ravel()

    @cached_property
    def constraint_blocks(self) -> tuple:
        """The soft-mean constraints as this block sees them (:class:`~.constraints.SplitBlock`,
        :class:`~.constraints.LeafBlock`): over every training row, the other variables fixed."""
        return self._blocks()

    def _blocks(self) -> tuple:
        block = SplitBlock if self.block == "omega" else LeafBlock
        return tuple(block(term, self) for term in self.problem.constraint_set.soft)

    @cached_property
    def _penalties(self) -> list:
        """The block penalties: the terms of E that depend on this block."""
        rows = self._working_rows
        return [term.block(self.block, rows, self.omega, self.beta) for term in self.problem.terms
                if self.block in term.blocks]

    @cached_property
    def nonsmooth(self) -> tuple:
        """The nonsmooth block penalties, in the order their proximal operators compose."""
        return tuple(sorted((b for b in self._penalties if not b.smooth), key=lambda b: b.penalty.order))

    @cached_property
    def _smooth_penalties(self) -> tuple:
        return tuple(b for b in self._penalties if b.smooth)

    def penalty_names(self) -> tuple[str, ...]:
        """The names of the penalty terms on the block (e.g. ("l2",) for the SRT l2 model)."""
        return tuple(term.penalty.name for term in self._penalties)

    def ridge(self) -> np.ndarray | None:
        """The diagonal ridge (|working|, q) when the smooth penalty terms on the block are diagonal
        quadratics (the l2 term, feature_l1's majorizer): sum r x^2 / 2 + constant; else None.
        The nonsmooth terms are apart (``nonsmooth``, ``l1_weights``).  (Computed once: do not
        modify it.)"""
        return self._ridge

    @cached_property
    def _ridge(self) -> np.ndarray | None:
        ridges = [term.ridge() for term in self._smooth_penalties]
        if any(r is None for r in ridges):
            return None
        return sum(ridges, np.zeros((len(self.working), getattr(self, self.block).shape[1])))

    def ridge_shift(self) -> np.ndarray:
        """s, with :meth:`ridge` r: the penalty terms on the block are sum r x^2 / 2 - s . x + constant
        (s = 0 unless a term pulls towards a nonzero point, :class:`~.terms.LeafShrinkage`)."""
        return sum((term.shift() for term in self._smooth_penalties),
                   np.zeros((len(self.working), getattr(self, self.block).shape[1])))

    def evaluate_smooth(self, x):
        """(value, gradient) of the data term and the smooth penalties."""
        x = np.asarray(x, float)
        f, g = self._data(x)
        for term in self._smooth_penalties:
            value, gradient = term.value_and_gradient(x)
            f, g = f + value, g + gradient
        return f, g

    def value(self, x) -> float:
        """The value of :meth:`evaluate` alone (no gradient is computed)."""
        x = np.asarray(x, float)
        f = self._data(x, with_grad=False)[0]
        X = self._matrix(x)
        for term in self._smooth_penalties:
            f = f + term.value(X)
        return f + self.nonsmooth_value(x) if self.nonsmooth else f

    def nonsmooth_value(self, x) -> float:
        X = self._matrix(x)
        return sum(term.value(X) for term in self.nonsmooth)

    def prox(self, x, step):
        """The proximal operator of the nonsmooth block penalties (composed in order)."""
        X = self._matrix(x)
        for term in self.nonsmooth:
            X = term.prox(X, step)
        return X.ravel()

    def l1_weights(self):
        """Weights w (flat, >= 0) when the nonsmooth part is sum_c w_c |x_c|, else None."""
        weights = [term.l1_weights() for term in self.nonsmooth]
        if any(w is None for w in weights):
            return None
        return sum(weights, np.zeros((len(self.working), self.omega.shape[1]))).ravel()

    def _penalty_key(self) -> tuple:
        return tuple(term.penalty.key for term in self._penalties)

    def _casadi_penalties(self, X, omega, beta):
        return sum((term.casadi(X, omega, beta) for term in self._penalties), ca.MX(0))

    def _pyomo_penalties(self, X):
        return [term.pyomo(X) for term in self._penalties]


@dataclass
class BranchSubproblem(_WorkingSetSubproblem):
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
        return pr.loss.value(kernels.leaf_residuals(pr.Xa[self.rows], pr.y[self.rows], self.beta[leaves]))

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
        about half the evaluations of L-BFGS-B on the BN subproblems (docs/design.md)."""
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
        parts += [(block.rows, block.probabilities(x), (block.weights @ multipliers)[:, None] * block.V)
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
        Op, Bp, mu = ca.MX.sym("omega", tree.n_branch, q), ca.MX.sym("beta", tree.n_leaves, q), ca.MX.sym("mu")
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
        from . import pyomo_backend as pb

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


@dataclass
class LeafSubproblem(_WorkingSetSubproblem):
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
        from . import pyomo_backend as pb

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


def omega_from_logistic(intercept, coef, mu: float) -> np.ndarray:
    """omega_t of the split whose left probability is the logistic model sigma(b + c.x).

    F(omega_0 + (1/p) omega.x) = sigma(mu omega_0 + (mu/p) omega.x), so
    omega_0 = b / mu and omega_j = p c_j / mu.
    """
    coef = np.ravel(coef)
    return np.r_[np.ravel(intercept)[:1] / mu, coef * len(coef) / mu]


@dataclass
class WLRProxy(Composite):
    """Weighted logistic regression of eq. (reshuffle) over omega_t:

        -(1/N_t) sum_{i in I_t} w_i [c_i ln p_it + (1 - c_i) ln(1 - p_it)]
        + alpha/2 ||omega_t[1:]||^2

    ``alpha`` (default 0, the paper's equation) adds the ridge term that a
    regularised logistic-regression solver uses on the non-intercept
    coefficients; it makes the minimiser finite on separable data.

    ``nonsmooth``: the nonsmooth penalty terms of E on the row omega_t
    (:class:`~.terms.BlockPenalty`), times ``nonsmooth_scale``; with them the
    heuristic's split is sparse like the rest of the tree (NODEC-DR passes N / N_t,
    the ratio of the WLR's 1/N_t to E's 1/N).
    """

    Z: np.ndarray
    c: np.ndarray
    w: np.ndarray
    mu: float
    omega_t: np.ndarray
    alpha: float = 0.0
    name: str = "wlr_proxy"
    nonsmooth: tuple = ()
    nonsmooth_scale: float = 1.0
    variable_bounds: tuple | None = None

    def start(self) -> np.ndarray:
        return np.asarray(self.omega_t, float).copy()

    def bounds(self):
        """(lower, upper) of omega_t from the constraints (e.g. a monotone feature's weight fixed to 0)."""
        return self.variable_bounds

    def evaluate_smooth(self, x):
        x = np.asarray(x, float)
        n = len(self.c)
        loss, g, _ = kernels.weighted_logistic(self.Z, self.c, self.w, self.mu, x)
        g /= n
        g[1:] += self.alpha * x[1:]
        return float(loss / n + 0.5 * self.alpha * x[1:] @ x[1:]), g

    def nonsmooth_value(self, x) -> float:
        X = np.reshape(x, (1, -1))
        return self.nonsmooth_scale * sum(term.value(X) for term in self.nonsmooth)

    def prox(self, x, step):
        X = np.reshape(np.asarray(x, float), (1, -1))
        for term in self.nonsmooth:
            X = term.prox(X, step * self.nonsmooth_scale)
        return X.ravel()

    def l1_weights(self):
        weights = [term.l1_weights() for term in self.nonsmooth]
        if any(w is None for w in weights):
            return None
        return self.nonsmooth_scale * sum(weights, np.zeros((1, len(self.omega_t)))).ravel()

    def hessian(self, x) -> np.ndarray:
        """Exact Hessian of the WLR objective: mu^2/N_t Z^T diag(w p (1 - p)) Z + alpha on omega_{1:}."""
        h = kernels.weighted_logistic(self.Z, self.c, self.w, self.mu, x, with_curvature=True)[2]
        H = (self.Z.T * h) @ self.Z * (self.mu**2 / len(self.c))
        H[1:, 1:] += self.alpha * np.eye(len(x) - 1)
        return H

    @property
    def structure_key(self) -> tuple:
        # nonsmooth terms embed the fixed weights of the tree: no model is shared then
        return (("wlr", padded_rows(len(self.c)), self.Z.shape[1]) + ((id(self),) if self.nonsmooth else ())
                + self.constraint_key())

    def render(self) -> cb.CasadiModel:
        n, q = padded_rows(len(self.c)), self.Z.shape[1]
        x = ca.MX.sym("omega_t", q)
        Zp, cp, wp = ca.MX.sym("Z", n, q), ca.MX.sym("c", n), ca.MX.sym("w", n)
        mu, alpha, inv_n = ca.MX.sym("mu"), ca.MX.sym("alpha"), ca.MX.sym("inv_Nt")
        u = mu * ca.mtimes(Zp, x)
        loss = wp * (cp * cb.softplus(-u) + (1 - cp) * cb.softplus(u))
        f = inv_n * ca.sum1(loss) + 0.5 * alpha * ca.sumsqr(x[1:])
        for term in self.nonsmooth:
            f += self.nonsmooth_scale * term.casadi(x.T, ca.DM(term.omega), ca.DM(term.beta))
        p = ca.vertcat(ca.vec(Zp), cp, wp, mu, alpha, inv_n)
        return self.casadi_model(x, p, f, [f"omega_t[{j}]" for j in range(q)])

    def render_parameters(self) -> np.ndarray:
        n = padded_rows(len(self.c))
        return np.concatenate([_pad(self.Z, n).ravel("F"), _pad(self.c, n), _pad(self.w, n),
                               [self.mu, self.alpha, 1.0 / len(self.c)]])

    def render_pyomo(self):
        """eq. (reshuffle) in Pyomo, one softplus pair per point (+ the nonsmooth terms)."""
        from . import pyomo_backend as pb

        q = self.Z.shape[1]
        names = [f"omega_t[{j}]" for j in range(q)]
        m = pb.model(self.name, self.start(), names)
        x, n = [m.x[j] for j in range(q)], len(self.c)
        terms = []
        for i in range(n):
            if self.w[i] == 0:
                continue
            u = self.mu * pb.linear(self.Z[i], x)
            terms.append(float(self.w[i]) * (float(self.c[i]) * pb.softplus(-u)
                                             + float(1 - self.c[i]) * pb.softplus(u)))
        penalties = [0.5 * self.alpha * sum(x[j] ** 2 for j in range(1, q))]
        penalties += [self.nonsmooth_scale * term.pyomo([x]) for term in self.nonsmooth]
        self.pyomo_constraints(m, [])
        return pb.finish(m, [(1.0 / n) * t for t in terms], penalties, names)
