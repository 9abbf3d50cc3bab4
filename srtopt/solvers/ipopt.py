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

Neither is ever rebuilt inside the NODEC loop.  Ctrl-C, SIGTERM or SIGHUP during a solve (through
:func:`~.base.solve_interruptibly`, which records the signal instead of letting its handler raise
inside a callback) or the deadline the solve was given stops IPOPT at its next iteration,
quietly (each adapter's iteration callback holds the deadline of its current solve).  The
symbolic evaluator's solver is built in a thread (:func:`_built`: CasADi's exact Hessian of a
large model takes minutes, in C++, where no signal is handled), so that a signal and the
deadline also end that wait; the solve then returns its start, unevaluated (objective NaN,
not ``usable()``).

Constraints (:mod:`srtopt.models.constraints`) go to IPOPT as they are: the formulation's
bounds as lbx/ubx (a fixed variable becomes a parameter, IPOPT's default treatment), its rows
as g with lbg/ubg, their Jacobian and, with the exact Hessian, the rows' Hessians in the
Lagrangian's.  IPOPT ends feasible within ``CONSTRAINT_TOL``.
"""

from __future__ import annotations


import threading

import casadi as ca
import numpy as np

from .base import (CONSTRAINT_KINDS, Acceptance, Availability, Solver, SolverResult, TerminationCondition,
                   cached_rendering, should_stop, smooth_problem, termination)
from .deadline import Deadline
from .reformulations import VariableSplit


#: IPOPT's ``tol`` (the gradient's max-norm at the end, on these unconstrained problems) by
#: default, and in "auto": about where the default Newton stops (a Newton decrement of 1e-12
#: relative to 1 + |E|); chosen in docs/solvers.md, "IPOPT's tolerance" (the BN route by name
#: takes a tighter one, ``srtopt.solvers.ROUTE_TOL``).
IPOPT_TOL = 1e-6
#: IPOPT's ``constr_viol_tol`` (absolute, training units): below the tolerance of the training's
#: feasibility tests (:data:`srtopt.models.constraints.FEASIBILITY_TOL`)
CONSTRAINT_TOL = 1e-8


class IpoptCasadi(Solver):
    """IPOPT via ``casadi.nlpsol``.

    Parameters
    ----------
    hessian : {"exact", "limited-memory"}
        The exact Hessian (default: the formulation's own, or CasADi's AD with the
        symbolic evaluator) or IPOPT's L-BFGS approximation.
    tol, max_iter : IPOPT's ``tol`` (default :data:`IPOPT_TOL`) and ``max_iter``.
    options : extra IPOPT options, passed as ``ipopt.<name>``.
    evaluator : {"oracle", "symbolic"} or None
        Who evaluates f, its gradient and Hessian (module docstring); None picks
        "oracle" unless the exact Hessian is asked of a formulation without one.
    time_limit, verbosity : seconds per solve (polled at every iteration) and IPOPT's
        ``print_level`` (0 silent, 1 and more: 5).
    max_variables : int or None
        Refuse (``accepts``) a formulation of more variables: an "auto" list then takes the next
        candidate (the exact Hessian's dense factorization grows as n^3, and an iteration cannot be
        stopped: one of 6000 variables takes seconds).

    With the oracle evaluator IPOPT also takes a formulation whose nonsmooth part is a
    weighted l1 term, as the variable split of
    :class:`~.reformulations.VariableSplit` (bounds u, v >= 0; interior-point
    iterates approach the zeros without reaching them exactly).
    """

    name = "ipopt"
    family = "ipopt"
    stops_on_interrupt = True  # through the iteration callback
    takes_constraints = CONSTRAINT_KINDS

    def __init__(self, hessian="exact", tol=IPOPT_TOL, max_iter=200, options=None, evaluator=None,
                 time_limit=None, verbosity=0, max_variables=None):
        if hessian not in ("limited-memory", "exact"):
            raise ValueError(f"hessian must be 'limited-memory' or 'exact', got {hessian!r}")
        if evaluator not in (None, "oracle", "symbolic"):
            raise ValueError(f"evaluator must be 'oracle', 'symbolic' or None, got {evaluator!r}")
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.hessian, self.evaluator, self.options, self.max_variables = hessian, evaluator, options, max_variables
        self._cache: dict = {}
        self._stop = None  # the iteration callback of this adapter's solvers, built on first use

    def available(self) -> Availability:
        if ca.has_nlpsol("ipopt"):
            return Availability(True)
        return Availability(False, "this casadi build has no IPOPT plugin: `pip install --force-reinstall casadi`")

    def version(self) -> str:
        return f"casadi {ca.__version__} (IPOPT plugin)"

    def _route(self, problem) -> tuple[bool, bool]:
        """(oracle?, exact Hessian?) for ``problem`` (module docstring): the oracle unless the
        exact Hessian is asked of a formulation without one (for its objective and its constraint
        rows) that has a CasADi rendering; an oracle without a Hessian of the formulation's own uses
        L-BFGS."""
        own = getattr(problem, "hessian", None) is not None and _rows_have_hessians(problem)
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
        if self.max_variables is not None and np.size(problem.start()) > self.max_variables:
            return Acceptance(False, f"it has {np.size(problem.start())} variables, more than max_variables="
                                     f"{self.max_variables}")
        smooth = smooth_problem(problem)
        if getattr(problem, "nonsmooth", ()) and getattr(problem, "n_constraints", 0):
            return Acceptance(False, "IPOPT takes a nonsmooth term (by a variable split) only without constraint rows")
        if not smooth:
            if self.hessian != "exact" and self.evaluator != "symbolic" and hasattr(problem, "l1_weights") \
                    and problem.l1_weights() is not None:
                return Acceptance(True)
            return smooth
        if self.evaluator == "oracle" and self.hessian == "exact" and not (
                getattr(problem, "hessian", None) is not None and _rows_have_hessians(problem)):
            return Acceptance(False, f"{type(problem).__name__} has no Hessian of its own for the oracle (use "
                                     f"evaluator='symbolic' or hessian='limited-memory')")
        if not self._oracle(problem) and not hasattr(problem, "render"):
            return Acceptance(False, f"{type(problem).__name__} has no CasADi rendering (use evaluator='oracle')")
        return smooth

    def _options(self, exact: bool) -> dict:
        return {"ipopt.print_level": 5 if self.verbosity else 0, "print_time": bool(self.verbosity),
                "ipopt.sb": "yes", "ipopt.tol": self.tol, "ipopt.max_iter": self.max_iter,
                "ipopt.constr_viol_tol": CONSTRAINT_TOL,
                "ipopt.hessian_approximation": "exact" if exact else "limited-memory",
                "iteration_callback": self._stop,
                **{f"ipopt.{k}": v for k, v in (self.options or {}).items()}}

    def _solver(self, problem, deadline):
        """(nlpsol, parameter values) for ``problem``, built on first use of its shape (a build that
        outlasts ``deadline`` is abandoned: :func:`_built`)."""
        oracle_route, exact = self._route(problem)
        if oracle_route:
            n, m = problem.start().size, getattr(problem, "n_constraints", 0)
            if (n, m, exact) not in self._cache:
                oracle = _Oracle(n, m, exact)
                x = ca.MX.sym("x", n)
                nlp = {"x": x, "f": oracle(x), **({"g": oracle.rows(x)} if m else {})}
                derivatives = {"grad_f": oracle.gradient, **({"hess_lag": oracle.hessian} if exact else {}),
                               **({"jac_g": oracle.jacobian} if m else {}),
                               "no_nlp_grad": True}  # no multipliers to recover: f itself is never differentiated
                self._cache[n, m, exact] = (ca.nlpsol(f"{problem.name}_oracle", "ipopt", nlp,
                                                      {**self._options(exact), **derivatives}), oracle)
            solver, oracle = self._cache[n, m, exact]
            oracle.problem = problem
            return solver, []
        options = self._options(exact)
        return cached_rendering(self._cache, problem,
                                lambda model: _built(lambda: ca.nlpsol(problem.name, "ipopt", model.nlp, options),
                                                     deadline))

    def _solve(self, problem, x0, deadline) -> SolverResult:
        split = VariableSplit(problem) if getattr(problem, "nonsmooth", ()) else None
        target = split or problem
        if self._stop is None:
            self._stop = _StopOnInterrupt()
        self._stop.deadline = deadline
        try:
            solver, p_value = self._solver(target, deadline)
        except _Stopped:  # Ctrl-C or the deadline while a solver was built: the start, not evaluated
            return SolverResult(x0, np.nan, False, "User_Requested_Stop", 0, 0.0, None, TerminationCondition.interrupted,
                                self.name)
        bounds = _bounds(problem) if split is None else dict(zip(("lbx", "ubx"), split.bounds))
        out = solver(x0=x0 if split is None else split.y_of(x0), p=p_value, **bounds)
        stats = solver.stats()
        x, f = np.asarray(out["x"]).ravel(), float(out["f"])
        if split is not None:
            x = split.x_of(x)
            f = problem.evaluate_smooth(x)[0] + problem.nonsmooth_value(x)
        return SolverResult(x, f, bool(stats["success"]), stats["return_status"], int(stats.get("iter_count", 0)),
                            0.0, stats, termination(self.family, stats["return_status"], stats["success"]),
                            self.name)


class _Stopped(Exception):
    """Ctrl-C or the deadline came while an IPOPT solver was built."""


#: CasADi builds symbolic functions safely beside other threads (the wheels since 3.6 are compiled so)
THREADSAFE = "-DCASADI_WITH_THREADSAFE_SYMBOLICS" in ca.CasadiMeta.compiler_flags().split()


def _built(build, deadline):
    """``build()``, run in a daemon thread (CasADi 3.7+ releases the GIL while it builds) while this one
    polls :func:`~.base.should_stop` (Ctrl-C or ``deadline``) every 50 ms and raises :class:`_Stopped`
    when it says so; the abandoned build runs to its end in the background (CasADi cannot stop it)
    and is dropped.
    Without :data:`THREADSAFE` symbolics, ``build()`` runs here."""
    if not THREADSAFE:
        return build()
    result = []

    def run():
        try:
            result.append(build())
        except Exception as exc:  # handed to the waiting thread
            result.append(exc)

    thread = threading.Thread(target=run, name="srtopt-ipopt-build", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.05)
        if thread.is_alive() and should_stop(deadline):
            raise _Stopped
    if isinstance(result[0], Exception):
        raise result[0]
    return result[0]


def _rows_have_hessians(problem) -> bool:
    """Whether every constraint row of ``problem`` has a Hessian of its own (none: True)."""
    return all(getattr(block, "has_hessian", False) for block in getattr(problem, "constraint_blocks", ()))


def _bounds(problem) -> dict:
    """The bounds of the solver call: lbx/ubx of ``problem.bounds()``, lbg/ubg of its rows."""
    out = {}
    bounds = getattr(problem, "bounds", lambda: None)()
    if bounds is not None:
        out.update(lbx=bounds[0], ubx=bounds[1])
    if getattr(problem, "n_constraints", 0):
        out.update(zip(("lbg", "ubg"), problem.constraint_bounds()))
    return out


class _StopOnInterrupt(ca.Callback):
    """IPOPT's iteration callback: 1 (stop, status ``User_Requested_Stop``) once Ctrl-C was
    pressed (or SIGTERM, SIGHUP arrived) or ``deadline``, that of the solve under way, passed
    (:func:`~srtopt.solvers.base.should_stop`).  Its inputs are empty (CasADi accepts that), so no
    iterate is copied to Python."""

    def __init__(self):
        ca.Callback.__init__(self)
        self.deadline = Deadline()
        self.construct("srt_stop_on_interrupt", {})

    def get_n_in(self):
        return ca.nlpsol_n_out()

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity(0, 0)

    def eval(self, arg):
        return [int(should_stop(self.deadline))]


class _Oracle(ca.Callback):
    """f(x) of the current formulation by its numpy reference, with the two functions IPOPT
    calls for the derivatives (``nlpsol``'s ``grad_f`` and ``hess_lag`` options): one Python
    call each, where CasADi's Jacobians of a callback re-evaluate the nominal outputs first
    (seven calls per iteration instead of four).  Value and gradient are computed together
    and kept for the last x (IPOPT asks for both at each accepted point)."""

    def __init__(self, n: int, m: int = 0, exact: bool = True):
        ca.Callback.__init__(self)
        self.n, self.m, self.problem, self._x, self._fg = n, m, None, None, None
        self.construct(f"srt_oracle_{n}_{m}", {})
        self.gradient = _OracleGradient(self)
        self.hessian = _OracleHessian(self) if exact else None  # its n^2 / 2 entries: only when IPOPT asks for it
        if m:
            self.rows, self.jacobian = _OracleRows(self), _OracleJacobian(self)

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


class _OracleGradient(ca.Callback):
    """``grad_f`` of ``nlpsol``: (x, p) -> (f, the gradient), from :class:`_Oracle`."""

    def __init__(self, oracle: _Oracle):
        ca.Callback.__init__(self)
        self.oracle = oracle
        self.construct(f"srt_oracle_grad_{oracle.n}", {})

    def get_n_in(self):
        return 2

    def get_n_out(self):
        return 2

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.oracle.n, 1) if i == 0 else ca.Sparsity(0, 0)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(1, 1) if i == 0 else ca.Sparsity.dense(self.oracle.n, 1)

    def eval(self, arg):
        f, g = self.oracle.value_and_gradient(arg[0])
        return [f, g]

    def has_eval_buffer(self):
        return True

    def eval_buffer(self, arg, res):
        f, g = self.oracle.value_and_gradient(np.frombuffer(arg[0], dtype=float))
        if res[0] is not None:  # CasADi passes None for an output it does not want
            np.frombuffer(res[0], dtype=float)[0] = f
        if res[1] is not None:
            np.frombuffer(res[1], dtype=float)[:] = g
        return 0


class _OracleRows(ca.Callback):
    """g(x): the formulation's constraint rows (``constraint_values``)."""

    def __init__(self, oracle: _Oracle):
        ca.Callback.__init__(self)
        self.oracle = oracle
        self.construct(f"srt_oracle_rows_{oracle.n}_{oracle.m}", {})

    def get_n_in(self):
        return 1

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.oracle.n, 1)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(self.oracle.m, 1)

    def eval(self, arg):
        return [self.oracle.problem.constraint_values(np.asarray(arg[0], float).ravel())]


class _OracleJacobian(ca.Callback):
    """``jac_g`` of ``nlpsol``: (x, p) -> (g, dg/dx) of the formulation's constraint rows."""

    def __init__(self, oracle: _Oracle):
        ca.Callback.__init__(self)
        self.oracle = oracle
        self.construct(f"srt_oracle_jac_{oracle.n}_{oracle.m}", {})

    def get_n_in(self):
        return 2

    def get_n_out(self):
        return 2

    def get_sparsity_in(self, i):
        return ca.Sparsity.dense(self.oracle.n, 1) if i == 0 else ca.Sparsity(0, 0)

    def get_sparsity_out(self, i):
        return ca.Sparsity.dense(self.oracle.m, 1) if i == 0 else ca.Sparsity.dense(self.oracle.m, self.oracle.n)

    def eval(self, arg):
        x, problem = np.asarray(arg[0], float).ravel(), self.oracle.problem
        return [problem.constraint_values(x), ca.DM(problem.constraint_jacobian(x))]


class _OracleHessian(ca.Callback):
    """``hess_lag`` of ``nlpsol``: (x, p, lam_f, lam_g) -> lam_f times the formulation's exact
    Hessian plus sum_k lam_g,k times the Hessian of constraint row k, its upper triangle."""

    def __init__(self, oracle: _Oracle):
        ca.Callback.__init__(self)
        self.oracle = oracle
        n = oracle.n
        self._sparsity = ca.Sparsity.upper(n)
        rows, cols = self._sparsity.get_triplet()
        self._entries = np.asarray(cols) * n + np.asarray(rows)  # the triangle's nonzeros, column-major
        self.construct(f"srt_oracle_hess_{n}", {})

    def get_n_in(self):
        return 4

    def get_n_out(self):
        return 1

    def get_sparsity_in(self, i):
        n, m = self.oracle.n, self.oracle.m
        return [ca.Sparsity.dense(n, 1), ca.Sparsity(0, 0), ca.Sparsity.dense(1, 1),
                ca.Sparsity.dense(m, 1) if m else ca.Sparsity(0, 1)][i]

    def get_sparsity_out(self, i):
        return self._sparsity

    def _values(self, x, lam_f, lam_g):
        x, problem = np.array(x, dtype=float).ravel(), self.oracle.problem
        if self.oracle.m:
            hessian = problem.lagrangian_hessian(x, lam_f, np.asarray(lam_g, float).ravel())
        else:
            hessian = lam_f * problem.hessian(x)
        return hessian.ravel()[self._entries]  # symmetric: row- and column-major agree

    def eval(self, arg):
        return [ca.DM(self._sparsity, self._values(arg[0], float(arg[2]), np.asarray(arg[3])))]

    def has_eval_buffer(self):
        return True

    def eval_buffer(self, arg, res):
        lam_f = np.frombuffer(arg[2], dtype=float)[0]
        lam_g = np.frombuffer(arg[3], dtype=float) if self.oracle.m else None
        np.frombuffer(res[0], dtype=float)[:] = self._values(np.frombuffer(arg[0], dtype=float), lam_f, lam_g)
        return 0
