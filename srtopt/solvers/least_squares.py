"""Exact LN step: the weighted ridge least-squares problem of each working leaf.

For leaf l the LN subproblem is min_b sum_i Q_il (Xa_i b - y_i)^2 + lambda_b/2 ||b||^2,
whose normal equations are (2 Xa^T diag(Q_l) Xa + lambda_b I) b = 2 Xa^T diag(Q_l) y.
Cholesky on them (fast); ``lstsq`` when the system is singular or ill-conditioned.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import linalg

from .base import SolverResult


def weighted_ridge(Xa, y, q, lambda_b) -> np.ndarray:
    """argmin_b sum_i q_i (Xa_i b - y_i)^2 + lambda_b/2 ||b||^2."""
    A = 2.0 * (Xa.T * q) @ Xa + lambda_b * np.eye(Xa.shape[1])
    rhs = 2.0 * (Xa.T * q) @ y
    try:
        c = linalg.cho_factor(A, check_finite=True)
        b = linalg.cho_solve(c, rhs)
        if np.linalg.cond(A) < 1e12:
            return b
    except (linalg.LinAlgError, ValueError):
        pass
    sq = np.sqrt(q)
    A_aug = np.vstack([sq[:, None] * Xa, np.sqrt(lambda_b / 2) * np.eye(Xa.shape[1])])
    rhs_aug = np.concatenate([sq * y, np.zeros(Xa.shape[1])])
    return np.linalg.lstsq(A_aug, rhs_aug, rcond=None)[0]


class ExactLeastSquares:
    """LN solver: closed-form solve of a :class:`~srtopt.models.srt.LeafSubproblem`, leaf by leaf."""

    name = "exact"

    @staticmethod
    def available() -> bool:
        return True

    def solve(self, problem, x0=None) -> SolverResult:
        start = time.perf_counter()
        pr = problem.problem
        Xa, y, Q = pr.Xa[problem.rows], pr.y[problem.rows], problem.leaf_weights
        x = np.concatenate([weighted_ridge(Xa, y, Q[:, j], problem.l2_strength()) for j in range(Q.shape[1])])
        f = problem.evaluate(x)[0]
        return SolverResult(x, f, True, "solved", 1, time.perf_counter() - start)


class LsqrLeastSquares:
    """LN solver: SciPy's iterative LSQR on each leaf's weighted least-squares problem
    (``damp`` = sqrt(lambda_b / 2)), the solver the paper's experiments used.  With
    its default tolerances and iteration limit (2 (p + 1)) it stops early on an
    ill-conditioned leaf: an implicit regularization of unregularized "SRT"."""

    name = "lsqr"

    def __init__(self, atol=1e-6, btol=1e-6, iter_lim=None, warm_start=False):
        self.atol, self.btol, self.iter_lim, self.warm_start = atol, btol, iter_lim, warm_start

    @staticmethod
    def available() -> bool:
        return True

    def solve(self, problem, x0=None) -> SolverResult:
        from scipy.sparse.linalg import lsqr

        start = time.perf_counter()
        pr = problem.problem
        Xa, y, Q = pr.Xa[problem.rows], pr.y[problem.rows], problem.leaf_weights
        B0 = np.reshape(problem.start(), (Q.shape[1], -1))
        x = []
        for j in range(Q.shape[1]):
            sq = np.sqrt(Q[:, j])
            out = lsqr(sq[:, None] * Xa, sq * y, damp=np.sqrt(problem.l2_strength() / 2), atol=self.atol, btol=self.btol,
                       iter_lim=self.iter_lim, x0=B0[j] if self.warm_start else None)
            x.append(out[0])
        x = np.concatenate(x)
        return SolverResult(x, problem.evaluate(x)[0], True, "solved", 1, time.perf_counter() - start)
