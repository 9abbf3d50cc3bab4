"""What the benchmark scripts share: where they write, the paper's folds, the report writer.
The scripts import it as ``benchmarks.common``: run them from the repository root with
``PYTHONPATH=.`` (benchmarks/README.md)."""

from __future__ import annotations

import time
from pathlib import Path

from srtopt._io import atomic_write
from srtopt.datasets import load
from srtopt.experiments.protocol import fold_indices, scale_fold

BENCHMARKS = Path(__file__).resolve().parent
RESULTS = BENCHMARKS / "results"  # every script's reports and resumable stores
ROOT = BENCHMARKS.parent  # the repository


def paper_fold(X, y, k, seed=0):
    """(X_train, X_test, y_train, y_test) of fold k of the paper's split (KFold(4), ``seed``), X
    min-max scaled and y standardized on the training part."""
    train, test = fold_indices(len(y), 4, seed, k)
    return scale_fold(X[train], X[test], y[train], y[test])[:4]


def first_fold(name, data_home=None):
    """:func:`paper_fold` 0 of the dataset ``name``."""
    X, y, _ = load(name, data_home=data_home)
    return paper_fold(X, y, 0)


def write_report(path, lines) -> None:
    """Write the report ``lines`` to ``path`` (its folder made if missing; atomically, so an
    interrupted write leaves the former report) and print them."""
    text = "\n".join(lines) + "\n"
    path.parent.mkdir(exist_ok=True)
    atomic_write(path, text.encode())
    print(text)


def timed(model, X, y):
    """(seconds, model) of ``model.fit(X, y)``."""
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model
