"""The training data and terms of eq. (obj): the SRT problem every formulation is built from."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ... import kernels
from ...tree import Tree
from ..constraints.base import REACH_FLOOR
from ..constraints.policy import ConstraintPolicy
from ..constraints.sets import ConstraintSet
from ..terms.losses import SQUARED, Loss
from ..leaves import linear_leaves
from ..terms.penalties import L2, Penalty
from .base import MEMO_SIZE, stationarity_gradient
from .branch import BranchSubproblem
from .leaf import LeafSubproblem
from .objective import SRTObjective


#: the rows that weights count for at most, where more would change nothing: the l2 weights' N
#: (:data:`srtopt.estimators.regularization.LAMBDA_ROWS`) and :attr:`SRTProblem.counts`
COUNTED_ROWS = 100_000
#: the relative rounding of a sum that :func:`counted_weights` takes as the bound it rescaled to
ROUNDING = 1e-12


def counted_weights(weights) -> np.ndarray:
    """Row weights (finite, >= 0, some positive) as the method counts rows: a weight means repetition, so a row
    of integer weight k counts as k repeated rows, and weights summing to between one row and ``max(N,
    COUNTED_ROWS)`` rows are kept as they are.  Weights summing to fewer or more count in proportion to that
    bound, from their ratios to the largest: weights scaled by any factor beyond it count alike, and none
    overflows (1e308) or loses its digits below the normal floats (1e-320)."""
    weights = np.asarray(weights, float)
    largest = weights.max()
    ratios = weights / largest
    most = max(len(weights), COUNTED_ROWS)
    log_sum = np.log(largest) + np.log(ratios.sum())  # log of the weights' sum, which may overflow
    if -ROUNDING <= log_sum <= np.log(most) + ROUNDING:  # bounded weights stay as they are (also bounded twice)
        return weights
    return ratios * ((most if log_sum > 0 else 1.0) / ratios.sum())


@dataclass
class SRTProblem:
    """Training data of eq. (obj): X in [0,1]^p, standardized y, weights s_i (sum 1), the loss
    term (default: squared) and the penalty terms beside the l2 term of lambda_w, lambda_b; the
    constraint terms (:mod:`.constraints`, in the problem's units) and the protected group of each
    row (integer codes 0, 1, ...; needed by the group constraints).  ``leaves``: the fitted leaf model
    (:mod:`srtopt.leaf_model`), which owns its loss; None: the SRT's linear leaves of ``loss`` (read only
    then).  A classification problem gives :class:`~..leaves.ClassLeaves` and y the class codes 0..K-1."""

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
    leaves: object = None

    def __post_init__(self):
        n = self.X.shape[0]
        self.s = np.full(n, 1.0 / n) if self.weights is None else self.counts / self.counts.sum()
        self.penalties = tuple(term.bind(self) for term in self.penalties)
        self._memo: dict = {}
        self._routing: tuple = (None, None)
        self._probabilities: tuple = (None, None)
        self._terms: tuple = (None, ())
        self._incremental: tuple = (None, None)
        if self.groups is not None:
            self.groups = np.asarray(self.groups, dtype=np.int64)
        self.constraints = tuple(term.bind(self) for term in self.constraints)
        self.constraint_set = ConstraintSet(self.constraints, self.X.shape[1] + 1, self.tree.n_branch,
                                            self.tree.n_leaves, self.leaf_model.n_outputs, self.leaf_model.basis)

    @cached_property
    def Z(self) -> np.ndarray:
        return kernels.split_design(self.X)

    @cached_property
    def Xa(self) -> np.ndarray:
        """The leaf design of the leaf model ([1, X] for linear or logistic leaves)."""
        return self.leaf_model.design(self.X)

    @property
    def leaf_model(self):
        """The leaf model (:mod:`srtopt.leaf_model`): ``leaves``, or the linear leaves of ``loss``."""
        return linear_leaves(self.loss, self.X.shape[1]) if self.leaves is None else self.leaves

    @cached_property
    def targets(self) -> np.ndarray:
        """The rows' targets for the leaf model: y (regression), one row per class code (classification)."""
        return self.leaf_model.targets(self.y)

    @cached_property
    def counts(self) -> np.ndarray:
        """The rows' weights before normalization (ones without weights), as :func:`counted_weights` bounds them:
        what a row counts for where the method counts rows."""
        return np.ones(self.X.shape[0]) if self.weights is None else counted_weights(self.weights)

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
        key = (self.mu, self.leaf_model.key)
        if self._incremental[0] != key:
            self._incremental = (key, kernels.IncrementalObjective(self.Z, self.Xa, self.targets, self.s, self.mu,
                                                                  self.leaf_model, self.tree))
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

    @cached_property
    def policy(self) -> ConstraintPolicy:
        """What the constraints imply for training (:mod:`~srtopt.models.constraints.policy`)."""
        return ConstraintPolicy(self)

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
