"""Any Pyomo ``SolverFactory`` solver, on the Pyomo rendering of a formulation.

The formulation is rendered by :func:`srtopt.models.pyomo_backend.render_pyomo`
(one scalar expression per data point: slow to build for large N, see that
module) and handed to ``SolverFactory(name)``.  NLP solvers need an AMPL
executable (``ipopt``, ``bonmin``, ``knitroampl``, ``ripopt`` from
``pip install pyomo-ripopt``, ...); the QP solvers ``highs`` (highspy, through
``pyomo.contrib.solver``; ``appsi_highs`` takes linear models only), ``gurobi``, ...
work on the LN subproblem (a convex QP).

Without an ``ipopt`` executable on PATH (Debian ships only the library, PyPI has
none), ``PyomoSolver("ipopt")`` reports itself unavailable, saying what to install;
Pyomo's own ``cyipopt`` solver also needs the PyNumero ASL library
(``pyomo build-extensions``), which is checked.
"""

from __future__ import annotations

import math

from .base import (CONSTRAINT_KINDS, Acceptance, Availability, Solver, SolverResult, TerminationCondition,
                   smooth_problem, termination)

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


def pyomo_termination_name(tc) -> str:
    """The name of a Pyomo termination condition (legacy ``pyomo.opt`` or ``pyomo.contrib``)."""
    return getattr(tc, "name", str(tc).rsplit(".", 1)[-1])


def _load_plugin(name: str) -> None:
    """Import the package that registers the Pyomo solver ``name`` through an entry point of the
    group "pyomo.solvers" (e.g. pyomo-ripopt's "ripopt"), once it is installed: Pyomo itself does
    not load that group."""
    from importlib.metadata import entry_points

    for entry in entry_points(group="pyomo.solvers"):
        if entry.name == name:
            entry.load()


class PyomoSolver(Solver):
    """``SolverFactory(solver).solve(render_pyomo(problem))``.

    Parameters
    ----------
    solver : str
        A Pyomo ``SolverFactory`` name ("ipopt", "ripopt", "highs", ...).
    tol, max_iter : passed as the solver options ``tol``/``max_iter`` for IPOPT-like NLP
        solvers (ignored otherwise; use ``options``).
    options : dict of solver options, passed verbatim.
    time_limit : seconds per solve; the seconds to the deadline (this or the one ``solve`` is given)
        are passed as ``max_wall_time`` to IPOPT-like solvers.
    verbosity : >= 1 shows the solver's log (``tee``).
    """

    family = "pyomo"
    takes_constraints = CONSTRAINT_KINDS  # the Pyomo model carries them (bounds, Constraint components)

    def __init__(self, solver="ipopt", tol=None, max_iter=None, options=None, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.solver, self.options = solver, options
        self.name = f"pyomo/{solver}"

    def _factory(self):
        import io
        import pyomo.environ  # noqa: F401  (registers the solver plugins)
        from pyomo.common.log import LoggingIntercept
        from pyomo.opt import SolverFactory

        _load_plugin(self.solver)
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

    def version(self) -> str:
        import pyomo.version

        found = self._factory().version() if self.available() else None
        solver = ".".join(map(str, found)) if isinstance(found, tuple) else found
        return f"pyomo {pyomo.version.version}, {self.solver} {solver or '(version unknown)'}"

    def accepts(self, problem) -> Acceptance:
        return smooth_problem(problem, "render_pyomo", "Pyomo rendering")

    def _solve(self, problem, x0, deadline) -> SolverResult:
        from ..models.pyomo_backend import render_pyomo

        model = render_pyomo(problem)
        model.set_x(x0)
        opt = self._factory()
        options = dict(self.options or {})
        if self.solver in _NLP_ITER_OPTIONS:
            seconds = deadline.left() if math.isfinite(deadline.left()) else None
            for key, value in (("tol", self.tol), ("max_iter", self.max_iter), ("max_wall_time", seconds)):
                if value is not None:
                    options.setdefault(key, value)
        try:
            results = opt.solve(model.model, tee=bool(self.verbosity), options=options, load_solutions=False)
        except Exception as exc:  # report, never raise (base.py contract)
            return SolverResult(x0, float(problem.evaluate(x0)[0]), False, f"raised {type(exc).__name__}: {exc}",
                                0, 0.0, None, TerminationCondition.error, self.name)
        tc = results.solver.termination_condition
        condition = termination(self.family, pyomo_termination_name(tc))
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
                            f"{results.solver.status}/{tc}", iterations, 0.0, results, condition, self.name)
