"""IPOPT through CasADi ``nlpsol`` (the IPOPT 3.14 shipped in the casadi wheel).

The solver for a subproblem is built once per ``problem.structure_key`` from
the problem's symbolic rendering and re-solved with new parameter values and a
warm start; it is never rebuilt inside the NODEC loop.
"""

from __future__ import annotations

import time

import casadi as ca
import numpy as np

from .base import SolverResult


class IpoptCasadi:
    """IPOPT via ``casadi.nlpsol``.

    Parameters
    ----------
    hessian : {"limited-memory", "exact"}
        L-BFGS approximation (default) or the exact Hessian from CasADi's AD.
    tol, max_iter : IPOPT's ``tol`` and ``max_iter``.
    options : extra IPOPT options, passed as ``ipopt.<name>``.
    """

    name = "ipopt"

    def __init__(self, hessian="limited-memory", tol=1e-6, max_iter=200, options=None):
        if hessian not in ("limited-memory", "exact"):
            raise ValueError(f"hessian must be 'limited-memory' or 'exact', got {hessian!r}")
        self.hessian, self.tol, self.max_iter = hessian, tol, max_iter
        self.options = dict(options or {})
        self._cache: dict = {}

    @staticmethod
    def available() -> bool:
        return ca.has_nlpsol("ipopt")

    def _solver(self, problem):
        key = problem.structure_key
        if key not in self._cache:
            model = problem.render()
            opts = {"ipopt.print_level": 0, "print_time": False, "ipopt.sb": "yes",
                    "ipopt.tol": self.tol, "ipopt.max_iter": self.max_iter,
                    "ipopt.hessian_approximation": self.hessian,
                    **{f"ipopt.{k}": v for k, v in self.options.items()}}
            self._cache[key] = ca.nlpsol(problem.name, "ipopt", model.nlp, opts)
            return self._cache[key], model.p_value
        return self._cache[key], problem.render_parameters()

    def solve(self, problem, x0) -> SolverResult:
        start = time.perf_counter()
        solver, p_value = self._solver(problem)
        out = solver(x0=np.asarray(x0, float), p=p_value)
        stats = solver.stats()
        x = np.asarray(out["x"]).ravel()
        return SolverResult(x, float(out["f"]), bool(stats["success"]), stats["return_status"],
                            int(stats.get("iter_count", 0)), time.perf_counter() - start, stats)
