"""QP solvers for the LN step (a convex quadratic in beta_{W_L}).

The QP data (H, g) are read off the formulation's CasADi rendering (its exact
Hessian and its gradient at 0; :class:`~.derivatives.CasadiDerivatives`), so the
LN objective is not restated here.  The problem is unconstrained: a QP solver adds
nothing over the exact Cholesky solve (:class:`~.least_squares.ExactLeastSquares`,
the default) unless constraints on the leaf weights are added; these adapters exist
to cross-check and to swap.

* :class:`CasadiQP` -- ``casadi.conic`` with a plugin shipped in the casadi wheel
  (``qpoases``, ``osqp``, ``highs``, ``proxqp``, ``qrqp``);
* :class:`HighsQP` -- HiGHS's QP solver through ``highspy``.
"""

from __future__ import annotations

import time

import casadi as ca
import numpy as np

from .base import Availability, SolverParams, SolverResult
from .derivatives import CasadiDerivatives

_CONIC_OPTIONS = {
    "qpoases": lambda tol, it: {"printLevel": "none", "nWSR": it, "error_on_fail": False},
    "osqp": lambda tol, it: {"osqp": {"eps_abs": tol, "eps_rel": tol, "max_iter": it, "polish": True,
                                      "verbose": False}, "error_on_fail": False},
    "highs": lambda tol, it: {"highs": {"output_flag": False}, "error_on_fail": False},
    "proxqp": lambda tol, it: {"proxqp": {"eps_abs": tol, "max_iter": it}, "error_on_fail": False},
    "qrqp": lambda tol, it: {"print_iter": False, "print_header": False, "max_iter": it,
                             "error_on_fail": False},
}


class CasadiQP(SolverParams):
    """LN step as ``min 1/2 x'Hx + g'x`` with ``casadi.conic(plugin)``; one conic per shape."""

    def __init__(self, plugin="qpoases", tol=1e-10, max_iter=10000):
        if plugin not in _CONIC_OPTIONS:
            raise ValueError(f"plugin must be one of {sorted(_CONIC_OPTIONS)}, got {plugin!r}")
        self.plugin, self.tol, self.max_iter = plugin, tol, max_iter
        self.name = plugin
        self._derivatives, self._conics = CasadiDerivatives(), {}

    def available(self) -> Availability:
        if ca.has_conic(self.plugin):
            return Availability(True)
        return Availability(False, f"CasADi has no '{self.plugin}' conic plugin; reinstall the "
                                   f"casadi wheel (`pip install --force-reinstall casadi`)")

    def solve(self, problem, x0=None) -> SolverResult:
        start = time.perf_counter()
        H, g, c = self._derivatives.quadratic_form(problem)
        n = g.size
        if n not in self._conics:
            opts = _CONIC_OPTIONS[self.plugin](self.tol, self.max_iter)
            self._conics[n] = ca.conic("ln_qp", self.plugin,
                                       {"h": ca.Sparsity.dense(n, n), "a": ca.Sparsity(0, n)}, opts)
        solver = self._conics[n]
        out = solver(h=H, g=g)
        stats = solver.stats()
        x = np.asarray(out["x"]).ravel()
        return SolverResult(x, float(out["cost"]) + c, bool(stats.get("success", True)),
                            str(stats.get("return_status", "")), int(stats.get("iter_count", 0) or 0),
                            time.perf_counter() - start, stats, solver=self.name)

    def __deepcopy__(self, memo):
        return type(self)(**self.get_params())


class HighsQP(SolverParams):
    """LN step with HiGHS's (active-set) QP solver through ``highspy``."""

    name = "highs"

    def __init__(self, tol=1e-10, max_iter=100000):
        self.tol, self.max_iter = tol, max_iter
        self._derivatives = CasadiDerivatives()

    @staticmethod
    def available() -> Availability:
        try:
            import highspy  # noqa: F401
        except Exception:
            return Availability(False, "highspy is not installed: `pip install highspy`")
        return Availability(True)

    def solve(self, problem, x0=None) -> SolverResult:
        import highspy

        start = time.perf_counter()
        H, g, c = self._derivatives.quadratic_form(problem)
        n = g.size
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("log_to_console", False)
        h.setOptionValue("qp_regularization_value", 0.0)  # default 1e-7 biases the solution
        h.setOptionValue("dual_feasibility_tolerance", max(self.tol, 1e-10))
        h.setOptionValue("primal_feasibility_tolerance", max(self.tol, 1e-10))
        h.setOptionValue("qp_iteration_limit", int(self.max_iter))
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n, 0
        lp.col_cost_ = g
        lp.col_lower_, lp.col_upper_ = np.full(n, -highspy.kHighsInf), np.full(n, highspy.kHighsInf)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.zeros(n + 1, dtype=np.int32)
        hess = highspy.HighsHessian()
        hess.dim_, hess.format_ = n, highspy.HessianFormat.kTriangular
        L = np.tril(H)  # column-wise lower triangle
        starts, index, value = [0], [], []
        for j in range(n):
            rows = np.flatnonzero(L[:, j])
            index.extend(rows.tolist())
            value.extend(L[rows, j].tolist())
            starts.append(len(index))
        hess.start_, hess.index_, hess.value_ = starts, index, value
        model = highspy.HighsModel()
        model.lp_, model.hessian_ = lp, hess
        h.passModel(model)
        h.run()
        status = h.modelStatusToString(h.getModelStatus())
        x = np.asarray(h.getSolution().col_value, float)
        info = h.getInfo()
        success = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        return SolverResult(x, float(info.objective_function_value) + c, success, status,
                            int(info.qp_iteration_count), time.perf_counter() - start, info, solver=self.name)
