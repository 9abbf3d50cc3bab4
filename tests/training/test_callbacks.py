"""The progress lines: E, and the tree's training R^2 or accuracy on one scale from the first line to the last."""

import re

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.metrics import accuracy_score, r2_score

from srtopt import SoftClassificationTree, SoftRegressionTree
from srtopt.training.callbacks import Callback


class Iterates(Callback):
    def __init__(self):
        self.seen = []

    def on_run_begin(self, state):
        self.seen.append((state.omega, state.beta))

    def on_macro_end(self, state):
        self.seen.append((state.omega, state.beta))


def test_every_line_shows_the_weighted_training_r2_of_the_hbp_tree_at_that_iterate(capsys):
    """The stumble of issue 40: "initialized: E = 2466" then "macro 1: E = 0.55" read as two scales.  E is
    one objective, the soft model's, where every row pays every leaf: a leaf fitted on few rows at the
    initial tree can make it huge.  The training R^2 beside it is the HBP tree's, on the scale of the last
    line."""
    X, y = load_diabetes(return_X_y=True)
    X = np.delete(X, 1, axis=1)
    w = np.random.default_rng(0).integers(1, 4, len(y)).astype(float)
    iterates = Iterates()
    model = SoftRegressionTree(depth=3, max_iter=2, verbose=1, random_state=0, callbacks=[iterates])
    model.fit(X, y, sample_weight=w)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(("initialized", "macro"))]
    E = [float(re.search(r"E = (\S+),", line)[1]) for line in lines]
    r2 = [float(re.search(r"training R\^2 (\S+),", line)[1]) for line in lines]
    assert len(E) == len(r2) == 3 and all(value > 0 for value in E)
    Xs, ys = model.scaler_.transform(X), model.scaler_.transform_y(y)
    for (omega, beta), shown in zip(iterates.seen, r2):
        prediction = np.einsum("ij,ij->i", np.c_[np.ones(len(y)), Xs], beta[_hbp_rows(model, omega, Xs)])
        assert shown == pytest.approx(r2_score(ys, prediction, sample_weight=w), abs=1e-4)
    assert all(0 < value < 1 for value in r2)


def _hbp_rows(model, omega, Xs):
    from srtopt.routing import hbp_leaves, split_design
    from srtopt.tree import Tree

    tree = Tree(model.depth)
    return tree.leaf_rows(hbp_leaves(split_design(Xs), omega, tree))


def test_a_classifier_shows_the_training_accuracy_of_its_hbp_tree(capsys):
    rng = np.random.default_rng(1)
    X = rng.random((150, 3))
    y = np.where(X[:, 0] + 0.2 * rng.standard_normal(150) > 0.5, "a", "b")
    iterates = Iterates()
    model = SoftClassificationTree(depth=2, max_iter=2, verbose=1, random_state=0, callbacks=[iterates]).fit(X, y)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("macro")]
    Xs = model.scaler_.transform(X)
    Xa = model.leaf_model_.design(Xs)
    for (omega, beta), line in zip(iterates.seen[1:], lines):
        proba = model.leaf_model_.predict(Xa, beta[_hbp_rows(model, omega, Xs)])
        shown = float(re.search(r"training accuracy (\S+),", line)[1])
        assert shown == pytest.approx(accuracy_score(y, model.classes_[proba.argmax(axis=1)]), abs=1e-4)


def test_a_classifier_reports_the_cart_start_by_its_training_accuracy(capsys):
    """The CART start of a classifier is a DecisionTreeClassifier: its score is an accuracy, not an R^2."""
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(2)
    X = rng.random((120, 2))
    y = np.where(X[:, 0] > X[:, 1], "a", "b")
    SoftClassificationTree(depth=1, max_iter=1, verbose=1, random_state=0).fit(X, y)
    line = next(line for line in capsys.readouterr().err.splitlines() if line.startswith("initialized: "))
    assert "R^2" not in line
    shown = float(re.search(r"CART training accuracy ([0-9.]+),", line)[1])
    cart = DecisionTreeClassifier(max_depth=1, min_weight_fraction_leaf=0.05, random_state=0).fit(X, y)
    assert shown == pytest.approx(cart.score(X, y), abs=1e-4)  # the same data, the same CART
