"""The small-data guard (``leaf_ridge="auto"``): pure noise, and real data with few rows per leaf.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/small_data.py

Chosen on: pure noise, y ~ N(0, 1) independent of X ~ U[0, 1]^50, 200 rows, a 70/30 split,
10 seeds, depths 2 and 3 (the case of issue 23).  Confirmed on data not looked at while
choosing: the paper's ``computer`` (209 rows, 37 features: inside the zone at depth 3 only)
on the paper's 4 folds of split seeds 0-4; scikit-learn's diabetes data subsampled to 80
training rows (6 draws, the rest is the test set); Friedman #1 with 25 noise features, 200
training rows and 400 test rows (6 seeds).  Each cell: the default tree against the same
tree with ``leaf_ridge=1`` (the guard off), CART of the same depth and least squares.
Writes ``benchmarks/results/small_data.md``.  ``--smoke``: every case on one split of tiny data, depth 2.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from benchmarks.common import parse, pick, results
from benchmarks.common.data import load, tiny
from srtopt import SoftRegressionTree
from srtopt.estimators.leaf_ridge import in_small_data_zone
from srtopt.experiments.protocol import fold_indices, scale_fold


def noise(seed):
    rng = np.random.default_rng(seed)
    rows, columns = pick((200, 50), (60, 10))
    X, y = rng.random((rows, columns)), rng.standard_normal(rows)
    return train_test_split(X, y, test_size=0.3, random_state=seed)


def computer(seed, fold):
    X, y, _ = load("computer")
    train, test = fold_indices(len(y), 4, seed, fold)
    return scale_fold(X[train], X[test], y[train], y[test])[:4]


def diabetes(seed):
    X, y = pick(load_diabetes(return_X_y=True), tiny("diabetes", 10))
    order = np.random.default_rng(seed).permutation(len(y))
    return X[order[:80]], X[order[80:]], y[order[:80]], y[order[80:]]


def friedman(seed):
    n = pick(200, 60)
    X, y = make_friedman1(3 * n, pick(30, 10), noise=1.0, random_state=seed)
    return X[:n], X[n:], y[:n], y[n:]


CASES = {  # name -> (split makers, chosen on?)
    "pure noise 140x50": ([lambda s=s: noise(s) for s in range(10)], True),
    "computer (paper folds)": ([lambda s=s, f=f: computer(s, f) for s in range(5) for f in range(4)], False),
    "diabetes, 80 rows": ([lambda s=s: diabetes(s) for s in range(6)], False),
    "Friedman #1 + 25 noise, 200 rows": ([lambda s=s: friedman(s) for s in range(6)], False),
}


def cell(split, depth):
    """Test R^2 of (default, leaf_ridge=1, CART, OLS), the default's factor and seconds."""
    X_train, X_test, y_train, y_test = split()
    started = time.perf_counter()
    guarded = SoftRegressionTree(depth=depth, random_state=0).fit(X_train, y_train)
    seconds = time.perf_counter() - started
    off = SoftRegressionTree(depth=depth, random_state=0, leaf_ridge=1).fit(X_train, y_train)
    others = [DecisionTreeRegressor(max_depth=depth, random_state=0), LinearRegression()]
    scores = [r2_score(y_test, m.predict(X_test)) for m in [guarded, off] + [o.fit(X_train, y_train) for o in others]]
    return scores, guarded.leaf_ridge_, seconds, in_small_data_zone(len(y_train), X_train.shape[1], depth)


def main(argv=None) -> int:
    parse(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter), argv)
    lines = ["# The small-data guard: leaf_ridge=\"auto\"", "",
             "Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/small_data.py`. Mean test R^2 "
             "(min in brackets); 'zone': fits with N < 2^D (p + 1), where the guard runs; 'factor': the "
             "factors on lambda_b it chose.", "",
             "| case | D | chosen on | zone | default (guard) | leaf_ridge=1 (off) | CART | least squares | "
             "factor | default s |",
             "|---|---:|---|---:|---:|---:|---:|---:|---|---:|"]
    for name, (splits, chosen_on) in CASES.items():
        for depth in pick((2, 3), (2,)):
            runs = [cell(split, depth) for split in pick(splits, splits[:1])]
            r2 = np.array([r[0] for r in runs])
            factors = sorted({f"{r[1]:g}" for r in runs}, key=float)
            lines.append(f"| {name} | {depth} | {'yes' if chosen_on else 'no (confirm)'} | "
                         f"{sum(r[3] for r in runs)}/{len(runs)} | "
                         + " | ".join(f"{r2[:, j].mean():.3f} ({r2[:, j].min():.3f})" for j in range(4))
                         + f" | {', '.join(factors)} | {np.mean([r[2] for r in runs]):.2f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    (results() / "small_data.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
