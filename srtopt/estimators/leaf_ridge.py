"""The small-data guard of :class:`~srtopt.estimators.srt.SoftRegressionTree`: a factor on
lambda_b (the l2 weight on the leaf models of eq. obj) chosen by cross-validation when the
leaves have fewer rows than coefficients.

A depth-D tree has 2^D linear leaves of p + 1 coefficients each.  When N < 2^D (p + 1),
a leaf sees on average fewer rows than it has coefficients, and the paper's lambda_b
(2 / (p |tau_L|) on the summed error) barely restrains it: on pure noise (N = 140, p = 50)
the default tree scored test R^2 -1.8 at depth 2.  There ``leaf_ridge="auto"`` fits the tree
with lambda_b times each factor of ``GRID`` on ``FOLDS`` folds (``MAX_ITER`` macro
iterations each) and keeps the factor of the least validation loss, skipping the fits that
cannot change that choice; elsewhere the factor is 1 and nothing changes.  The measurements
behind the zone and the grid: ``docs/departures.md``, "Small data".
"""

from __future__ import annotations

import numbers
import time

import numpy as np

__all__ = ["FOLDS", "GRID", "MAX_ITER", "ZONE", "choose_leaf_ridge", "in_small_data_zone", "linear_center"]

#: the factors on lambda_b that ``leaf_ridge="auto"`` compares (1: the reading's own lambda_b;
#: 1e6: leaves next to constant)
GRID = (1.0, 1e2, 1e4, 1e6)
#: folds of the comparison
FOLDS = 3
#: macro iterations of the comparison's fits (at most the estimator's max_iter)
MAX_ITER = 3
#: the comparison runs when the leaves have on average fewer than ZONE rows per coefficient
ZONE = 1.0


def in_small_data_zone(n_rows: int, n_features: int, depth: int) -> bool:
    """True when the 2^depth leaves have on average fewer than ``ZONE`` rows per coefficient (p + 1).

    >>> in_small_data_zone(140, 50, 2), in_small_data_zone(1000, 8, 3)
    (True, False)
    """
    return n_rows < ZONE * 2**depth * (n_features + 1)


def linear_center(Xs, ys, weights) -> np.ndarray:
    """(intercept, slopes) of the ridge regression of ys on Xs (scaled data), its ridge chosen by
    leave-one-out (scikit-learn's ``RidgeCV``): the linear model the leaf shrinkage pulls towards."""
    from sklearn.linear_model import RidgeCV

    model = RidgeCV(alphas=np.logspace(-6, 6, 25)).fit(Xs, ys, sample_weight=weights)
    return np.r_[model.intercept_, model.coef_]


def check_leaf_ridge(value):
    """``value`` itself when it is "auto" or a number > 0, else a ValueError naming it."""
    if isinstance(value, str) and value == "auto":
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (np.isfinite(value) and value > 0):
        raise ValueError(f"leaf_ridge must be 'auto' or a number > 0 (a factor on lambda_b), got {value!r}")
    return value


def choose_leaf_ridge(estimator, X, y, sample_weight, lambda_b: float, ends_at: float | None, groups=None):
    """(factor, {factor: validation loss}) for ``estimator.leaf_ridge``.

    A number is returned as is; "auto" gives 1 outside the small-data zone or when lambda_b
    is 0 (no l2 term to scale), and inside it the factor of ``GRID`` with the least
    ``FOLDS``-fold validation loss (the estimator's own loss on standardized residuals,
    weighted by ``sample_weight``).  The folds are fixed (shuffled with seed 0), so a fit
    is as reproducible as before; with a deadline ``ends_at`` (perf_counter seconds), the
    comparison's fits and the final fit get equal shares of what remains.

    With a loss that is never negative, fits that cannot change the choice are skipped
    (:func:`_compare`); the choice is the one the full comparison makes.  ``groups``: the protected
    group codes of the rows (the folds are stratified by them, and each fit gets its rows' groups).
    """
    if estimator.leaf_ridge != "auto":
        return float(estimator.leaf_ridge), {}
    n_rows, depth = len(y), int(estimator.depth)
    n_weighted = n_rows if sample_weight is None else int(np.count_nonzero(sample_weight))
    if (lambda_b == 0 or not in_small_data_zone(n_weighted, X.shape[1], depth)
            or n_rows - -(-n_rows // FOLDS) < 2**depth):  # too few rows to fit a tree on a training fold
        return 1.0, {}
    fits = len(GRID) * FOLDS + 1
    share = None if ends_at is None else max(ends_at - time.perf_counter(), 1e-3) / fits
    losses = _compare(estimator, X, y, sample_weight, share, groups)
    return min(losses, key=losses.get), losses


def _compare(estimator, X, y, sample_weight, time_limit, groups=None) -> dict:
    """{factor: validation loss} for the factors of ``GRID``: the weighted loss of the held-out
    fold's standardized residuals, summed over the ``FOLDS`` folds.

    With a nonnegative loss the fits go best first: the next fit is always the next fold of
    the factor whose sum so far is least (ties: the first in ``GRID``), and the comparison
    ends when that factor has all its folds.  Its total is then at most every other
    factor's partial sum, which further folds only increase, so no fit left out could
    change the choice.  The entries of the factors not fitted on every fold are their
    partial sums, lower bounds of their totals."""
    from sklearn.model_selection import KFold, StratifiedKFold

    from ..models.terms import make_loss

    loss = make_loss(estimator.loss)
    splitter = KFold if groups is None else StratifiedKFold
    folds = list(splitter(FOLDS, shuffle=True, random_state=0).split(X, groups))
    losses, fitted = dict.fromkeys(GRID, 0.0), dict.fromkeys(GRID, 0)
    while (factor := _next_fit(losses, fitted, loss.nonnegative)) is not None:
        losses[factor] += _fold_loss(estimator, X, y, sample_weight, factor, folds[fitted[factor]], loss, time_limit,
                                     groups)
        fitted[factor] += 1
    return losses


def _next_fit(losses, fitted, nonnegative):
    """The factor whose next fold :func:`_compare` fits, or None when the comparison is over."""
    if nonnegative:
        factor = min(GRID, key=losses.get)
        return None if fitted[factor] == FOLDS else factor
    return next((factor for factor in GRID if fitted[factor] < FOLDS), None)


def _fold_loss(estimator, X, y, sample_weight, factor, fold, loss, time_limit, groups=None) -> float:
    """The weighted loss of the standardized residuals on the held-out rows of ``fold`` =
    (train, test) of the estimator fitted with ``leaf_ridge=factor`` on the training rows."""
    from sklearn.base import clone

    train, test = fold
    weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    model = clone(estimator).set_params(leaf_ridge=factor, callbacks=None, verbose=0, time_limit=time_limit,
                                        max_iter=min(MAX_ITER, estimator.max_iter))
    model.fit(X[train], y[train], None if sample_weight is None else weights[train],
              sensitive_features=None if groups is None else groups[train])
    residual = (model.predict(X[test]) - y[test]) / (float(np.std(y)) or 1.0)
    return float(np.sum(weights[test] * loss.value(residual)))
