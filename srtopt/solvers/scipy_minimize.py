"""SciPy ``minimize`` (L-BFGS-B, SLSQP, ...) fed the exact value and gradient of the
formulation's numpy reference evaluator."""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize

from .base import SolverResult, stop_when_asked


class ScipyMinimize:
    """``scipy.optimize.minimize`` with ``jac=True`` on ``problem.evaluate``."""

    def __init__(self, method="L-BFGS-B", tol=None, max_iter=200):
        self.method, self.tol, self.max_iter = method, tol, max_iter
        self.name = method.lower()

    @staticmethod
    def available() -> bool:
        return True

    def solve(self, problem, x0) -> SolverResult:
        start = time.perf_counter()
        res = minimize(problem.evaluate, np.asarray(x0, float), jac=True, method=self.method,
                       callback=stop_when_asked, tol=self.tol, options={"maxiter": self.max_iter})
        return SolverResult(np.asarray(res.x), float(res.fun), bool(res.success), str(res.message),
                            int(res.get("nit", 0)), time.perf_counter() - start, res)
