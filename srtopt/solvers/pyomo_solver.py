"""Any Pyomo ``SolverFactory`` solver, on the Pyomo rendering of a formulation.

The formulation is rendered by :func:`srtopt.models.pyomo_backend.render_pyomo`
(one scalar expression per data point: slow to build for large N, see that
module) and handed to ``SolverFactory(name)``.  NLP solvers need an AMPL
executable (``ipopt``, ``bonmin``, ``knitroampl``, ``ripopt`` from
``pip install pyomo-ripopt``, ...); the QP solvers ``highs`` (highspy, through
``pyomo.contrib.solver``; ``appsi_highs`` takes linear models only), ``gurobi``, ...
work on the LN subproblem (a convex QP).

On the machine where srtopt was developed there is no ``ipopt`` executable
(Debian ships only the library, PyPI has none), so ``PyomoSolver("ipopt")`` is
reported unavailable with what to install; Pyomo's own ``cyipopt`` solver also
needs the PyNumero ASL library (``pyomo build-extensions``), which is checked.
"""

from __future__ import annotations

import time

import numpy as np

from .base import Availability, SolverParams, SolverResult, TerminationCondition

_INSTALL = {
    "ipopt": "no 'ipopt' executable on PATH: install an AMPL-interface IPOPT binary (conda: `conda install "
             "-c conda-forge ipopt`; or COIN-OR/AMPL binaries, or `idaes get-extensions`); pip has none. "
             "`pip install pyomo-ripopt` provides the 'ripopt' solver instead",
    "ripopt": "`pip install pyomo-ripopt` (registers SolverFactory('ripopt'))",
    "cyipopt": "Pyomo's cyipopt solver needs cyipopt and the PyNumero ASL library "
               "(`pyomo build-extensions`, needs a C compiler and network access)",
    "appsi_highs": "`pip install highspy`",
    "highs": "`pip install highspy`",
}

_NLP_ITER_OPTIONS = {"ipopt", "cyipopt", "ripopt", "bonmin", "couenne"}


def _to_termination(tc) -> TerminationCondition:
    text = str(tc).lower()
    if text in ("optimal", "locallyoptimal", "globallyoptimal", "terminationcondition.optimal",
                "terminationcondition.locallyoptimal", "convergencecriteriasatisfied",
                "terminationcondition.convergencecriteriasatisfied"):
        return TerminationCondition.convergenceCriteriaSatisfied
    if "maxiterations" in text or "iterationlimit" in text:
        return TerminationCondition.iterationLimit
    if "maxtime" in text:
        return TerminationCondition.maxTimeLimit
    if "infeasible" in text:
        return TerminationCondition.locallyInfeasible
    if "unbounded" in text:
        return TerminationCondition.unbounded
    if "error" in text:
        return TerminationCondition.error
    return TerminationCondition.unknown


class PyomoSolver(SolverParams):
    """``SolverFactory(solver).solve(render_pyomo(problem))``.

    Parameters
    ----------
    solver : str
        A Pyomo ``SolverFactory`` name ("ipopt", "ripopt", "appsi_highs", ...).
    tol, max_iter : passed as the solver options ``tol``/``max_iter`` for IPOPT-like NLP
        solvers (ignored otherwise; use ``options``).
    options : dict of solver options, passed verbatim.
    tee : print the solver's log.
    """

    def __init__(self, solver="ipopt", tol=None, max_iter=None, options=None, tee=False):
        self.solver, self.tol, self.max_iter, self.options, self.tee = solver, tol, max_iter, options, tee
        self.name = f"pyomo/{solver}"

    def _factory(self):
        import io
        import pyomo.environ  # noqa: F401  (registers the solver plugins)
        from pyomo.common.log import LoggingIntercept
        from pyomo.opt import SolverFactory

        with LoggingIntercept(io.StringIO(), "pyomo"):  # a missing executable logs a traceback
            return SolverFactory(self.solver)

    def available(self) -> Availability:
        hint = _INSTALL.get(self.solver, f"Pyomo solver {self.solver!r} is not installed or not registered")
        try:
            opt = self._factory()
            ok = bool(opt.available(exception_flag=False))
        except Exception as exc:
            return Availability(False, f"{hint} ({type(exc).__name__}: {exc})")
        if ok and self.solver == "cyipopt":
            try:
                from pyomo.contrib.pynumero.asl import AmplInterface

                ok = bool(AmplInterface.available())
            except Exception:
                ok = False
        return Availability(True) if ok else Availability(False, hint)

    def solve(self, problem, x0) -> SolverResult:
        from ..models.pyomo_backend import render_pyomo

        start = time.perf_counter()
        model = render_pyomo(problem)
        model.set_x(x0)
        opt = self._factory()
        options = dict(self.options or {})
        if self.solver in _NLP_ITER_OPTIONS:
            if self.tol is not None:
                options.setdefault("tol", self.tol)
            if self.max_iter is not None:
                options.setdefault("max_iter", self.max_iter)
        try:
            results = opt.solve(model.model, tee=self.tee, options=options, load_solutions=False)
        except Exception as exc:  # report, never raise (base.py contract)
            x = np.asarray(x0, float)
            return SolverResult(x, float(problem.evaluate(x)[0]), False, f"raised {type(exc).__name__}: {exc}",
                                0, time.perf_counter() - start, None, TerminationCondition.error, self.name)
        tc = results.solver.termination_condition
        condition = _to_termination(tc)
        if len(getattr(results, "solution", [])) > 0:
            model.model.solutions.load_from(results)
        x = model.get_x()
        iterations = getattr(results.solver, "iterations", None)
        try:
            iterations = int(iterations)
        except (TypeError, ValueError):
            iterations = 0
        return SolverResult(x, float(problem.evaluate(x)[0]),
                            condition is TerminationCondition.convergenceCriteriaSatisfied,
                            f"{results.solver.status}/{tc}", iterations, time.perf_counter() - start,
                            results, condition, self.name)
