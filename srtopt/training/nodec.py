"""NODEC-GS: the node-based decomposition general scheme (paper section 4.1).

The orchestrator only sequences pluggable parts:

* ``working_sets(tree)`` -> iterable of (t, W_B, W_L), one per inner iteration
  of a macro iteration;
* ``bn_step(problem, omega, beta, t, W_B, k)`` -> (omega, info dict);
* ``ln_step(problem, omega, beta, t, W_L, k)`` -> (beta, info dict);
* ``termination(macro, history)`` -> bool, checked before each macro iteration
  and after each inner iteration (a time limit stops after the current one);
* ``end_of_macro(macro)`` -> None (e.g. decay of the heuristic's epsilons).

It keeps the best iterate (lowest E) and records one :class:`InnerIteration`
per inner iteration.  NODEC-DR is one configuration (:mod:`.nodec_dr`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np


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
        return asdict(self)


@dataclass
class TrainingState:
    """Where a run stands: the current iterate, the best one, counters and history.
    Passing it back to :meth:`NodecGS.run` continues the run where it stopped."""

    omega: np.ndarray
    beta: np.ndarray
    E: float
    best: tuple
    history: list = field(default_factory=list)
    k: int = 0
    macro: int = 0

    @classmethod
    def start(cls, problem, omega, beta) -> "TrainingState":
        E = problem.objective(omega, beta)
        return cls(omega, beta, E, (E, omega, beta))


@dataclass
class TrainingResult:
    omega: np.ndarray
    beta: np.ndarray
    objective: float
    history: list
    n_macro: int
    stopped_by: str
    state: TrainingState | None = None


@dataclass
class MaxMacroIterations:
    """Stop after ``max_iter`` macro iterations or ``time_limit`` seconds (None: no limit)."""

    max_iter: int = 10
    time_limit: float | None = None
    started: float = field(default_factory=time.perf_counter)

    def __call__(self, macro: int, history) -> str | None:
        if macro >= self.max_iter:
            return "max_iter"
        if self.time_limit is not None and time.perf_counter() - self.started >= self.time_limit:
            return "time_limit"
        return None


class NodecGS:
    """Run NODEC-GS from (omega^0, beta^0) with the given parts."""

    def __init__(self, working_sets: Callable, bn_step: Callable, ln_step: Callable,
                 termination: Callable, end_of_macro: Callable | None = None, callbacks=()):
        self.working_sets, self.bn_step, self.ln_step = working_sets, bn_step, ln_step
        self.termination, self.end_of_macro = termination, end_of_macro
        self.callbacks = list(callbacks)

    def run(self, problem, omega=None, beta=None, state: TrainingState | None = None,
            max_macro: int | None = None) -> TrainingResult:
        """Run from (omega, beta), or continue ``state``; stop at the termination test or
        after macro iteration ``max_macro`` (then ``stopped_by == "max_macro"``)."""
        s = state or TrainingState.start(problem, omega, beta)
        stopped = self._stop(s, max_macro)
        while stopped is None:
            for t, W_B, W_L in self.working_sets(problem.tree):
                start = time.perf_counter()
                s.omega, bn = self.bn_step(problem, s.omega, s.beta, t, W_B, s.k)
                E_bn = problem.objective(s.omega, s.beta)
                s.beta, ln = self.ln_step(problem, s.omega, s.beta, t, W_L, s.k)
                E_new = problem.objective(s.omega, s.beta)
                record = InnerIteration(s.macro, s.k, t, tuple(W_B), tuple(W_L), s.E, E_bn, E_new, bn, ln,
                                        time.perf_counter() - start)
                s.history.append(record)
                for callback in self.callbacks:
                    callback(record)
                if E_new < s.best[0]:
                    s.best = (E_new, s.omega, s.beta)
                s.E, s.k = E_new, s.k + 1
                # within a macro iteration only a time limit ends the run (after this inner iteration)
                if self.termination(s.macro + 1, s.history) == "time_limit":
                    break
            if self.end_of_macro is not None:
                self.end_of_macro(s.macro)
            s.macro += 1
            stopped = self._stop(s, max_macro)
        E, omega, beta = s.best
        return TrainingResult(omega, beta, E, s.history, s.macro, stopped, s)

    def _stop(self, s, max_macro):
        stopped = self.termination(s.macro, s.history)
        if stopped is None and max_macro is not None and s.macro >= max_macro:
            return "max_macro"
        return stopped
