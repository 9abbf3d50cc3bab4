"""One run of the paper's protocol (section 5).

A run is one (dataset, depth, method, parameters, fold, seed):

* the fold split is ``KFold(n_splits, shuffle=True, random_state=split_seed)``
  on the dataset's rows, identical for every method and seed;
* X is min-max scaled to [0, 1] and y standardized with statistics of the
  *training fold only* (test values may fall outside [0, 1]);
* the estimator is built by the method's factory with the seed, fitted on the
  training fold (the fit alone is timed with ``time.perf_counter``) and scored
  by R^2 on the standardized scale (equal to R^2 on the raw scale, as R^2 is
  invariant under an affine map of y).
"""

from __future__ import annotations

import dataclasses
import json
import time
import traceback
from typing import Any

import numpy as np

__all__ = ["RunSpec", "canonical_params", "execute_run", "fold_indices", "scale_fold"]


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


def fold_indices(n_rows: int, n_folds: int, split_seed: int, fold: int):
    """Train and test row indices of fold ``fold`` (0-based).

    Parameters
    ----------
    n_rows : int
        Number of rows of the dataset.
    n_folds : int
        Number of folds (>= 2).
    split_seed : int
        ``random_state`` of ``KFold(n_folds, shuffle=True)``.
    fold : int
        The test fold, in 0..n_folds - 1.

    Returns
    -------
    train, test : ndarray of int
        Row indices of the training and of the test part.

    Raises
    ------
    ValueError
        If ``fold`` is out of range, or scikit-learn's KFold refuses ``n_folds`` (< 2 or > ``n_rows``).
    """
    from sklearn.model_selection import KFold

    splitter = KFold(n_splits=n_folds, shuffle=True, random_state=split_seed)
    for index, (train, test) in enumerate(splitter.split(np.empty((n_rows, 1)))):
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
    x_min = X_train.min(axis=0)
    x_range = X_train.max(axis=0) - x_min
    x_range = np.where(x_range > 0, x_range, 1.0)
    y_mean = float(np.mean(y_train))
    y_std = float(np.std(y_train))
    if not y_std > 0:
        y_std = 1.0
    stats = {"x_min": x_min, "x_range": x_range, "y_mean": y_mean, "y_std": y_std}
    return (
        (X_train - x_min) / x_range,
        (X_test - x_min) / x_range,
        (y_train - y_mean) / y_std,
        (y_test - y_mean) / y_std,
        stats,
    )


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


def execute_run(spec: RunSpec, factory, data_home=None, data=None) -> dict[str, Any]:
    """Run ``spec`` and return the stored fields; never raises for a method error.

    ``data`` may carry ``(X, y)`` already loaded; otherwise the dataset is
    loaded (and checksummed) with :func:`srtopt.datasets.load`.  BLAS and
    OpenMP pools are limited to one thread for the duration of the run.

    Parameters
    ----------
    spec : RunSpec
        The run.
    factory : callable
        ``factory(depth, seed, **params)`` returning an unfitted regressor (the method's).
    data_home : str, path-like or None, default=None
        Directory of the dataset files, passed to :func:`srtopt.datasets.load`.
    data : tuple (X, y) or None, default=None
        The dataset already loaded; None loads ``spec.dataset``.

    Returns
    -------
    dict
        ``r2_train``, ``r2_test`` (R^2 on the standardized scale), ``seconds`` (of the fit), ``iterations``
        (the estimator's ``n_iter_`` or None), ``status`` ("ok" or "error"), ``error`` (None, or the
        exception and the end of its traceback), ``n_train`` and ``n_test``.  Fields not reached are None.
    """
    from threadpoolctl import threadpool_limits

    result: dict[str, Any] = {
        "r2_train": None, "r2_test": None, "seconds": None, "iterations": None,
        "status": "error", "error": None, "n_train": None, "n_test": None,
    }
    try:
        if data is None:
            from srtopt.datasets import load

            X, y, _ = load(spec.dataset, data_home)
        else:
            X, y = data
        train, test = fold_indices(len(y), spec.n_folds, spec.split_seed, spec.fold)
        X_train, X_test, y_train, y_test, _ = scale_fold(X[train], X[test], y[train], y[test])
        result["n_train"], result["n_test"] = len(train), len(test)
        params = json.loads(spec.params)
        with threadpool_limits(limits=1):
            estimator = factory(spec.depth, spec.seed, **params)
            start = time.perf_counter()
            estimator.fit(X_train, y_train)
            seconds = time.perf_counter() - start
            r2_train = _r2(y_train, estimator.predict(X_train))
            r2_test = _r2(y_test, estimator.predict(X_test))
        result.update(
            r2_train=r2_train, r2_test=r2_test, seconds=seconds,
            iterations=_iterations(estimator), status="ok",
        )
    except Exception as exc:  # stored with the run, never stops the benchmark
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        text = "".join(lines[-6:]).strip()
        result["error"] = f"{type(exc).__name__}: {exc}\n{text}"
    return result
