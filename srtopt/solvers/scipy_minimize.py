"""SciPy ``minimize`` (L-BFGS-B, SLSQP, ...) fed the exact value and gradient of the
formulation's numpy reference evaluator."""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import OptimizeResult, minimize

from .base import SolverResult, should_stop


def minimize_until_asked(fun, x0, **options) -> OptimizeResult:
    """``scipy.optimize.minimize(fun, x0, jac=True, **options)`` that returns its current
    iterate (``success`` False) once :func:`~srtopt.solvers.base.should_stop` (Ctrl-C or the
    fit's deadline).  The callback raises StopIteration; SciPy versions or methods that do
    not catch it (SciPy < 1.11, SLSQP) let it escape, and the last iterate is returned here."""
    seen = {"x": np.asarray(x0, float), "nit": 0}

    def callback(x, *_):
        seen["x"], seen["nit"] = np.array(getattr(x, "x", x), float), seen["nit"] + 1
        if should_stop():
            raise StopIteration

    try:
        return minimize(fun, seen["x"], jac=True, callback=callback, **options)
    except StopIteration:
        return OptimizeResult(x=seen["x"], fun=float(fun(seen["x"])[0]), success=False, nit=seen["nit"],
                              message="stopped: Ctrl-C or the time limit")


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
        res = minimize_until_asked(problem.evaluate, x0, method=self.method, tol=self.tol,
                                   options={"maxiter": self.max_iter})
        return SolverResult(np.asarray(res.x), float(res.fun), bool(res.success), str(res.message),
                            int(res.get("nit", 0)), time.perf_counter() - start, res)
