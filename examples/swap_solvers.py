"""
Swap the BN solver with one argument
====================================

Train the same tree with different BN solvers by changing one argument.

    PYTHONPATH=. python examples/swap_solvers.py

The default ("auto": Newton with the exact Hessian on the one-node and small subtree
subproblems, L-BFGS-B on the others), IPOPT through CasADi and through cyipopt (if installed),
both with the formulation's exact Hessian, SciPy's SLSQP and L-BFGS-B; prints train/test R^2,
the training objective E and seconds.  E is the soft objective of eq. (obj) that training
minimizes, not the error of the predictions: a lower E (SLSQP's below) can come with a lower
test R^2.  Solver specs are plain strings (clone-safe, grid-searchable), options after a colon:
``"ipopt:tol=1e-8,hessian=limited-memory"``.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from srtopt import SoftRegressionTree
from srtopt.solvers import SolverUnavailableError, make_solver


def main():
    rng = np.random.default_rng(1)
    X = rng.random((1500, 6))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4] \
        + rng.standard_normal(1500)  # Friedman #1
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    print(f"{'bn_solver':<18}{'train R^2':>10}{'test R^2':>10}{'E':>12}{'seconds':>9}")
    runs = {}
    for spec in ("auto", "ipopt", "cyipopt", "slsqp", "l-bfgs-b"):
        try:
            make_solver("bn", spec)
        except SolverUnavailableError as exc:
            print(f"{spec:<18} skipped: {exc}")
            continue
        tree = SoftRegressionTree(depth=2, regularization=1e-3, max_iter=5, bn_solver=spec, random_state=0)
        start = time.perf_counter()
        tree.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        print(f"{spec:<18}{tree.score(X_train, y_train):10.4f}{tree.score(X_test, y_test):10.4f}"
              f"{tree.objective_:12.6f}{seconds:9.2f}")
        runs[spec] = (seconds, tree.score(X_test, y_test))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for spec, (seconds, score) in runs.items():
        ax.scatter(seconds, score)
        ax.annotate(spec, (seconds, score), textcoords="offset points", xytext=(4, 4))
    ax.set(xlabel="fit seconds", ylabel="test R^2", title="BN solvers: accuracy against time")
    fig.tight_layout()


if __name__ == "__main__":
    main()
