"""Input checks and the internal scaling shared by the tree estimators.

The SRT method assumes features in [0, 1] (the 1/p factor, mu = 1) and a
standardized response; estimators fit these statistics on the training data
only and map predictions back.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ..view import Scaling
from .tabular import encoded_for_fit, encoded_for_predict, keep_input_columns


def check_fit_arrays(estimator, X, y, min_rows: int):
    """Validate (X, y) for fit with errors that name the argument."""
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target y is None")
    check_array_kind(X)
    n_x, n_y = _n_rows(X), _n_rows(y)
    if n_x is not None and n_y is not None and n_x != n_y:
        raise ValueError(f"X and y have different numbers of rows: X has {n_x}, y has {n_y}")
    _check_numeric_columns(X)
    _check_numeric_target(y)
    X, y = _naming("X or y", lambda: validate_data(estimator, X, y, dtype=np.float64, y_numeric=True,
                                                   ensure_all_finite=True), X)
    if y.dtype.kind not in "fiub":  # numpy strings of numbers ("1.5"): scikit-learn converts object arrays only
        y = y.astype(np.float64)
    if X.shape[0] < min_rows:
        raise ValueError(f"X has n_samples = {X.shape[0]}, fewer than the {min_rows} leaves of the "
                         f"tree; use a smaller depth or more data")
    check_spans(X, getattr(estimator, "feature_names_in_", None))
    check_spans(y[:, None], what=["y"])
    return X, y


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


def check_spans(X, names=None, what=None) -> None:
    """Refuse in one line a column of X whose largest value minus its smallest overflows (the scaling
    divides by it): "column 'a' of X" by its name in ``names`` or its index, or ``what[j]``."""
    span = np.max(X, axis=0) / 2 - np.min(X, axis=0) / 2
    wide = np.flatnonzero(~(span < np.finfo(float).max / 2))
    if wide.size == 0:
        return
    j = int(wide[0])
    column = what[j] if what is not None else f"column {str(names[j]) if names is not None else j!r} of X"
    raise ValueError(f"{column} spans {X[:, j].min():.3g} to {X[:, j].max():.3g}, a range larger than the largest "
                     f"float ({np.finfo(float).max:.3g}): rescale it (divide it by 1e10, say) before fitting")


def check_array_kind(X) -> None:
    """Refuse in one line an X that is 1-D, holds complex numbers, or is a DataFrame whose column names
    mix strings and other types (scikit-learn's errors print the whole array, or raise a TypeError)."""
    columns = getattr(X, "columns", None)
    if columns is not None:
        if len({isinstance(name, str) for name in columns}) > 1:
            shown = ", ".join(map(repr, list(columns)[:4])) + (", ..." if len(columns) > 4 else "")
            raise ValueError(f"X's column names mix strings and other types ({shown}): make them all strings, e.g. "
                             f"X.columns = X.columns.astype(str)")
        kinds = {dtype.kind for dtype in X.dtypes}
    else:
        array = _as_array(X)
        if array is None:
            return
        if array.ndim == 1:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got a 1-D array of {len(array)} values. Reshape "
                             f"your data: X.reshape(-1, 1) for a single feature, X.reshape(1, -1) for a single row")
        kinds = {array.dtype.kind}
    if "c" in kinds:
        raise ValueError("Complex data not supported: X holds complex numbers, a tree takes real ones; pass their "
                         "real parts, X.real, or their moduli, abs(X)")


def _as_array(X):
    """X itself if it is a numpy array, a list or tuple as one (None if its rows differ in length, or X
    is anything else: scikit-learn checks those)."""
    if isinstance(X, np.ndarray):
        return X
    if isinstance(X, (list, tuple)):
        try:
            return np.asarray(X)
        except ValueError:
            return None
    return None


def check_table(estimator, X, y) -> None:
    """The checks of a search's (X, y) before its inner fits, a table with text or missing cells taken as the
    soft trees take it; sets ``feature_names_in_``/``n_features_in_`` from X's own columns."""
    encoded, encoder = encoded_for_fit(X)
    check_fit_arrays(estimator, encoded, y, 1)
    keep_input_columns(estimator, encoder)


def _check_numeric_columns(X) -> None:
    """A DataFrame column that is not numeric, named (scikit-learn's error names only a value)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        return
    for name, dtype in dtypes.items():
        if dtype.kind not in "fiub":
            try:
                np.asarray(X[name], dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"column {str(name)!r} of X is not numeric (values such as "
                                 f"{X[name].iloc[0]!r}); encode it as numbers or drop it") from None


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
    weights = _naming("sample_weight", lambda: np.asarray(sample_weight, dtype=np.float64))
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


def scaled_input(estimator, X):
    """X of predict/apply, validated against the fit and min-max scaled like the training data (a
    DataFrame's column of the protected group, named at fit by ``sensitive_features``, is dropped; a fit on
    a table encoded its columns, ``encoder_``: so are these)."""
    check_is_fitted(estimator)
    group = getattr(estimator, "sensitive_feature_name_", None)
    if group is not None and group in getattr(X, "columns", ()):
        X = X.drop(columns=group)
    check_array_kind(X)
    if getattr(estimator, "encoder_", None) is not None:  # the table's columns checked, then encoded
        X = _naming("X", lambda: encoded_for_predict(estimator, X))
        if not np.isfinite(X).all():
            raise ValueError(f"X holds an infinity (first in column {_nonfinite_column(X)} of the encoded table)")
        return estimator.scaler_.transform(X)
    X = _naming("X", lambda: validate_data(estimator, X, reset=False, dtype=np.float64,
                                           ensure_all_finite=True), X)
    return estimator.scaler_.transform(X)


def _naming(argument, call, X=None):
    """Run a scikit-learn validation; prefix its error with the argument when it names none and
    name the first column of ``X`` holding NaN or infinity.  Its fast check of finiteness sums the
    values: numbers near the largest float overflow there silently, as they are finite."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            return call()
    except ValueError as exc:
        column = _nonfinite_column(X) if X is not None and re.search(r"NaN|infinity", str(exc)) else None
        first, newline, rest = str(exc).partition("\n")
        text = first + (f" (first in column {column})" if column is not None else "") + newline + rest
        if re.search(r"(^|\W)(X|y)(\W|$)", str(exc)):
            raise ValueError(text) from exc
        raise ValueError(f"{argument}: {text}") from exc


def _nonfinite_column(X):
    """The name (DataFrame) or index of the first column of X with a NaN or an infinity."""
    try:
        values = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if values.ndim != 2:
        return None
    bad = np.flatnonzero(~np.isfinite(values).all(axis=0))
    if bad.size == 0:
        return None
    columns = getattr(X, "columns", None)
    return repr(str(columns[bad[0]])) if columns is not None else int(bad[0])


def take_rows(X, rows):
    """The rows ``rows`` of X, a DataFrame (its column names kept) or an array."""
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


def _n_rows(a):
    shape = getattr(a, "shape", None)
    if shape is not None:
        return shape[0] if len(shape) else None
    return len(a) if isinstance(a, (list, tuple)) else None


class MinMaxTarget:
    """Min-max scaling of X to [0, 1] and (weighted) standardization of y (y None: X alone, y's
    statistics 0 and 1); the rows of weight 0 are left out of both."""

    def fit(self, X, y, weights=None):
        seen = X if weights is None else X[weights > 0]  # a row of weight 0 is as if absent
        self.x_min = seen.min(axis=0)
        span = seen.max(axis=0) - self.x_min
        self.x_scale = np.where(span > 0, span, 1.0)
        if y is None:
            self.y_mean, self.y_std = 0.0, 1.0
            return self
        self.y_mean = float(np.average(y, weights=weights))
        std = _std(y, self.y_mean, weights)
        self.y_std = std if std > 0 else 1.0
        _warn_if_dominated(y, weights, self.y_mean, std)
        return self

    def scaling(self) -> Scaling:
        """The fitted statistics, whose methods hold the formulas."""
        return Scaling(self.x_min, self.x_scale, self.y_mean, self.y_std)

    def transform(self, X):
        return self.scaling().transform(X)

    def transform_y(self, y):
        return self.scaling().transform_y(y)

    def inverse_y(self, y_scaled):
        return self.scaling().inverse_y(y_scaled)


def _std(y, mean, weights):
    """The weighted standard deviation around ``mean``, safe for |y| ~ 1e300."""
    deviation = y - mean
    size = float(np.max(np.abs(deviation))) if len(y) else 0.0
    return size * float(np.sqrt(np.average((deviation / size) ** 2, weights=weights))) if size > 0 else 0.0


DOMINATED = 1e-2  # ratio of the standard deviations without and with the extreme values


def _warn_if_dominated(y, weights, mean, std):
    """Warn when the few most extreme values of y (1 % of the rows, at least one; 20 rows or
    more) carry nearly all its variance: the model is fitted in units of y's standard
    deviation, in which the other rows barely differ, so they are fitted poorly."""
    n = len(y)
    if n < 20 or std == 0:
        return
    k = max(1, n // 100)
    rest = np.argsort(np.abs(y - mean), kind="stable")[: n - k]
    w = None if weights is None else weights[rest]
    if w is not None and not np.any(w > 0):
        return
    rest_mean = float(np.average(y[rest], weights=w))
    rest_std = _std(y[rest], rest_mean, w)
    if rest_std < DOMINATED * std:
        extreme = max(1, int(np.sum(np.abs(y - rest_mean) > rest_std / DOMINATED)))
        values = "1 extreme value" if extreme == 1 else f"{extreme} extreme values"
        warnings.warn(f"y is dominated by {values}: its standard deviation is {std:.3g}, "
                      f"{rest_std:.3g} without them, and the tree is fitted in units of it, so the other "
                      f"rows will be fitted poorly. Remove or clip the extreme values, or transform y "
                      f"(e.g. a log), before fitting.", UserWarning, stacklevel=5)
