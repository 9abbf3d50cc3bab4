"""Quickstart: soft regression trees on scikit-learn's bundled diabetes data (no download),
beside CART, a linear model and a random forest.

Every model is scored twice: by 4-fold cross-validation (the mean and spread of the test
R^2 over the folds: what to compare) and on one 75/25 split (the tree printed at the end
is the depth-2 SRT of that split).  "SRT CV search" chooses its depth and leaves by an inner
cross-validation on each training fold (SoftRegressionTreeCV(), its defaults).

    python examples/quickstart.py
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold, train_test_split
from sklearn.tree import DecisionTreeRegressor

from srtopt import SoftRegressionTree, SoftRegressionTreeCV
from srtopt.export import export_text

FOLDS = 4


def models() -> dict:
    return {
        "SRT l2, depth 2": SoftRegressionTree(depth=2, random_state=0),
        "SRT l2, depth 3": SoftRegressionTree(depth=3, random_state=0),
        "SRT CV search": SoftRegressionTreeCV(),
        "SRT (no l2), depth 2": SoftRegressionTree(depth=2, regularization=None, random_state=0),
        "CART, depth 3": DecisionTreeRegressor(max_depth=3, random_state=0),
        "linear regression": LinearRegression(),
        "random forest (100)": RandomForestRegressor(100, random_state=0, n_jobs=1),
    }


def cross_validated(model, X, y) -> tuple[float, float, float]:
    """(mean, standard deviation) of the test R^2 over FOLDS folds, and mean fit seconds."""
    scores, seconds = [], []
    for train, test in KFold(FOLDS, shuffle=True, random_state=0).split(X):
        fitted, start = clone(model), time.perf_counter()
        fitted.fit(X[train], y[train])
        seconds.append(time.perf_counter() - start)
        scores.append(fitted.score(X[test], y[test]))
    return float(np.mean(scores)), float(np.std(scores)), float(np.mean(seconds))


def main() -> None:
    data = load_diabetes()
    X, y = data.data, data.target
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    print(f"diabetes: {len(y)} rows, {X.shape[1]} features; test R^2 by {FOLDS}-fold cross-validation "
          f"(mean and sd over the folds) and on one 75/25 split\n")
    print(f"{'model':<22} {'CV R^2':>7} {'(sd)':>7} {'split R^2':>10} {'fit s':>7}")
    fitted = {}
    for name, model in models().items():
        mean, sd, seconds = cross_validated(model, X, y)
        fitted[name] = clone(model).fit(X_train, y_train)
        print(f"{name:<22} {mean:>7.3f} {f'({sd:.3f})':>7} {fitted[name].score(X_test, y_test):>10.3f} "
              f"{seconds:>7.2f}")
    cv = fitted["SRT CV search"]
    repeats = f" repeated {cv.n_splits_ // cv.cv} times" if cv.n_splits_ > cv.cv else ""
    print(f"\nSRT CV search: on the split's training rows, {cv.cv}-fold CV{repeats} chose depth {cv.depth_} and "
          f"{cv.leaf_} leaves (out of {len(cv.cv_results_['params'])} candidates tried).")
    print(f"\nThe depth-2 SRT l2 of the split ({len(y_train)} training rows):\n")
    print(export_text(fitted["SRT l2, depth 2"], data.feature_names, X=X_train))


if __name__ == "__main__":
    main()
