"""The targets of the regressors and the row weights of every fit, checked in one line that names what is wrong
(the rows X are the input pipeline's, :mod:`srtopt.inputs`; a classifier's labels are
:mod:`~.class_targets`'s)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import column_or_1d


def check_rows(estimator, X, y, min_rows: int) -> None:
    """Refuse a missing y (in scikit-learn's words, naming ``estimator``), y of another number of rows than X, or
    fewer rows than ``min_rows`` (the tree's leaves)."""
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target y is None")
    n_x, n_y = len(X), n_rows(y)
    if n_y is not None and n_x != n_y:
        raise ValueError(f"X and y have different numbers of rows: X has {n_x}, y has {n_y}")
    if n_x < min_rows:
        raise ValueError(f"X has n_samples = {n_x}, fewer than the {min_rows} leaves of the tree; use a smaller "
                         f"depth or more data")


def check_target(estimator, X, y, min_rows: int) -> np.ndarray:
    """A regressor's y as a 1-D float array of finite numbers, one per row of X (the tree's columns)."""
    check_rows(estimator, X, y, min_rows)
    _check_numeric_target(y)
    values = column_or_1d(np.asarray(y) if not hasattr(y, "to_numpy") else y.to_numpy(), warn=True)
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"y must be numbers, got values such as {values[0]!r}") from None
    if not np.isfinite(values).all():
        row = int(np.flatnonzero(~np.isfinite(values))[0])
        kind = "NaN" if np.isnan(values[row]) else "infinity"
        raise ValueError(f"y contains {kind} (first in row {row}): give every row a finite target, or drop those rows")
    span = np.max(values) / 2 - np.min(values) / 2
    if not span < np.finfo(float).max / 2:
        raise ValueError(f"y spans {values.min():.3g} to {values.max():.3g}, a range larger than the largest float "
                         f"({np.finfo(float).max:.3g}): rescale it (divide it by 1e10, say) before fitting")
    return values


def _check_numeric_target(y) -> None:
    """Refuse, in one line that points to the classifier, a target of text that is not numbers (class labels)."""
    values = np.asarray(y)
    if values.dtype.kind not in "OUS":
        return
    for value in values.ravel():
        if not isinstance(value, str):
            continue
        try:
            float(value)
        except ValueError:
            raise ValueError(f"y must be numbers, got values such as {str(value)!r}: for class labels use "
                             f"SoftClassificationTree (a SoftRegressionTree fits a numeric target)") from None


def check_sample_weight(sample_weight, n_samples: int, min_rows: int = 1) -> np.ndarray:
    """Weights s_i of fit as a float array of length ``n_samples``: ones for None, a number
    repeated, or a 1-D array of finite weights >= 0 with at least ``min_rows`` positive (the
    leaves of the tree: each row of weight 0 is as if absent), bounded as the method counts rows
    (:func:`~srtopt.models.srt.problem.counted_weights`: weights summing to less than one row or more
    than max(N, 100,000) rows in proportion to that many), so that no step of the fit sees weights that
    overflow or underflow."""
    from ..models.srt.problem import counted_weights

    if sample_weight is None:
        return np.ones(n_samples)
    try:
        weights = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"sample_weight must be numbers, got {type(sample_weight).__name__}") from None
    if weights.ndim == 0:
        weights = np.full(n_samples, float(weights))
    if weights.shape != (n_samples,):
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {weights.shape}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("sample_weight must be finite and >= 0")
    if not np.any(weights > 0):
        raise ValueError("sample_weight must not be all zero: at least one weight must be positive")
    positive = int(np.count_nonzero(weights))
    if positive < min_rows:
        raise ValueError(f"sample_weight has {positive} positive weight(s), fewer than the {min_rows} leaves of the "
                         f"tree (a row of weight 0 is as if absent); use a smaller depth or more rows")
    return counted_weights(weights)


def take_rows(X, rows):
    """The rows ``rows`` of X, a DataFrame (its column names kept) or an array."""
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


def n_rows(a):
    """The number of rows of an array, a DataFrame or a list (None for anything else)."""
    shape = getattr(a, "shape", None)
    if shape is not None:
        return shape[0] if len(shape) else None
    return len(a) if isinstance(a, (list, tuple)) else None
