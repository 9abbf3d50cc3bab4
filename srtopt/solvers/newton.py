"""Newton's method with an exact Hessian for small smooth problems: the WLR proxy of eq.
reshuffle and the initialization's logistic regressions (convex), and the one-node BN
subproblems (nonconvex: a modified Newton step).

The WLR objective is strictly convex when its ridge ``alpha`` is positive, with p + 1
variables: a damped Newton step (backtracking on the objective) reaches machine-level
stationarity in a handful of iterations, where scikit-learn's L-BFGS stops at its
tolerance after more work (``benchmarks/perf/speed.py``).
"""

from __future__ import annotations

import numpy as np

from .base import Acceptance, Solver, SolverResult, should_stop, smooth_problem
from ..linalg import cholesky_solve

EIGENVALUE_FLOOR = 1e-8  # relative floor of the modified Hessian's eigenvalues (nonconvex problems)


class NewtonSolver(Solver):
    """Damped Newton on a formulation with ``evaluate(x) -> (f, g)`` and ``hessian(x)``.

    Stops when the Newton decrement g^T H^-1 g / 2 falls below ``tol`` (relative to
    1 + |f|) or after ``max_iter`` iterations; Ctrl-C and the deadline (``time_limit`` or the
    one ``solve`` is given) are checked at each iteration.  On a nonconvex problem the step is a
    modified Newton step (:func:`_newton_step`).

    Options that restrict what it accepts (the BN default tries
    ``"newton:max_blocks=1,needs_minimizer=True,penalties=l2"``, then the same with
    ``max_variables`` and ``max_rows`` instead of ``max_blocks``, and leaves the rest to
    L-BFGS-B; docs/departures.md, "The BN step"):

    * ``max_blocks``: working sets of at most this many nodes (NODEC-DR's one-node
      subproblems);
    * ``max_variables``, ``max_rows``: at most this many variables, rows (``n_rows``); on
      larger subtree subproblems the Hessian's node pairs cost more than they save;
    * ``needs_minimizer``: not a subproblem that declares ``has_minimizer`` False (plain
      SRT, where Newton runs the splits to saturation);
    * ``penalties``: the names of the penalty terms allowed on the block, e.g. ``"l2"``
      (the SRT l2 model; feature_l1's majorizer stays with L-BFGS-B, as measured).
    """

    name = "newton"
    python_loop = True  # Ctrl-C raises in its loop (solve_interruptibly)
    takes_constraints = frozenset({"fixed"})  # variables fixed by the constraints are eliminated

    def __init__(self, tol=1e-12, max_iter=50, max_blocks=None, max_variables=None, max_rows=None,
                 needs_minimizer=False, penalties=None, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.max_blocks, self.max_variables, self.max_rows = max_blocks, max_variables, max_rows
        self.needs_minimizer, self.penalties = needs_minimizer, penalties

    def accepts(self, problem) -> Acceptance:
        blocks = len(getattr(problem, "working", ()))
        if self.max_blocks is not None and blocks > self.max_blocks:
            return Acceptance(False, f"its working set has {blocks} nodes, more than max_blocks={self.max_blocks}")
        variables = np.size(problem.start()) if self.max_variables is not None else 0
        if self.max_variables is not None and variables > self.max_variables:
            return Acceptance(False, f"it has {variables} variables, more than max_variables={self.max_variables}")
        rows = getattr(problem, "n_rows", None)
        if self.max_rows is not None and rows is not None and rows > self.max_rows:
            return Acceptance(False, f"it has {rows} rows, more than max_rows={self.max_rows}")
        if self.needs_minimizer and getattr(problem, "has_minimizer", True) is False:
            return Acceptance(False, "it has no minimizer (no l2 term on the splits: the splits would saturate)")
        if self.penalties is not None:
            allowed = {self.penalties} if isinstance(self.penalties, str) else set(self.penalties)
            names = set(getattr(problem, "penalty_names", lambda: ())())
            if not names <= allowed:
                return Acceptance(False, f"its penalties {sorted(names)} are not among penalties={sorted(allowed)}")
        return smooth_problem(problem, "hessian", "exact Hessian (hessian(x))")

    def _solve(self, problem, x0, deadline) -> SolverResult:
        x, free = _fix(problem, x0)
        f, g = problem.evaluate(x)
        status, it = "iteration limit", 0
        for it in range(1, self.max_iter + 1):
            if should_stop(deadline):
                status = "stopped"
                break
            step = _step(problem, x, g, free)
            decrement = float(g @ step)
            if decrement / 2 <= self.tol * (1.0 + abs(f)):
                status = "solved"
                break
            moved = _backtrack(problem, x, f, decrement, step)
            if moved is None:  # no decrease along the Newton direction: stationary to rounding
                status = "solved"
                break
            x, f, g = moved
        return self._result(x, f, status, it)


def _fix(problem, x0):
    """(x0 with the variables the problem's bounds fix set to their values, the mask of the free
    variables or None when none is fixed): Newton steps only in the free ones."""
    x = np.array(x0, dtype=float)
    bounds = getattr(problem, "bounds", lambda: None)()
    fixed = None if bounds is None else bounds[0] == bounds[1]
    if fixed is None or not fixed.any():
        return x, None
    x[fixed] = bounds[0][fixed]
    return x, ~fixed


def _step(problem, x, g, free):
    """The Newton step at x: block by block when the problem's Hessian is block diagonal
    (``hessian_blocks(x)``: its diagonal blocks, e.g. one per leaf of an LN subproblem), else
    from ``hessian(x)``."""
    blocks = getattr(problem, "hessian_blocks", None)
    if blocks is None:
        return _newton_step(problem.hessian(x), g, free)
    step, start = np.empty_like(g), 0
    for H in blocks(x):
        part = slice(start, start + len(H))
        step[part] = _newton_step(H, g[part], None if free is None else free[part])
        start = part.stop
    return step


def _newton_step(H, g, free=None):
    """H^-1 g by Cholesky (in the ``free`` variables only, 0 in the others, when a mask is given).
    When H is not positive definite (a nonconvex problem: the BN subproblem), the step of H with its
    eigenvalues lambda replaced by max(|lambda|, EIGENVALUE_FLOOR max |lambda|), a descent direction
    (a modified Newton step)."""
    if free is not None:
        step = np.zeros_like(g)
        if free.any():
            step[free] = _newton_step(H[np.ix_(free, free)], g[free])
        return step
    step = cholesky_solve(H, g)
    if step is not None:
        return step
    if not (np.isfinite(H).all() and np.isfinite(g).all()):
        raise np.linalg.LinAlgError("non-finite Hessian or gradient")  # the solve fails, a fallback follows
    lam, V = np.linalg.eigh(H)
    scale = np.abs(lam).max()
    if scale == 0.0:
        return g
    return V @ ((V.T @ g) / np.maximum(np.abs(lam), EIGENVALUE_FLOOR * scale))


def _backtrack(problem, x, f, decrement, step, gamma=1e-4):
    """(x, f, g) after an Armijo step along -step, or None when 40 halvings found no decrease."""
    alpha = 1.0
    for _ in range(40):
        trial = x - alpha * step
        f_trial, g_trial = problem.evaluate(trial)
        if f_trial <= f - gamma * alpha * decrement:
            return trial, f_trial, g_trial
        alpha *= 0.5
    return None
