"""srtopt.milo.local_search: the objective's formula, the search's moves and guarantees."""

import math

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from srtopt.milo.kernels import route
from srtopt.milo.local_search import LocalSearch
from srtopt.milo.objective import AxisObjective, tree_objective


def test_objective_is_the_documented_formula():
    rng = np.random.default_rng(0)
    X, y = rng.random((50, 2)), rng.standard_normal(50)
    objective = AxisObjective("squared", l1=0.01, cp=0.05)
    features, thresholds = np.array([0]), np.array([0.5])
    value, coef = tree_objective(objective, X, y, features, thresholds, 1)
    # the reference: per leaf, min (1/N) ||r||^2 + l1 |b|_1 is Lasso with alpha = l1 N / (2 n_leaf)
    expected = 0.05
    for leaf in (2, 3):
        rows = route(X, features, thresholds, 1) == leaf
        n = rows.sum()
        lasso = Lasso(alpha=0.01 * 50 / (2 * n), tol=1e-14, max_iter=10**6).fit(X[rows], y[rows])
        expected += np.sum((y[rows] - lasso.predict(X[rows])) ** 2) / 50 + 0.01 * np.abs(lasso.coef_).sum()
    assert value == pytest.approx(expected, rel=1e-6)
    crowded = AxisObjective("squared", min_samples_leaf=40)
    assert tree_objective(crowded, X, y, features, thresholds, 1)[0] == math.inf


def test_absolute_loss_objective_uses_exact_lad_fits():
    X = np.linspace(0, 1, 9)[:, None]
    y = np.where(X[:, 0] < 0.5, 2 * X[:, 0], 5.0)
    y[8] = 100.0  # an outlier the L1 fit ignores
    value, coef = tree_objective(AxisObjective("absolute", l1=0.0), X, y, np.array([0]), np.array([0.45]), 1)
    assert value == pytest.approx(95.0 / 9)
    np.testing.assert_allclose(coef[0], [0.0, 2.0], atol=1e-9)


@pytest.mark.parametrize("bad, match", [({"loss": "huber"}, "loss must be one of"),
                                        ({"l1": -1}, "l1 must be a finite number"),
                                        ({"loss": "absolute", "l2": 1.0}, "l2 must be 0"),
                                        ({"min_samples_leaf": 0}, "min_samples_leaf must be an integer")])
def test_objective_rejects_bad_parameters(bad, match):
    with pytest.raises(ValueError, match=match):
        AxisObjective(**bad)


def planted(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = np.where(X[:, 2] < 0.3, 1 + X[:, 0], np.where(X[:, 1] < 0.6, -2 * X[:, 0], 3.0))
    return X, y + 0.01 * rng.standard_normal(n)


def test_finds_a_planted_tree():
    X, y = planted()
    objective = AxisObjective("squared", l1=1e-4, min_samples_leaf=4)
    found = LocalSearch(X, y, 2, objective, random_state=0).run(n_restarts=20)
    assert found.objective < 1e-3  # the noise's variance is 1e-4
    assert set(found.features) == {1, 2}  # x2 < 0.3 and x1 < 0.6, in one of the two equivalent orders
    assert found.log[-1][2] == found.objective and found.descents == 20


def test_a_descent_never_raises_the_objective_and_ends_at_a_local_optimum():
    X, y = planted(seed=1)
    objective = AxisObjective("squared", l1=1e-3, min_samples_leaf=5)
    search = LocalSearch(X, y, 3, objective, random_state=1)
    features, thresholds = search._random()
    before = tree_objective(objective, X, y, features, thresholds, 3)[0]
    search.descend(features, thresholds)
    after = tree_objective(objective, X, y, features, thresholds, 3)[0]
    assert after <= before
    assert not any(search.visit(features, thresholds, t) for t in range(1, 8))  # no move improves


def test_same_seed_same_result_and_starts_are_used():
    X, y = planted(seed=2)
    objective = AxisObjective("squared")
    a = LocalSearch(X, y, 2, objective, random_state=3).run(n_restarts=4)
    b = LocalSearch(X, y, 2, objective, random_state=3).run(n_restarts=4)
    assert a.features.tolist() == b.features.tolist() and a.objective == b.objective
    start = (np.array([2, 0, 1]), np.array([0.3, 0.5, 0.6]))
    one = LocalSearch(X, y, 2, objective, random_state=0).run(n_restarts=2, starts=[start])
    assert one.descents == 2


def test_a_passed_deadline_leaves_the_tree_without_splits_after_one_descent():
    """The first descent always runs, but the deadline is checked before each node visit and no
    other descent starts: the tree is the one without splits, its leaf fitted."""
    from srtopt.solvers.deadline import Deadline

    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = np.where(X[:, 0] < 0.4, X[:, 1], 2 - X[:, 2]) + 0.05 * rng.standard_normal(300)
    objective = AxisObjective("squared", l1=1e-3)
    found = LocalSearch(X, y, 2, objective, random_state=0).run(n_restarts=5, deadline=Deadline(0))
    assert found.descents == 1
    assert found.features.tolist() == [-1, -1, -1]  # no node was visited: the tree without splits
    assert found.objective == pytest.approx(tree_objective(objective, X, y, found.features, found.thresholds, 2)[0])
