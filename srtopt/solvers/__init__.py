"""Solver adapters (*how* a formulation is optimized), one contract: see :mod:`.base`.

``make_solver(kind, spec, **options)`` turns a spec into a configured adapter and
checks that it can run (an unknown or uninstalled solver raises
:class:`SolverUnavailableError`, a ``ValueError``, naming what to install and the
available alternatives -- at configuration time, never deep inside training).
``kind`` says which problems the adapter is for:

* "bn" -- branch-node NLPs (the BN subproblem, smooth or with nonsmooth penalties);
* "ln" -- the leaf problems (weighted least squares, QPs, NLPs);
* "wlr" -- the weighted logistic regression of the reassignment heuristic;
* "full" -- problems over all variables (ORRT's eq. formulation, E of eq. obj);
* "milp" -- the MILO tree (mixed-integer linear).

A spec is

* a name from ``SOLVERS[kind]``, e.g. ``"ipopt"``, ``"l-bfgs-b"``, ``"prox-gradient"``;
* ``"auto"``: per formulation, the first adapter of ``AUTO[kind]`` that accepts it
  (the defaults of the estimators: Newton with the exact Hessian on the one-node and small
  subtree BN subproblems of the SRT l2 model and L-BFGS-B on the others, exact weighted least
  squares for the squared loss's LN problem, exact Newton for the other smooth losses, ...);
* ``"pyomo/<name>"`` for any Pyomo ``SolverFactory`` solver, e.g. ``"pyomo/ipopt"``,
  ``"pyomo/highs"`` (LN), ``"pyomo/cbc"`` (MILP);
* either of these followed by options, ``"name:key=value,key=value"``, e.g.
  ``"ipopt:tol=1e-8,hessian=exact"`` (values are Python literals, else strings);
* a configured adapter object (anything with ``solve(problem, x0, *, deadline=None)``),
  passed through after the availability check.

Strings are the clone-safe, grid-searchable form for estimators
(``SoftRegressionTree(bn_solver="ipopt:tol=1e-8")``); adapter objects work too
(scikit-learn's ``clone`` deep-copies them; adapters expose ``get_params`` so
``set_params(bn_solver__tol=1e-8)`` works when ``bn_solver`` is such an object).
``register_solver(kind, name, factory)`` adds a solver of your own under a name.
"""

from __future__ import annotations

from .._spec import Registry, parse_spec
from .armijo import armijo_step
from .base import (
    CONSTRAINT_KINDS,
    Acceptance,
    Availability,
    Solver,
    SolverParams,
    SolverResult,
    SolverUnavailableError,
    TerminationCondition,
    acceptance,
    availability,
    signature_refusal,
    termination,
)
from .cyipopt_solver import IpoptCyipopt
from .ipopt import IPOPT_TOL, IpoptCasadi
from .least_squares import ExactLeastSquares, LsqrLeastSquares
from .logistic import SklearnLogistic
from .milp import HighsMILP, PyomoMILP, ScipMIQP, available_milp_solvers
from .newton import NewtonSolver
from .proximal import PROX_TOL, ProxGradient
from .pyomo_solver import PyomoSolver
from .qp import CasadiQP, HighsQP
from .scipy_hessian import ScipyHessian
from .scipy_minimize import ScipyMinimize
from .sqp import SQPSolver

BN_LBFGSB_TOL = 1e-6  # SciPy's ftol and gtol of L-BFGS-B in "auto" (docs/departures.md, "The BN step")

#: the default tolerances of the BN routes by name, each in its solver's own sense, such that every
#: one reaches the optimum of a captured BN subproblem to 1e-7 relative (docs/solvers.md, "Tolerances
#: of the routes"); "auto" keeps the budgets measured for training (BN_LBFGSB_TOL, IPOPT_TOL, PROX_TOL)
ROUTE_TOL = {"l-bfgs-b": 1e-10, "ipopt": 1e-7, "slsqp": 1e-12, "trust-exact": 1e-8, "prox-gradient": 1e-12}


def _route(name: str, factory):
    """``factory`` with the default tolerance ``ROUTE_TOL[name]`` (a given ``tol`` wins)."""
    return lambda tol=ROUTE_TOL[name], **kw: factory(tol=tol, **kw)


_NLP = {
    "ipopt": IpoptCasadi,
    "cyipopt": IpoptCyipopt,
    "slsqp": _route("slsqp", lambda **kw: ScipyMinimize("SLSQP", **kw)),
    "trust-exact": _route("trust-exact", lambda **kw: ScipyHessian("trust-exact", **kw)),
    "prox-gradient": ProxGradient,
    "sqp": SQPSolver,
}


def _registry(kind: str, entries: dict) -> Registry:
    """The registry of the solvers of ``kind``; an unknown name lists those available."""
    return Registry(f"{kind} solver", entries, listing=lambda: _listing(kind), error=SolverUnavailableError)


SOLVERS = {
    "bn": _registry("bn", {
        "l-bfgs-b": _route("l-bfgs-b", lambda **kw: ScipyMinimize("L-BFGS-B", **kw)),
        "newton": NewtonSolver,
        **_NLP,
        "ipopt": _route("ipopt", IpoptCasadi),
        "cyipopt": _route("ipopt", IpoptCyipopt),
        "prox-gradient": _route("prox-gradient", ProxGradient),
    }),
    "ln": _registry("ln", {
        "exact": ExactLeastSquares,
        "lsqr": LsqrLeastSquares,
        "highs": HighsQP,
        "qp": HighsQP,  # the QP route's preset: HiGHS, the fastest of the three (docs/solvers.md)
        "qpoases": lambda **kw: CasadiQP("qpoases", **kw),
        "osqp": lambda **kw: CasadiQP("osqp", **kw),
        "l-bfgs-b": lambda **kw: ScipyMinimize("L-BFGS-B", **kw),
        "newton": NewtonSolver,
        **_NLP,
    }),
    "wlr": _registry("wlr", {
        "newton": NewtonSolver,
        "prox-gradient": ProxGradient,
        "sklearn": SklearnLogistic,
        "ipopt": IpoptCasadi,
        "cyipopt": IpoptCyipopt,
        "l-bfgs-b": lambda **kw: ScipyMinimize("L-BFGS-B", **kw),
        "trust-exact": _NLP["trust-exact"],
    }),
    "full": _registry("full", {
        "l-bfgs-b": lambda **kw: ScipyMinimize("L-BFGS-B", **kw),
        **_NLP,
    }),
    "milp": _registry("milp", {
        "highs": HighsMILP,
        "appsi_highs": HighsMILP,
        "scip": ScipMIQP,
    }),
}

#: what "auto" tries, in order, per kind: (spec, smooth problems only?)
AUTO = {
    "bn": [("newton:max_blocks=1,needs_minimizer=True,penalties=l2", False),
           ("newton:max_variables=64,max_rows=3000,needs_minimizer=True,penalties=l2", False),
           (f"l-bfgs-b:tol={BN_LBFGSB_TOL}", False), (f"prox-gradient:tol={PROX_TOL}", False),
           (f"ipopt:tol={IPOPT_TOL}", False)],
    "ln": [("exact", False), ("newton", False), ("qp", False), ("ipopt:hessian=exact,tol=1e-10", False),
           ("prox-gradient", False)],
    "wlr": [("newton:tol=1e-8", False), ("prox-gradient", False)],
    "full": [("ipopt", True), ("prox-gradient", False)],
    "milp": [("highs", False)],
}

PYOMO_PREFIX = "pyomo/"


def register_solver(kind: str, name: str, factory) -> None:
    """Make ``name`` (and ``"name:key=value,..."``) a solver spec of ``kind``: ``factory(**options)``
    must return an adapter (anything with ``solve(problem, x0, *, deadline=None)``; see :mod:`.base`).

    Parameters
    ----------
    kind : str
        The problem kind ("bn", "ln", "wlr", "full", "milp"; a new kind is created).
    name : str
        The solver's name (stripped and lower-cased; an existing entry is replaced).
    factory : callable
        ``factory(**options)`` returning a solver adapter.

    Raises
    ------
    ValueError
        If ``factory`` is not callable.

    Examples
    --------
    >>> register_solver("bn", "my-lbfgs", lambda **kw: ScipyMinimize("L-BFGS-B", **kw))
    >>> make_solver("bn", "my-lbfgs:tol=1e-6").tol
    1e-06
    >>> del SOLVERS["bn"]["my-lbfgs"]
    """
    SOLVERS.setdefault(kind, _registry(kind, {})).register(name, factory)


class Auto(Solver):
    """The adapter of ``AUTO[kind]`` that accepts the formulation at hand (the first in that
    list); the shared options given here (those not None, verbosity if nonzero) configure
    every candidate.  ``specs``, a list of solver specs, replaces ``AUTO[kind]`` (e.g. the
    previous default BN choice, ``Auto("bn", specs=["newton:max_blocks=1,needs_minimizer=True,
    penalties=l2", "l-bfgs-b:tol=1e-6"])``).

    Parameters
    ----------
    kind : {"bn", "ln", "wlr", "full", "milp"}, default="bn"
        The problem kind, a key of ``AUTO``.
    tol : float or None, default=None
        Convergence tolerance given to every candidate (None: each candidate's own).
    max_iter : int or None, default=None
        Iteration limit given to every candidate (None: each candidate's own).
    time_limit : float or None, default=None
        Seconds for one solve, given to every candidate (None: each candidate's own).
    verbosity : int, default=0
        Given to every candidate when nonzero.
    specs : list of str or None, default=None
        Solver specs tried in order instead of ``AUTO[kind]``; an entry "auto" stands for ``AUTO[kind]``'s
        (``["sqp", "auto"]``: SQP first, then the defaults).

    Raises
    ------
    ValueError
        If ``kind`` has no automatic choice, or ``specs`` is a string or empty.
    """

    name = "auto"
    takes_constraints = CONSTRAINT_KINDS  # each candidate is asked (its own acceptance)

    def __init__(self, kind="bn", tol=None, max_iter=None, time_limit=None, verbosity=0, specs=None):
        if kind not in AUTO:
            raise ValueError(f"no automatic choice for solver kind {kind!r}; use one of {sorted(AUTO)}")
        if specs is not None and (isinstance(specs, str) or not specs):
            raise ValueError(f"specs must be a non-empty list of solver specs, got {specs!r}")
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.kind, self.specs = kind, specs
        self._built: dict = {}
        self._last = (None, None)  # (problem, adapter) of the last choice: accepts then solve

    @property
    def _listed(self) -> list:
        if self.specs is None:
            return AUTO[self.kind]
        return [entry for spec in self.specs for entry in (AUTO[self.kind] if spec == "auto" else [(spec, False)])]

    def _candidate(self, i: int):
        """The i-th adapter of the list, built on first use (a fit builds only those it reaches)."""
        if i not in self._built:
            shared = {k: v for k, v in (("tol", self.tol), ("max_iter", self.max_iter),
                                        ("time_limit", self.time_limit)) if v is not None}
            if self.verbosity:
                shared["verbosity"] = self.verbosity
            spec, smooth = self._listed[i]
            self._built[i] = (make_solver(self.kind, spec, **shared), smooth)
        return self._built[i]

    @property
    def candidates(self) -> list:
        """[(adapter, smooth only?)] in the order of ``AUTO[kind]``."""
        return [self._candidate(i) for i in range(len(self._listed))]

    def choose(self, problem):
        """The adapter that solves ``problem`` (None if no candidate accepts it)."""
        if self._last[0] is problem:
            return self._last[1]
        nonsmooth = bool(getattr(problem, "nonsmooth", ()))
        chosen = None
        for i in range(len(self._listed)):
            adapter, smooth_only = self._candidate(i)
            if not (smooth_only and nonsmooth) and acceptance(adapter, problem):
                chosen = adapter
                break
        self._last = (problem, chosen)
        return chosen

    def accepts(self, problem) -> Acceptance:
        if self.choose(problem) is not None:
            return Acceptance(True)
        reasons = "; ".join(f"{a.name}: {acceptance(a, problem).reason or 'smooth problems only'}"
                            for a, _ in self.candidates)
        return Acceptance(False, f"no automatic {self.kind} solver accepts it ({reasons})")

    def version(self) -> str:
        return ", ".join(f"{a.name}: {a.version()}" for a, _ in self.candidates if hasattr(a, "version"))

    def solve(self, problem, x0=None, *, deadline=None) -> SolverResult:
        """The chosen adapter's ``solve`` (which makes the checks of :meth:`Solver.solve`, with this
        ``time_limit`` among its options); a ValueError when no candidate accepts ``problem``."""
        adapter = self.choose(problem)
        if adapter is None:
            raise ValueError(f"auto {self.kind} solver: {self.accepts(problem).reason}")
        return adapter.solve(problem, x0, deadline=deadline)


def available_solvers(kind: str) -> dict[str, Availability]:
    """Every registered solver of ``kind`` with its availability (and install hint).

    Parameters
    ----------
    kind : str
        The problem kind, a key of ``SOLVERS`` ("bn", "ln", "wlr", "full", "milp").

    Returns
    -------
    dict of str to Availability
        Solver name -> its availability, truthy iff usable (``install`` says what is missing; a
        factory that raises is unavailable with the error as reason).

    Raises
    ------
    ValueError
        If ``kind`` is unknown.
    """
    if kind not in SOLVERS:
        raise ValueError(f"unknown solver kind {kind!r}; use one of {sorted(SOLVERS)}")
    out = {}
    for name, factory in SOLVERS[kind].items():
        try:
            out[name] = availability(factory())
        except Exception as exc:
            out[name] = Availability(False, f"{type(exc).__name__}: {exc}")
    return out


def _listing(kind: str) -> str:
    ok = [name for name, a in available_solvers(kind).items() if a]
    return f"available: {', '.join(ok)}, auto (or '{PYOMO_PREFIX}<SolverFactory name>')"


def _factory(kind: str, spec: str):
    name = parse_spec(spec)[0]
    pyomo_name = spec.partition(":")[0].strip()
    if name == "auto":
        return lambda **kw: Auto(kind, **kw)
    if name.startswith(PYOMO_PREFIX) and len(name) > len(PYOMO_PREFIX):
        pyomo_name = pyomo_name[len(PYOMO_PREFIX):]
        return (lambda **kw: PyomoMILP(pyomo_name, **kw)) if kind == "milp" else \
            (lambda **kw: PyomoSolver(pyomo_name, **kw))
    if kind == "milp" and name not in SOLVERS[kind]:  # any Pyomo SolverFactory name
        return lambda **kw: PyomoMILP(pyomo_name, **kw)
    return SOLVERS[kind].factory(spec)


def make_solver(kind: str, spec, **options):
    """A checked solver adapter for ``kind`` from a spec (see the module docstring); ``options``
    override the spec's.

    Parameters
    ----------
    kind : str
        The problem kind, a key of ``SOLVERS`` ("bn", "ln", "wlr", "full", "milp").
    spec : str or solver object
        A spec string ("name", "auto", "pyomo/<name>", each optionally with ":key=value,...") or an
        adapter object (anything with ``solve``), which is returned after the availability check.
        Either must follow the contract's signature (:func:`signature_refusal`).
    **options
        Keyword options of the adapter, overriding those of the spec (ignored for an object).

    Returns
    -------
    Solver
        The configured, available adapter.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, the options are not accepted by the adapter or its ``solve`` does
        not take the deadline.
    SolverUnavailableError
        If the solver is unknown or not installed (a ValueError naming the available ones).

    Examples
    --------
    >>> make_solver("bn", "ipopt:tol=1e-8").name
    'ipopt'
    >>> make_solver("bn", "no-such-solver")
    Traceback (most recent call last):
    ...
    srtopt.solvers.base.SolverUnavailableError: unknown bn solver 'no-such-solver'; available: ...
    """
    if kind not in SOLVERS:
        raise ValueError(f"unknown solver kind {kind!r}; use one of {sorted(SOLVERS)}")
    if hasattr(spec, "solve"):
        solver = spec
    else:
        if not isinstance(spec, str):
            raise SolverUnavailableError(f"unknown {kind} solver {spec!r}; {_listing(kind)}")
        factory = _factory(kind, spec)
        try:
            solver = factory(**{**parse_spec(spec)[1], **options})
        except TypeError as exc:
            raise ValueError(f"bad options for {kind} solver {parse_spec(spec)[0]!r}: {exc}") from exc
    status = availability(solver)
    if not status:
        label = getattr(solver, "name", type(solver).__name__)
        raise SolverUnavailableError(f"{kind} solver {label!r} is not available: {status.install}. "
                                     f"{_listing(kind)}")
    refusal = signature_refusal(solver)
    if refusal:
        raise ValueError(f"{kind} solver: {refusal}")
    return solver


__all__ = ["AUTO", "ROUTE_TOL", "SOLVERS", "Acceptance", "Auto", "Availability", "CasadiQP", "ExactLeastSquares", "HighsMILP",
           "HighsQP", "IpoptCasadi", "IpoptCyipopt", "LsqrLeastSquares", "NewtonSolver", "ProxGradient",
           "PyomoMILP", "PyomoSolver", "ScipMIQP", "ScipyHessian", "ScipyMinimize", "SklearnLogistic", "Solver",
           "SolverParams", "SolverResult", "SolverUnavailableError", "TerminationCondition", "acceptance",
           "armijo_step", "available_milp_solvers", "available_solvers", "make_solver", "parse_spec",
           "register_solver", "termination"]
