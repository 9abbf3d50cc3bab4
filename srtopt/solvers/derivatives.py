"""Exact second derivatives for adapters that feed the numpy evaluator to a solver.

The value and gradient come from ``problem.evaluate`` (the numpy reference); the
Hessian and the quadratic form of a QP come from the formulation's CasADi
rendering, built once per ``problem.structure_key`` and re-evaluated with the
problem's ``render_parameters()`` -- the same cache discipline as
:class:`~srtopt.solvers.ipopt.IpoptCasadi`.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from .base import cached_rendering


class CasadiDerivatives:
    """Per-structure cache of the CasADi Hessian (and QP data) of formulations."""

    def __init__(self):
        self._hess: dict = {}
        self._quad: dict = {}

    def hessian(self, problem):
        """x -> exact Hessian of ``problem`` at x (numpy, dense)."""
        fn, p = cached_rendering(self._hess, problem, lambda model: model.hess_function)
        return lambda x: np.asarray(fn(np.asarray(x, float), p))

    def quadratic_form(self, problem):
        """(H, g, c) with f(x) = 1/2 x'Hx + g'x + c for a quadratic formulation (the LN step)."""
        fn, p = cached_rendering(self._quad, problem, _quadratic_form_function)
        H, g, c = fn(np.zeros(problem.start().size), p)
        return np.asarray(H), np.asarray(g).ravel(), float(c)

    def __deepcopy__(self, memo):  # compiled CasADi objects are caches: a copy starts empty
        return CasadiDerivatives()


def _quadratic_form_function(model) -> ca.Function:
    """(x, p) -> (Hessian, gradient, value) of a rendered model; at x = 0 the QP data."""
    H, _ = ca.hessian(model.f, model.x)
    return ca.Function(f"{model.name}_qp", [model.x, model.p], [H, ca.gradient(model.f, model.x), model.f])
