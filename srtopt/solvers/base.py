"""The one contract every solver adapter follows, modelled on ``pyomo.contrib.solver``'s
``SolverBase``; :class:`Solver` implements it for the built-in adapters.

``solver.solve(problem, x0, *, deadline=None) -> SolverResult``.  ``problem`` is a formulation
from :mod:`srtopt.models` (``evaluate(x) -> (f, grad)``, ``start()``, ``render()``,
``structure_key``, and for nonsmooth objectives ``evaluate_smooth``, ``prox``, ``nonsmooth``);
``x0`` the start; ``deadline`` a :class:`~.deadline.Deadline` (None: none), the time budget of the
caller, by which the solve returns its current point.  The deadline travels only so, as an
argument: an adapter reads no other.  Adapters never raise on a failed solve: they report it in
``success``/``status``/``termination_condition`` so training can fall back.

Besides ``solve``, an adapter has

* ``name`` -- the name it is registered under;
* ``available()`` -- an :class:`Availability`: truthy when the solver can run,
  otherwise saying what to install;
* ``accepts(problem)`` -- an :class:`Acceptance`: truthy when the adapter can solve
  that formulation (smooth or not, quadratic, with a Hessian, a MILO tree, ...),
  otherwise saying why not; training checks it before handing a subproblem over;
* ``takes_constraints`` -- the kinds of constraints it enforces (:func:`acceptance`);
* ``version()`` -- the version of the underlying solver (text);
* the shared configuration ``tol``, ``max_iter``, ``time_limit``, ``verbosity``
  (:class:`Solver`), and ``get_params()`` / ``set_params(**params)`` (the arguments
  of its constructor, scikit-learn style), so that an estimator holding a configured
  adapter is clone-safe (a deep copy drops compiled caches) and
  ``set_params(bn_solver__tol=1e-8)`` works;
* optionally ``stops_on_interrupt = True`` -- it polls :func:`interrupt_requested`
  and ends its solve itself on Ctrl-C, SIGTERM or SIGHUP (see :func:`solve_interruptibly`,
  through which training calls every adapter, so that these signals always end a fit);
* optionally ``python_loop = True`` -- its iterations run in Python (numpy, LAPACK calls,
  SciPy's L-BFGS-B driver), where Ctrl-C raises KeyboardInterrupt and nothing swallows it,
  so :func:`solve_interruptibly` calls it directly instead of recording SIGINT around it
  (what the swap costs per solve: docs/benchmarks.md).

:class:`Solver`'s ``solve`` makes the checks once for every adapter built on it (the solver is
available, the problem carries no constraint it does not take, the deadline has not passed) and
hands the problem, the start and the deadline to the adapter's ``_solve``.

:class:`TerminationCondition` uses the names of
``pyomo.contrib.solver.results.TerminationCondition``; ``status`` keeps the
solver's own raw status, and :data:`TERMINATION` is the one mapping from raw
statuses to conditions.  A user's adapter needs only ``solve`` (and ``name``);
``srtopt.solvers.register_solver`` makes it available by name.
"""

from __future__ import annotations

import contextlib
import copy
import enum
import inspect
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._version import __version__
from .deadline import Deadline


class TerminationCondition(str, enum.Enum):
    """Why a solve stopped (names as in ``pyomo.contrib.solver``)."""

    convergenceCriteriaSatisfied = "convergenceCriteriaSatisfied"
    iterationLimit = "iterationLimit"
    maxTimeLimit = "maxTimeLimit"
    minStepLength = "minStepLength"
    locallyInfeasible = "locallyInfeasible"
    provenInfeasible = "provenInfeasible"
    unbounded = "unbounded"
    interrupted = "interrupted"
    error = "error"
    unknown = "unknown"

    def __str__(self) -> str:
        return self.value


_T = TerminationCondition
#: The one termination mapping: raw status of each solver family -> TerminationCondition.
#: A status missing here maps to ``convergenceCriteriaSatisfied`` when the solver reported
#: success and to ``unknown`` otherwise (never guessed from substrings).
TERMINATION = {
    "ipopt": {  # IPOPT's ApplicationReturnStatus names (CasADi's return_status)
        "Solve_Succeeded": _T.convergenceCriteriaSatisfied,
        "Solved_To_Acceptable_Level": _T.convergenceCriteriaSatisfied,
        "Feasible_Point_Found": _T.convergenceCriteriaSatisfied,
        "Maximum_Iterations_Exceeded": _T.iterationLimit,
        "Maximum_CpuTime_Exceeded": _T.maxTimeLimit,
        "Maximum_WallTime_Exceeded": _T.maxTimeLimit,
        "User_Requested_Stop": _T.interrupted,
        "Infeasible_Problem_Detected": _T.locallyInfeasible,
        "Diverging_Iterates": _T.unbounded,
        "Search_Direction_Becomes_Too_Small": _T.minStepLength,
        "Restoration_Failed": _T.error,
        "Error_In_Step_Computation": _T.error,
        "Invalid_Number_Detected": _T.error,
        "Not_Enough_Degrees_Of_Freedom": _T.error,
        "Invalid_Problem_Definition": _T.error,
        "Invalid_Option": _T.error,
        "Unrecoverable_Exception": _T.error,
        "NonIpopt_Exception_Thrown": _T.error,
        "Insufficient_Memory": _T.error,
        "Internal_Error": _T.error,
    },
    "cyipopt": {0: _T.convergenceCriteriaSatisfied, 1: _T.convergenceCriteriaSatisfied, 2: _T.locallyInfeasible,
                3: _T.minStepLength, 4: _T.unbounded, 5: _T.interrupted, 6: _T.convergenceCriteriaSatisfied,
                -1: _T.iterationLimit, -4: _T.maxTimeLimit, -5: _T.maxTimeLimit},
    # scipy.optimize.minimize: ``status`` per method (99: a callback raised StopIteration)
    "scipy:l-bfgs-b": {0: _T.convergenceCriteriaSatisfied, 1: _T.iterationLimit, 2: _T.minStepLength,
                       99: _T.interrupted},
    "scipy:slsqp": {0: _T.convergenceCriteriaSatisfied, 8: _T.minStepLength, 9: _T.iterationLimit,
                    99: _T.interrupted},
    "scipy:trust": {0: _T.convergenceCriteriaSatisfied, 1: _T.iterationLimit, 2: _T.minStepLength,
                    99: _T.interrupted},
    "highs": {"Optimal": _T.convergenceCriteriaSatisfied, "Time limit reached": _T.maxTimeLimit,
              "Iteration limit reached": _T.iterationLimit, "Infeasible": _T.provenInfeasible,
              "Unbounded": _T.unbounded, "Primal infeasible or unbounded": _T.unbounded,
              "Interrupted by user": _T.interrupted, "Solve error": _T.error, "Model error": _T.error},
    "pyomo": {  # pyomo.opt (legacy) and pyomo.contrib (appsi, solver) termination condition names
        "optimal": _T.convergenceCriteriaSatisfied, "locallyOptimal": _T.convergenceCriteriaSatisfied,
        "globallyOptimal": _T.convergenceCriteriaSatisfied,
        "convergenceCriteriaSatisfied": _T.convergenceCriteriaSatisfied,
        "maxIterations": _T.iterationLimit, "iterationLimit": _T.iterationLimit,
        "maxTimeLimit": _T.maxTimeLimit, "maxEvaluations": _T.iterationLimit,
        "minStepLength": _T.minStepLength, "infeasible": _T.provenInfeasible,
        "provenInfeasible": _T.provenInfeasible, "locallyInfeasible": _T.locallyInfeasible,
        "unbounded": _T.unbounded, "infeasibleOrUnbounded": _T.unbounded,
        "userInterrupt": _T.interrupted, "interrupted": _T.interrupted, "error": _T.error,
        "solverFailure": _T.error, "internalSolverError": _T.error, "licensingProblems": _T.error,
    },
    "conic": {"SUCCESSFUL_RETURN": _T.convergenceCriteriaSatisfied, "solved": _T.convergenceCriteriaSatisfied,
              "maximum iterations reached": _T.iterationLimit,
              "RET_MAX_NWSR_REACHED": _T.iterationLimit},
    "srtopt": {"solved": _T.convergenceCriteriaSatisfied, "iteration limit": _T.iterationLimit,
               "stopped": _T.interrupted, "line search failed": _T.minStepLength,
               "single class": _T.error},
}


def termination(family: str, raw_status, success: bool | None = None) -> TerminationCondition:
    """The :class:`TerminationCondition` of ``raw_status`` of a solver ``family`` (a key of
    :data:`TERMINATION`); an unlisted status gives ``convergenceCriteriaSatisfied`` if
    ``success`` else ``unknown``.

    >>> str(termination("ipopt", "Maximum_Iterations_Exceeded"))
    'iterationLimit'
    """
    condition = TERMINATION.get(family, {}).get(raw_status)
    if condition is not None:
        return condition
    return _T.convergenceCriteriaSatisfied if success else _T.unknown


@dataclass
class SolverResult:
    """Outcome of one solve.

    ``x``, ``objective`` (value at ``x``), ``success``, ``status`` (the solver's
    raw status text), ``iterations``, ``seconds`` (wall time of ``solve``),
    ``raw`` (the solver's own result object/stats), ``termination_condition``
    (from :func:`termination` when the adapter does not give it: success or
    ``unknown``), ``solver`` (adapter name) and ``bound`` (a proven lower bound, MILP
    solvers).  The positional order of the first seven fields is kept across versions.
    """

    x: np.ndarray
    objective: float
    success: bool
    status: str
    iterations: int
    seconds: float
    raw: Any = field(default=None, repr=False)
    termination_condition: TerminationCondition | None = None
    solver: str = ""
    bound: float | None = None

    def __post_init__(self):
        if self.termination_condition is None:
            self.termination_condition = termination("", self.status, self.success)
        else:
            self.termination_condition = TerminationCondition(self.termination_condition)

    # pyomo.contrib.solver-style names
    @property
    def raw_status(self) -> str:
        return self.status

    @property
    def wall_time(self) -> float:
        return self.seconds

    @property
    def iteration_count(self) -> int:
        return self.iterations

    @property
    def incumbent_objective(self) -> float:
        return self.objective

    @property
    def objective_bound(self) -> float | None:
        return self.bound

    def usable(self) -> bool:
        """A finite point was returned (even if the solver reported a failure)."""
        return self.x is not None and bool(np.all(np.isfinite(self.x)) and np.isfinite(self.objective))


#: the signals that end a program, recorded during a solve (:func:`solve_interruptibly`)
ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
_ARRIVED: list = []  # the ending signals recorded during the current solve_interruptibly (main thread)


def should_stop(deadline: Deadline) -> bool:
    """Whether an iterative solver should return now: Ctrl-C pressed or ``deadline``, the one its
    solve was given, passed."""
    return interrupt_requested() or deadline.passed()


def interrupt_requested() -> bool:
    """True once Ctrl-C was pressed (or SIGTERM, SIGHUP arrived) during the current
    :func:`solve_interruptibly`.  An adapter with ``stops_on_interrupt = True`` polls this and
    ends its solve early, quietly."""
    return bool(_ARRIVED)


def solve_interruptibly(solver, problem, x0, deadline: Deadline | None = None) -> SolverResult:
    """``solver.solve(problem, x0, deadline=deadline)``, except that a Ctrl-C (SIGINT), SIGTERM or SIGHUP during the
    solve is handled when the solve ends (its handler raises there: KeyboardInterrupt, or the
    CLI's exception for SIGTERM), even if the solver swallowed the exception (CasADi turns one
    raised in its callbacks into a status, IPOPT's ``NonIpopt_Exception_Thrown``, prints it with
    its traceback and a dump of its inputs, and may carry on).

    The handler runs at once, as usual, unless the solver has ``stops_on_interrupt = True``
    (it polls :func:`interrupt_requested` and stops by itself).  A solver that picks an adapter
    per problem (``choose(problem)``, the "auto" solver) hands the problem to that adapter."""
    chosen = getattr(solver, "choose", lambda problem: None)(problem)
    solver = chosen if chosen is not None else solver
    if getattr(solver, "python_loop", False):
        return solver.solve(problem, x0, deadline=deadline)
    with _recording_signals(raise_at_once=not getattr(solver, "stops_on_interrupt", False)):
        return solver.solve(problem, x0, deadline=deadline)


def deferred_signals():
    """Ctrl-C, SIGTERM and SIGHUP held back meanwhile and handled as the block ends (KeyboardInterrupt raised
    there), in the main thread: for code where Python drops an exception, such as a ctypes callback."""
    return _recording_signals(raise_at_once=False)


@contextlib.contextmanager
def _recording_signals(raise_at_once: bool):
    """Record an ending signal that arrives meanwhile (in :data:`_ARRIVED`; then, if
    ``raise_at_once``, its previous handler runs, which raises KeyboardInterrupt for SIGINT by
    default); on leaving, restore the previous handlers and run the first recorded signal's,
    also in place of an exception the solver raised because of it.  The handlers are restored
    before the record is read, so a signal at any moment is either recorded or handled by its
    previous handler: never lost.  Python handles signals in the main thread only; in other
    threads, and for a signal whose handler is the default (SIGTERM ends the process) or
    ignored, nothing changes."""
    previous = {signum: signal.getsignal(signum) for signum in ENDING_SIGNALS}
    previous = {signum: handler for signum, handler in previous.items() if callable(handler)}
    if threading.current_thread() is not threading.main_thread() or not previous:
        yield
        return

    def record(signum, frame):
        _ARRIVED.append(signum)
        if raise_at_once:
            previous[signum](signum, frame)

    _ARRIVED.clear()
    for signum in previous:
        signal.signal(signum, record)
    failure = None
    try:
        yield
    except Exception as exc:
        failure = exc
    except BaseException:
        _restore(previous)
        raise
    arrived = _restore(previous)
    if arrived is not None:
        previous[arrived](arrived, None)  # raises (KeyboardInterrupt, Terminated), out of the solver's error
    if failure is not None:
        raise failure


def _restore(previous):
    """Put the previous handlers back; the first signal recorded, or None (the record is cleared:
    a later solve must not see it)."""
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    arrived = _ARRIVED[0] if _ARRIVED else None
    _ARRIVED.clear()
    return arrived


class Verdict:
    """A yes or no with the reason for a no: truthy iff ``ok``."""

    def __init__(self, ok: bool, reason: str = ""):
        self.ok, self.reason = bool(ok), reason

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return f"{type(self).__name__}(yes)" if self.ok else f"{type(self).__name__}(no: {self.reason})"


class Availability(Verdict):
    """Result of ``solver.available()``: truthy iff usable; ``install`` says what is missing."""

    @property
    def install(self) -> str:
        return self.reason

    def __repr__(self) -> str:
        return "Availability(available)" if self.ok else f"Availability(unavailable: {self.reason})"


class Acceptance(Verdict):
    """Result of ``solver.accepts(problem)``: truthy iff the solver can solve that problem;
    ``reason`` says why not."""


def availability(solver) -> Availability:
    """``solver.available()`` as an :class:`Availability` (a user's adapter may return a plain bool
    or have no ``available``)."""
    check = getattr(solver, "available", None)
    if check is None:
        return Availability(True)
    try:
        result = check()
    except Exception as exc:  # an availability probe must not crash the caller
        return Availability(False, f"availability check raised {type(exc).__name__}: {exc}")
    return result if isinstance(result, Availability) else Availability(bool(result), "")


#: the solvers that take each kind of constraint (named when a solver refuses a constrained problem; a
#: test checks them against the registries)
CONSTRAINT_ROUTES = {
    "fixed": "newton, l-bfgs-b, slsqp, prox-gradient, ipopt, pyomo/<name> and, for the LN step, exact, qp "
             "(HiGHS), osqp, qpoases",
    "bounds": "l-bfgs-b, slsqp, prox-gradient, ipopt, pyomo/<name> and, for the LN step, qp (HiGHS), osqp, "
              "qpoases",
    "linear": "sqp, slsqp, ipopt, pyomo/<name> (e.g. pyomo/ripopt, pyomo/ipopt) and, for the LN step, qp (HiGHS), "
              "osqp, qpoases",
    "nonlinear": "sqp, slsqp, ipopt, pyomo/<name> (e.g. pyomo/ripopt, pyomo/ipopt)",
}


#: every kind of constraint a formulation can carry
CONSTRAINT_KINDS = frozenset(CONSTRAINT_ROUTES)


def constraint_kinds(problem) -> frozenset:
    """The kinds of constraints ``problem`` carries (``problem.constraint_kinds()``; none for a
    formulation without the method): "fixed", "bounds", "linear", "nonlinear"."""
    kinds = getattr(problem, "constraint_kinds", None)
    return kinds() if kinds is not None else frozenset()


def constraint_refusal(solver, problem) -> str | None:
    """Why ``solver`` may not solve ``problem``: the kinds of constraints it carries that the solver
    does not declare in its ``takes_constraints``, and the solvers that take them (None: nothing)."""
    missing = constraint_kinds(problem) - frozenset(getattr(solver, "takes_constraints", ()))
    if not missing:
        return None
    label = getattr(solver, "name", type(solver).__name__)
    routes = "; ".join(f"{kind}: {CONSTRAINT_ROUTES[kind]}" for kind in sorted(missing))
    return f"{label} does not take its constraints ({', '.join(sorted(missing))}); solvers that do: {routes} " \
           f"('auto' picks one)"


def acceptance(solver, problem) -> Acceptance:
    """``solver.accepts(problem)`` as an :class:`Acceptance` (an adapter without ``accepts``
    accepts everything unconstrained).  A problem with constraints of a kind the solver does not
    declare in its ``takes_constraints`` is refused here, for every adapter (one of a user's too):
    no solver ignores a constraint (:func:`constraint_refusal`)."""
    refusal = constraint_refusal(solver, problem)
    if refusal:
        return Acceptance(False, refusal)
    check = getattr(solver, "accepts", None)
    if check is None:
        return Acceptance(True)
    result = check(problem)
    return result if isinstance(result, Acceptance) else Acceptance(bool(result), "")


def signature_refusal(solver) -> str | None:
    """Why ``solver`` does not follow the contract's signature, ``solve(problem, x0, *, deadline)`` (and,
    for a :class:`Solver`, ``_solve(problem, x0, deadline)``, which its ``solve`` calls); None: it does."""
    label = getattr(solver, "name", type(solver).__name__)
    try:
        inspect.signature(solver.solve).bind(None, None, deadline=None)
    except TypeError:
        return f"{label!r}: solve must take the deadline, solve(problem, x0, *, deadline=None) (srtopt.solvers.base)"
    if isinstance(solver, Solver):
        try:
            inspect.signature(solver._solve).bind(None, None, None)
        except TypeError:
            return f"{label!r}: a Solver's _solve must take the deadline, _solve(problem, x0, deadline) " \
                   f"(srtopt.solvers.base)"
    return None


class SolverUnavailableError(ValueError):
    """A requested solver is unknown or not installed (raised at ``make_solver`` time)."""


class SolverParams:
    """scikit-learn style ``get_params``/``set_params`` from the constructor's signature.

    Every constructor argument must be stored under its own name; ``set_params``
    re-runs ``__init__`` with the updated arguments (so caches are dropped and
    checks re-done).  A deep copy (scikit-learn's ``clone``) is a new adapter with the
    same parameters and empty caches (compiled solvers are not copied); so is a pickled
    one (a fitted estimator given an adapter object pickles: HiGHS objects and CasADi
    callbacks cannot).
    """

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        names = self._param_names()
        for key in params:
            if key not in names:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}; valid: {names}")
        self.__init__(**{**self.get_params(), **params})
        return self

    def __deepcopy__(self, memo):
        return type(self)(**copy.deepcopy(self.get_params(), memo))

    def __getstate__(self):
        return self.get_params()

    def __setstate__(self, state):
        self.__init__(**state)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class Solver(SolverParams):
    """Base of the adapters: the contract of :mod:`srtopt.solvers` (module docstring of
    :mod:`srtopt.solvers.base`) and the configuration every adapter shares.

    Every adapter has these parameters; an adapter documents which it cannot honour.

    Parameters
    ----------
    tol : float or None
        Convergence tolerance in the solver's own sense (None: its default).
    max_iter : int or None
        Iteration limit (None: its default).
    time_limit : float or None
        Seconds for one solve; the adapter returns its current point after them, or at the
        deadline ``solve`` is given if that comes first.
    verbosity : int
        0 silent; 1 and more: the solver's own log.

    Subclasses implement :meth:`_solve` (and :meth:`accepts`, :meth:`version`,
    :meth:`available` when they differ from the defaults; :meth:`_start` and :meth:`_unsolved`
    when their start is not a vector of the formulation); :meth:`solve` makes the checks, times
    the call, applies the deadline and names the result.
    """

    name = "solver"
    family = "srtopt"  # key of TERMINATION for the raw statuses of this adapter
    #: the kinds of constraints the adapter enforces ("fixed", "bounds", "linear", "nonlinear"; see
    #: :func:`acceptance`): none by default
    takes_constraints: frozenset = frozenset()

    def __init__(self, tol=None, max_iter=None, time_limit=None, verbosity=0):
        self.tol, self.max_iter, self.time_limit, self.verbosity = tol, max_iter, time_limit, verbosity
        self._availability = None  # available(), asked at the first solve

    def available(self) -> Availability:
        return Availability(True)

    def accepts(self, problem) -> Acceptance:
        """Whether this adapter can solve ``problem``: by default any smooth formulation
        (``evaluate`` and no ``nonsmooth`` terms)."""
        return smooth_problem(problem)

    def version(self) -> str:
        return f"srtopt {__version__}"

    def solve(self, problem, x0=None, *, deadline: Deadline | None = None) -> SolverResult:
        """Solve ``problem`` from ``x0`` (default: ``problem.start()``), by ``deadline`` and within
        ``time_limit`` seconds, whichever comes first.

        The checks of every adapter, made here: a :class:`SolverUnavailableError` if the solver
        cannot run here, a ValueError if ``problem`` carries constraints the adapter does not take
        (:func:`constraint_refusal`: none is ever ignored).  A deadline that has passed before the
        solve begins gives the start back unsolved (:meth:`_unsolved`); otherwise :meth:`_solve`
        gets the deadline and returns its current point once it passes, and a solve it stopped is
        reported as ``maxTimeLimit`` (not ``interrupted``, which is kept for Ctrl-C)."""
        self._check_available()
        refusal = constraint_refusal(self, problem)
        if refusal:
            raise ValueError(refusal)
        started = time.perf_counter()
        deadline = (deadline or Deadline()).within(self.time_limit)
        x0 = self._start(problem, x0)
        if deadline.passed():
            result = self._unsolved(problem, x0)
        else:
            result = self._solve(problem, x0, deadline)
            if result.termination_condition is TerminationCondition.interrupted and deadline.passed() \
                    and not interrupt_requested():  # stopped by the deadline, not by Ctrl-C
                result.termination_condition = TerminationCondition.maxTimeLimit
        result.seconds = time.perf_counter() - started
        result.solver = result.solver or self.name
        return result

    def _check_available(self) -> None:
        """A :class:`SolverUnavailableError` saying what to install when :meth:`available` says no
        (asked once per adapter)."""
        if self._availability is None:
            self._availability = availability(self)
        if not self._availability:
            raise SolverUnavailableError(f"solver {self.name!r} is not available: {self._availability.install}")

    def _start(self, problem, x0):
        """The start handed to :meth:`_solve`: ``x0`` as a float vector (None: ``problem.start()``)."""
        if x0 is None and hasattr(problem, "start"):
            x0 = problem.start()
        return None if x0 is None else np.asarray(x0, float)

    def _unsolved(self, problem, x0) -> SolverResult:
        """The result of a solve whose deadline had passed before it began: the start, its
        objective, ``maxTimeLimit``."""
        objective = problem.evaluate(x0)[0] if x0 is not None and hasattr(problem, "evaluate") else np.nan
        return SolverResult(x0, float(objective), False, "deadline passed before the solve", 0, 0.0, None,
                            TerminationCondition.maxTimeLimit, self.name)

    def _solve(self, problem, x0, deadline: Deadline) -> SolverResult:
        """The adapter's solve from ``x0``, its current point returned once ``deadline`` passes."""
        raise NotImplementedError

    def _result(self, x, objective, raw_status, iterations, raw=None, success=None, **extra) -> SolverResult:
        """A SolverResult whose termination condition comes from :data:`TERMINATION`."""
        condition = termination(self.family, raw_status, success)
        ok = condition is TerminationCondition.convergenceCriteriaSatisfied if success is None else success
        return SolverResult(x, float(objective), bool(ok), str(raw_status), int(iterations), 0.0, raw, condition,
                            self.name, **extra)


def smooth_problem(problem, needs: str | None = None, missing: str = "") -> Acceptance:
    """Accept formulations with ``evaluate``, no nonsmooth terms and, when ``needs`` names a
    method the solver calls (``"render"``, ``"hessian"``, ...), that method; otherwise the
    refusal says the formulation has no ``missing``."""
    if not hasattr(problem, "evaluate"):
        return Acceptance(False, f"{type(problem).__name__} has no evaluate(x)")
    if needs is not None and not callable(getattr(problem, needs, None)):
        return Acceptance(False, f"{type(problem).__name__} has no {missing}")
    terms = getattr(problem, "nonsmooth", ())
    if terms:
        names = ", ".join(sorted({getattr(t, "penalty", t).name for t in terms}))
        return Acceptance(False, f"its objective has nonsmooth terms ({names}); use a solver that accepts them "
                                 f"(prox-gradient, or l-bfgs-b for l1 terms)")
    return Acceptance(True)


def cached_rendering(cache: dict, problem, build):
    """(``build(model)``, parameter values) for ``problem``: the symbolic model is rendered and
    ``build`` called once per ``problem.structure_key``; later problems of the same structure
    reuse the built object with their own ``render_parameters()``."""
    key = problem.structure_key
    if key not in cache:
        model = problem.render()
        cache[key] = build(model)
        return cache[key], model.p_value
    return cache[key], problem.render_parameters()
