"""
Your own loss: Huber against squared with gross outliers
========================================================

Change the loss of the SRT model: Huber against squared with 5% gross outliers, and losses
of your own -- a CasADi callable, and a Loss class registered under a name.

    PYTHONPATH=. python examples/custom_loss.py        (SRTOPT_EXAMPLES_QUICK=1: a smaller run)

Friedman's function #1 with noise; 5% of the *training* targets get a gross error of
+-10 standard deviations; the test targets are clean.  The squared loss of eq. (obj)
chases the outliers; Huber (squared within delta, linear beyond), the smoothed absolute
loss and the user's log-cosh and Cauchy losses do not.  Each loss only changes E's loss
term: NODEC-DR, its BN step and the exact derivatives are the same, and the LN step
follows the loss (weighted least squares for squared, exact Newton with the loss's second
derivative for the others; a user's callable gets it from CasADi).
"""

import os
import time

import casadi as ca
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.model_selection import train_test_split

from srtopt import SoftRegressionTree
from srtopt.models.terms import Loss, register_loss

QUICK = bool(os.environ.get("SRTOPT_EXAMPLES_QUICK"))


class Cauchy(Loss):
    """c^2 log(1 + (r / c)^2): a redescending loss, written once for numpy, CasADi and Pyomo."""

    name = "cauchy"

    def __init__(self, c=0.5):
        self.c = float(c)

    def expression(self, r, ops):
        return self.c**2 * ops.log(1 + (r / self.c) ** 2)

    def derivative(self, r):
        return 2 * r / (1 + (r / self.c) ** 2)

    def second_derivative(self, r):
        z = (r / self.c) ** 2
        return 2 * (1 - z) / (1 + z) ** 2


register_loss("cauchy", Cauchy)  # now loss="cauchy" or "cauchy:c=0.3" works, e.g. in a grid search


def corrupted(n, share=0.05, seed=0):
    X, y = make_friedman1(n, noise=0.5, random_state=seed)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=seed)
    rng = np.random.default_rng(seed)
    bad = rng.choice(len(y_train), int(share * len(y_train)), replace=False)
    y_train = y_train.copy()
    y_train[bad] += rng.choice([-10.0, 10.0], len(bad)) * y.std()
    return X_train, X_test, y_train, y_test


def main():
    X_train, X_test, y_train, y_test = corrupted(600 if QUICK else 2000)
    losses = {"squared": "squared", "huber (delta 0.3)": "huber", "absolute (smoothed)": "absolute",
              "log-cosh (CasADi callable)": lambda r: ca.log(ca.cosh(r)), "cauchy (registered class)": "cauchy:c=0.3"}
    print(f"{'loss':<28}{'test R^2':>9}{'seconds':>9}  LN solver")
    scores = {}
    for label, loss in losses.items():
        start = time.perf_counter()
        tree = SoftRegressionTree(depth=2, loss=loss, max_iter=3 if QUICK else 10, random_state=0).fit(X_train, y_train)
        ln = sorted({r["ln"]["solver"] for r in tree.history_ if "solver" in r["ln"]})
        scores[label] = tree.score(X_test, y_test)
        print(f"{label:<28}{scores[label]:9.3f}{time.perf_counter() - start:9.2f}  {', '.join(ln)}")
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.barh(list(scores), list(scores.values()))
    ax.invert_yaxis()
    ax.set(xlabel="test R^2 (clean test targets)", title="Losses on training targets with outliers")
    fig.tight_layout()


if __name__ == "__main__":
    main()
