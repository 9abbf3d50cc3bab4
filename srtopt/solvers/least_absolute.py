"""Least absolute deviations with an l1 penalty: the leaf model of the MILO tree's L1 loss.

    min_{b0, b}  sum_i |y_i - b0 - x_i . b| + mu1 ||b||_1,   |b_j| <= coef_bound,

solved exactly as a linear program by HiGHS (through :func:`scipy.optimize.linprog`):
b = u - v with u, v >= 0, and each residual split as e+ - e-.  HiGHS stops at the
:class:`~.deadline.Deadline` the fit is given; a fit it does not finish, or that starts after the
deadline, is the least-squares slopes instead (clipped to the bound) with the median residual as
intercept, and their objective value.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from .deadline import Deadline

__all__ = ["lad_lasso_fit"]


def lad_lasso_fit(X, y, mu1, coef_bound=math.inf, deadline: Deadline | None = None):
    """``(coef, value)``: coef (p+1,) with coef[0] the intercept, value the minimum.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Inputs.
    y : array-like of shape (n,)
        Targets.
    mu1 : float
        Weight of the l1 penalty on the slopes b (the intercept b0 is free).
    coef_bound : float, default=math.inf
        Bound on every |b_j|; inf: none.
    deadline : Deadline or None, default=None
        When the linear program must end (None: no limit).

    Returns
    -------
    coef : ndarray of shape (p + 1,)
        (b0, b_1..b_p); zeros when n = 0.
    value : float
        The objective at ``coef``: its minimum (0.0 when n = 0), or, when ``deadline`` stopped
        the linear program, that of the least-squares line (an upper bound).

    Raises
    ------
    RuntimeError
        If HiGHS does not solve the linear program.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.5], [1.0], [1.0]])
    >>> coef, value = lad_lasso_fit(X, np.array([1.0, 2.0, 3.0, 10.0]), mu1=0.0)
    >>> np.round(coef, 6).tolist(), round(value, 6)  # the outlier at x = 1 costs 7
    ([1.0, 2.0], 7.0)
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, p = X.shape
    if n == 0:
        return np.zeros(p + 1), 0.0
    deadline = deadline or Deadline()
    seconds = deadline.left()
    if seconds <= 0:
        return _least_squares(X, y, mu1, coef_bound)
    cost = np.concatenate([[0.0], np.full(2 * p, float(mu1)), np.ones(2 * n)])
    identity = sparse.identity(n, format="csc")
    equalities = sparse.hstack([sparse.csc_matrix(np.ones((n, 1))), sparse.csc_matrix(X), sparse.csc_matrix(-X),
                                identity, -identity], format="csc")
    bounds = np.r_[[(-np.inf, np.inf)], np.tile([(0.0, float(coef_bound))], (2 * p, 1)), np.tile([(0.0, np.inf)], (2 * n, 1))]
    result = linprog(cost, A_eq=equalities, b_eq=y, bounds=bounds, method="highs",
                     options={} if math.isinf(seconds) else {"time_limit": seconds})
    if result.status == 1 and deadline.passed():
        return _least_squares(X, y, mu1, coef_bound)
    if result.status != 0:
        raise RuntimeError(f"the LAD leaf fit failed: {result.message}")
    x = result.x
    coef = np.concatenate([[x[0]], x[1:1 + p] - x[1 + p:1 + 2 * p]])
    return coef, float(result.fun)


def _least_squares(X, y, mu1, coef_bound):
    """(coef, value) of the least-squares slopes, clipped to ``coef_bound``, and the intercept that
    minimizes the absolute loss with them (the median residual): the fit when no time is left for
    the linear program."""
    slopes = np.clip(np.linalg.lstsq(np.c_[np.ones(len(y)), X], y, rcond=None)[0][1:], -coef_bound, coef_bound)
    residual = y - X @ slopes
    intercept = float(np.median(residual))
    return np.r_[intercept, slopes], float(np.abs(residual - intercept).sum() + mu1 * np.abs(slopes).sum())
