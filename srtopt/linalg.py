"""Dense linear algebra the layers share: weighted ridge least squares by Cholesky on the normal equations,
``lstsq`` when they are singular or ill-conditioned (the LN step's exact solver, the leaves' starts, Newton's
steps), and the ridge regression whose ridge leave-one-out chooses (:func:`ridge_loo`)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas, lapack

MAX_CONDITION = 1e12  # normal equations worse conditioned than this are solved by lstsq instead
#: the columns from which the normal equations' matrix is a syrk (below, numpy's product of the scaled transpose is
#: faster; docs/solvers.md, "The LN step's normal equations")
SYRK_COLUMNS = 32


def normal_equations(Xa, y, q, ridge) -> tuple[np.ndarray, np.ndarray]:
    """(A, rhs) of the normal equations A b = rhs of min_b sum_i q_i (Xa_i b - y_i)^2 +
    sum_k ridge_k b_k^2 / 2: A = 2 Xa^T diag(q) Xa + diag(ridge), rhs = 2 Xa^T diag(q) y (``ridge``
    a number or one per coefficient).  From :data:`SYRK_COLUMNS` columns on (wide spline leaves, where it is the
    LN step's main cost), A is BLAS's symmetric rank-k update of the rows scaled by sqrt(2 q_i) (syrk: half the
    flops of the product), made symmetric."""
    if Xa.shape[1] < SYRK_COLUMNS or Xa.shape[0] == 0:
        XtQ2 = Xa.T * (2.0 * q)
        A, rhs = XtQ2 @ Xa, XtQ2 @ y
    else:
        root = np.sqrt(2.0 * np.asarray(q, dtype=float))
        scaled = Xa * root[:, None]
        upper = blas.dsyrk(1.0, scaled.T, trans=0, lower=0)  # scaled^T scaled: its upper triangle
        A, rhs = np.triu(upper) + np.triu(upper, 1).T, scaled.T @ (root * y)
    A[np.diag_indices_from(A)] += ridge
    return A, rhs


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


#: the ridges :func:`ridge_loo` chooses among
ALPHAS = np.logspace(-6, 6, 25)


def ridge_loo(X, y, weights):
    """((intercept, slopes), leave-one-out mean squared error) of the weighted ridge regression of y
    on X whose ridge among ``ALPHAS`` has the least leave-one-out error (the intercept is not
    penalized).  One thin SVD of the weighted, centred X serves every ridge: with the singular
    values s_k, the fit is U diag(s^2 / (s^2 + alpha)) U^T y and the leverage of row i is
    w_i / sum(w) + sum_k U_ik^2 s_k^2 / (s_k^2 + alpha) (what scikit-learn's RidgeCV computes, here
    with sample weights too; docs/departures.md, "Leaf ridge").  A weight counts as repeated rows: the
    ridges act on the weights as given, and a row of weight w_i leaves out one of its w_i copies
    (leverage h_i / w_i).  The centre of the value leaves' shrinkage
    (:meth:`~srtopt.models.leaves.RegressionLeaves.center`) and the leaf-ridge screen."""
    w = np.asarray(weights, float)
    root = np.sqrt(w)
    mean_x, mean_y = np.average(X, axis=0, weights=w), np.average(y, weights=w)
    U, s, Vt = np.linalg.svd(root[:, None] * (X - mean_x), full_matrices=False)
    Uy = U.T @ (root * (y - mean_y))
    shrink = s[None, :] ** 2 / (s[None, :] ** 2 + ALPHAS[:, None])  # (alphas, k)
    fitted = (shrink * Uy) @ U.T  # (alphas, n), weighted and centred
    leverage = (U**2) @ shrink.T + (w / w.sum())[:, None]  # (n, alphas)
    copy = np.divide(leverage.T, w, out=np.zeros_like(leverage.T), where=w > 0)  # the leverage of one copy
    loo = (root * (y - mean_y) - fitted) / np.maximum(1.0 - copy, 1e-12)  # weighted residuals
    errors = np.sum(loo**2, axis=1) / w.sum()
    best = int(np.argmin(errors))
    slopes = Vt.T @ (np.divide(s, s**2 + ALPHAS[best], out=np.zeros_like(s), where=s > 0) * Uy)
    return np.r_[mean_y - mean_x @ slopes, slopes], float(errors[best])
