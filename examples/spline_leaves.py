"""
Spline leaves: a curve per feature in every leaf
================================================

A depth-2 soft tree whose leaves are additive models (``leaf="spline"``), beside the same tree with the paper's
linear leaves, on data whose effects bend; then the curves of its leaves, one row of small panels per leaf
(:func:`srtopt.plotting.plot_leaf_curves`), and the tree as text.

    PYTHONPATH=. python examples/spline_leaves.py      (SRTOPT_EXAMPLES_QUICK=1: a smaller run)
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from srtopt import SoftRegressionTree
from srtopt.export import export_text
from srtopt.plotting import plot_leaf_curves

QUICK = bool(os.environ.get("SRTOPT_EXAMPLES_QUICK"))


def data(n, rng):
    """y = sin(6 x0) where x2 < 0.5, else 3 (x0 - 1/2)^2, plus 4 (x1 - 1/2)^2 and noise: bent effects that
    differ between two regions."""
    X = rng.random((n, 3))
    y = np.where(X[:, 2] < 0.5, np.sin(6 * X[:, 0]), 3 * (X[:, 0] - 0.5) ** 2) + 4 * (X[:, 1] - 0.5) ** 2
    return X, y + 0.1 * rng.standard_normal(n)


rng = np.random.default_rng(0)
X, y = data(600 if QUICK else 3000, rng)
X_test, y_test = data(2000, rng)
names = ["dose", "age", "region"]
for leaf in ("linear", "spline"):
    tree = SoftRegressionTree(depth=2, leaf=leaf, random_state=0).fit(X, y)
    print(f"{leaf:6s} leaves: test R^2 {tree.score(X_test, y_test):.3f}, {tree.get_n_leaves()} leaves, "
          f"{tree.beta_.shape[1]} coefficients per leaf, {tree.fit_seconds_:.2f} s")
print(export_text(tree, feature_names=names, top=3))
axes = plot_leaf_curves(tree, top=2, feature_names=names)  # its title says how to read the panels
plt.show()
