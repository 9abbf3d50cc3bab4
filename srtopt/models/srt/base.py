"""What the formulations of the SRT problem share: the stationarity gradient of a composite objective,
the variables' names, and the bases of a formulation over all variables or over a working set."""

from __future__ import annotations

import numpy as np

from ..constraints.constrained import Constrained

MEMO_SIZE = 4  # points whose values a formulation remembers
STATIONARITY_STEP = 1e-6  # t of the proximal-gradient mapping of nonsmooth formulations


def stationarity_gradient(x, g, prox, step=STATIONARITY_STEP):
    """(x - prox(x - step g, step)) / step: the proximal-gradient mapping, g + the subgradient
    of the nonsmooth part closest to -g (so 0 exactly at a stationary point)."""
    return (x - prox(x - step * g, step)) / step




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
