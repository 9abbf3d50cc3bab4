"""Exact LN step: the weighted ridge least-squares problem of each working leaf.

For leaf l the LN subproblem is min_b sum_i Q_il (Xa_i b - y_i)^2 + sum_k r_k b_k^2 / 2 - s . b
(r = lambda_b for the l2 term; feature_l1's majorizer adds a ridge per feature; the leaf
shrinkage towards a linear model c adds strength to r and strength c to s), whose normal
equations are (2 Xa^T diag(Q_l) Xa + diag(r)) b = 2 Xa^T diag(Q_l) y + s.
Cholesky on them (fast); ``lstsq`` when the system is singular or ill-conditioned (condition
number above MAX_CONDITION).
"""

from __future__ import annotations

import numpy as np
import scipy
from scipy.linalg import lapack

from .base import Acceptance, Solver, SolverResult

MAX_CONDITION = 1e12  # normal equations worse conditioned than this are solved by lstsq instead


def normal_equations(Xa, y, q, ridge) -> tuple[np.ndarray, np.ndarray]:
    """(A, rhs) of the normal equations A b = rhs of min_b sum_i q_i (Xa_i b - y_i)^2 +
    sum_k ridge_k b_k^2 / 2: A = 2 Xa^T diag(q) Xa + diag(ridge), rhs = 2 Xa^T diag(q) y (``ridge``
    a number or one per coefficient)."""
    XtQ2 = Xa.T * (2.0 * q)
    A = XtQ2 @ Xa
    A[np.diag_indices_from(A)] += ridge
    return A, XtQ2 @ y


def weighted_ridge(Xa, y, q, ridge, shift=0.0) -> np.ndarray:
    """argmin_b sum_i q_i (Xa_i b - y_i)^2 + sum_k ridge_k b_k^2 / 2 - shift . b (``ridge`` and
    ``shift`` a number or one per coefficient), by :func:`normal_equations`."""
    A, rhs = normal_equations(Xa, y, q, ridge)
    b = cholesky_solve(A, rhs + shift, max_condition=MAX_CONDITION)
    if b is not None:
        return b
    sq, root = np.sqrt(q), np.sqrt(np.broadcast_to(ridge, Xa.shape[1]) / 2)
    ridged = root > 0  # a ridge row of 0 changes nothing and made lstsq of a wide leaf (p + n) x p
    target = np.broadcast_to(shift, Xa.shape[1])[ridged] / (2 * root[ridged])  # the shift: the ridge rows' target
    A_aug = np.vstack([sq[:, None] * Xa, np.diag(root)[ridged]])
    return np.linalg.lstsq(A_aug, np.concatenate([sq * y, target]), rcond=None)[0]


def cholesky_solve(A, b, max_condition=None) -> np.ndarray | None:
    """x with A x = b by Cholesky (LAPACK potrf / potrs, what ``scipy.linalg.cho_solve(cho_factor(A), b)``
    computes, without its per-call overhead, which dominated the small systems of training); None
    when A is not positive definite, A or b is not finite, or A's condition number exceeds
    ``max_condition`` (LAPACK's 1-norm estimate from the factor, pocon)."""
    if not (np.isfinite(A).all() and np.isfinite(b).all()):
        return None
    factor, info = lapack.dpotrf(A, lower=0, clean=0)
    if info != 0:
        return None
    if max_condition is not None:
        rcond, info = lapack.dpocon(factor, np.abs(A).sum(axis=0).max())
        if info != 0 or not rcond * max_condition > 1.0:
            return None
    x, info = lapack.dpotrs(factor, b, lower=0)
    return x if info == 0 else None


def squared_leaf_problem(problem) -> Acceptance:
    """Accept LN subproblems of the squared loss whose only penalty on beta is the l2 term."""
    if not hasattr(type(problem), "leaf_weights"):
        return Acceptance(False, f"{type(problem).__name__} is not an LN subproblem (LeafSubproblem)")
    if problem.loss.name != "squared":
        return Acceptance(False, f"the loss is {problem.loss.name!r}: weighted least squares needs the squared loss")
    if problem.nonsmooth:
        names = ", ".join(sorted({block.penalty.name for block in problem.nonsmooth}))
        return Acceptance(False, f"its penalty on beta is nonsmooth ({names}): use the QP (ln_solver='qp') or the "
                                 f"proximal gradient")
    if problem.ridge() is None:
        return Acceptance(False, "the penalty on beta is not a diagonal quadratic (the l2 term, feature_l1's "
                                 "majorizer)")
    return Acceptance(True)


class ExactLeastSquares(Solver):
    """LN solver: closed-form solve of a :class:`~srtopt.models.srt.LeafSubproblem` of the
    squared loss and the l2 term, leaf by leaf (a direct method: ``tol`` and ``max_iter`` do not
    apply, nor a deadline once the solve has begun); coefficients fixed by the constraints (a feature left out of
    the tree) keep their values, the others are solved for."""

    name = "exact"
    python_loop = True  # numpy and short LAPACK calls: Ctrl-C raises (solve_interruptibly)
    takes_constraints = frozenset({"fixed"})

    def version(self) -> str:
        return f"scipy {scipy.__version__} (Cholesky, lstsq)"

    def accepts(self, problem) -> Acceptance:
        return squared_leaf_problem(problem)

    def _solve(self, problem, x0, deadline) -> SolverResult:
        (Xa, y), Q = problem.design, problem.leaf_weights
        ridge, shift = problem.ridge(), problem.ridge_shift()
        bounds = problem.bounds()
        if bounds is None:
            x = np.concatenate([weighted_ridge(Xa, y, Q[:, j], ridge[j], shift[j]) for j in range(Q.shape[1])])
            return self._result(x, problem.value(x), "solved", 1)
        values, fixed = (b.reshape(Q.shape[1], -1) for b in (bounds[0], bounds[0] == bounds[1]))
        x = np.where(fixed, values, 0.0)
        for j in range(Q.shape[1]):  # the fixed columns' part of yhat moves to the target
            free = ~fixed[j]
            target = y - Xa[:, ~free] @ values[j, ~free]
            x[j, free] = weighted_ridge(Xa[:, free], target, Q[:, j], ridge[j, free], shift[j, free])
        x = x.ravel()
        return self._result(x, problem.value(x), "solved", 1)


class LsqrLeastSquares(Solver):
    """LN solver: SciPy's iterative LSQR on each leaf's weighted least-squares problem
    (``damp`` = sqrt(lambda_b / 2)), the solver the paper's experiments used.  With
    its default tolerances and iteration limit (2 (p + 1)) it stops early on an
    ill-conditioned leaf: an implicit regularization of unregularized "SRT".  A deadline applies
    before the solve begins (:meth:`~.base.Solver.solve`)."""

    name = "lsqr"

    def __init__(self, atol=1e-6, btol=1e-6, iter_lim=None, warm_start=False, tol=None, max_iter=None,
                 time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.atol, self.btol, self.iter_lim, self.warm_start = atol, btol, iter_lim, warm_start

    def version(self) -> str:
        return f"scipy {scipy.__version__} (lsqr)"

    def accepts(self, problem) -> Acceptance:
        verdict = squared_leaf_problem(problem)
        if verdict and (problem.l2_strength() is None or np.any(problem.ridge_shift() != 0)):
            return Acceptance(False, "LSQR's damping needs the same ridge towards 0 on every coefficient (the l2 "
                                     "term alone)")
        return verdict

    def _solve(self, problem, x0, deadline) -> SolverResult:
        from scipy.sparse.linalg import lsqr

        (Xa, y), Q = problem.design, problem.leaf_weights
        B0 = np.reshape(problem.start(), (Q.shape[1], -1))
        x = []
        for j in range(Q.shape[1]):
            sq = np.sqrt(Q[:, j])
            out = lsqr(sq[:, None] * Xa, sq * y, damp=np.sqrt(problem.l2_strength() / 2), atol=self.atol,
                       btol=self.btol, iter_lim=self.iter_lim if self.iter_lim is not None else self.max_iter,
                       x0=B0[j] if self.warm_start else None, show=bool(self.verbosity))
            x.append(out[0])
        x = np.concatenate(x)
        return self._result(x, problem.evaluate(x)[0], "solved", 1)
