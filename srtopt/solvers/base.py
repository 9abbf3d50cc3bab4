"""The one interface every solver adapter implements (modelled on ``pyomo.contrib.solver``).

``solver.solve(problem, x0) -> SolverResult``.  ``problem`` is a formulation
from :mod:`srtopt.models` (it has ``evaluate(x) -> (f, grad)``, ``render()``
and ``structure_key``); ``x0`` the start.  Adapters never raise on a failed
solve: they report it in ``success``/``status``/``termination_condition`` so
training can fall back.

Besides ``solve``, an adapter has

* ``name`` -- the name it is registered under;
* ``available()`` -- an :class:`Availability`, truthy when the solver can run
  and otherwise carrying what to install (plain ``bool`` is accepted from older
  adapters);
* ``get_params()`` / ``set_params(**params)`` -- its configuration (the
  arguments of its constructor), scikit-learn style, so that an estimator
  holding a configured solver object is clone-safe and
  ``set_params(bn_solver__tol=1e-8)`` works.  :class:`SolverParams` provides them;
* optionally ``stops_on_interrupt = True`` -- it polls :func:`interrupt_requested`
  and ends its solve itself on Ctrl-C (see :func:`solve_interruptibly`, through
  which training calls every adapter, so that Ctrl-C always ends a fit).

:class:`TerminationCondition` uses the names of
``pyomo.contrib.solver.results.TerminationCondition``; ``status`` keeps the
solver's own raw status text.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import inspect
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class TerminationCondition(str, enum.Enum):
    """Why a solve stopped (names as in ``pyomo.contrib.solver``)."""

    convergenceCriteriaSatisfied = "convergenceCriteriaSatisfied"
    iterationLimit = "iterationLimit"
    maxTimeLimit = "maxTimeLimit"
    locallyInfeasible = "locallyInfeasible"
    unbounded = "unbounded"
    error = "error"
    unknown = "unknown"

    def __str__(self) -> str:
        return self.value


# substrings of raw statuses (IPOPT return_status, SciPy messages, HiGHS/qpOASES/OSQP,
# Pyomo termination conditions), lower-cased, checked in this order
_STATUS_WORDS = [
    ("maxtime", TerminationCondition.maxTimeLimit),
    ("cputime", TerminationCondition.maxTimeLimit),
    ("walltime", TerminationCondition.maxTimeLimit),
    ("time limit", TerminationCondition.maxTimeLimit),
    ("time_limit", TerminationCondition.maxTimeLimit),
    ("maximum_iterations", TerminationCondition.iterationLimit),
    ("iteration limit", TerminationCondition.iterationLimit),
    ("iterations reached limit", TerminationCondition.iterationLimit),
    ("maxiterations", TerminationCondition.iterationLimit),
    ("max_iter", TerminationCondition.iterationLimit),
    ("maximum number of iterations", TerminationCondition.iterationLimit),
    ("infeasible", TerminationCondition.locallyInfeasible),
    ("unbounded", TerminationCondition.unbounded),
    ("diverging", TerminationCondition.unbounded),
    ("raised", TerminationCondition.error),
    ("error", TerminationCondition.error),
    ("fail", TerminationCondition.error),
]


def classify_status(status: str, success: bool) -> TerminationCondition:
    """Map a raw solver status to a :class:`TerminationCondition` (best effort)."""
    if success:
        return TerminationCondition.convergenceCriteriaSatisfied
    text = str(status).lower()
    for word, condition in _STATUS_WORDS:
        if word in text:
            return condition
    return TerminationCondition.unknown


@dataclass
class SolverResult:
    """Outcome of one solve.

    ``x``, ``objective`` (value at ``x``), ``success``, ``status`` (the solver's
    raw status text), ``iterations``, ``seconds`` (wall time of ``solve``),
    ``raw`` (the solver's own result object/stats), ``termination_condition``
    (derived from ``status`` when not given) and ``solver`` (adapter name).
    The positional order of the first seven fields is unchanged from srtopt 0.1.
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

    def __post_init__(self):
        if self.termination_condition is None:
            self.termination_condition = classify_status(self.status, self.success)
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

    def usable(self) -> bool:
        """A finite point was returned (even if the solver reported a failure)."""
        return bool(np.all(np.isfinite(self.x)) and np.isfinite(self.objective))


_SIGINT = threading.Event()  # set by a SIGINT during solve_interruptibly (main thread)


_DEADLINE: contextvars.ContextVar = contextvars.ContextVar("srtopt_deadline", default=None)


@contextlib.contextmanager
def deadline(at: float | None):
    """Within this block, solvers stop by ``time.perf_counter()`` = ``at`` (None: no limit).

    The training loop sets it from the estimator's ``time_limit``; iterative adapters poll
    :func:`deadline_passed` (IPOPT's iteration callback, SciPy's ``callback``) and return
    their current iterate, with ``success`` False, once it has passed."""
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline_passed() -> bool:
    """True when the current :func:`deadline` has passed."""
    at = _DEADLINE.get()
    return at is not None and time.perf_counter() >= at


def should_stop() -> bool:
    """Whether an iterative solver should return now (Ctrl-C pressed or the deadline passed)."""
    return interrupt_requested() or deadline_passed()


def interrupt_requested() -> bool:
    """True once Ctrl-C was pressed during the current :func:`solve_interruptibly`.  An adapter
    with ``stops_on_interrupt = True`` polls this and ends its solve early, quietly."""
    return _SIGINT.is_set()


def solve_interruptibly(solver, problem, x0) -> SolverResult:
    """``solver.solve(problem, x0)``, except that a Ctrl-C (SIGINT) during the solve raises
    KeyboardInterrupt when the solve ends, even if the solver swallowed it (CasADi turns a
    KeyboardInterrupt into a status, IPOPT's ``NonIpopt_Exception_Thrown``, and may carry on).

    The KeyboardInterrupt is raised in the signal handler, as usual, unless the solver has
    ``stops_on_interrupt = True`` (it polls :func:`interrupt_requested` and stops by itself)."""
    with _recording_sigint(raise_at_once=not getattr(solver, "stops_on_interrupt", False)) as interrupted:
        try:
            result = solver.solve(problem, x0)
        except Exception:
            if interrupted():
                raise KeyboardInterrupt from None
            raise
        if interrupted():
            raise KeyboardInterrupt
    return result


@contextlib.contextmanager
def _recording_sigint(raise_at_once: bool):
    """Yield ``interrupted()``: whether a SIGINT arrived meanwhile (it sets :data:`_SIGINT`, then,
    if ``raise_at_once``, the previous handler runs, which raises KeyboardInterrupt by default).
    Python handles signals in the main thread only; in other threads, or when SIGINT is
    ignored, nothing changes and ``interrupted()`` is False."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield lambda: False
        return

    def record(signum, frame):
        _SIGINT.set()
        if raise_at_once:
            previous(signum, frame)

    _SIGINT.clear()
    signal.signal(signal.SIGINT, record)
    try:
        yield _SIGINT.is_set
    finally:
        signal.signal(signal.SIGINT, previous)
        _SIGINT.clear()  # a later solve outside this function must not see it


class Availability:
    """Result of ``solver.available()``: truthy iff usable; ``install`` says what is missing."""

    def __init__(self, ok: bool, install: str = ""):
        self.ok, self.install = bool(ok), install

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return "Availability(available)" if self.ok else f"Availability(unavailable: {self.install})"


def availability(solver) -> Availability:
    """``solver.available()`` as an :class:`Availability` (adapters may return a plain bool)."""
    check = getattr(solver, "available", None)
    if check is None:
        return Availability(True)
    try:
        result = check()
    except Exception as exc:  # an availability probe must not crash the caller
        return Availability(False, f"availability check raised {type(exc).__name__}: {exc}")
    return result if isinstance(result, Availability) else Availability(bool(result), "")


class SolverUnavailableError(ValueError):
    """A requested solver is unknown or not installed (raised at ``make_solver`` time)."""


class SolverParams:
    """scikit-learn style ``get_params``/``set_params`` from the constructor's signature.

    Every constructor argument must be stored under its own name; ``set_params``
    re-runs ``__init__`` with the updated arguments (so caches are dropped and
    checks re-done).
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

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


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
