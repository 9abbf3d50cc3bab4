"""SciPy second-order ``minimize`` methods (trust-exact, trust-krylov, trust-ncg, Newton-CG)
with the value and gradient of the numpy evaluator and the exact Hessian of the
formulation's CasADi rendering."""

from __future__ import annotations

import time

import numpy as np
from .base import Availability, SolverParams, SolverResult
from .derivatives import CasadiDerivatives
from .scipy_minimize import minimize_until_asked

HESSIAN_METHODS = ("trust-exact", "trust-krylov", "trust-ncg", "trust-constr", "newton-cg", "dogleg")


class ScipyHessian(SolverParams):
    """``scipy.optimize.minimize(method, jac=True, hess=<CasADi Hessian>)``."""

    def __init__(self, method="trust-exact", tol=None, max_iter=200):
        if method.lower() not in HESSIAN_METHODS:
            raise ValueError(f"method must be one of {HESSIAN_METHODS}, got {method!r}")
        self.method, self.tol, self.max_iter = method, tol, max_iter
        self.name = method.lower()
        self._derivatives = CasadiDerivatives()

    @staticmethod
    def available() -> Availability:
        return Availability(True)

    def solve(self, problem, x0) -> SolverResult:
        start = time.perf_counter()
        hess = self._derivatives.hessian(problem)
        res = minimize_until_asked(problem.evaluate, x0, hess=hess, method=self.method, tol=self.tol,
                                   options={"maxiter": self.max_iter})
        return SolverResult(np.asarray(res.x), float(res.fun), bool(res.success), str(res.message),
                            int(res.get("nit", 0)), time.perf_counter() - start, res, solver=self.name)
