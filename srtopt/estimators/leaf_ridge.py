"""The leaf-ridge guard of :class:`~srtopt.estimators.srt.SoftRegressionTree`: a factor on the
l2 weight of the leaf models, chosen by cross-validation where a tree's leaves can fit noise or
a linear model may be the better model.

A depth-D tree has 2^D linear leaves of p + 1 coefficients each.  The paper's lambda_b
(2 / (p |tau_L|) on the summed error) barely restrains leaves with few rows per coefficient:
there the tree fits noise, and on data that a linear model fits as well as any tree it loses
to least squares.  ``leaf_ridge="auto"`` then fits the tree with each factor of ``GRID`` on ``FOLDS``
folds (factor 1 in ``MAX_ITER`` macro iterations, the others in ``WARM_ITER`` from factor 1's tree of
the same fold) and keeps the factor of the least validation loss when
it beats factor 1 by more than ``MARGIN`` standard errors (:func:`chosen`), skipping the fits that cannot
change that choice; a factor f > 1 adds (f - 1) lambda_b pulling
every leaf towards the leaf model's ``center`` (``leaf_center="linear"``; for value leaves the ridge
regression of all rows), so that large factors give that one model.  It runs where the leaves have fewer rows
than coefficients (:func:`in_small_data_zone`), and, for value leaves of a residual loss, where they have fewer
than ``ZONE`` and the linear model fits about as well as the initial tree (:func:`linear_competes`); elsewhere
the factor is 1 and nothing changes.  The held-out loss is the leaf model's own (:func:`held_out_losses`).
The measurements behind the zone, the screen and the grid: ``docs/departures.md``, "Leaf ridge".
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..encoding import held_out_quietly
from ..linalg import ridge_loo
from ..solvers.deadline import Deadline
from ..training.initialization import WarmStart
from ..tree import Tree
from .folds import folds, n_distinct
from .targets import take_rows

__all__ = ["FOLDS", "GRID", "MARGIN", "MAX_ITER", "WARM_ITER", "ZONE", "beats_one", "choose_leaf_ridge", "chosen",
           "held_out_losses", "in_small_data_zone"]

#: the factors on lambda_b that ``leaf_ridge="auto"`` compares (1: the reading's own lambda_b;
#: 1e6: leaves next to constant)
GRID = (1.0, 1e2, 1e4, 1e6)
#: folds of the comparison
FOLDS = 3
#: macro iterations of the comparison's fits of factor 1 (at most the estimator's max_iter)
MAX_ITER = 3
#: macro iterations of its fits of the other factors, which start from factor 1's fit of the same fold
WARM_ITER = 1
#: a factor other than 1 is chosen only when its held-out loss is below factor 1's by more than MARGIN
#: standard errors of the sum of their per-row differences (0: the least loss wins)
MARGIN = 1.0
#: the comparison also runs when the leaves have on average fewer than ZONE rows per coefficient
#: and the linear model competes with the initial tree (:func:`linear_competes`)
ZONE = 10.0
#: the linear model competes when the initial tree's leave-one-out MSE is at least SCREEN times its own
SCREEN = 0.8


def rows_per_coefficient(n_rows: int, n_features: int, depth: int) -> float:
    """N / (2^depth (p + 1)): the rows per coefficient of the leaves, on average.

    >>> rows_per_coefficient(140, 50, 2), rows_per_coefficient(1000, 8, 3)
    (0.6862745098039216, 13.88888888888889)
    """
    return n_rows / (2**depth * (n_features + 1))


def in_small_data_zone(n_rows: int, n_features: int, depth: int) -> bool:
    """True when the 2^depth leaves have on average fewer rows than coefficients (p + 1)."""
    return rows_per_coefficient(n_rows, n_features, depth) < 1.0


def linear_competes(problem, screen=None, deadline=None) -> bool:
    """Whether the linear model of :func:`~srtopt.linalg.ridge_loo` fits ``problem`` about as well as its initial
    tree (:class:`~srtopt.training.initialization.ModelTreeInitialization`, its search stopped at
    ``deadline``): the leave-one-out mean squared error of the tree's leaf regressions, each on the rows
    its hard splits route there, is at least ``screen`` (default ``SCREEN``) times the linear model's
    (both closed forms, weighted by s_i)."""
    from .. import kernels
    from ..training.initialization import ModelTreeInitialization

    from ..training.initialization import MODEL_TREE_RIDGE

    w = problem.counts
    linear = ridge_loo(problem.X, problem.y, w)[1]
    omega, _, _ = ModelTreeInitialization()(problem, deadline=deadline)
    leaves = kernels.hbp_leaves(problem.Z, omega, problem.tree)
    errors = np.zeros(len(problem.y))
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        errors[rows] = _loo_residuals(problem.Xa[rows], problem.y[rows], w[rows], MODEL_TREE_RIDGE * w[rows].sum()) ** 2
    return np.average(errors, weights=w) >= (SCREEN if screen is None else screen) * linear


def _loo_residuals(Xa, y, w, ridge):
    """Leave-one-out residuals (y_i - yhat_(-i)) of the weighted least squares of y on Xa with the ridge
    ``ridge`` on the slopes (not the intercept): r_i / (1 - h_ii / w_i), one of a row's w_i copies left out."""
    R = ridge * np.eye(Xa.shape[1])
    R[0, 0] = 0.0
    inverse = np.linalg.pinv((Xa.T * w) @ Xa + R)
    h = np.einsum("ij,jk,ik->i", Xa, inverse, Xa)
    return (y - Xa @ (inverse @ (Xa.T @ (w * y)))) / np.maximum(1.0 - h, 1e-12)


def choose_leaf_ridge(estimator, X, y, sample_weight, lambda_b: float, deadline: Deadline, groups, problem,
                      encoder=None):
    """(factor, {factor: validation loss}) for ``estimator.leaf_ridge``.

    A number is returned as is; "auto" gives 1 outside the guard's zone (module docstring; ``problem`` is the
    training problem of (X, y): the screen's data, and its leaf model's loss) or when lambda_b is 0 (no l2 term
    to scale), and inside it the factor of ``GRID`` with the least
    ``FOLDS``-fold validation loss (the leaf model's own, :func:`held_out_losses`,
    weighted by ``sample_weight``) when it beats factor 1 by ``MARGIN`` standard errors
    (:func:`chosen`).  The folds are fixed (shuffled with seed 0), so a fit
    is as reproducible as before; before a ``deadline`` with a limit, the
    comparison's fits and the final fit get equal shares of what remains, and the comparison
    stops when its next fit would leave the final fit less than its share: the factor is then
    chosen among those fitted on every fold (1 when none is).

    With a loss that is never negative, fits that cannot change the choice are skipped
    (:func:`_compare`); the choice is the one the full comparison makes (up to the rows :func:`beats_one`
    weighs factor 1 on).  ``groups``: the protected
    group codes of the rows (the folds are stratified by them); ``encoder``: the fit's encoder of the table X,
    which encodes every fold's rows (``SoftTree.fit``'s ``encoder``).
    """
    if estimator.leaf_ridge != "auto":
        return float(estimator.leaf_ridge), {}
    depth = int(estimator.depth)
    if lambda_b == 0:
        return 1.0, {}
    n_weighted = len(y) if sample_weight is None else float(np.sum(sample_weight))  # a row of weight k: k rows
    ratio = rows_per_coefficient(n_weighted, X.shape[1], depth)
    screened = problem.leaf_model.residual_loss is not None and estimator.leaf_center == "linear"
    if ratio >= 1.0 and not (ratio < ZONE and screened and linear_competes(problem, deadline=deadline)):
        return 1.0, {}
    distinct = n_distinct(X, y, sample_weight)  # last: it encodes the table again
    if distinct - -(-distinct // FOLDS) < 2 * 2**depth:  # too few rows for a fold's tree
        return 1.0, {}
    fits = len(GRID) * FOLDS + 1
    share = deadline.share(fits)
    nonnegative = getattr(problem.leaf_model.residual_loss, "nonnegative", False)
    losses, rows, complete = _compare(estimator, X, y, sample_weight, share,
                                      deadline.within(deadline.left() - (share or 0)), groups, encoder, nonnegative)
    return chosen(losses, rows, complete, _row_weights(sample_weight, len(y))), losses


def _row_weights(sample_weight, n) -> np.ndarray:
    return np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)


def chosen(losses: dict, rows: dict, complete: list, weights=None) -> float:
    """The factor of least validation loss among ``complete`` (the factors fitted on every fold; 1 when
    none is), if it :func:`beats_one` (``rows``: per-row losses, ``weights``: the rows' weights); else 1: a
    held-out loss that a few rows decide (outliers) keeps the paper's lambda_b.

    >>> rows = {1.0: np.array([1.0, 1.0, 1.0, 9.0]), 100.0: np.array([2.0, 2.0, 2.0, 1.0])}
    >>> chosen({1.0: 12.0, 100.0: 7.0}, rows, [1.0, 100.0])  # one row decides
    1.0
    >>> chosen({1.0: 12.0, 100.0: 4.0}, {1.0: np.full(4, 3.0), 100.0: np.ones(4)}, [1.0, 100.0])
    100.0
    """
    if not complete:
        return 1.0
    best = min(complete, key=losses.get)
    return best if best == 1.0 or beats_one(rows, best, weights) else 1.0


def beats_one(rows: dict, factor: float, weights=None) -> bool:
    """Whether the held-out losses ``rows[factor]`` are below factor 1's by more than ``MARGIN`` standard
    errors (sqrt(n) times the sample sd of the n per-row differences), on the rows where both were held
    out (NaN: not held out); a row of weight w counts as w rows (``weights``; None: 1 each), as in the fit."""
    both = ~np.isnan(rows[1.0]) & ~np.isnan(rows[factor])
    gain = rows[1.0][both] - rows[factor][both]
    w = np.ones(len(gain)) if weights is None else np.asarray(weights, float)[both]
    n = w.sum()
    if n <= 1:
        return False
    mean = float(w @ gain) / n
    variance = float(w @ (gain - mean) ** 2) / (n - 1)
    return n * mean > MARGIN * np.sqrt(n * variance)


def _compare(estimator, X, y, sample_weight, time_limit, stop: Deadline, groups=None, encoder=None,
             nonnegative=False) -> tuple[dict, dict, list]:
    """{factor: validation loss} for the factors of ``GRID``: the weighted :func:`held_out_losses` of the held-out
    fold, summed over the ``FOLDS`` folds.

    With a ``nonnegative`` loss the fits go best first: the next fit is always the next fold of
    the factor whose sum so far is least (ties: the first in ``GRID``), and the comparison
    ends when that factor has all its folds and :func:`beats_one` on the rows factor 1 has been
    held out on (else factor 1's next fold is fitted, until it has all its folds).  Its
    total is then at most every other factor's partial sum, which further folds only increase,
    so no fit left out could change the choice.  The entries of the factors not fitted on every
    fold are their partial sums, lower bounds of their totals.  Factor 1 is fitted on a fold
    before any other factor: its tree is their start there (:func:`_fold_loss`).  Returns (losses,
    {factor: the loss of every row where it was held out, NaN elsewhere}, the factors fitted
    on every fold); no fit starts that would end after ``stop``, judged by the longest fit so far."""
    splits = folds(X, y, FOLDS, sample_weight, groups)
    losses, fitted, longest = dict.fromkeys(GRID, 0.0), dict.fromkeys(GRID, 0), 0.0
    weights = _row_weights(sample_weight, len(y))
    rows, starts = {factor: np.full(len(y), np.nan) for factor in GRID}, []
    while (factor := _next_fit(losses, rows, weights, fitted, nonnegative)) is not None:
        if stop.left() < longest:
            break
        started = time.perf_counter()
        k = fitted[factor]
        test, held_out, model = _fold_loss(estimator, X, y, sample_weight, factor, splits[k], time_limit, groups,
                                           None if factor == 1.0 else starts[k], encoder)
        if factor == 1.0:
            starts.append(WarmStart.from_estimator(model))
        rows[factor][test] = held_out
        losses[factor] += float(weights[test] @ held_out)
        fitted[factor] += 1
        longest = max(longest, time.perf_counter() - started)
    return losses, rows, [factor for factor in GRID if fitted[factor] == FOLDS]


def _next_fit(losses, rows, weights, fitted, nonnegative):
    """The factor whose next fold :func:`_compare` fits, or None when the comparison is over; factor 1's
    fold comes before the other factors' (its tree is their start)."""
    if nonnegative:
        factor = min(GRID, key=losses.get)
        if fitted[factor] == FOLDS and not beats_one(rows, factor, weights):
            factor = 1.0  # its next fold may show that the best does not beat it (:func:`chosen`)
        if fitted[factor] == FOLDS:
            return None
    else:
        factor = next((factor for factor in GRID if fitted[factor] < FOLDS), None)
        if factor is None:
            return None
    return 1.0 if fitted[1.0] <= fitted[factor] else factor


def _fold_loss(estimator, X, y, sample_weight, factor, fold, time_limit, groups=None, start=None,
               encoder=None) -> tuple:
    """(the held-out rows, their :func:`held_out_losses`, the fitted model) of ``fold``
    = (train, test) of the estimator fitted with ``leaf_ridge=factor`` on the training rows, with all
    its constraints: the group constraints (parity, group losses) change which factor is best
    (docs/departures.md, "Leaf ridge").  ``MAX_ITER`` macro iterations from the estimator's own
    initialization, or ``WARM_ITER`` from ``start`` (a :class:`~srtopt.training.initialization.WarmStart`); the
    rows encoded by ``encoder`` (:func:`choose_leaf_ridge`)."""
    from sklearn.base import clone

    train, test = fold
    weights = _row_weights(sample_weight, len(y))
    model = clone(estimator).set_params(leaf_ridge=factor, callbacks=None, verbose=0, time_limit=time_limit,
                                        max_iter=min(MAX_ITER if start is None else WARM_ITER, estimator.max_iter))
    if start is not None:
        model.set_params(init=start, n_restarts=1)
    with warnings.catch_warnings():  # the final fit warns of the data and of its own stop, not a fold's fit (its
        # share of the time limit, its few iterations short of the constraints, y's extreme values in its rows)
        warnings.simplefilter("ignore", UserWarning)
        model.fit(take_rows(X, train), y[train], None if sample_weight is None else weights[train],
                  sensitive_features=None if groups is None else groups[train], encoder=encoder)
    scale = float(np.sqrt(np.average((y - np.average(y, weights=weights)) ** 2, weights=weights)))  # y's sd
    with held_out_quietly():
        return test, held_out_losses(model, take_rows(X, test), y[test], scale or 1.0), model


def held_out_losses(model, X, y, scale: float) -> np.ndarray:
    """The loss of each held-out row of (X, y) under the fitted ``model``, by its leaf model's own loss: for
    value leaves of a residual loss (``residual_loss``) that loss of ``predict()``'s residual in units of
    ``scale`` (y's standard deviation on all rows, the same for every fold); for any other leaf model R_i at the
    row's HBP leaf (``hbp_losses``), in the fold's training units (the same for every factor on a fold)."""
    leaves = model.leaf_model_
    if leaves.residual_loss is not None:
        return leaves.residual_loss.value((model.predict(X) - y) / scale)
    T = leaves.targets(model.scaler_.transform_y(y) if leaves.standardizes else y)
    return leaves.hbp_losses(model._scaled(X), T, model.omega_, model.beta_, Tree(int(model.depth)))
