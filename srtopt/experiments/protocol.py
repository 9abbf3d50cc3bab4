"""One run of the paper's protocol (section 5), and its classification twin.

A run is one (dataset, depth, method, parameters, fold, seed):

* the fold split is ``KFold(n_splits, shuffle=True, random_state=split_seed)``
  on the dataset's rows (``StratifiedKFold`` on its classes for a classification
  dataset), identical for every method and seed;
* X is min-max scaled to [0, 1] with statistics of the *training fold only*
  (test values may fall outside [0, 1]); a regression y is standardized the same
  way, a class label is replaced by its index among the training fold's sorted
  classes (a test row of a class absent from the training fold gets -1, which
  no prediction equals);
* the estimator is built by the method's factory with the seed, fitted on the
  training fold (the fit alone is timed with ``time.perf_counter``) and scored:
  a regressor by R^2 on the standardized scale (equal to R^2 on the raw scale,
  as R^2 is invariant under an affine map of y); a classifier by its accuracy
  and its test log loss, the mean of -log p over the test rows, p being the
  ``predict_proba`` column of the row's class (matched through ``classes_``; 0
  for a class the estimator does not know) clipped to [``PROBABILITY_FLOOR``, 1];
  and by its leaves (``get_n_leaves()``, else ``tree_.n_leaves``, else none).
"""

from __future__ import annotations

import dataclasses
import json
import time
import traceback
from typing import Any

import numpy as np

__all__ = ["PROBABILITY_FLOOR", "RunSpec", "canonical_params", "execute_run", "fold_indices", "scale_fold"]

#: the smallest probability of a test row's class counted in the log loss (so that a confident miss costs
#: -log(1e-15) = 34.5, the default floor of scikit-learn's log_loss before version 1.2)
PROBABILITY_FLOOR = 1e-15


def canonical_params(params: dict | None) -> str:
    """The JSON text identifying a parameter set (sorted keys, no spaces).

    Parameters
    ----------
    params : dict or None
        The method's parameters; None is the empty set. Values JSON cannot hold are written as ``str(value)``.

    Returns
    -------
    str
        The canonical JSON text, e.g. ``'{"alpha":0.5,"init":"cart"}'``.
    """
    return json.dumps(params or {}, sort_keys=True, separators=(",", ":"), default=str)


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One run of the protocol: (dataset, depth, method, parameters, fold, seed).

    Parameters
    ----------
    dataset : str
        Dataset slug (:func:`srtopt.datasets.load`).
    depth : int
        Tree depth D given to the method's factory.
    method : str
        Registered method name (:mod:`srtopt.experiments.methods`).
    params : str
        The method's parameters as canonical JSON (:func:`canonical_params`).
    n_folds : int
        Number of folds of the KFold split.
    split_seed : int
        ``random_state`` of the KFold shuffle.
    fold : int
        The test fold, 0-based.
    seed : int
        Seed given to the method's factory.
    """

    dataset: str
    depth: int
    method: str
    params: str  # canonical JSON, see canonical_params
    n_folds: int
    split_seed: int
    fold: int
    seed: int

    @property
    def key(self) -> tuple:
        return dataclasses.astuple(self)


def fold_indices(n_rows: int, n_folds: int, split_seed: int, fold: int, y=None):
    """Train and test row indices of fold ``fold`` (0-based).

    Parameters
    ----------
    n_rows : int
        Number of rows of the dataset.
    n_folds : int
        Number of folds (>= 2).
    split_seed : int
        ``random_state`` of ``KFold(n_folds, shuffle=True)`` (``StratifiedKFold`` with ``y``).
    fold : int
        The test fold, in 0..n_folds - 1.
    y : array-like of shape (n_rows,) or None, default=None
        The class labels, for folds stratified on them; None: plain KFold.

    Returns
    -------
    train, test : ndarray of int
        Row indices of the training and of the test part.

    Raises
    ------
    ValueError
        If ``fold`` is out of range, or scikit-learn's (Stratified)KFold refuses ``n_folds`` (< 2, more than
        ``n_rows``, or with ``y`` more than the rows of every class).
    """
    import warnings

    from sklearn.model_selection import KFold, StratifiedKFold

    kind = KFold if y is None else StratifiedKFold
    splitter = kind(n_splits=n_folds, shuffle=True, random_state=split_seed)
    with warnings.catch_warnings():  # a class with fewer rows than folds: its rows spread over some folds
        warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
        splits = list(splitter.split(np.empty((n_rows, 1)), y))
    for index, (train, test) in enumerate(splits):
        if index == fold:
            return train, test
    raise ValueError(f"fold {fold} out of range for {n_folds} folds")


def scale_fold(X_train, X_test, y_train, y_test):
    """Min-max scale X and standardize y with training-fold statistics only.

    Returns ``(X_train, X_test, y_train, y_test, stats)``.  A feature constant
    on the training fold maps to 0; a constant y is only centred.

    Parameters
    ----------
    X_train, X_test : ndarray of shape (n_train, p) and (n_test, p)
        Features of the training and test fold.
    y_train, y_test : ndarray of shape (n_train,) and (n_test,)
        Targets of the training and test fold.

    Returns
    -------
    X_train, X_test, y_train, y_test : ndarray
        The scaled arrays (new arrays; the inputs are not modified).
    stats : dict
        ``x_min`` and ``x_range`` (arrays of shape (p,)), ``y_mean`` and ``y_std`` (floats).
    """
    X_train, X_test, x_min, x_range = _min_max(X_train, X_test)
    y_mean = float(np.mean(y_train))
    y_std = float(np.std(y_train))
    if not y_std > 0:
        y_std = 1.0
    stats = {"x_min": x_min, "x_range": x_range, "y_mean": y_mean, "y_std": y_std}
    return (
        X_train,
        X_test,
        (y_train - y_mean) / y_std,
        (y_test - y_mean) / y_std,
        stats,
    )


def _encoded_fold(table, train, test):
    """A table (text columns, empty cells) as numbers, encoded on its training rows (:mod:`srtopt.encoding`):
    the same columns for every method of the run."""
    import warnings

    from srtopt.encoding import TableEncoder

    encoder = TableEncoder().fit(table.iloc[train])
    with warnings.catch_warnings():  # a category of the test rows only: counted in none of the columns
        warnings.simplefilter("ignore", UserWarning)
        return encoder.transform(table)


def _min_max(X_train, X_test):
    """X_train and X_test min-max scaled with the training statistics, and those (x_min, x_range);
    a feature constant on the training fold maps to 0."""
    x_min = X_train.min(axis=0)
    x_range = X_train.max(axis=0) - x_min
    x_range = np.where(x_range > 0, x_range, 1.0)
    return (X_train - x_min) / x_range, (X_test - x_min) / x_range, x_min, x_range


def _iterations(estimator) -> int | None:
    value = getattr(estimator, "n_iter_", None)
    if value is None:
        return None
    try:
        return int(np.max(np.asarray(value)))
    except (TypeError, ValueError):
        return None


def _r2(y_true, y_pred) -> float:
    from sklearn.metrics import r2_score

    y_pred = np.asarray(y_pred, dtype=float).reshape(-1)
    if y_pred.shape != y_true.shape:
        raise ValueError(f"predict returned shape {y_pred.shape}, expected {y_true.shape}")
    if not np.all(np.isfinite(y_pred)):
        raise ValueError("predict returned non-finite values")
    return float(r2_score(y_true, y_pred))


def _leaves(estimator) -> int | None:
    """The leaves of a fitted tree (a search's: its ``best_estimator_``): ``get_n_leaves()``, else
    ``tree_.n_leaves``; None for other models."""
    estimator = getattr(estimator, "best_estimator_", estimator)
    if callable(getattr(estimator, "get_n_leaves", None)):
        return int(estimator.get_n_leaves())
    n_leaves = getattr(getattr(estimator, "tree_", None), "n_leaves", None)
    return None if n_leaves is None else int(n_leaves)


def _codes(y_train, y_test):
    """Each label's index among the sorted training classes; -1 for a test label not among them."""
    classes, train = np.unique(y_train, return_inverse=True)
    where = np.searchsorted(classes, y_test).clip(0, len(classes) - 1)
    test = np.where(classes[where] == y_test, where, -1)
    return train, test


def _accuracy(estimator, X, y) -> float:
    y_pred = np.asarray(estimator.predict(X)).reshape(-1)
    if y_pred.shape != y.shape:
        raise ValueError(f"predict returned shape {y_pred.shape}, expected {y.shape}")
    return float(np.mean(y_pred == y))


def _log_loss(estimator, X, y, n_classes: int) -> float:
    """Mean of -log p(y_i | x_i) over the rows; p from ``predict_proba``, its columns matched to the
    class codes 0..n_classes-1 through ``classes_`` (or taken as those codes without it)."""
    proba = np.asarray(estimator.predict_proba(X), dtype=float)
    known = np.asarray(getattr(estimator, "classes_", np.arange(n_classes)))
    if proba.shape != (len(y), len(known)):
        raise ValueError(f"predict_proba returned shape {proba.shape}, expected {(len(y), len(known))}")
    if not np.all(np.isfinite(proba)):
        raise ValueError("predict_proba returned non-finite values")
    if not (np.issubdtype(known.dtype, np.number) and np.all(np.isin(known, np.arange(n_classes)))):
        raise ValueError(f"classes_ is {known.tolist()}, not among the class codes 0..{n_classes - 1} it was "
                         f"fitted on")
    column = np.full(n_classes + 1, -1)  # class code -> column of proba; the last entry: code -1
    column[known.astype(int)] = np.arange(len(known))
    p = np.where(column[y] >= 0, proba[np.arange(len(y)), column[y]], 0.0)
    return float(-np.mean(np.log(np.clip(p, PROBABILITY_FLOOR, 1.0))))


def _classification_run(estimator, X_train, X_test, y_train, y_test) -> dict[str, Any]:
    """Fit (timed) and score a classifier on class codes."""
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    n_classes = int(y_train.max()) + 1
    return {
        "accuracy_train": _accuracy(estimator, X_train, y_train),
        "accuracy_test": _accuracy(estimator, X_test, y_test),
        "log_loss_test": _log_loss(estimator, X_test, y_test, n_classes),
        "seconds": seconds, "leaves": _leaves(estimator),
    }


def _regression_run(estimator, X_train, X_test, y_train, y_test) -> dict[str, Any]:
    """Fit (timed) and score a regressor on standardized targets."""
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    return {"r2_train": _r2(y_train, estimator.predict(X_train)), "r2_test": _r2(y_test, estimator.predict(X_test)),
            "seconds": seconds}


def execute_run(spec: RunSpec, factory, data_home=None, data=None) -> dict[str, Any]:
    """Run ``spec`` and return the stored fields; never raises for a method error.

    ``data`` may carry ``(X, y)`` already loaded; otherwise the dataset is
    loaded (and checksummed) with :func:`srtopt.datasets.load`.  The dataset's
    task (its registry entry) selects the protocol.  BLAS and OpenMP pools are
    limited to one thread for the duration of the run.

    Parameters
    ----------
    spec : RunSpec
        The run.
    factory : callable
        ``factory(depth, seed, **params)`` returning an unfitted regressor or classifier (the method's).
    data_home : str, path-like or None, default=None
        Directory of the dataset files, passed to :func:`srtopt.datasets.load`.
    data : tuple (X, y) or None, default=None
        The dataset already loaded; None loads ``spec.dataset``.

    Returns
    -------
    dict
        ``seconds`` (of the fit), ``iterations`` (the estimator's ``n_iter_`` or None), ``status`` ("ok" or
        "error"), ``error`` (None, or the exception and the end of its traceback), ``n_train`` and
        ``n_test``; for regression ``r2_train`` and ``r2_test`` (R^2 on the standardized scale), for
        classification ``accuracy_train``, ``accuracy_test``, ``log_loss_test`` and ``leaves`` (None for a
        model without leaves).  Fields not reached are None.
    """
    from srtopt.datasets import get_info
    from srtopt.estimators.threads import one_thread

    result: dict[str, Any] = {
        "r2_train": None, "r2_test": None, "seconds": None, "iterations": None,
        "status": "error", "error": None, "n_train": None, "n_test": None,
        "accuracy_train": None, "accuracy_test": None, "log_loss_test": None, "leaves": None,
    }
    try:
        if data is None:
            from srtopt.datasets import load

            X, y, _ = load(spec.dataset, data_home)
        else:
            X, y = data
        classify = get_info(spec.dataset).task == "classification"
        train, test = fold_indices(len(y), spec.n_folds, spec.split_seed, spec.fold, y if classify else None)
        X = _encoded_fold(X, train, test) if hasattr(X, "iloc") else X
        if classify:
            X_train, X_test, _, _ = _min_max(X[train], X[test])
            y_train, y_test = _codes(y[train], y[test])
        else:
            X_train, X_test, y_train, y_test, _ = scale_fold(X[train], X[test], y[train], y[test])
        result["n_train"], result["n_test"] = len(train), len(test)
        params = json.loads(spec.params)
        with one_thread(None):
            estimator = factory(spec.depth, spec.seed, **params)
            scores = (_classification_run if classify else _regression_run)(estimator, X_train, X_test,
                                                                          y_train, y_test)
        result.update(scores, iterations=_iterations(estimator), status="ok")
    except Exception as exc:  # stored with the run, never stops the benchmark
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        text = "".join(lines[-6:]).strip()
        result["error"] = f"{type(exc).__name__}: {exc}\n{text}"
    return result
