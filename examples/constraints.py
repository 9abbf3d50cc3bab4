"""
Fair and monotone trees
=======================

Constrain a soft regression tree: the groups' mean predictions within a gap of each other
(``constraints="parity:gap=d"`` with ``fit(..., sensitive_features=group)``) and the prediction
decreasing in a feature (``monotonic_cst``).  Generated data: the target rises with ``income``
and falls with ``distance``, and the protected group has higher incomes, so an unconstrained
tree predicts it higher.

    PYTHONPATH=. python examples/constraints.py

Prints each tree's test R^2, its gap between the groups' mean test predictions and the
constraint report of the training data, and plots the predictions along ``distance``.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from srtopt import SoftRegressionTree
from srtopt.export import export_constraints


def data(n, rng):
    group = (rng.random(n) < 0.4).astype(int)
    income = rng.normal(1.0 + 0.3 * group, 0.5)
    distance = rng.random(n) * 10
    age = rng.random(n) * 50 + 20
    y = 2 * income - 0.3 * distance + np.where(age > 45, 1.0, 0.0) + 0.3 * rng.standard_normal(n)
    return pd.DataFrame({"income": income, "distance": distance, "age": age}), y, group


def gap(prediction, group):
    return prediction[group == 1].mean() - prediction[group == 0].mean()


def main():
    rng = np.random.default_rng(0)
    X, y, group = data(3000, rng)
    X_test, y_test, group_test = data(3000, rng)
    models = {
        "unconstrained": SoftRegressionTree(depth=2, random_state=0),
        "parity gap 0.1": SoftRegressionTree(depth=2, random_state=0, constraints="parity:gap=0.1"),
        "parity 0.1, distance decreasing": SoftRegressionTree(depth=2, random_state=0, constraints="parity:gap=0.1",
                                                              monotonic_cst={"distance": -1}),
    }
    print(f"{'model':<34}{'test R^2':>9}{'test gap':>10}")
    for name, model in models.items():
        model.fit(X, y, sensitive_features=group)
        prediction = model.predict(X_test)
        r2 = 1 - np.sum((y_test - prediction) ** 2) / np.sum((y_test - y_test.mean()) ** 2)
        print(f"{name:<34}{r2:9.3f}{gap(prediction, group_test):10.3f}")
    print()
    print(export_constraints(models["parity 0.1, distance decreasing"]))

    row = X_test.iloc[[0] * 50].copy()
    row["distance"] = np.linspace(0, 10, 50)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, model in models.items():
        ax.plot(row["distance"], model.predict(row), label=name)
    ax.set(xlabel="distance", ylabel="prediction of one test row", title="predictions along distance")
    ax.legend(fontsize=8)
    fig.tight_layout()


if __name__ == "__main__":
    main()
