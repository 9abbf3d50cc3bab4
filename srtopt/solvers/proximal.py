"""Proximal gradient for formulations with nonsmooth penalty terms (split_l1, feature_l1).

A formulation f(x) + h(x) with smooth f (``evaluate_smooth``) and a nonsmooth h whose
proximal operator is known (``prox``, ``nonsmooth_value``) is minimised by the
proximal-gradient iteration

    z = prox_{alpha h}(x - alpha grad f(x)),

with Barzilai-Borwein step lengths alpha (s.s / s.y of the last step) and backtracking
until F(z) <= max(F of the last ``MEMORY`` iterates) - sigma / (2 alpha) ||z - x||^2
(SpaRSA, Wright, Nowak and Figueiredo 2009, with its nonmonotone acceptance: the BB
steps are taken far more often than under a monotone test).  Exact zeros come from
the proximal operators (soft-thresholding, block soft-thresholding); the best iterate
is returned, so F never ends above F(x0).  A smooth formulation is solved the same way with the identity as prox
(plain gradient descent with BB steps).
"""

from __future__ import annotations

import numpy as np

from .base import Acceptance, Solver, SolverResult, constraint_kinds, should_stop

SIGMA = 1e-4  # sufficient-decrease constant
MEMORY = 5  # iterates whose largest F the acceptance test compares with
STEP_RANGE = (1e-12, 1e12)  # safeguard of the Barzilai-Borwein step
PROX_TOL = 1e-10  # the default tolerance (the "prox-gradient" BN route by name takes a tighter one)


class ProxGradient(Solver):
    """Monotone proximal gradient with Barzilai-Borwein steps (module docstring).

    Stops when the relative decrease of F in an iteration falls below ``tol`` and the
    proximal-gradient mapping ||z - x|| / alpha below ``sqrt(tol)``, from the second iteration
    on (the first step's length is a guess, 1 / max|grad f|, not a curvature estimate: on a flat
    objective its decrease says nothing), or after ``max_iter`` iterations; the deadline
    (``time_limit`` or the one ``solve`` is given) and Ctrl-C are checked at each iteration.
    """

    name = "prox-gradient"
    stops_on_interrupt = True
    #: bounds enter the proximal operator (:func:`_bounded`)
    takes_constraints = frozenset({"fixed", "bounds"})

    def __init__(self, tol=PROX_TOL, max_iter=2000, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)

    def accepts(self, problem) -> Acceptance:
        if not hasattr(problem, "evaluate"):
            return Acceptance(False, f"{type(problem).__name__} has no evaluate(x)")
        if getattr(problem, "nonsmooth", ()) and not all(hasattr(problem, a) for a in
                                                         ("evaluate_smooth", "prox", "nonsmooth_value")):
            return Acceptance(False, f"{type(problem).__name__} has nonsmooth terms but no prox")
        if "bounds" in constraint_kinds(problem) and getattr(problem, "nonsmooth", ()) \
                and getattr(problem, "l1_weights", lambda: None)() is None:
            return Acceptance(False, "its variable bounds and its nonsmooth term (not a weighted l1 term) have no "
                                     "joint proximal operator here")
        return Acceptance(True)

    def _solve(self, problem, x0, deadline) -> SolverResult:
        if getattr(problem, "nonsmooth", ()):
            smooth, prox, h = problem.evaluate_smooth, problem.prox, problem.nonsmooth_value
        else:
            smooth, prox, h = problem.evaluate, (lambda v, step: v), (lambda x: 0.0)
        bounds = getattr(problem, "bounds", lambda: None)()
        if bounds is not None:
            prox = _bounded(prox, *bounds)
        x = prox(np.array(x0, dtype=float), 0.0) if bounds is not None else x0.copy()
        f, g = smooth(x)
        F = f + h(x)
        recent, best = [F], (F, x)
        alpha, status, it = 1.0 / max(1.0, float(np.max(np.abs(g), initial=0.0))), "iteration limit", 0
        for it in range(1, self.max_iter + 1):
            if should_stop(deadline):
                status = "stopped"
                break
            step = _backtrack(smooth, prox, h, x, g, max(recent), alpha)
            if step is None:
                status = "line search failed" if np.linalg.norm(prox(x - 1e-12 * g, 1e-12) - x) > 0 else "solved"
                break
            z, fz, gz, Fz, alpha_used = step
            s, y = z - x, gz - g
            decrease, mapping = F - Fz, np.linalg.norm(s) / alpha_used
            x, f, g, F = z, fz, gz, Fz
            recent = (recent + [F])[-MEMORY:]
            if F < best[0]:
                best = (F, x)
            if it > 1 and abs(decrease) <= self.tol * max(1.0, abs(F)) and mapping <= np.sqrt(self.tol):
                status = "solved"
                break
            sy = float(s @ y)
            alpha = float(np.clip(s @ s / sy, *STEP_RANGE)) if sy > 0 else min(2 * alpha_used, STEP_RANGE[1])
        return self._result(best[1], best[0], status, it)


def _bounded(prox, lower, upper):
    """The proximal operator of the nonsmooth part plus the indicator of lower <= x <= upper: the
    fixed variables (lower = upper) set before and after ``prox``, the result clipped.  Exact for
    a weighted l1 term (separable: clipping its prox is the prox of the sum) and for fixings at 0
    under the group norms of feature_l1 (a zero coordinate adds nothing to its group's norm)."""
    fixed = lower == upper

    def bounded(v, step):
        v = np.where(fixed, lower, v)
        return np.clip(prox(v, step), lower, upper)
    return bounded


def _backtrack(smooth, prox, h, x, g, F_ref, alpha, max_halvings=60):
    """(z, f(z), grad f(z), F(z), alpha) of the first halving of alpha with
    F(z) <= F_ref - sigma / (2 alpha) ||z - x||^2, or None when there is none (x is
    stationary to rounding)."""
    for _ in range(max_halvings):
        z = prox(x - alpha * g, alpha)
        d = z - x
        if not np.any(d):
            return None
        fz, gz = smooth(z)
        Fz = fz + h(z)
        if Fz <= F_ref - SIGMA / (2 * alpha) * (d @ d):
            return z, fz, gz, Fz, alpha
        alpha *= 0.5
    return None
