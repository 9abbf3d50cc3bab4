"""ORCTClassifier: scikit-learn's classifier conventions, the paper's prediction rule, the cost
matrix and class weights, the time limit, and one-line errors on bad input."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.utils.estimator_checks import _get_check_estimator_ids, estimator_checks_generator

from srtopt import ORCTClassifier, kernels
from srtopt.models.orct import class_scores
from srtopt.tree import Tree


def _sklearn_checks():
    """scikit-learn's checks of ORCTClassifier: its conventions with 2 starts (a third of the fits of 5:
    5 s of CPU instead of 12), its training accuracy (check_classifiers_train asks more than 0.83, which 2
    starts miss on its blobs) with 5."""
    few, more = ORCTClassifier(n_starts=2, random_state=0), ORCTClassifier(n_starts=5, random_state=0)
    for estimator in (few, more):
        for pair in estimator_checks_generator(estimator, mark="xfail"):
            check = pair[1] if isinstance(pair, tuple) else pair.values[1]
            if (getattr(check, "func", check).__name__ == "check_classifiers_train") == (estimator is more):
                yield pair


@pytest.mark.parametrize("estimator, check", list(_sklearn_checks()), ids=_get_check_estimator_ids)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]  # string labels
    return X, names, ORCTClassifier(random_state=0).fit(X, names)


def test_iris_and_breast_cancer_are_learned(iris):
    X, y, model = iris
    assert list(model.classes_) == ["setosa", "versicolor", "virginica"]
    assert model.score(X, y) > 0.95
    assert model.omega_.shape == (3, 5) and model.C_.shape == (4, 3) and len(model.starts_) == 20
    X, y = load_breast_cancer(return_X_y=True)
    assert ORCTClassifier(random_state=0).fit(X, y).score(X, y) > 0.95


def test_prediction_is_the_papers_rule_and_the_hbp_leaf_is_an_option(iris):
    X, y, model = iris
    Xs = model.scaler_.transform(X)
    tree = Tree(2)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, class_scores(kernels.split_design(Xs), model.omega_, model.C_, 512.0, tree))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.C_.sum(axis=1), 1.0)
    assert np.all(model.C_ >= 0) and np.all(np.abs(model.omega_) <= 1.0)  # the paper's bounds
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])
    hbp = model.predict_proba(X, mixture=False)
    np.testing.assert_array_equal(hbp, model.C_[model.apply(X) - 4])
    assert model.objective_ == min(start["objective"] for start in model.starts_)
    assert model.reachable_nodes().all() and model.feature_importances_.shape == (4,)
    with pytest.raises(ValueError, match="^mixture must be True or False, got 'yes'$"):
        model.predict_proba(X, mixture="yes")


def test_every_class_is_assigned_to_a_leaf(iris):
    """The paper's rows sum_t C_tk >= 1 (with 3 classes and 4 leaves)."""
    _, _, model = iris
    assert np.all(model.C_.sum(axis=0) >= 1 - 1e-6)


def test_zero_weights_drop_rows_and_a_cost_moves_the_predictions():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:, :6], y
    weights = np.r_[np.ones(400), np.zeros(len(y) - 400)]
    a = ORCTClassifier(n_starts=3, random_state=1).fit(X, y, sample_weight=weights)
    b = ORCTClassifier(n_starts=3, random_state=1).fit(X[:400], y[:400])
    np.testing.assert_allclose(a.C_, b.C_, atol=1e-6)
    plain = ORCTClassifier(depth=1, n_starts=5, random_state=0).fit(X, y)
    costly = ORCTClassifier(depth=1, n_starts=5, cost=[[0, 20], [1, 0]], random_state=0).fit(X, y)
    balanced = ORCTClassifier(depth=1, n_starts=5, class_weight={0: 20.0, 1: 1.0}, random_state=0).fit(X, y)
    recall = lambda m: np.mean(m.predict(X)[y == 0] == 0)  # noqa: E731
    assert recall(costly) > recall(plain) and recall(balanced) > recall(plain)


def test_time_limit_keeps_the_best_start_so_far():
    X, y = load_iris(return_X_y=True)
    with pytest.warns(UserWarning, match="the time limit passed during start 1 of 20"):
        model = ORCTClassifier(time_limit=1e-9, random_state=0).fit(X, y)
    assert len(model.starts_) == 1 and model.predict(X).shape == (150,)
    np.testing.assert_allclose(model.C_.sum(axis=1), 1.0)


def test_solvers_reach_the_same_fit():
    """IPOPT's oracle route (numpy Hessian) and its symbolic route (CasADi's AD) solve the same problems."""
    X, y = load_iris(return_X_y=True)
    oracle = ORCTClassifier(n_starts=3, random_state=0, tol=1e-9).fit(X, y)
    symbolic = ORCTClassifier(n_starts=3, random_state=0, tol=1e-9, solver="ipopt:evaluator=symbolic").fit(X, y)
    assert [s["objective"] for s in oracle.starts_] == pytest.approx([s["objective"] for s in symbolic.starts_],
                                                                      abs=1e-6)


@pytest.mark.parametrize("y, message", [
    (np.zeros(20), "^y has one class"),
    (np.linspace(0, 1, 20), "^Unknown label type: y looks continuous"),
])
def test_bad_targets_are_one_line_errors(y, message):
    X = np.random.default_rng(0).random((20, 2))
    with pytest.raises(ValueError, match=message) as info:
        ORCTClassifier().fit(X, y)
    assert "\n" not in str(info.value)


def test_bad_costs_are_one_line_errors():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"^the cost matrix is 2 x 2, but there are 3 classes"):
        ORCTClassifier(cost=[[0, 1], [1, 0]]).fit(X, y)
    with pytest.raises(ValueError, match=r"^cost must be a square matrix"):
        ORCTClassifier(cost=[[0, -1], [1, 0]]).fit(X, y)


def test_a_class_of_one_row_is_fitted_with_a_warning():
    """As for the soft tree (a CV fold of ecoli has such a class)."""
    X, y = load_iris(return_X_y=True)
    y = y.copy()
    y[0] = 3
    with pytest.warns(UserWarning, match="^class 3 has one row"):
        model = ORCTClassifier(n_starts=2, random_state=0).fit(X, y)
    assert model.n_classes_ == 4 and model.C_.shape == (4, 4)
