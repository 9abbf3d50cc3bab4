"""SciPy ``minimize`` (L-BFGS-B, SLSQP, ...) fed the exact value and gradient of the
formulation's numpy reference evaluator.

SLSQP takes every kind of constraint a formulation carries: its bounds, and its constraint rows
lower <= g(x) <= upper as SciPy's equality (lower = upper) and inequality constraints with their
exact Jacobians.  L-BFGS-B also accepts a formulation whose nonsmooth part is a weighted l1 term
(``split_l1``): it solves the variable split of :class:`~.reformulations.VariableSplit`
with bounds, which gives exact zeros (docs/formulations.md, "Penalties and the method for the nonsmooth ones")."""

from __future__ import annotations

import numpy as np
import scipy
from scipy.optimize import OptimizeResult, minimize

from .._announce import say
from .base import Acceptance, Solver, SolverResult, should_stop, smooth_problem, termination
from .reformulations import VariableSplit

STOPPED = 99  # SciPy's status when a callback stops minimize

BOUNDED_METHODS = ("l-bfgs-b",)  # methods that take the variable split of an l1 term
#: the kinds of constraints each method takes (:func:`~.base.acceptance`)
TAKES_CONSTRAINTS = {"l-bfgs-b": frozenset({"fixed", "bounds"}),
                     "slsqp": frozenset({"fixed", "bounds", "linear", "nonlinear"})}


class ScipyMinimize(Solver):
    """``scipy.optimize.minimize`` with ``jac=True`` on ``problem.evaluate``.

    ``tol`` is SciPy's ``tol`` (for L-BFGS-B its ftol and gtol, for SLSQP its ftol), ``max_iter``
    its ``maxiter``; SLSQP also gets the formulation's constraint rows (module docstring).  A
    formulation with ``variable_scale()`` (the typical size of each variable) is solved in x / scale (L-BFGS-B is not invariant to the variables'
    scales); the deadline (``time_limit`` or the one ``solve`` is given) and Ctrl-C are polled in the
    iteration callback;
    ``verbosity`` >= 1 prints one line per solve (SciPy's own printing options are
    deprecated for L-BFGS-B)."""

    def __init__(self, method="L-BFGS-B", tol=None, max_iter=200, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.method = method
        self.name = method.lower()
        self.python_loop = self.name == "l-bfgs-b"  # SciPy drives L-BFGS-B from Python: Ctrl-C raises there
        self.family = f"scipy:{self.name}"
        self.takes_constraints = TAKES_CONSTRAINTS.get(self.name, frozenset())

    def version(self) -> str:
        return f"scipy {scipy.__version__}"

    def accepts(self, problem) -> Acceptance:
        smooth = smooth_problem(problem)
        if smooth or self.name not in BOUNDED_METHODS or not hasattr(problem, "l1_weights"):
            return smooth
        if problem.l1_weights() is None:
            return Acceptance(False, f"{smooth.reason}; {self.name} takes only weighted l1 terms (split_l1), by "
                                     f"a variable split")
        return Acceptance(True)

    def _solve(self, problem, x0, deadline) -> SolverResult:
        split = VariableSplit(problem) if getattr(problem, "nonsmooth", ()) else None
        if split is not None:
            res = minimize_until_asked(split.evaluate, split.y_of(x0), deadline, method=self.method, tol=self.tol,
                                       options={"maxiter": self.max_iter}, bounds=list(zip(*split.bounds)))
            x = split.x_of(res.x)
            f = problem.evaluate_smooth(x)[0] + problem.nonsmooth_value(x)
        else:
            scale = np.asarray(getattr(problem, "variable_scale", lambda: 1.0)(), float)
            bounds = getattr(problem, "bounds", lambda: None)()
            box = None if bounds is None else list(zip(*np.broadcast_arrays(bounds[0] / scale, bounds[1] / scale)))
            rows = scaled_rows(problem, scale) if getattr(problem, "n_constraints", 0) else ()
            res = minimize_until_asked(lambda v: _scaled(problem.evaluate(v * scale), scale), np.asarray(x0) / scale,
                                       deadline, method=self.method, tol=self.tol, options={"maxiter": self.max_iter},
                                       **({} if box is None else {"bounds": box}),
                                       **({"constraints": rows} if rows else {}))
            x, f = np.asarray(res.x) * scale, float(res.fun)
        if self.verbosity:
            say(f"{self.name}: {res.message} after {res.get('nit', 0)} iterations, f = {f:.10g}")
        return SolverResult(x, f, bool(res.success), str(res.message), int(res.get("nit", 0)), 0.0, res,
                            termination(self.family, res.status, res.success), self.name)


def _scaled(value_and_gradient, scale):
    """(f, gradient) in the variables v = x / scale: the gradient times scale."""
    f, g = value_and_gradient
    return f, g * scale


def scaled_rows(problem, scale) -> list[dict]:
    """The constraint rows lower <= g(x) <= upper of ``problem`` as SciPy constraints in the variables
    v = x / scale: an equality g_k(x) - lower_k = 0 where lower_k = upper_k, else an inequality
    g_k(x) - lower_k >= 0 per finite lower bound and upper_k - g_k(x) >= 0 per finite upper one,
    each with its exact Jacobian."""
    lower, upper = problem.constraint_bounds()
    equal = lower == upper
    below, above = ~equal & np.isfinite(lower), ~equal & np.isfinite(upper)
    sign = np.concatenate([np.ones(below.sum()), -np.ones(above.sum())])
    offset = np.concatenate([lower[below], upper[above]])

    def values(v, pick):
        return problem.constraint_values(v * scale)[pick]

    def jacobian(v, pick):
        return problem.constraint_jacobian(v * scale)[pick] * scale

    rows = []
    if equal.any():
        rows.append({"type": "eq", "fun": lambda v: values(v, equal) - lower[equal],
                     "jac": lambda v: jacobian(v, equal)})
    if below.any() or above.any():
        rows.append({"type": "ineq",
                     "fun": lambda v: sign * (np.concatenate([values(v, below), values(v, above)]) - offset),
                     "jac": lambda v: sign[:, None] * np.vstack([jacobian(v, below), jacobian(v, above)])})
    return rows


def minimize_until_asked(fun, x0, deadline, **options) -> OptimizeResult:
    """``scipy.optimize.minimize(fun, x0, jac=True, **options)`` that returns its current
    iterate (``success`` False, status :data:`STOPPED`) once :func:`~srtopt.solvers.base.should_stop`
    (Ctrl-C or ``deadline``).  The callback raises StopIteration; SciPy >= 1.11 returns its
    current iterate then (status 99), older versions and SLSQP let it escape, and the last
    iterate the callback saw is returned here."""
    seen = {"x": np.asarray(x0, float), "nit": 0}

    def callback(x, *_):
        seen["x"], seen["nit"] = np.array(getattr(x, "x", x), float), seen["nit"] + 1
        if should_stop(deadline):
            raise StopIteration

    try:
        return minimize(fun, seen["x"], jac=True, callback=callback, **options)
    except StopIteration:
        return OptimizeResult(x=seen["x"], fun=float(fun(seen["x"])[0]), success=False, status=STOPPED,
                              nit=seen["nit"], message="stopped: Ctrl-C or the time limit")
