"""The scikit-learn tree API of srtopt/estimators/reading.py on real fits of the housing data:
get_depth, get_n_leaves, leaf_probabilities (P_it) and feature_importances_."""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.exceptions import NotFittedError

from srtopt import MILOTreeRegressor, ORRTRegressor, SoftRegressionTree
from srtopt.tree import Tree

from ..conftest import load_csv


@pytest.fixture(scope="module")
def housing():
    return load_csv("housing")


@pytest.fixture(scope="module")
def srt(housing):
    return SoftRegressionTree(depth=3, max_iter=2, n_init=2, random_state=0).fit(*housing)


@pytest.fixture(scope="module")
def orrt(housing):
    return ORRTRegressor(depth=2, mu=1.0, solver="slsqp", max_iter=30, random_state=0).fit(*housing)


def _branch_probabilities(model, X):
    """p_it = F(omega_0t + (1/p) sum_j omega_jt x_s,ij) written out from the paper (eq. cdf)."""
    Xs = (X - model.scaler_.x_min) / model.scaler_.x_scale
    u = model.omega_[:, 0] + Xs @ model.omega_[:, 1:].T / X.shape[1]
    return expit(model.mu * u)


def test_depth_and_leaves(srt, orrt, housing):
    live = int((srt.node_counts_[7:] > 0).sum())  # leaves that HBP routes training rows to
    assert srt.get_depth() == 3 and srt.get_n_leaves() == live and 1 < live <= 8
    assert (orrt.get_depth(), orrt.get_n_leaves()) == (2, 4)
    X, y = housing
    milo = MILOTreeRegressor(depth=1, time_limit=2.0, random_state=0).fit(X[:30], y[:30])
    assert (milo.get_depth(), milo.get_n_leaves()) == (1, 2)
    for estimator in (SoftRegressionTree(), ORRTRegressor(), MILOTreeRegressor()):
        with pytest.raises(NotFittedError):
            estimator.get_depth()


@pytest.mark.parametrize("name", ["srt", "orrt"])
def test_leaf_probabilities_are_the_products_along_each_path(name, request, housing):
    model = request.getfixturevalue(name)
    X = housing[0][::7]
    tree, S = Tree(model.get_depth()), _branch_probabilities(model, X)
    P = model.leaf_probabilities(X)
    assert P.shape == (len(X), tree.n_leaves)
    expected = np.column_stack([
        np.prod([S[:, a - 1] for a in tree.ancestors_left(t)], axis=0)
        * np.prod([1 - S[:, a - 1] for a in tree.ancestors_right(t)], axis=0) for t in tree.leaves])
    np.testing.assert_allclose(P, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_apply_follows_the_larger_branch_probability(srt, housing):
    X = housing[0]
    S, node = _branch_probabilities(srt, X), np.ones(len(X), dtype=int)
    for _ in range(srt.get_depth()):
        node = 2 * node + (S[np.arange(len(X)), node - 1] < 0.5)
    np.testing.assert_array_equal(srt.apply(X), node)


@pytest.mark.parametrize("name", ["srt", "orrt"])
def test_feature_importances_weigh_split_weights_by_the_share_of_rows_reaching_each_node(name, request,
                                                                                        housing):
    model = request.getfixturevalue(name)
    X = housing[0]
    tree, P = Tree(model.get_depth()), model.leaf_probabilities(X)
    share = {t: P[:, [tree.leaf_index(l) for l in tree.descendants_leaves(t)]].sum(axis=1).mean()
             for t in tree.branch_nodes}
    weight = sum(share[t] * np.abs(model.omega_[t - 1, 1:]) for t in tree.branch_nodes)
    np.testing.assert_allclose(model.feature_importances_, weight / weight.sum(), rtol=1e-10)
    assert model.feature_importances_.shape == (X.shape[1],)
    assert np.all(model.feature_importances_ >= 0) and model.feature_importances_.sum() == pytest.approx(1.0)


def test_feature_importances_are_raw_split_coefficients_times_feature_ranges(srt, housing):
    """Scale-free: |omega_jt| = p |a_jt| (max_j - min_j) with a_jt the split coefficient in raw units,
    so a feature measured in other units gets the same importance."""
    from srtopt.export import original_units

    X = housing[0]
    split, _ = original_units(srt)
    tree, P = Tree(3), srt.leaf_probabilities(X)
    share = np.array([P[:, [tree.leaf_index(l) for l in tree.descendants_leaves(t)]].sum(axis=1).mean()
                      for t in tree.branch_nodes])
    weight = share @ np.abs(split[:, 1:]) * (X.max(axis=0) - X.min(axis=0))
    np.testing.assert_allclose(srt.feature_importances_, weight / weight.sum(), rtol=1e-9)


@pytest.mark.parametrize("scale", [1e-200, 1.0, 1e300])
def test_score_is_the_r2_at_any_scale_of_y(scale):
    """score() is R^2 also where scikit-learn's squares of y underflow (1e-200: it said 1.0) or
    overflow (1e300: nan and warnings); with weights too, and the same method in every estimator."""
    import warnings

    from sklearn.metrics import r2_score

    from srtopt import SoftRegressionTreeCV
    from srtopt.estimators.reading import RegressorScoreMixin

    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = 3 * X[:, 0] + rng.standard_normal(200)
    weights = rng.random(200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = SoftRegressionTree(depth=1, max_iter=2, random_state=0).fit(X, y * scale)
        prediction = tree.predict(X) / scale
        assert tree.score(X, y * scale) == pytest.approx(r2_score(y, prediction), rel=1e-12)
        assert tree.score(X, y * scale, weights) == pytest.approx(r2_score(y, prediction, sample_weight=weights),
                                                                   rel=1e-12)
    assert 0.3 < tree.score(X, y * scale) < 0.9
    assert all(estimator.score is RegressorScoreMixin.score for estimator in (SoftRegressionTree, SoftRegressionTreeCV,
                                                                     ORRTRegressor, MILOTreeRegressor))
