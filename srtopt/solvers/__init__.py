"""Solver adapters (*how* a formulation is optimized), one interface: see :mod:`.base`.

``make_solver(kind, spec, **options)`` turns a name into a configured adapter;
``kind`` is "bn" (branch-node NLPs), "ln" (leaf least squares) or "wlr"
(the reassignment heuristic's logistic regression).  A configured object is
passed through unchanged.
"""

from __future__ import annotations

from .armijo import armijo_step
from .base import SolverResult
from .ipopt import IpoptCasadi
from .least_squares import ExactLeastSquares
from .logistic import SklearnLogistic
from .scipy_minimize import ScipyMinimize

SOLVERS = {
    "bn": {
        "ipopt": IpoptCasadi,
        "l-bfgs-b": lambda **kw: ScipyMinimize("L-BFGS-B", **kw),
        "slsqp": lambda **kw: ScipyMinimize("SLSQP", **kw),
    },
    "ln": {"exact": ExactLeastSquares},
    "wlr": {
        "sklearn": SklearnLogistic,
        "ipopt": IpoptCasadi,
        "l-bfgs-b": lambda **kw: ScipyMinimize("L-BFGS-B", **kw),
    },
}


def make_solver(kind: str, spec, **options):
    """A solver adapter for ``kind`` from a name in ``SOLVERS[kind]`` or an object with ``solve``."""
    if hasattr(spec, "solve"):
        return spec
    names = SOLVERS[kind]
    if not isinstance(spec, str) or spec.lower() not in names:
        raise ValueError(f"unknown {kind} solver {spec!r}; available: {', '.join(sorted(names))}")
    return names[spec.lower()](**options)


__all__ = ["SOLVERS", "ExactLeastSquares", "IpoptCasadi", "ScipyMinimize", "SklearnLogistic",
           "SolverResult", "armijo_step", "make_solver"]
