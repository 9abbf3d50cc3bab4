"""SciPy second-order ``minimize`` methods (trust-exact, trust-krylov, trust-ncg, Newton-CG)
with the value and gradient of the numpy evaluator and the exact Hessian of the
formulation's CasADi rendering."""

from __future__ import annotations

import numpy as np
import scipy

from .base import Acceptance, Solver, SolverResult, smooth_problem, termination
from .derivatives import CasadiDerivatives
from .scipy_minimize import minimize_until_asked

HESSIAN_METHODS = ("trust-exact", "trust-krylov", "trust-ncg", "trust-constr", "newton-cg", "dogleg")


class ScipyHessian(Solver):
    """``scipy.optimize.minimize(method, jac=True, hess=<CasADi Hessian>)``."""

    family = "scipy:trust"

    def __init__(self, method="trust-exact", tol=None, max_iter=200, time_limit=None, verbosity=0):
        if method.lower() not in HESSIAN_METHODS:
            raise ValueError(f"method must be one of {HESSIAN_METHODS}, got {method!r}")
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.method = method
        self.name = method.lower()
        self._derivatives = CasadiDerivatives()

    def version(self) -> str:
        return f"scipy {scipy.__version__}"

    def accepts(self, problem) -> Acceptance:
        return smooth_problem(problem, "render", "CasADi rendering for the Hessian")

    def _solve(self, problem, x0, deadline) -> SolverResult:
        hess = self._derivatives.hessian(problem)
        res = minimize_until_asked(problem.evaluate, x0, deadline, hess=hess, method=self.method, tol=self.tol,
                                   options={"maxiter": self.max_iter, "disp": bool(self.verbosity)})
        return SolverResult(np.asarray(res.x), float(res.fun), bool(res.success), str(res.message),
                            int(res.get("nit", 0)), 0.0, res, termination(self.family, res.status, res.success),
                            self.name)
