"""MILP solvers for the MILO deterministic tree (:class:`srtopt.milo.model.MILOTree`).

* :class:`HighsMILP` -- HiGHS through Pyomo's APPSI interface (MIP starts, bounds);
* :class:`ScipMIQP` -- SCIP through Pyomo's ``scip_direct`` (MILPs and MIQPs, the
  squared-loss MILO tree; needs ``pyscipopt``);
* :class:`PyomoMILP` -- any other Pyomo ``SolverFactory`` MILP solver (cbc, glpk, scip,
  gurobi, cplex, ...), with its own time-limit option name.

``solve(milo, start, deadline=...)``: ``start`` is the warm start already loaded into the
model's variables (or None); the solution, if any, is loaded into the model and returned as
the vector of its variable values, with the incumbent objective and the best proven
bound (``SolverResult.bound``).  The solve ends at the deadline: the earlier of ``time_limit``
seconds for the whole call (model loading included) and the deadline ``solve`` is given; HiGHS
gets at least a tenth of the time there was when the call began.  A deadline passed before the
call returns the model's values as they are (its start) with ``maxTimeLimit``.  ``tol`` is the
relative MIP gap at which HiGHS stops (other solvers take their gap option through
``options``, its name differs from solver to solver).
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import os
import warnings

import numpy as np

from .base import Acceptance, Availability, Solver, SolverResult, termination
from .pyomo_solver import pyomo_termination_name

CANDIDATES = ("highs", "appsi_highs", "cbc", "glpk", "scip", "gurobi", "gurobi_direct", "cplex", "cplex_direct",
              "xpress")
TIME_OPTION = {  # the time-limit option of the legacy Pyomo interfaces
    "cbc": "seconds", "glpk": "tmlim", "scip": "limits/time", "gurobi": "TimeLimit",
    "gurobi_direct": "TimeLimit", "gurobi_persistent": "TimeLimit", "cplex": "timelimit",
    "cplex_direct": "timelimit", "cplex_persistent": "timelimit", "xpress": "maxtime",
}
MIN_TIME_SHARE = 0.1  # the solver gets at least this share of the time there was at the call


def milo_problem(problem) -> Acceptance:
    if not (hasattr(problem, "model") and hasattr(problem, "get_solution")):
        return Acceptance(False, f"{type(problem).__name__} is not a MILO tree model (MILOTree)")
    return Acceptance(True)


def _values(milo) -> np.ndarray:
    return np.array([v.value if v.value is not None else np.nan for v in milo._vars()], float)


class _MILPSolver(Solver):
    """What the MILP adapters share: a MILO tree model (its start loaded in its variables, ``x0``
    only saying whether there is one) and the result of a solve the deadline did not let begin."""

    family = "pyomo"

    def accepts(self, problem) -> Acceptance:
        return milo_problem(problem)

    def _start(self, problem, x0):
        return x0

    def _unsolved(self, problem, x0) -> SolverResult:
        return SolverResult(_values(problem), math.nan, False, "maxTimeLimit", 0, 0.0, None,
                            termination(self.family, "maxTimeLimit"), self.name)


class HighsMILP(_MILPSolver):
    """HiGHS through ``pyomo.contrib.appsi.solvers.Highs``; ``options`` are HiGHS options."""

    name = "highs"

    def __init__(self, tol=1e-4, max_iter=None, time_limit=60.0, verbosity=0, options=None):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.options = options

    def available(self) -> Availability:
        try:
            from pyomo.contrib.appsi.solvers import Highs

            ok = bool(Highs().available())
        except Exception as exc:  # depends on the installation
            return Availability(False, f"HiGHS through Pyomo APPSI failed: {type(exc).__name__}: {exc}; "
                                       f"`pip install highspy`")
        return Availability(True) if ok else Availability(False, "`pip install highspy`")

    def version(self) -> str:
        from pyomo.contrib.appsi.solvers import Highs

        return f"HiGHS {'.'.join(map(str, Highs().version()))} (Pyomo APPSI)"

    def _solve(self, problem, x0, deadline) -> SolverResult:
        from pyomo.contrib.appsi.solvers import Highs

        budget = deadline.left()
        opt = Highs()
        opt.set_instance(problem.model)
        opt.config.time_limit = max(deadline.left(), MIN_TIME_SHARE * budget)
        opt.config.mip_gap = float(self.tol)
        opt.config.load_solution = False
        opt.config.stream_solver = bool(self.verbosity)
        opt.config.warmstart = x0 is not None
        opt.highs_options = dict(self.options or {})
        logging.getLogger("pyomo.contrib.appsi").disabled = not self.verbosity
        try:
            res = opt.solve(problem.model)
        finally:
            logging.getLogger("pyomo.contrib.appsi").disabled = False
        status = pyomo_termination_name(res.termination_condition)
        found = res.best_feasible_objective is not None
        if found:
            opt.load_vars()
        return _milp_result(self, problem, status, found, res.best_feasible_objective, res.best_objective_bound, res)


class ScipMIQP(_MILPSolver):
    """SCIP through Pyomo's ``scip_direct`` interface (``pip install pyscipopt``): MILPs and the
    MIQP of the squared-loss MILO tree; the start's integer values are handed to SCIP as a
    solution, and it reports its dual bound.

    SCIP solves in a child process (forked, so the model is not copied): through Pyomo it has
    aborted its process (SIGABRT) on some MILO models (pyscipopt 6.3, Pyomo 6.10, an airfoil
    subsample of 200 rows) or run past its time limit, and neither may end the caller's
    program.  Then the result says so (status "solver_crashed" or "maxTimeLimit", no solution)
    and the caller keeps its own incumbent."""

    name = "scip"

    def __init__(self, tol=1e-4, max_iter=None, time_limit=60.0, verbosity=0, options=None):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.options = options

    @staticmethod
    def _factory():
        import pyomo.environ  # noqa: F401  (registers the solvers of pyomo.contrib.solver)
        from pyomo.contrib.solver.common.factory import SolverFactory

        return SolverFactory("scip_direct")

    def available(self) -> Availability:
        try:
            solver = self._factory()
            ok = solver is not None and bool(solver.available())
        except Exception as exc:  # depends on the installation
            return Availability(False, f"SCIP through Pyomo failed: {type(exc).__name__}: {exc}; "
                                       "`pip install pyscipopt` (and pyomo >= 6.9.3)")
        return Availability(True) if ok else Availability(False, "`pip install pyscipopt` (and pyomo >= 6.9.3)")

    def version(self) -> str:
        return f"SCIP {'.'.join(map(str, self._factory().version()))} (Pyomo scip_direct)"

    def _solve(self, problem, x0, deadline) -> SolverResult:
        remaining = deadline.left()
        options = {"limits/time": remaining} if math.isfinite(remaining) else {}
        options.update(self.options or {})

        def solve():
            result = self._factory().solve(
                problem.model, tee=bool(self.verbosity), rel_gap=float(self.tol), load_solutions=False,
                raise_exception_on_nonoptimal_result=False, warmstart_discrete_vars=x0 is not None,
                solver_options=options)
            found = result.incumbent_objective is not None
            if found:
                result.solution_loader.load_vars()
            return (pyomo_termination_name(result.termination_condition), found, result.incumbent_objective,
                    result.objective_bound, _values(problem) if found else None)

        grace = max(2.0, 0.05 * remaining) if math.isfinite(remaining) else None  # time_limit holds within 10 %
        status, found, objective, bound, values = _in_child(solve, None if grace is None else remaining + grace)
        if found:
            for var, value in zip(problem._vars(), values):
                var.set_value(None if np.isnan(value) else float(value), skip_validation=True)
        return _milp_result(self, problem, status, found, objective, bound, None)


def _in_child(solve, timeout):
    """``solve()`` in a forked child process; its result, or ("solver_crashed" | "maxTimeLimit",
    False, None, None, None) when the child dies or outlives ``timeout`` seconds (then it is
    killed).  An exception in the child is raised here again.  Where processes cannot fork,
    ``solve()`` runs in this process."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():  # Windows: no fork, solve here
        return solve()
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child_main, args=(sender, solve), daemon=True)
    child.start()
    sender.close()
    try:
        outcome = receiver.recv() if receiver.poll(timeout) else ("maxTimeLimit", False, None, None, None)
    except EOFError:  # the child died without an answer
        outcome = ("solver_crashed", False, None, None, None)
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _child_main(sender, solve):
    try:
        sender.send(solve())
    except BaseException as exc:  # sent to the parent, which raises it
        sender.send(exc)
    finally:
        sender.close()
        os._exit(0)


class PyomoMILP(_MILPSolver):
    """Any Pyomo ``SolverFactory`` MILP solver by name; ``options`` are passed verbatim."""

    def __init__(self, solver="cbc", tol=1e-4, max_iter=None, time_limit=60.0, verbosity=0, options=None):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.solver, self.options = solver, options
        self.name = solver

    def _factory(self):
        import pyomo.environ as pe

        logging.getLogger("pyomo").disabled = True
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                return pe.SolverFactory(self.solver)
        finally:
            logging.getLogger("pyomo").disabled = False

    def available(self) -> Availability:
        try:
            opt = self._factory()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                ok = bool(opt is not None and opt.available(exception_flag=False))
        except Exception:
            ok = False
        return Availability(True) if ok else Availability(False, f"Pyomo MILP solver {self.solver!r} is not "
                                                                 f"installed here")

    def version(self) -> str:
        found = self._factory().version()
        return f"{self.solver} {'.'.join(map(str, found)) if isinstance(found, tuple) else found}"

    def _solve(self, problem, x0, deadline) -> SolverResult:
        opt = self._factory()
        key, seconds = TIME_OPTION.get(self.solver), deadline.left()
        if key is None and math.isfinite(seconds):
            warnings.warn(f"no known time-limit option for solver {self.solver!r}; the deadline is not enforced")
        elif math.isfinite(seconds):
            opt.options[key] = seconds
        for k, v in (self.options or {}).items():
            opt.options[k] = v
        kwargs = {"load_solutions": False, "tee": bool(self.verbosity)}
        if x0 is not None and getattr(opt, "warm_start_capable", lambda: False)():
            kwargs["warmstart"] = True
        res = opt.solve(problem.model, **kwargs)
        found = len(res.solution) > 0
        objective = bound = None
        if found:
            problem.model.solutions.load_from(res)
            objective = problem.objective_value()
        try:
            lb = res.problem.lower_bound
            bound = float(lb) if lb is not None and math.isfinite(float(lb)) else None
        except Exception:
            bound = None
        return _milp_result(self, problem, pyomo_termination_name(res.solver.termination_condition), found,
                            objective, bound, res)


def _milp_result(solver, problem, status, found, objective, bound, raw) -> SolverResult:
    objective = float(objective) if objective is not None else math.nan
    bound = None if bound is None or not math.isfinite(bound) else float(bound)
    return SolverResult(_values(problem) if found else None, objective, found, status, 0, 0.0, raw,
                        termination(solver.family, status, found), solver.name, bound)


def available_milp_solvers() -> list[str]:
    """Names among the usual Pyomo MILP solvers that are usable here."""
    adapters = {"highs": HighsMILP, "appsi_highs": HighsMILP, "scip": ScipMIQP}
    return [name for name in CANDIDATES if adapters.get(name, lambda: PyomoMILP(name))().available()]
