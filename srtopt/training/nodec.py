"""NODEC-GS: the node-based decomposition general scheme (paper section 4.1).

The orchestrator only sequences pluggable parts:

* ``working_sets(tree)`` -> iterable of (t, W_B, W_L), one per inner iteration
  of a macro iteration (:mod:`.working_sets`);
* ``bn_step(problem, omega, beta, t, W_B, k)`` -> (omega, info) or (omega, info, solves);
* ``ln_step(problem, omega, beta, t, W_L, k)`` -> (beta, info) or (beta, info, solves);
* ``termination(macro, history)`` -> a reason to stop or None, checked before each
  macro iteration and after each inner iteration (a time limit stops after the
  current one, whose LN step is skipped once the run's
  :class:`~srtopt.solvers.deadline.Deadline`, ``NodecGS(deadline=...)``, has passed);
* ``macro_step(problem, omega, beta, k)`` -> (omega, beta, info, solves) or None: an
  extra step over all variables at the end of each macro iteration (NODEC-DR uses it
  for penalties that couple every block, ``feature_l1``), recorded as an inner
  iteration over W_B = tau_B, W_L = tau_L;
* ``end_of_macro(macro)`` -> None (e.g. decay of the heuristic's epsilons);
* ``callbacks``: :class:`~.callbacks.Callback` objects (or plain callables, called
  after every inner iteration) that receive the :class:`TrainingState` -- the iterate,
  k, t, the working sets, the subproblems handed to solvers and their results -- and
  may end the run cleanly with ``state.stop(reason)``.

``solves`` are :class:`Solve` records: which subproblem a step handed to which solver,
and the :class:`~srtopt.solvers.SolverResult`.  NODEC-GS keeps the best iterate
(lowest E) and records one :class:`InnerIteration` per inner iteration.  NODEC-DR is
one configuration (:mod:`.nodec_dr`).

With constraints, no step may make the iterate less feasible: a step the problem's constraint
policy does not admit (:class:`~srtopt.models.constraints.ConstraintPolicy`) is undone (its
record says so), so a feasible start stays feasible; the best iterate is the feasible one of
lowest E (the least infeasible while none is feasible, :func:`~srtopt.models.constraints.rank`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Callable

import numpy as np

from ..models.constraints import rank
from ..solvers.deadline import Deadline
from .callbacks import as_callbacks


@dataclass
class InnerIteration:
    """History record of inner iteration k (node t, working sets, E before/after each step)."""

    macro: int
    k: int
    node: int
    W_B: tuple
    W_L: tuple
    E_before: float
    E_after_bn: float
    E_after: float
    bn: dict = field(default_factory=dict)
    ln: dict = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        """The record as a plain dict (the step infos copied; their values are scalars and strings)."""
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "bn": dict(self.bn), "ln": dict(self.ln)}


@dataclass
class Solve:
    """One solver call of a step: ``kind`` ("bn", "wlr", "ln", "ln-fallback", "joint"), the
    formulation handed over and the solver's result (None if the solver raised)."""

    kind: str
    subproblem: object
    result: object = None


@dataclass
class TrainingState:
    """Where a run stands: the current iterate, the best one, counters and history, and the
    inner iteration under way or just finished (``t``, ``W_B``, ``W_L``, ``start`` = the
    iterate before its BN step, ``omega_after_bn``, ``solves``, ``record``), the
    ``problem`` being solved and ``info`` from the initialization.  Passing it back to
    :meth:`NodecGS.run` continues the run where it stopped.

    During ``on_inner_iteration`` callbacks ``k`` is the index of the inner iteration
    just finished (``record.k``); ``stop(reason)`` ends the run after it."""

    omega: np.ndarray
    beta: np.ndarray
    E: float
    best: tuple
    history: list = field(default_factory=list)
    k: int = 0
    macro: int = 0
    t: int | None = None
    W_B: tuple = ()
    W_L: tuple = ()
    start: tuple | None = None
    omega_after_bn: np.ndarray | None = None
    solves: list = field(default_factory=list)
    record: InnerIteration | None = None
    info: dict = field(default_factory=dict)
    stop_reason: str | None = None
    problem: object = field(default=None, repr=False)
    violation: float = 0.0
    best_violation: float = 0.0

    @classmethod
    def start_at(cls, problem, omega, beta, **info) -> "TrainingState":
        E, violation = problem.objective(omega, beta), problem.violation(omega, beta)
        return cls(omega, beta, E, (E, omega, beta), info=dict(info), violation=violation, best_violation=violation)

    def stop(self, reason: str = "callback") -> None:
        """End the run after the current inner iteration (``stopped_by == reason``)."""
        self.stop_reason = reason


@dataclass
class TrainingResult:
    omega: np.ndarray
    beta: np.ndarray
    objective: float
    history: list
    n_macro: int
    stopped_by: str
    state: TrainingState | None = None
    violation: float = 0.0


@dataclass
class MaxMacroIterations:
    """Stop after ``max_iter`` macro iterations, at the ``deadline`` (the default: none), or, with
    ``tol``, after a macro iteration that lowered the lowest E reached by less than ``tol`` times it
    (relative; "tol"): the best iterate has stopped improving."""

    max_iter: int = 10
    deadline: Deadline = field(default_factory=Deadline)
    tol: float | None = None

    def __call__(self, macro: int, history) -> str | None:
        if macro >= self.max_iter:
            return "max_iter"
        if self.deadline.passed():
            return "time_limit"
        if self.tol is not None and _stalled(history, macro, self.tol):
            return "tol"
        return None


IDLE = ("skipped", "none", "empty")  # the updates of a step that left its block as it was


def _stalled(history, macro: int, tol: float) -> bool:
    """Whether macro iteration ``macro`` - 1 took a step and lowered the lowest E of the ``history``
    before it by at most ``tol`` times that E (a macro iteration whose steps were all skipped by
    the gradient thresholds theta^k, as the first can be, has not stalled: the thresholds fall)."""
    last = [r for r in history if r.macro == macro - 1]
    if not any(r.bn.get("update") not in IDLE or r.ln.get("update") not in IDLE for r in last):
        return False
    best = min([history[0].E_before] + [r.E_after for r in history if r.macro < macro - 1])
    return best - min(r.E_after for r in last) <= tol * abs(best)


def _step_output(out):
    """(x, info, solves) of a step's (x, info) or (x, info, solves)."""
    return (*out, []) if len(out) == 2 else out


class NodecGS:
    """Run NODEC-GS from (omega^0, beta^0) with the given parts; ``deadline`` (None: none) skips
    the LN step of an inner iteration whose BN step ended after it (the steps and ``termination``
    are given the same deadline by whoever configures them)."""

    def __init__(self, working_sets: Callable, bn_step: Callable, ln_step: Callable,
                 termination: Callable, end_of_macro: Callable | None = None, callbacks=(),
                 macro_step: Callable | None = None, deadline: Deadline | None = None):
        self.working_sets, self.bn_step, self.ln_step = working_sets, bn_step, ln_step
        self.termination, self.end_of_macro, self.macro_step = termination, end_of_macro, macro_step
        self.callbacks = as_callbacks(callbacks)
        self.deadline = deadline or Deadline()

    def run(self, problem, omega=None, beta=None, state: TrainingState | None = None,
            max_macro: int | None = None) -> TrainingResult:
        """Run from (omega, beta), or continue ``state``; stop at the termination test, at a
        callback's ``state.stop(reason)`` or after macro iteration ``max_macro`` (then
        ``stopped_by == "max_macro"``)."""
        s = state or TrainingState.start_at(problem, omega, beta)
        s.problem = problem
        if s.k == 0 and not s.history:
            self._notify("on_run_begin", s)
        stopped = self._stop(s, max_macro)
        while stopped is None:
            for t, W_B, W_L in self.working_sets(problem.tree):
                self._inner_iteration(problem, s, t, tuple(W_B), tuple(W_L))
                # within a macro iteration only a time limit or a callback ends the run (after this iteration)
                if s.stop_reason or self.termination(s.macro + 1, s.history) == "time_limit":
                    break
            if self.macro_step is not None and not s.stop_reason:
                self._joint_iteration(problem, s)
            if self.end_of_macro is not None:
                self.end_of_macro(s.macro)
            self._notify("on_macro_end", s)
            s.macro += 1
            stopped = s.stop_reason or self._stop(s, max_macro)
        E, omega, beta = s.best
        result = TrainingResult(omega, beta, E, s.history, s.macro, stopped, s, s.best_violation)
        self._notify("on_run_end", s, result)
        return result

    def _inner_iteration(self, problem, s, t, W_B, W_L):
        start = time.perf_counter()
        s.t, s.W_B, s.W_L, s.start, s.solves = t, W_B, W_L, (s.omega, s.beta), []
        omega, bn, solves = _step_output(self.bn_step(problem, s.omega, s.beta, t, W_B, s.k))
        s.omega, _ = self._feasible(problem, s, (s.omega, s.beta), (omega, s.beta), bn)
        s.solves.extend(solves)
        s.omega_after_bn = s.omega
        E_bn = problem.objective(s.omega, s.beta)
        if self.deadline.passed():  # the time limit fell in the BN step: the LN step would overrun it
            ln = {"update": "skipped", "status": "the time limit passed"}
        else:
            beta, ln, solves = _step_output(self.ln_step(problem, s.omega, s.beta, t, W_L, s.k))
            _, s.beta = self._feasible(problem, s, (s.omega, s.beta), (s.omega, beta), ln)
            s.solves.extend(solves)
        self._finish(problem, s, InnerIteration(s.macro, s.k, t, W_B, W_L, s.E, E_bn, problem.objective(
            s.omega, s.beta), bn, ln, time.perf_counter() - start))

    def _joint_iteration(self, problem, s):
        start, tree = time.perf_counter(), problem.tree
        s.t, s.W_B, s.W_L, s.start = 1, tree.branch_nodes, tree.leaves, (s.omega, s.beta)
        omega, beta, info, s.solves = self.macro_step(problem, s.omega, s.beta, s.k)
        s.omega, s.beta = self._feasible(problem, s, (s.omega, s.beta), (omega, beta), info)
        s.omega_after_bn = s.omega
        E = problem.objective(s.omega, s.beta)
        self._finish(problem, s, InnerIteration(s.macro, s.k, 1, tree.branch_nodes, tree.leaves, s.E, E, E, info,
                                                {"update": "joint"}, time.perf_counter() - start))

    @staticmethod
    def _feasible(problem, s, before, after, info):
        """``after`` unless the constraint policy does not let it replace ``before``: then ``before``,
        and ``info`` says so.  Keeps ``s.violation`` current."""
        if after[0] is before[0] and after[1] is before[1]:
            return after
        violation = problem.violation(*after)
        if not problem.policy.keeps(violation, s.violation):
            info["undone"] = f"violates the constraints by {violation:.3g}"
            return before
        s.violation = violation
        return after

    def _finish(self, problem, s, record):
        s.history.append(record)
        s.record, s.E = record, record.E_after
        if rank(record.E_after, s.violation) < rank(s.best[0], s.best_violation):
            s.best, s.best_violation = (record.E_after, s.omega, s.beta), s.violation
        self._notify("on_inner_iteration", s)
        s.k += 1

    def _notify(self, hook, *args):
        for callback in self.callbacks:
            getattr(callback, hook, lambda *a: None)(*args)

    def _stop(self, s, max_macro):
        stopped = self.termination(s.macro, s.history)
        if stopped is None and max_macro is not None and s.macro >= max_macro:
            return "max_macro"
        return stopped
