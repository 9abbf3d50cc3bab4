"""IPOPT through CasADi ``nlpsol`` (the IPOPT 3.14 shipped in the casadi wheel).

Two evaluators feed IPOPT the objective and its exact gradient:

* ``"symbolic"``: the formulation's CasADi MX rendering, with the data as
  parameters; the solver is built once per ``problem.structure_key`` and
  re-solved with new parameter values and a warm start.
* ``"oracle"`` (default for ``hessian="limited-memory"``): the formulation's
  numpy reference evaluator (the one the symbolic model is tested against),
  wrapped in a ``casadi.Callback``; one solver per variable count serves every
  subproblem.  It was 2-3x faster per BN solve than the symbolic evaluator on
  cpu_small, with the same iterates, when it was chosen (srtopt 0.1).

Neither is ever rebuilt inside the NODEC loop.  Ctrl-C during a solve (through
:func:`~.base.solve_interruptibly`) stops IPOPT at its next iteration, quietly.
"""

from __future__ import annotations

import time

import casadi as ca
import numpy as np

from .base import (Acceptance, Availability, Solver, SolverResult, cached_rendering, should_stop, smooth_problem,
                   termination)
from .reformulations import VariableSplit


class IpoptCasadi(Solver):
    """IPOPT via ``casadi.nlpsol``.

    Parameters
    ----------
    hessian : {"limited-memory", "exact"}
        L-BFGS approximation (default) or the exact Hessian from CasADi's AD.
    tol, max_iter : IPOPT's ``tol`` (default 1e-5: a BN step needs an approximate
        minimiser; on five datasets at depth 3 it matched 1e-6 in test R^2, 0.820
        vs 0.822, in half the time) and ``max_iter``.
    options : extra IPOPT options, passed as ``ipopt.<name>``.
    evaluator : {"oracle", "symbolic"} or None
        Who evaluates f and its gradient (module docstring); None picks "oracle"
        with the limited-memory Hessian and "symbolic" with the exact one.
    time_limit, verbosity : seconds per solve (polled at every iteration) and IPOPT's
        ``print_level`` (0 silent, 1 and more: 5).

    With the oracle evaluator IPOPT also takes a formulation whose nonsmooth part is a
    weighted l1 term, as the variable split of
    :class:`~.reformulations.VariableSplit` (bounds u, v >= 0; interior-point
    iterates approach the zeros without reaching them exactly).
    """

    name = "ipopt"
    family = "ipopt"
    stops_on_interrupt = True  # through the iteration callback

    def __init__(self, hessian="limited-memory", tol=1e-5, max_iter=200, options=None, evaluator=None,
                 time_limit=None, verbosity=0):
        if hessian not in ("limited-memory", "exact"):
            raise ValueError(f"hessian must be 'limited-memory' or 'exact', got {hessian!r}")
        if evaluator not in (None, "oracle", "symbolic"):
            raise ValueError(f"evaluator must be 'oracle', 'symbolic' or None, got {evaluator!r}")
        if evaluator == "oracle" and hessian == "exact":
            raise ValueError("the exact Hessian needs evaluator='symbolic' (the oracle gives f and its gradient)")
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.hessian, self.evaluator, self.options = hessian, evaluator, options
        self._cache: dict = {}

    def available(self) -> Availability:
        if ca.has_nlpsol("ipopt"):
            return Availability(True)
        return Availability(False, "this casadi build has no IPOPT plugin: `pip install --force-reinstall casadi`")

    def version(self) -> str:
        return f"casadi {ca.__version__} (IPOPT plugin)"

    @property
    def _oracle(self) -> bool:
        return (self.evaluator or ("symbolic" if self.hessian == "exact" else "oracle")) == "oracle"

    def accepts(self, problem) -> Acceptance:
        smooth = smooth_problem(problem)
        if not smooth:
            if self._oracle and hasattr(problem, "l1_weights") and problem.l1_weights() is not None:
                return Acceptance(True)
            return smooth
        if not self._oracle and not hasattr(problem, "render"):
            return Acceptance(False, f"{type(problem).__name__} has no CasADi rendering (use evaluator='oracle')")
        return smooth

    def _options(self) -> dict:
        return {"ipopt.print_level": 5 if self.verbosity else 0, "print_time": bool(self.verbosity),
                "ipopt.sb": "yes", "ipopt.tol": self.tol, "ipopt.max_iter": self.max_iter,
                "ipopt.hessian_approximation": self.hessian, "iteration_callback": _stop_on_interrupt(),
                **{f"ipopt.{k}": v for k, v in (self.options or {}).items()}}

    def _solver(self, problem):
        """(nlpsol, parameter values) for ``problem``, built on first use of its shape."""
        if self._oracle:
            n = problem.start().size
            if n not in self._cache:
                oracle = _Oracle(n)
                x = ca.MX.sym("x", n)
                self._cache[n] = (ca.nlpsol(f"{problem.name}_oracle", "ipopt", {"x": x, "f": oracle(x)},
                                            self._options()), oracle)
            solver, oracle = self._cache[n]
            oracle.problem = problem
            return solver, []
        return cached_rendering(self._cache, problem,
                                lambda model: ca.nlpsol(problem.name, "ipopt", model.nlp, self._options()))

    def _solve(self, problem, x0) -> SolverResult:
        split = VariableSplit(problem) if getattr(problem, "nonsmooth", ()) else None
        target = split or problem
        solver, p_value = self._solver(target)
        bounds = {} if split is None else dict(zip(("lbx", "ubx"), split.bounds))
        out = solver(x0=x0 if split is None else split.y_of(x0), p=p_value, **bounds)
        stats = solver.stats()
        x, f = np.asarray(out["x"]).ravel(), float(out["f"])
        if split is not None:
            x = split.x_of(x)
            f = problem.evaluate_smooth(x)[0] + problem.nonsmooth_value(x)
        return SolverResult(x, f, bool(stats["success"]), stats["return_status"], int(stats.get("iter_count", 0)),
                            0.0, stats, termination(self.family, stats["return_status"], stats["success"]),
                            self.name)


class _StopOnInterrupt(ca.Callback):
    """IPOPT's iteration callback: 1 (stop, status ``User_Requested_Stop``) once Ctrl-C was
    pressed or the training deadline passed (:func:`~srtopt.solvers.base.should_stop`).  Its inputs are empty (CasADi accepts that), so no iterate is copied to Python."""

    def __init__(self):
        ca.Callback.__init__(self)
        self.construct("srt_stop_on_interrupt", {})

    def get_n_in(self):
        return ca.nlpsol_n_out()

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity(0, 0)

    def eval(self, arg):
        return [int(should_stop())]


_STOP = []


def _stop_on_interrupt() -> _StopOnInterrupt:
    """The one :class:`_StopOnInterrupt` (built on first use; solvers keep only a reference)."""
    if not _STOP:
        _STOP.append(_StopOnInterrupt())
    return _STOP[0]


class _Oracle(ca.Callback):
    """f(x) of the current formulation by its numpy reference; value and gradient are
    computed together and cached for the last x (IPOPT asks for both at each point)."""

    def __init__(self, n: int):
        ca.Callback.__init__(self)
        self.n, self.problem, self._x, self._fg = n, None, None, None
        self._gradient = _OracleGradient(self)
        self.construct(f"srt_oracle_{n}", {})

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.n, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(1, 1)

    def value_and_gradient(self, x):
        x = np.asarray(x, float).ravel()
        if self._x is None or not np.array_equal(x, self._x):
            self._x, self._fg = x.copy(), self.problem.evaluate(x)
        return self._fg

    def eval(self, arg):
        return [self.value_and_gradient(arg[0])[0]]

    def has_jacobian(self):
        return True

    def get_jacobian(self, name, inames, onames, opts):
        return self._gradient


class _OracleGradient(ca.Callback):
    """The 1 x n Jacobian of :class:`_Oracle` (inputs: x and the nominal output)."""

    def __init__(self, oracle: _Oracle):
        ca.Callback.__init__(self)
        self.oracle = oracle
        self.construct(f"srt_oracle_grad_{oracle.n}", {})

    def get_n_in(self):
        return 2

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.oracle.n, 1) if i == 0 else ca.Sparsity.dense(1, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(1, self.oracle.n)

    def eval(self, arg):
        return [self.oracle.value_and_gradient(arg[0])[1].reshape(1, -1)]
