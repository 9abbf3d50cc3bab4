"""The estimator parameters of issue 13 (loss, penalty, working_sets, init): clone-safe, persisted
when they are strings or numbers, refused with a clear message when wrong."""

import warnings

import casadi as ca
import numpy as np
import pytest
from sklearn.base import clone

from srtopt import SoftRegressionTree, load
from srtopt.models.terms import FeatureL1
from srtopt.training.initialization import CartInitialization, WarmStart


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(5)
    X = rng.random((100, 3))
    return X, np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2]) + 0.05 * rng.standard_normal(100)


def rule(tree):
    yield 1, tree.branch_nodes, tree.leaves


def test_clone_copies_objects_and_keeps_strings(toy):
    penalty = [FeatureL1(0.01, relax=False), "split_l1:strength=1e-3"]  # unrelaxed: the fit keeps the term
    tree = SoftRegressionTree(loss=lambda r: ca.log(ca.cosh(r)), penalty=penalty, working_sets=rule, depth=2,
                              max_iter=1, n_init=1, random_state=0)
    twin = clone(tree)
    assert twin.get_params()["penalty"][1] == "split_l1:strength=1e-3"
    assert twin.get_params()["penalty"][0] is not penalty[0] and twin.get_params()["penalty"][0] == penalty[0]
    twin.fit(*toy)
    assert penalty[0].strength == 0.01  # the user's object is not touched by fit
    assert twin.get_params()["working_sets"] is rule and len(twin.history_) == 2  # the rule, then group zeroing
    assert twin.history_[1]["bn"]["update"] == "group-zeroing"


def test_warm_start_object_is_copied_and_used(toy):
    first = SoftRegressionTree(depth=2, max_iter=2, n_init=1, random_state=0).fit(*toy)
    start = WarmStart.from_estimator(first)
    again = SoftRegressionTree(depth=2, max_iter=1, n_init=1, init=start, random_state=0).fit(*toy)
    assert again.history_[0]["E_before"] == pytest.approx(first.objective_, rel=1e-12)
    assert np.isnan(again.init_davies_bouldin_)
    np.testing.assert_array_equal(start.omega, first.omega_)
    with pytest.raises(ValueError, match="warm start omega"):
        SoftRegressionTree(depth=3, init=start).fit(*toy)


def test_a_warm_start_takes_the_leaves_of_a_spline_tree(toy):
    """A spline leaf has more coefficients than p + 1: the start is checked against the leaf model's basis."""
    first = SoftRegressionTree(depth=2, max_iter=1, leaf="spline", random_state=0).fit(*toy)
    start = WarmStart.from_estimator(first)
    assert start.beta.shape[1] > toy[0].shape[1] + 1
    again = SoftRegressionTree(depth=2, max_iter=1, leaf="spline", init=start, random_state=0).fit(*toy)
    assert again.history_[0]["E_before"] < first.history_[0]["E_before"]  # the fitted tree, not the initialization


def test_cart_init_starts_from_the_softened_cart_splits(toy):
    """init="cart": the first inner iteration starts from CART's splits (the root splits on x_0,
    the feature y switches on), and the string is the default CartInitialization."""
    fitted = SoftRegressionTree(depth=2, max_iter=1, init="cart", random_state=0).fit(*toy)
    start = fitted.history_[0]["E_before"]
    same = SoftRegressionTree(depth=2, max_iter=1, init=CartInitialization(), random_state=0).fit(*toy)
    assert same.history_[0]["E_before"] == start
    cluster = SoftRegressionTree(depth=2, max_iter=1, init="cluster", random_state=0).fit(*toy)
    assert cluster.history_[0]["E_before"] != start
    assert np.argmax(np.abs(fitted.omega_[0, 1:])) == 0
    assert np.isnan(fitted.init_davies_bouldin_)


def test_a_list_of_initializations_continues_from_the_lowest_objective(toy):
    """init=[...]: every entry runs restart_iter macro iterations, the lowest training E
    continues; the fit is then the single-init fit of the winner."""
    inits = ["cluster", "cart", CartInitialization(slope=80.0)]
    after_one = [SoftRegressionTree(depth=2, max_iter=1, init=init, random_state=0).fit(*toy).objective_
                 for init in inits]
    assert len(set(after_one)) == 3
    both = SoftRegressionTree(depth=2, max_iter=3, init=inits, restart_iter=1, random_state=0).fit(*toy)
    assert both.init_chosen_ == int(np.argmin(after_one))
    alone = SoftRegressionTree(depth=2, max_iter=3, init=inits[both.init_chosen_], random_state=0).fit(*toy)
    assert both.objective_ == pytest.approx(alone.objective_, rel=1e-9)
    assert [r["E_before"] for r in both.history_] == pytest.approx([r["E_before"] for r in alone.history_])
    with pytest.raises(ValueError, match="init must not be an empty list"):
        SoftRegressionTree(depth=2, init=[]).fit(*toy)
    with pytest.raises(ValueError, match="or a list of these, got 'kmeans'"):
        SoftRegressionTree(depth=2, init=["cart", "kmeans"]).fit(*toy)


@pytest.mark.parametrize("params,match", [
    ({"loss": "l3"}, "unknown loss 'l3'"),
    ({"loss": "huber:delta=-1"}, "huber delta must be a positive"),
    ({"penalty": "l0"}, "unknown penalty 'l0'"),
    ({"penalty": 3}, "penalty must be None, a name"),
    ({"working_sets": "rows"}, "unknown working_sets 'rows'"),
    ({"init": "kmeans"}, "init must be 'model-tree', 'cluster', 'cart', a callable"),
    ({"loss": "huber", "ln_solver": "lsqr"}, "ln_solver='lsqr' does not accept"),
])
def test_bad_formulation_parameters(toy, params, match):
    with pytest.raises(ValueError, match=match):
        SoftRegressionTree(depth=2, max_iter=1, n_init=1, **params).fit(*toy)


def test_string_parameters_are_saved_and_callables_fall_back_with_a_warning(toy, tmp_path):
    tree = SoftRegressionTree(depth=2, max_iter=1, n_init=1, loss="huber:delta=0.5",
                              penalty=["split_l1:strength=1e-3"], working_sets="paths", random_state=0).fit(*toy)
    tree.save(tmp_path / "m.json")
    loaded = load(tmp_path / "m.json")
    assert (loaded.loss, loaded.penalty, loaded.working_sets) == ("huber:delta=0.5", ["split_l1:strength=1e-3"],
                                                                  "paths")
    np.testing.assert_array_equal(loaded.predict(toy[0]), tree.predict(toy[0]))
    user = SoftRegressionTree(depth=2, max_iter=1, n_init=1, loss=lambda r: r * r, random_state=0).fit(*toy)
    user.save(tmp_path / "u.json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = load(tmp_path / "u.json")
    assert again.loss == "squared" and any("parameter loss=" in str(w.message) for w in caught)
    np.testing.assert_array_equal(again.predict(toy[0]), user.predict(toy[0]))
