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

from ..linalg import weighted_ridge
from .base import Acceptance, Solver, SolverResult

def squared_leaf_problem(problem) -> Acceptance:
    """Accept LN subproblems whose leaf model's R_il is the squared residual (its ``residual_loss``) and whose
    only penalty on beta is the l2 term."""
    if not hasattr(type(problem), "leaf_weights"):
        return Acceptance(False, f"{type(problem).__name__} is not an LN subproblem (LeafSubproblem)")
    loss = problem.residual_loss
    if loss is None or loss.name != "squared":
        return Acceptance(False, f"R_il is not the squared residual (the leaf model's residual_loss is "
                                 f"{getattr(loss, 'name', None)!r}): weighted least squares needs it")
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
