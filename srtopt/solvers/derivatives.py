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


class CasadiDerivatives:
    """Per-structure cache of the CasADi Hessian (and QP data) of formulations."""

    def __init__(self):
        self._hess: dict = {}
        self._quad: dict = {}

    def hessian(self, problem):
        """x -> exact Hessian of ``problem`` at x (numpy, dense)."""
        key = problem.structure_key
        if key not in self._hess:
            model = problem.render()
            self._hess[key], p = model.hess_function, model.p_value
        else:
            p = problem.render_parameters()
        fn = self._hess[key]
        return lambda x: np.asarray(fn(np.asarray(x, float), p))

    def quadratic_form(self, problem):
        """(H, g, c) with f(x) = 1/2 x'Hx + g'x + c for a quadratic formulation (the LN step)."""
        key = problem.structure_key
        if key not in self._quad:
            model = problem.render()
            H, _ = ca.hessian(model.f, model.x)
            g = ca.gradient(model.f, model.x)
            self._quad[key] = ca.Function(f"{model.name}_qp", [model.x, model.p], [H, g, model.f])
            p = model.p_value
        else:
            p = problem.render_parameters()
        n = problem.start().size
        H, g, c = self._quad[key](np.zeros(n), p)
        return np.asarray(H), np.asarray(g).ravel(), float(c)

    def __deepcopy__(self, memo):  # compiled CasADi objects are caches: a copy starts empty
        return CasadiDerivatives()
