"""The folds of the estimators' inner cross-validations (the leaf-ridge guard, the feature selection):
folds of the distinct rows, so that a row of integer weight k and k copies of it fall in the same fold.

The rows of positive weight are grouped by their content (X, y and the protected group), the distinct
rows sorted (so the order of the rows does not matter), and the distinct rows split by scikit-learn's
``KFold`` (``StratifiedKFold`` by the protected groups), shuffled with seed 0; every row goes where its
distinct row goes.  A row of weight 0 is in no fold, as if absent.
"""

from __future__ import annotations

import numpy as np


def distinct_rows(X, y, weights=None, groups=None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, codes): the rows of positive weight and, for each, the index of its distinct row among
    the sorted distinct rows of (X, y, groups)."""
    rows = np.arange(len(y)) if weights is None else np.flatnonzero(np.asarray(weights) > 0)
    columns = [_numbers(X)[rows], _codes(y)[rows][:, None]]
    if groups is not None:
        columns.append(np.asarray(groups, dtype=np.float64)[rows][:, None])
    _, codes = np.unique(np.hstack(columns), axis=0, return_inverse=True)
    return rows, np.ravel(codes)


def _numbers(X) -> np.ndarray:
    """X as floats: a table with text or missing cells by its encoding (rows equal in the table stay equal)."""
    from ..encoding import TableEncoder, needs_encoding

    return TableEncoder().fit(X).transform(X) if needs_encoding(X) else np.asarray(X, dtype=np.float64)


def _codes(y) -> np.ndarray:
    """y as floats: numbers as they are, labels by their index among the sorted labels."""
    y = np.asarray(y)
    return y.astype(np.float64) if y.dtype.kind in "fiub" else np.unique(y, return_inverse=True)[1].astype(float)


def n_distinct(X, y, weights=None) -> int:
    """The number of distinct rows of positive weight."""
    return int(distinct_rows(X, y, weights)[1].max(initial=-1)) + 1


def folds(X, y, n_folds: int, weights=None, groups=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(train rows, test rows)] of ``n_folds`` folds of the distinct rows (module docstring)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    rows, codes = distinct_rows(X, y, weights, groups)
    first = np.unique(codes, return_index=True)[1]  # a row of each distinct row, in the sorted order
    labels = None if groups is None else np.asarray(groups)[rows][first]
    splitter = KFold if groups is None else StratifiedKFold
    out = []
    for train, test in splitter(n_folds, shuffle=True, random_state=0).split(first, labels):
        out.append((rows[np.isin(codes, train)], rows[np.isin(codes, test)]))
    return out


def fold_params(params: dict, rows) -> dict:
    """The fit parameters of the rows ``rows``: arrays indexed; a column name, a number or an object (an
    encoder) as they are."""
    return {name: value if isinstance(value, str) or np.ndim(value) == 0 else np.asarray(value)[rows]
            for name, value in params.items()}
