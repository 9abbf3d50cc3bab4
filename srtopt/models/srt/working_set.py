"""The base of the NODEC subproblems over the rows of omega (BN) or beta (LN) of a working set."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

import casadi as ca
import numpy as np

from ..constraints.blocks import LeafBlock, SplitBlock
from .base import Composite

if TYPE_CHECKING:
    from .problem import SRTProblem


@dataclass
class WorkingSetSubproblem(Composite):
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
        return sum(weights, np.zeros((len(self.working), getattr(self, self.block).shape[1]))).ravel()

    def _penalty_key(self) -> tuple:
        return tuple(term.penalty.key for term in self._penalties)

    def _casadi_penalties(self, X, omega, beta):
        return sum((term.casadi(X, omega, beta) for term in self._penalties), ca.MX(0))

    def _pyomo_penalties(self, X):
        return [term.pyomo(X) for term in self._penalties]
