"""Sequential quadratic programming with the exact Hessian of the Lagrangian, for smooth subproblems with a few
constraint rows and free variables: the BN and LN subproblems a soft mean (class recall, parity, equalized
odds, a RowMean) adds its rows to.

At x with multipliers lambda, the step d minimizes the quadratic model 1/2 d'Hd + grad f'd subject to the rows
linearized, lower - g(x) <= J d <= upper - g(x), H the Hessian of the Lagrangian f + lambda'g (its eigenvalues
floored where it is not positive definite: the BN subproblems are nonconvex).  With m rows (a handful) that QP
is solved in its dual, m variables: nu minimizes 1/2 nu'M nu + nu'b + sum_k psi_k(nu_k), M = J H^-1 J',
b = J H^-1 grad f - (g(x) folded into psi), by trying each active set (up to :data:`ENUMERATED_ROWS` rows) or by
cyclic coordinate minimization (each coordinate in closed form), and d = -H^-1 (grad f + J'nu).  The step is damped on the l1 merit function f + rho sum_k violation_k
(Armijo), rho above the multipliers' size, no variable moving by more than a cap in one step (the modified step
of a nonconvex model can be long): :data:`STEP_CAP`, doubled after each capped step taken whole (a flat model the
step crawls along), back to :data:`STEP_CAP` after any other; lambda <- nu.  It stops at a point whose rows hold within
:data:`CONSTRAINT_TOL` where the step is below ``tol`` (relative to 1 + |x|) or promises a decrease below
:data:`DECREASE_TOL` (relative to 1 + |f|).

Each iteration evaluates f, its gradient, the rows, their Jacobian and the Hessian of the Lagrangian once, in
numpy (the formulations keep the leaf values of the last point), where IPOPT's interior point method spends
more iterations and a Python call per function: the measurement is in docs/classification.md, "Constrained
fits".
"""

from __future__ import annotations

import itertools

import numpy as np

from ..linalg import cholesky_solve
from .base import Acceptance, Solver, SolverResult, should_stop, smooth_problem

CONSTRAINT_TOL = 1e-9  # the rows' violation at a solution (below the training's FEASIBILITY_TOL)
EIGENVALUE_FLOOR = 1e-8  # relative floor of the modified Hessian's eigenvalues
DECREASE_TOL = 1e-12  # a feasible point where the step promises less decrease (relative to 1 + |f|) is a solution
STEP_CAP = 5.0  # the first cap on a variable's change in one step (a modified step on a flat, nonconvex model is long)
DUAL_SWEEPS = 200
ENUMERATED_ROWS = 4  # up to this many rows the QP's active set is found by trying each (3^m at most)


class SQPSolver(Solver):
    """SQP with the exact Hessian of the Lagrangian (module docstring).

    Parameters
    ----------
    tol : float, default=1e-8
        The step's max-norm at a solution, relative to 1 + max |x|.
    max_iter : int, default=50
        SQP iterations at most.
    max_rows : int, default=8
        Refuse (``accepts``) a subproblem of more constraint rows: the dual's coordinate sweeps are for a
        handful.
    max_variables : int or None, default=None
        Refuse a subproblem of more variables (the Hessian is factorized dense, as IPOPT's is).
    needs_rows : bool, default=False
        Refuse a subproblem without constraint rows (an "auto" list puts SQP first for the constrained ones and
        leaves the others to the unconstrained solvers after it).
    time_limit, verbosity : seconds per solve (polled at every iteration), unused output level.
    """

    name = "sqp"
    python_loop = True
    takes_constraints = frozenset({"linear", "nonlinear"})

    def __init__(self, tol=1e-8, max_iter=50, max_rows=8, max_variables=None, needs_rows=False, time_limit=None,
                 verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.max_rows, self.max_variables, self.needs_rows = max_rows, max_variables, needs_rows

    def accepts(self, problem) -> Acceptance:
        rows = getattr(problem, "n_constraints", 0)
        if self.needs_rows and not rows:
            return Acceptance(False, "it has no constraint rows (needs_rows=True: an unconstrained solver is quicker)")
        if rows > self.max_rows:
            return Acceptance(False, f"it has {rows} constraint rows, more than max_rows={self.max_rows}")
        if self.max_variables is not None and np.size(problem.start()) > self.max_variables:
            return Acceptance(False, f"it has {np.size(problem.start())} variables, more than max_variables="
                                     f"{self.max_variables}")
        if not all(getattr(block, "has_hessian", False) for block in getattr(problem, "constraint_blocks", ())):
            return Acceptance(False, "a constraint row has no Hessian of its own")
        return smooth_problem(problem, "hessian", "exact Hessian (hessian(x))")

    def _solve(self, problem, x0, deadline) -> SolverResult:
        lower, upper = getattr(problem, "constraint_bounds", lambda: (np.zeros(0), np.zeros(0)))()
        x = np.array(x0, dtype=float)
        lam, rho, cap = np.zeros(len(lower)), 1.0, STEP_CAP
        f, grad = problem.evaluate(x)
        g = _rows(problem, x, lower)
        status, it = "iteration limit", 0
        for it in range(1, self.max_iter + 1):
            if should_stop(deadline):
                status = "stopped"
                break
            J = problem.constraint_jacobian(x) if len(lower) else np.zeros((0, len(x)))
            H = _positive_definite(problem.lagrangian_hessian(x, 1.0, lam) if len(lower) else problem.hessian(x))
            d, nu = _qp_step(H, grad, J, lower - g, upper - g, np.sign(lam))
            if d is None:
                status = "singular model"
                break
            longest = float(np.max(np.abs(d), initial=0.0))
            d = d * min(1.0, cap / max(longest, 1e-300))
            rho = max(rho, 2.0 * float(np.max(np.abs(nu), initial=0.0)))
            step = float(np.max(np.abs(d), initial=0.0))
            small = step <= self.tol * (1.0 + float(np.max(np.abs(x), initial=0.0))) or \
                -float(grad @ d) <= DECREASE_TOL * (1.0 + abs(f))  # the model promises no decrease worth a step
            if small and _violation(g, lower, upper) <= CONSTRAINT_TOL:
                status, lam = "solved", nu
                break
            moved = _merit_search(problem, x, f, grad, g, d, rho, lower, upper)
            if moved is None:
                status = "no merit decrease"
                break
            x, f, grad, g, alpha = moved
            cap = 2.0 * cap if longest > cap and alpha == 1.0 else STEP_CAP  # a capped full step: a longer one next
            lam = nu
        feasible = _violation(g, lower, upper) <= CONSTRAINT_TOL
        return SolverResult(x, f, status == "solved" and feasible, status, it, 0.0, {"multipliers": lam},
                            solver=self.name)


def _rows(problem, x, lower) -> np.ndarray:
    """The constraint rows' values at x (none without rows)."""
    return problem.constraint_values(x) if len(lower) else np.zeros(0)


def _violation(g, lower, upper) -> float:
    return float(max(np.max(lower - g, initial=0.0), np.max(g - upper, initial=0.0), 0.0))


def _positive_definite(H) -> np.ndarray:
    """H itself when it is positive definite, else H with its eigenvalues lambda replaced by
    max(|lambda|, EIGENVALUE_FLOOR max |lambda|)."""
    if cholesky_solve(H, np.zeros(len(H))) is not None:
        return H
    lam, V = np.linalg.eigh(H)
    floor = EIGENVALUE_FLOOR * max(float(np.abs(lam).max()), 1e-300)
    return (V * np.maximum(np.abs(lam), floor)) @ V.T


def _qp_step(H, grad, J, low, high, guess=None):
    """(d, nu) of min 1/2 d'Hd + grad'd s.t. low <= J d <= high, by its dual (module docstring), the active set
    ``guess`` (the signs of the last multipliers) tried first; (None, None) when H cannot be factorized."""
    solved = cholesky_solve(H, np.column_stack([grad, J.T]))
    if solved is None:
        return None, None
    Hg, HJ = solved[:, 0], solved[:, 1:]
    M, b = J @ HJ, J @ Hg
    nu = _active_set(M, b, low, high, guess) if len(b) <= ENUMERATED_ROWS else None
    if nu is None:
        nu = _coordinate_descent(M, b, low, high)
    return -(Hg + HJ @ nu), nu


def _active_set(M, b, low, high, guess=None):
    """The dual solution nu by trying every active set (each row at its lower bound (side -1), its upper one (+1),
    or free (0)), ``guess`` first (an SQP's active set seldom changes between its iterations): the first whose
    multipliers have the signs of their sides and whose free rows hold (J d = -(b + M nu)); None when rounding
    leaves none."""
    sides = [[0] + [1] * bool(np.isfinite(high[k])) + [-1] * bool(np.isfinite(low[k])) for k in range(len(b))]
    scale = 1e-10 * (1.0 + float(np.max(np.abs(b), initial=0.0)))
    first = [] if guess is None or not all(side in options for side, options in zip(guess, sides)) else [guess]
    for pattern in itertools.chain(first, itertools.product(*sides)):
        nu = _multipliers(M, b, low, high, np.asarray(pattern, dtype=int), scale)
        if nu is not None:
            return nu
    return None


def _multipliers(M, b, low, high, side, scale):
    """The dual solution nu of the active set ``side`` (:func:`_active_set`), or None when it is not the one."""
    active = np.flatnonzero(side)
    nu = np.zeros(len(b))
    if len(active):
        bound = np.where(side[active] > 0, high[active], low[active])
        try:
            nu[active] = np.linalg.solve(M[np.ix_(active, active)], -(b[active] + bound))
        except np.linalg.LinAlgError:
            return None
        if np.any(nu[active] * side[active] < 0):
            return None
    rows = -(b + M @ nu)
    free = side == 0
    return nu if np.all(rows[free] >= low[free] - scale) and np.all(rows[free] <= high[free] + scale) else None


def _coordinate_descent(M, b, low, high) -> np.ndarray:
    """The dual solution nu by cyclic coordinate minimization, each coordinate in closed form."""
    nu = np.zeros(len(b))
    for _ in range(DUAL_SWEEPS):
        before = nu.copy()
        for k in range(len(nu)):
            if M[k, k] <= 0:
                continue
            r = b[k] + M[k] @ nu - M[k, k] * nu[k]
            up, down = -(r + high[k]) / M[k, k], -(r + low[k]) / M[k, k]  # nu_k > 0: upper active; < 0: lower
            nu[k] = up if np.isfinite(high[k]) and up > 0 else down if np.isfinite(low[k]) and down < 0 else 0.0
        if np.max(np.abs(nu - before), initial=0.0) <= 1e-14 * (1.0 + np.max(np.abs(nu), initial=0.0)):
            break
    return nu


def _merit_search(problem, x, f, grad, g, d, rho, lower, upper):
    """(x, f, grad, g, step size) at the first step size 1, 1/2, ... that lowers the l1 merit f + rho violation by
    an Armijo share of its directional derivative; None when none of 30 does."""
    merit = f + rho * _total_violation(g, lower, upper)
    slope = float(grad @ d) - rho * _total_violation(g, lower, upper)
    alpha = 1.0
    for _ in range(30):
        trial = x + alpha * d
        f_new, grad_new = problem.evaluate(trial)
        g_new = _rows(problem, trial, lower)
        if np.isfinite(f_new) and f_new + rho * _total_violation(g_new, lower, upper) <= \
                merit + 1e-4 * alpha * min(slope, 0.0):
            return trial, f_new, grad_new, g_new, alpha
        alpha /= 2
    return None


def _total_violation(g, lower, upper) -> float:
    return float(np.sum(np.maximum(lower - g, 0.0)) + np.sum(np.maximum(g - upper, 0.0)))
