"""Exact second derivatives for adapters that feed the numpy evaluator to a solver.

The value and gradient come from ``problem.evaluate`` (the numpy reference); the
Hessian comes from the formulation's CasADi rendering, built once per
``problem.structure_key`` and re-evaluated with the problem's ``render_parameters()``
-- the same cache discipline as :class:`~srtopt.solvers.ipopt.IpoptCasadi`.
"""

from __future__ import annotations

import numpy as np

from .base import cached_rendering


class CasadiDerivatives:
    """Per-structure cache of the CasADi Hessian of formulations."""

    def __init__(self):
        self._hess: dict = {}

    def hessian(self, problem):
        """x -> exact Hessian of ``problem`` at x (numpy, dense)."""
        fn, p = cached_rendering(self._hess, problem, lambda model: model.hess_function)
        return lambda x: np.asarray(fn(np.asarray(x, float), p))

    def __deepcopy__(self, memo):  # compiled CasADi objects are caches: a copy starts empty
        return CasadiDerivatives()
