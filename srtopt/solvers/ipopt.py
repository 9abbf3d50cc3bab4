"""IPOPT through CasADi ``nlpsol`` (the IPOPT 3.14 shipped in the casadi wheel).

Two evaluators feed IPOPT the objective and its exact gradient:

* ``"symbolic"``: the formulation's CasADi MX rendering, with the data as
  parameters; the solver is built once per ``problem.structure_key`` and
  re-solved with new parameter values and a warm start.
* ``"oracle"`` (the default): the formulation's numpy reference evaluator (the one
  the symbolic model is tested against) and, with ``hessian="exact"``, its exact
  compiled Hessian (``problem.hessian``, :func:`srtopt.kernels.branch_curvatures`
  for the BN proxies), wrapped in ``casadi.Callback`` objects; one solver per
  variable count serves every subproblem.  A formulation without a Hessian of its
  own (a nonsmooth penalty's split) takes the symbolic evaluator for the exact one.

Neither is ever rebuilt inside the NODEC loop.  Ctrl-C during a solve (through
:func:`~.base.solve_interruptibly`) stops IPOPT at its next iteration, quietly.
"""

from __future__ import annotations


import casadi as ca
import numpy as np

from .base import (Acceptance, Availability, Solver, SolverResult, cached_rendering, should_stop, smooth_problem,
                   termination)
from .reformulations import VariableSplit


class IpoptCasadi(Solver):
    """IPOPT via ``casadi.nlpsol``.

    Parameters
    ----------
    hessian : {"exact", "limited-memory"}
        The exact Hessian (default: the formulation's own, or CasADi's AD with the
        symbolic evaluator) or IPOPT's L-BFGS approximation.
    tol, max_iter : IPOPT's ``tol`` (default 1e-8, the convention of every IPOPT route
        here: with the exact Hessian the last digits cost an iteration or two) and
        ``max_iter``.
    options : extra IPOPT options, passed as ``ipopt.<name>``.
    evaluator : {"oracle", "symbolic"} or None
        Who evaluates f, its gradient and Hessian (module docstring); None picks
        "oracle" unless the exact Hessian is asked of a formulation without one.
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

    def __init__(self, hessian="exact", tol=1e-8, max_iter=200, options=None, evaluator=None,
                 time_limit=None, verbosity=0):
        if hessian not in ("limited-memory", "exact"):
            raise ValueError(f"hessian must be 'limited-memory' or 'exact', got {hessian!r}")
        if evaluator not in (None, "oracle", "symbolic"):
            raise ValueError(f"evaluator must be 'oracle', 'symbolic' or None, got {evaluator!r}")
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.hessian, self.evaluator, self.options = hessian, evaluator, options
        self._cache: dict = {}

    def available(self) -> Availability:
        if ca.has_nlpsol("ipopt"):
            return Availability(True)
        return Availability(False, "this casadi build has no IPOPT plugin: `pip install --force-reinstall casadi`")

    def version(self) -> str:
        return f"casadi {ca.__version__} (IPOPT plugin)"

    def _route(self, problem) -> tuple[bool, bool]:
        """(oracle?, exact Hessian?) for ``problem`` (module docstring): the oracle unless the
        exact Hessian is asked of a formulation without one that has a CasADi rendering; an
        oracle without a Hessian of the formulation's own uses L-BFGS."""
        own = getattr(problem, "hessian", None) is not None
        exact = self.hessian == "exact"
        if self.evaluator == "symbolic":
            return False, exact
        if self.evaluator == "oracle":
            return True, exact
        if exact and not own and hasattr(problem, "render"):
            return False, True
        return True, exact and own

    def _oracle(self, problem) -> bool:
        return self._route(problem)[0]

    def accepts(self, problem) -> Acceptance:
        smooth = smooth_problem(problem)
        if not smooth:
            if self.hessian != "exact" and self.evaluator != "symbolic" and hasattr(problem, "l1_weights") \
                    and problem.l1_weights() is not None:
                return Acceptance(True)
            return smooth
        if self.evaluator == "oracle" and self.hessian == "exact" and getattr(problem, "hessian", None) is None:
            return Acceptance(False, f"{type(problem).__name__} has no Hessian of its own for the oracle (use "
                                     f"evaluator='symbolic' or hessian='limited-memory')")
        if not self._oracle(problem) and not hasattr(problem, "render"):
            return Acceptance(False, f"{type(problem).__name__} has no CasADi rendering (use evaluator='oracle')")
        return smooth

    def _options(self, exact: bool) -> dict:
        return {"ipopt.print_level": 5 if self.verbosity else 0, "print_time": bool(self.verbosity),
                "ipopt.sb": "yes", "ipopt.tol": self.tol, "ipopt.max_iter": self.max_iter,
                "ipopt.hessian_approximation": "exact" if exact else "limited-memory",
                "iteration_callback": _stop_on_interrupt(),
                **{f"ipopt.{k}": v for k, v in (self.options or {}).items()}}

    def _solver(self, problem):
        """(nlpsol, parameter values) for ``problem``, built on first use of its shape."""
        oracle_route, exact = self._route(problem)
        if oracle_route:
            n = problem.start().size
            if (n, exact) not in self._cache:
                oracle = _Oracle(n, exact)
                x = ca.MX.sym("x", n)
                self._cache[n, exact] = (ca.nlpsol(f"{problem.name}_oracle", "ipopt", {"x": x, "f": oracle(x)},
                                                   self._options(exact)), oracle)
            solver, oracle = self._cache[n, exact]
            oracle.problem = problem
            return solver, []
        return cached_rendering(self._cache, problem,
                                lambda model: ca.nlpsol(problem.name, "ipopt", model.nlp, self._options(exact)))

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
    computed together and cached for the last x (IPOPT asks for both at each point); with
    ``exact`` the gradient's Jacobian is the formulation's own Hessian."""

    def __init__(self, n: int, exact: bool = False):
        ca.Callback.__init__(self)
        self.n, self.problem, self._x, self._fg = n, None, None, None
        self._gradient = _OracleGradient(self, exact)
        self.construct(f"srt_oracle_{n}_{'exact' if exact else 'lbfgs'}", {})

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

    def has_eval_buffer(self):  # numpy views of CasADi's memory: no conversion to DM per call
        return True

    def eval_buffer(self, arg, res):
        np.frombuffer(res[0], dtype=float)[0] = self.value_and_gradient(np.frombuffer(arg[0], dtype=float))[0]
        return 0

    def has_jacobian(self):
        return True

    def get_jacobian(self, name, inames, onames, opts):
        return self._gradient


class _OracleGradient(ca.Callback):
    """The 1 x n Jacobian of :class:`_Oracle` (inputs: x and the nominal output)."""

    def __init__(self, oracle: _Oracle, exact: bool):
        ca.Callback.__init__(self)
        self.oracle = oracle
        self._hessian = _OracleHessian(oracle) if exact else None
        self.construct(f"srt_oracle_grad_{oracle.n}_{'exact' if exact else 'lbfgs'}", {})

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

    def has_eval_buffer(self):
        return True

    def eval_buffer(self, arg, res):
        np.frombuffer(res[0], dtype=float)[:] = self.oracle.value_and_gradient(np.frombuffer(arg[0], dtype=float))[1]
        return 0

    def has_jacobian(self):
        return self._hessian is not None

    def get_jacobian(self, name, inames, onames, opts):
        return self._hessian


class _OracleHessian(ca.Callback):
    """The Jacobian of :class:`_OracleGradient` with respect to each of its inputs: the
    formulation's exact Hessian (n x n, in x) and 0 (n x 1, in the nominal f); inputs: x,
    the nominal f and the nominal gradient."""

    def __init__(self, oracle: _Oracle):
        ca.Callback.__init__(self)
        self.oracle = oracle
        self.construct(f"srt_oracle_hess_{oracle.n}", {})

    def get_n_in(self):
        return 3

    def get_n_out(self):
        return 2

    def get_sparsity_in(self, i):
        return [ca.Sparsity.dense(self.oracle.n, 1), ca.Sparsity.dense(1, 1), ca.Sparsity.dense(1, self.oracle.n)][i]

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(self.oracle.n, self.oracle.n) if i == 0 else ca.Sparsity(self.oracle.n, 1)

    def eval(self, arg):
        return [self.oracle.problem.hessian(np.asarray(arg[0], float).ravel()), ca.DM(self.oracle.n, 1)]

    def has_eval_buffer(self):
        return True

    def eval_buffer(self, arg, res):  # the Hessian is symmetric: row- and column-major agree
        hessian = self.oracle.problem.hessian(np.frombuffer(arg[0], dtype=float).copy())
        np.frombuffer(res[0], dtype=float)[:] = hessian.ravel()
        return 0
