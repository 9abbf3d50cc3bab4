"""Helpers the benchmark scripts share (``benchmarks/`` is on ``sys.path`` when a script runs)."""

from __future__ import annotations

import time

from srtopt.datasets import load
from srtopt.experiments.protocol import fold_indices, scale_fold


def first_fold(name, data_home=None):
    """(X_train, X_test, y_train, y_test) of the first fold of the paper's split (KFold(4), seed 0),
    X min-max scaled and y standardized on the training part."""
    X, y, _ = load(name, data_home=data_home)
    train, test = fold_indices(len(y), 4, 0, 0)
    return scale_fold(X[train], X[test], y[train], y[test])[:4]


def timed(model, X, y):
    """(seconds, model) of ``model.fit(X, y)``."""
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model
