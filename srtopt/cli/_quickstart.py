"""Quickstart: fit depth-2 and depth-3 soft regression trees on scikit-learn's bundled
diabetes data (no download) and compare test R^2 with CART and a linear model.

    python examples/quickstart.py
"""

from __future__ import annotations

import time

from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from srtopt import SoftRegressionTree
from srtopt.export import export_text


def main() -> None:
    data = load_diabetes()
    X_train, X_test, y_train, y_test = train_test_split(data.data, data.target, test_size=0.25, random_state=0)
    models = {
        "SRT l2, depth 2": SoftRegressionTree(depth=2, random_state=0),
        "SRT l2, depth 3": SoftRegressionTree(depth=3, random_state=0),
        "SRT, depth 2": SoftRegressionTree(depth=2, regularization=None, random_state=0),
        "CART, depth 3": DecisionTreeRegressor(max_depth=3, random_state=0),
        "Linear regression": LinearRegression(),
    }
    print(f"diabetes: {len(y_train)} training rows, {len(y_test)} test rows, {X_train.shape[1]} features\n")
    print(f"{'model':<20} {'test R^2':>9} {'seconds':>8}")
    for name, model in models.items():
        start = time.perf_counter()
        model.fit(X_train, y_train)
        print(f"{name:<20} {model.score(X_test, y_test):>9.3f} {time.perf_counter() - start:>8.2f}")
    print()
    print(export_text(models["SRT l2, depth 2"], data.feature_names, X=X_train))


if __name__ == "__main__":
    main()
