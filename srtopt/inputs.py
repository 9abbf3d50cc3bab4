"""The input pipeline: one fitted object, :class:`InputSchema`, turns the rows a user gives into the scaled columns
a tree reads, at fit (:meth:`InputSchema.fit`, then :meth:`InputSchema.scaled`) and at every prediction
(:meth:`InputSchema.transform`), for the estimators, their searches, persistence and ``read_view`` alike.

At fit, in this order:

* the protected group's column, when ``sensitive_features`` names one, is taken out of a DataFrame X (it is not
  a feature);
* X is checked once (:func:`check_kind`: 2-D, real numbers, column names that are all strings or none, each
  named once);
* a table with text, categorical or boolean columns or missing cells is encoded (:class:`srtopt.encoding.TableEncoder`,
  fitted here or given: a search's whole table); a table of numbers is read as floats, every cell finite;
* no column may span more than the largest float (the scaling divides by the span);
* the columns are min-max scaled to [0, 1] and y standardized when the leaf model asks for it
  (:func:`fit_scaling`: the method assumes both, the paper's mu = 1 and 1/p).

At predict, X is checked against the fit as scikit-learn's estimators check it, in the same words: by its column
names when both have them (the same names in the same order), by its number of columns otherwise; then encoded
(or read as floats) and scaled.  numpy and pandas alone: a saved tree predicts without scikit-learn.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ._stack import user_stacklevel
from .encoding import TableEncoder, as_values, needs_encoding
from .view import Scaling


@dataclasses.dataclass(frozen=True)
class InputSchema:
    """The fitted input pipeline of one estimator (module docstring).

    Attributes
    ----------
    owner : str
        The estimator's class name, as the messages name it.
    n_columns : int
        The table's columns (its features; the protected group's column is not one).
    names : tuple of str or None
        The column names of a DataFrame X whose names were all strings (scikit-learn's ``feature_names_in_``).
    group : str or None
        The DataFrame column holding the protected group (``sensitive_features`` by name), dropped from X.
    encoder : TableEncoder or None
        The encoding of a table with text or missing cells; None for a table of numbers.
    scaling : Scaling or None
        The min-max scaling of the tree's columns and the standardization of y (None until :meth:`scaled`).
    """

    owner: str
    n_columns: int
    names: tuple | None = None
    group: str | None = None
    encoder: TableEncoder | None = None
    scaling: Scaling | None = None

    # ------------------------------------------------------------------ fit
    @classmethod
    def fit(cls, owner: str, X, sensitive_features=None, *, encoder=None, tables=True):
        """(the schema without its scaling, the tree's columns as floats (n, p'), the group of each row or None,
        the table as inner fits take its rows again).

        ``encoder``: the fitted encoder of a table the rows X were drawn from (a search's or a guard's fold): X
        is encoded by it whatever X holds.  ``tables=False``: an estimator of numbers only (no encoding; a text
        column or a missing cell is refused)."""
        if encoder is not None and not isinstance(encoder, TableEncoder):
            raise TypeError(f"encoder must be a fitted srtopt.encoding.TableEncoder or None, got "
                            f"{type(encoder).__name__}")
        X, groups, group = take_group(X, sensitive_features)
        check_kind(X)
        names = _string_names(X)
        encode = tables and (encoder is not None or needs_encoding(X))
        if encode:
            encoder = encoder or TableEncoder().fit(X)
            matrix, table = encoder.transform(X), X if hasattr(X, "columns") or isinstance(X, np.ndarray) else \
                as_values(X)
            if matrix.shape[1] == 0:
                raise ValueError("X has no column left to learn from once encoded (each text column has one "
                                 "category)")
            n_columns = len(encoder.columns_)
        else:
            encoder, matrix = None, float_rows(X, names, tables)
            table, n_columns = matrix if names is None else X, matrix.shape[1]
        check_finite(matrix, _tree_names(encoder, names, matrix.shape[1]), tables=tables)
        if matrix.shape[1] == 0:
            raise ValueError(f"X has 0 feature(s) (shape=({len(matrix)}, 0)) while a minimum of 1 is required.")
        check_spans(matrix, _tree_names(encoder, names, matrix.shape[1]))
        if groups is not None and len(groups) != len(matrix):
            raise ValueError(f"sensitive_features must hold one group per row of X ({len(matrix)}), got shape "
                             f"{np.shape(groups)}")
        return cls(owner, n_columns, names, group, encoder), matrix, groups, table

    def scaled(self, matrix, y=None, weights=None):
        """(this schema with the scaling of the training columns ``matrix``, and of ``y`` when given; the
        scaled columns)."""
        schema = dataclasses.replace(self, scaling=fit_scaling(matrix, y, weights))
        return schema, schema.scaling.transform(matrix)

    # ------------------------------------------------------------------ predict
    def rows(self, X) -> np.ndarray:
        """The tree's columns (unscaled floats) of the rows X given to predict, checked against the fit."""
        X = _records(X)
        if self.group is not None and self.group in getattr(X, "columns", ()):
            X = X.drop(columns=self.group)
        check_kind(X, predict=True, n_columns=self.n_columns)
        self._check_columns(X)
        names = _tree_names(self.encoder, self.names, self.n_columns)
        if self.encoder is not None:
            self._check_count(X.shape[1] if hasattr(X, "columns") else as_values(X).shape[1])
            matrix = self.encoder.transform(X)
        else:
            matrix = float_rows(X, self.names, tables=False, predict=True)
            self._check_count(matrix.shape[1])
        check_finite(matrix, names, predict=True)
        return matrix

    def transform(self, X) -> np.ndarray:
        """The scaled columns of the rows X given to predict (:meth:`rows`, then the scaling)."""
        return self.scaling.transform(self.rows(X))

    def _check_count(self, n: int) -> None:
        if n != self.n_columns:
            raise ValueError(f"X has {n} features, but {self.owner} is expecting {self.n_columns} features as input.")

    def _check_columns(self, X) -> None:
        """X's columns against the fit's, in scikit-learn's words (its estimators' checks say the same)."""
        given = _string_names(X)
        if self.names is None and given is not None:
            warnings.warn(f"X has feature names, but {self.owner} was fitted without feature names", UserWarning,
                          stacklevel=user_stacklevel())
        elif self.names is not None and given is None and not hasattr(X, "columns"):
            warnings.warn(f"X does not have valid feature names, but {self.owner} was fitted with feature names",
                          UserWarning, stacklevel=user_stacklevel())
        elif self.names is not None and given is not None and list(given) != list(self.names):
            raise ValueError(_names_differ(list(self.names), list(given)))


# ---------------------------------------------------------------------- the checks, once
def check_kind(X, predict=False, n_columns=None) -> None:
    """Refuse in one line an X that is not a 2-D table of real numbers or of a table's cells: sparse, 1-D (at
    predict, a single row), complex, or a DataFrame whose column names mix strings and other types or name a
    column twice."""
    if _is_sparse(X):
        raise TypeError("X is a sparse matrix; the trees take dense rows: pass X.toarray()")  # as scikit-learn
    columns = getattr(X, "columns", None)
    if columns is not None:
        if len({isinstance(name, str) for name in columns}) > 1:
            shown = ", ".join(map(repr, list(columns)[:4])) + (", ..." if len(columns) > 4 else "")
            raise ValueError(f"X's column names mix strings and other types ({shown}): make them all strings, e.g. "
                             f"X.columns = X.columns.astype(str)")
        repeated = list(dict.fromkeys(c for c in columns[columns.duplicated()]))
        if repeated:
            raise ValueError(f"X names the column(s) {', '.join(map(repr, repeated))} more than once: rename them")
        kinds = {dtype.kind for dtype in X.dtypes}
    else:
        array = _as_array(X)
        if array is None:
            return
        if array.ndim == 1:
            raise ValueError(_one_dimensional(X, array, predict, n_columns))
        if array.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got an array of shape {array.shape}")
        kinds = {array.dtype.kind}
    if "c" in kinds:
        raise ValueError("Complex data not supported: X holds complex numbers, a tree takes real ones; pass their "
                         "real parts, X.real, or their moduli, abs(X)")


def float_rows(X, names=None, tables=True, predict=False) -> np.ndarray:
    """X as a 2-D float array, a column that is not numbers refused in one line that names it."""
    frame = getattr(X, "dtypes", None)
    if frame is not None and hasattr(frame, "items"):
        for j, (name, dtype) in enumerate(frame.items()):
            if dtype.kind not in "fiub":
                _as_floats(X.iloc[:, j], _column(j, names), tables, predict)
    values = _as_floats(X, "X", tables, predict)
    if values.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got an array of shape {values.shape}")
    if values.shape[0] == 0:
        raise ValueError(f"X has 0 sample(s) (shape=(0, {values.shape[1]})) while a minimum of 1 is required.")
    return values


def check_finite(values, names, tables=True, predict=False) -> None:
    """Refuse a NaN or an infinity in the float columns ``values``, naming the first column that holds one
    (``names``: the tree's columns)."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    j = int(np.flatnonzero(bad.any(axis=0))[0])
    kind = "NaN" if np.isnan(values[:, j]).any() else "infinity"
    where = f"(first in column {names[j]!r})" if names is not None else f"(first in column {j})"
    if kind == "infinity":
        raise ValueError(f"X contains infinity {where}: replace it with a finite number or drop the row")
    if predict:
        raise ValueError(f"X contains NaN {where}, and the model was fitted on a table without missing values in "
                         f"that column: fill those cells, or fit on a table that has them")
    remedy = ("" if tables else ": this estimator takes numbers only; fill or drop those rows (the soft trees take "
                                "missing cells)")
    raise ValueError(f"X contains NaN {where}{remedy}")


def check_spans(X, names=None) -> None:
    """Refuse in one line a column of X whose largest value minus its smallest overflows (the scaling divides by
    it)."""
    span = np.max(X, axis=0) / 2 - np.min(X, axis=0) / 2
    wide = np.flatnonzero(~(span < np.finfo(float).max / 2))
    if wide.size == 0:
        return
    j = int(wide[0])
    column = f"column {names[j]!r}" if names is not None else f"column {j}"
    raise ValueError(f"{column} of X spans {X[:, j].min():.3g} to {X[:, j].max():.3g}, a range larger than the "
                     f"largest float ({np.finfo(float).max:.3g}): rescale it (divide it by 1e10, say) before fitting")


# ---------------------------------------------------------------------- the scaling
#: ratio of y's standard deviation without and with its most extreme values below which the fit warns
DOMINATED = 1e-2


def fit_scaling(X, y=None, weights=None) -> Scaling:
    """The min-max scaling of X to [0, 1] and the (weighted) standardization of y (None: y's statistics 0 and 1);
    the rows of weight 0 are left out of both, as if absent.  Warns when a few extreme values of y carry nearly
    all its variance."""
    seen = X if weights is None else X[weights > 0]
    x_min = seen.min(axis=0)
    span = seen.max(axis=0) - x_min
    x_scale = np.where(span > 0, span, 1.0)
    if y is None:
        return Scaling(x_min, x_scale, 0.0, 1.0)
    mean = float(np.average(y, weights=weights))
    std = _std(y, mean, weights)
    _warn_if_dominated(y, weights, mean, std)
    return Scaling(x_min, x_scale, mean, std if std > 0 else 1.0)


def _std(y, mean, weights):
    """The weighted standard deviation around ``mean``, safe for |y| ~ 1e300."""
    deviation = y - mean
    size = float(np.max(np.abs(deviation))) if len(y) else 0.0
    return size * float(np.sqrt(np.average((deviation / size) ** 2, weights=weights))) if size > 0 else 0.0


def _warn_if_dominated(y, weights, mean, std):
    """Warn when the few most extreme values of y (1 % of the rows, at least one; 20 rows or more) carry nearly
    all its variance: the model is fitted in units of y's standard deviation, in which the other rows barely
    differ, so they are fitted poorly."""
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
                      f"(e.g. a log), before fitting.", UserWarning, stacklevel=user_stacklevel())


# ---------------------------------------------------------------------- helpers
def take_group(X, sensitive_features):
    """(X without the protected group's column, the group of each row or None, the column's name or None)."""
    if sensitive_features is None:
        return X, None, None
    if isinstance(sensitive_features, str):
        columns = getattr(X, "columns", None)
        if columns is None or sensitive_features not in columns:
            raise ValueError(f"sensitive_features={sensitive_features!r} names no column of X (pass X as a DataFrame "
                             f"with that column, or the groups as an array)")
        return X.drop(columns=sensitive_features), np.asarray(X[sensitive_features]), sensitive_features
    values = np.asarray(sensitive_features)
    if values.ndim != 1:
        raise ValueError(f"sensitive_features must hold one group per row of X, got shape {values.shape}")
    return X, values, None


def _records(X):
    """A list of records (dicts of column: value) as the DataFrame of its rows; anything else as it is."""
    if isinstance(X, (list, tuple)) and X and all(isinstance(row, dict) for row in X):
        import pandas as pd

        return pd.DataFrame.from_records(list(X))
    return X


def _string_names(X):
    """The column names of a DataFrame X when they are all strings (scikit-learn's feature names), else None."""
    columns = getattr(X, "columns", None)
    if columns is None or not len(columns) or not all(isinstance(name, str) for name in columns):
        return None
    return tuple(columns)


def _tree_names(encoder, names, p):
    """The names of the tree's columns as the messages give them: the encoder's, the table's, or None (the
    columns' positions)."""
    if encoder is not None:
        return encoder.names
    return list(names) if names is not None and len(names) == p else None


def _names_differ(fitted: list, given: list) -> str:
    """scikit-learn's message for a DataFrame whose column names are not the fit's."""
    unseen = [name for name in given if name not in fitted]
    missing = [name for name in fitted if name not in given]
    text = "The feature names should match those that were passed during fit.\n"
    if unseen:
        text += "Feature names unseen at fit time:\n" + "".join(f"- {name}\n" for name in sorted(unseen)[:5])
    if missing:
        text += "Feature names seen at fit time, yet now missing:\n" + "".join(f"- {name}\n"
                                                                               for name in sorted(missing)[:5])
    if not unseen and not missing:
        text += "Feature names must be in the same order as they were in fit.\n"
    return text


def _column(j, names):
    return f"column {names[j]!r} of X" if names is not None else f"column {j} of X"


def _as_floats(values, what, tables, predict):
    """``values`` as floats; text refused in one line naming ``what`` and a value."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(values, dtype=np.float64)
    except TypeError as exc:  # a cell that is neither a number nor text (numpy's words: "argument must be ...")
        raise TypeError(f"{what} holds a cell that is not a number: {exc}") from None
    except ValueError:
        sample = next((v for v in np.asarray(values, dtype=object).ravel() if isinstance(v, str)), None)
        shown = f" (values such as {sample!r})" if sample is not None else ""
        if predict:
            raise ValueError(f"{what} holds text{shown}, and the model was fitted on numbers") from None
        remedy = "" if tables else ": this estimator takes numbers only; encode it as numbers or drop it"
        raise ValueError(f"{what} is not numeric{shown}{remedy}") from None


def _is_sparse(X) -> bool:
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def _as_array(X):
    """X itself if it is a numpy array, a list or tuple as one (None if its rows differ in length, or X is
    anything else)."""
    if isinstance(X, np.ndarray):
        return X
    if getattr(X, "ndim", None) == 1 and hasattr(X, "to_numpy"):  # a pandas Series
        return X.to_numpy()
    if isinstance(X, (list, tuple)):
        try:
            return np.asarray(X)
        except ValueError:
            return None
    return None


def _one_dimensional(X, array, predict, n_columns) -> str:
    """The refusal of a 1-D X: at predict, a pandas Series is one row; otherwise what reshaping to do."""
    if predict and hasattr(X, "index") and not hasattr(X, "columns"):
        return ("X is a single row (a pandas Series): pass it as a one-row DataFrame, X.to_frame().T, or select "
                "rows with df.iloc[[i]]")
    if predict and n_columns is not None and len(array) == n_columns:
        return (f"X must be 2-D (n_samples, n_features), got a 1-D array of {len(array)} values. Reshape your data: "
                f"X.reshape(1, -1) for a single row")
    return (f"X must be 2-D (n_samples, n_features), got a 1-D array of {len(array)} values. Reshape your data: "
            f"X.reshape(-1, 1) for a single feature, X.reshape(1, -1) for a single row")
