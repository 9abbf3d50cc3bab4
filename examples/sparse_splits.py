"""
Sparse splits and feature selection with nonsmooth penalties
============================================================

Sparse oblique splits and feature selection with nonsmooth penalties, and a penalty of your own.

    PYTHONPATH=. python examples/sparse_splits.py      (SRTOPT_EXAMPLES_QUICK=1: a smaller run)

1. A split_l1 path on scikit-learn's diabetes data (10 features, depth 3): for growing
   strengths, the mean number of features a split reads against the test R^2.  Each
   strength starts from the previous tree (``init=WarmStart.from_estimator(previous)``),
   as regularization paths usually do; the first is the dense tree of the defaults.
2. A feature_l1 path on the same data with 10 appended noise columns, with the
   safeguards on (k0=0): which columns the tree still uses (a feature is removed when
   its weights are exactly zero in every split and every leaf).
3. A penalty of your own, written in this file: l1 on the leaf slopes (sparse leaf models),
   with its proximal operator and its l1 weights, so both the proximal gradient and L-BFGS-B's
   variable split accept it.  srtopt has the same term built in (``leaf_l1``): the two agree.
"""

import os

import casadi as ca
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from srtopt import SoftRegressionTree
from srtopt.models.terms import Penalty, register_penalty
from srtopt.training.initialization import WarmStart

QUICK = bool(os.environ.get("SRTOPT_EXAMPLES_QUICK"))


class MyLeafL1(Penalty):
    """strength * sum over leaves and features j >= 1 of |beta_jt|: sparse leaf models."""

    name = "my_leaf_l1"
    smooth = False
    blocks = ("beta",)

    def __init__(self, strength=1e-3):
        self.strength = float(strength)

    def value(self, omega, beta):
        return self.strength * float(np.sum(np.abs(beta[:, 1:])))

    def gradient(self, omega, beta):
        g = np.zeros_like(beta)
        g[:, 1:] = self.strength * np.sign(beta[:, 1:])
        return np.zeros_like(omega), g

    def casadi(self, omega, beta):
        return self.strength * ca.sum1(ca.sum2(ca.fabs(beta[:, 1:])))

    def pyomo(self, omega, beta):
        return self.strength * sum(abs(v) for row in beta for v in row[1:])

    def prox(self, omega, beta, step):
        return np.array(omega, float), self.block_prox("beta", None, omega, beta, beta, step)

    def block_prox(self, kind, rows, omega, beta, V, step):
        X = np.array(V, float)
        X[:, 1:] = np.sign(X[:, 1:]) * np.maximum(np.abs(X[:, 1:]) - step * self.strength, 0.0)
        return X

    def block_l1_weights(self, kind, rows, omega, beta):
        w = np.full((len(rows), beta.shape[1]), self.strength)
        w[:, 0] = 0.0
        return w


register_penalty("my_leaf_l1", MyLeafL1)


def features_per_split(tree):
    """Mean number of features read by the splits that route training rows both ways (a closed
    split, whose subtree is pruned, is not counted)."""
    t = np.arange(1, len(tree.omega_) + 1)
    live = (tree.node_counts_[2 * t - 1] > 0) & (tree.node_counts_[2 * t] > 0)
    return float(np.mean(np.count_nonzero(tree.omega_[live, 1:], axis=1)))


def path(X_train, y_train, penalty, strengths, depth, max_iter, **params):
    """The dense tree (defaults), then one tree per strength; yield (strength, tree)."""
    previous = SoftRegressionTree(depth=depth, max_iter=max_iter, random_state=0).fit(X_train, y_train)
    yield 0.0, previous
    for strength in strengths:
        previous = SoftRegressionTree(depth=depth, max_iter=max_iter, random_state=0, init=WarmStart.from_estimator(
            previous), penalty=f"{penalty}:strength={strength}", **params).fit(X_train, y_train)
        yield strength, previous


def main():
    X, y = load_diabetes(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
    depth, max_iter = (2, 3) if QUICK else (3, 10)

    print(f"1. split_l1 path, depth {depth}: features read per split (of {X.shape[1]}) against test R^2")
    strengths = [1e-4, 1e-3] if QUICK else [1e-4, 3e-4, 1e-3, 3e-3]
    points = []
    for strength, tree in path(X_train, y_train, "split_l1", strengths, depth, max_iter):
        points.append((features_per_split(tree), tree.score(X_test, y_test)))
        print(f"   strength {strength:<8g} features per split {points[-1][0]:5.2f}   test R^2 {points[-1][1]:.3f}")
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(*zip(*points), marker="o")
    ax.set(xlabel="features read per split (mean)", ylabel="test R^2", title="The split_l1 path, diabetes")
    fig.tight_layout()

    noise = np.random.default_rng(0).random((len(y), 10))
    Xn_train, Xn_test = np.hstack([X_train, noise[: len(y_train)]]), np.hstack([X_test, noise[len(y_train):]])
    print("2. feature_l1 path with 10 noise columns appended (k0=0: E never increases from the warm start)")
    strengths = [0.01, 0.03] if QUICK else [0.003, 0.01, 0.03, 0.1]
    for strength, tree in path(Xn_train, y_train, "feature_l1", strengths, 2, max_iter, k0=0):
        used = np.any(tree.omega_[:, 1:] != 0, axis=0) | np.any(tree.beta_[:, 1:] != 0, axis=0)
        print(f"   strength {strength:<8g} real features used {used[:10].sum():2d}/10   noise columns used "
              f"{used[10:].sum():2d}/10   test R^2 {tree.score(Xn_test, y_test):.3f}")

    print("3. a penalty of your own, my_leaf_l1 (registered in this file), and the built-in leaf_l1")
    for penalty, solver in (("my_leaf_l1", "prox-gradient"), ("my_leaf_l1", "l-bfgs-b"), ("leaf_l1", "auto")):
        tree = SoftRegressionTree(depth=2, penalty=f"{penalty}:strength=0.01", ln_solver=solver, max_iter=max_iter,
                                  random_state=0).fit(X_train, y_train)
        zeros = int(np.sum(tree.beta_[:, 1:] == 0))
        print(f"   {penalty:<11} ln_solver={solver:<14} zero leaf slopes {zeros}/{tree.beta_[:, 1:].size}   "
              f"test R^2 {tree.score(X_test, y_test):.3f}")


if __name__ == "__main__":
    main()
