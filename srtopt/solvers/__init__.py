"""Solver adapters (*how* a formulation is optimized), one interface: see :mod:`.base`.

``make_solver(kind, spec, **options)`` turns a spec into a configured adapter and
checks that it can run (an unknown or uninstalled solver raises
:class:`SolverUnavailableError`, a ``ValueError``, naming what to install and the
available alternatives -- at configuration time, never deep inside training).
``kind`` is "bn" (branch-node NLPs), "ln" (leaf least squares / QP) or "wlr" (the
reassignment heuristic's logistic regression).

A spec is

* a name from ``SOLVERS[kind]``, e.g. ``"ipopt"``, ``"cyipopt"``, ``"slsqp"``;
* ``"pyomo/<name>"`` for any Pyomo ``SolverFactory`` solver, e.g. ``"pyomo/ipopt"``,
  ``"pyomo/appsi_highs"`` (LN);
* either of these followed by options, ``"name:key=value,key=value"``, e.g.
  ``"ipopt:tol=1e-8,hessian=exact"`` (values are Python literals, else strings);
* a configured adapter object (anything with ``solve``), passed through after the
  availability check.

Strings are the clone-safe, grid-searchable form for estimators
(``SoftRegressionTree(bn_solver="ipopt:tol=1e-8")``); adapter objects work too
(scikit-learn's ``clone`` copies them; the new adapters expose ``get_params`` so
``set_params(bn_solver__tol=1e-8)`` works when ``bn_solver`` is such an object).
"""

from __future__ import annotations

import ast

from .armijo import armijo_step
from .base import (Availability, SolverParams, SolverResult, SolverUnavailableError, TerminationCondition,
                   availability)
from .cyipopt_solver import IpoptCyipopt
from .ipopt import IpoptCasadi
from .least_squares import ExactLeastSquares, LsqrLeastSquares
from .logistic import SklearnLogistic
from .newton import NewtonSolver
from .pyomo_solver import PyomoSolver
from .qp import CasadiQP, HighsQP
from .scipy_hessian import ScipyHessian
from .scipy_minimize import ScipyMinimize

BN_LBFGSB_TOL = 1e-9  # SciPy's ftol and gtol of the default BN solver

SOLVERS = {
    "bn": {
        # the default: a tight tolerance lets the BN step leave the flat regions of E (docs/design.md)
        "l-bfgs-b": lambda tol=BN_LBFGSB_TOL, **kw: ScipyMinimize("L-BFGS-B", tol=tol, **kw),
        "ipopt": IpoptCasadi,
        "cyipopt": IpoptCyipopt,
        "slsqp": lambda **kw: ScipyMinimize("SLSQP", **kw),
        "trust-exact": lambda **kw: ScipyHessian("trust-exact", **kw),
        "trust-krylov": lambda **kw: ScipyHessian("trust-krylov", **kw),
    },
    "ln": {
        "exact": ExactLeastSquares,
        "lsqr": LsqrLeastSquares,
        "qpoases": lambda **kw: CasadiQP("qpoases", **kw),
        "osqp": lambda **kw: CasadiQP("osqp", **kw),
        "highs": HighsQP,
    },
    "wlr": {
        "newton": NewtonSolver,
        "sklearn": SklearnLogistic,
        "ipopt": IpoptCasadi,
        "cyipopt": IpoptCyipopt,
        "l-bfgs-b": lambda **kw: ScipyMinimize("L-BFGS-B", **kw),
        "trust-exact": lambda **kw: ScipyHessian("trust-exact", **kw),
    },
}

PYOMO_PREFIX = "pyomo/"


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"name:key=value,key=value"`` -> (name, {key: value}); values are literals or strings."""
    name, _, rest = spec.partition(":")
    options = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"bad solver option {item!r} in {spec!r}; expected key=value")
        try:
            options[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            options[key.strip()] = value.strip()
    return name.strip().lower(), options


def available_solvers(kind: str) -> dict[str, Availability]:
    """Every registered solver of ``kind`` with its availability (and install hint)."""
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
    return f"available: {', '.join(ok)} (or '{PYOMO_PREFIX}<SolverFactory name>')"


def make_solver(kind: str, spec, **options):
    """A checked solver adapter for ``kind`` from a spec (see the module docstring).

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
        name, parsed = parse_spec(spec)
        parsed.update(options)
        if name.startswith(PYOMO_PREFIX) and len(name) > len(PYOMO_PREFIX):
            factory = lambda **kw: PyomoSolver(spec.partition(":")[0].strip()[len(PYOMO_PREFIX):], **kw)  # noqa: E731
        elif name in SOLVERS[kind]:
            factory = SOLVERS[kind][name]
        else:
            raise SolverUnavailableError(f"unknown {kind} solver {spec!r}; {_listing(kind)}")
        try:
            solver = factory(**parsed)
        except TypeError as exc:
            raise ValueError(f"bad options for {kind} solver {name!r}: {exc}") from exc
    status = availability(solver)
    if not status:
        label = getattr(solver, "name", type(solver).__name__)
        raise SolverUnavailableError(f"{kind} solver {label!r} is not available: {status.install}. "
                                     f"{_listing(kind)}")
    return solver


__all__ = ["SOLVERS", "Availability", "CasadiQP", "ExactLeastSquares", "HighsQP", "IpoptCasadi",
           "IpoptCyipopt", "NewtonSolver", "PyomoSolver", "ScipyHessian", "ScipyMinimize", "SklearnLogistic",
           "SolverParams", "SolverResult", "SolverUnavailableError", "TerminationCondition",
           "armijo_step", "available_solvers", "make_solver", "parse_spec"]
