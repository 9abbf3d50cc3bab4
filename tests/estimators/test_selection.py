"""Sparse trees: the hard budget max_features, the relaxed feature_l1, sparse leaves (leaf_l1), the
support reported, and bad input refused before fitting."""

import numpy as np
import pytest

from srtopt.bases import SplineBasis

import srtopt
from srtopt import SoftRegressionTree
from srtopt.estimators.selection import _rounds, feature_norms


def _data(n=240, noise_columns=6, seed=0):
    """Three true features (a split on x0, slopes on x1 and x2) and columns of pure noise after them."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3 + noise_columns))
    y = np.where(X[:, 0] > 0.5, 3 * X[:, 1], -2 * X[:, 2]) + 0.05 * rng.standard_normal(n)
    return X, y


def test_max_features_keeps_the_true_features_and_no_other():
    X, y = _data()
    X_test, y_test = _data(seed=1)
    tree = SoftRegressionTree(depth=2, random_state=0, max_features=3).fit(X, y)
    assert tree.selected_features_ == [0, 1, 2] and tree.n_features_used_ == 3
    assert np.all(tree.omega_[:, 4:] == 0) and np.all(tree.beta_[:, 4:] == 0)
    free = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    assert free.n_features_used_ == 9 and tree.score(X_test, y_test) > free.score(X_test, y_test) - 0.02


def test_max_features_on_small_data_where_the_leaf_ridge_guard_runs():
    """40 rows < 4 leaves x 10 coefficients: the guard's fits clone a tree that holds the
    FeatureSubset constraint of the budget."""
    X, y = _data(n=40)
    tree = SoftRegressionTree(depth=2, max_iter=2, random_state=0, max_features=3).fit(X, y)
    assert tree.leaf_ridge_losses_ and tree.n_features_used_ <= 3


def test_a_relaxed_feature_l1_drops_the_noise_columns_without_shrinking_the_rest():
    X, y = _data()
    supports = {s: SoftRegressionTree(depth=2, random_state=0, penalty=f"feature_l1:strength={s}").fit(X, y)
                for s in (1e-3, 1e-2, 0.1)}
    assert supports[1e-3].n_features_used_ == 9  # a weak term keeps every feature
    strength = next(s for s, tree in supports.items() if 0 < tree.n_features_used_ and
                    set(tree.selected_features_) <= {0, 1, 2})  # a stronger one drops every noise column
    shrunk = SoftRegressionTree(depth=2, random_state=0, penalty=f"feature_l1:strength={strength},relax=False").fit(X, y)
    assert shrunk.selected_features_ == supports[strength].selected_features_
    assert supports[strength].score(X, y) > shrunk.score(X, y)  # the relaxed fit has no shrinkage bias


def test_feature_l1_without_a_strength_keeps_what_predicts_on_held_out_rows(monkeypatch):
    """No strength: the held-out screen chooses the support, and no l1 fit runs; the tree is the
    relaxed fit on it, as with a strength."""
    import srtopt.estimators.nodec_tree as nodec_tree

    def no_l1_fit(*args, **kwargs):
        raise AssertionError("feature_l1 without a strength ran an l1 fit")

    monkeypatch.setattr(nodec_tree, "l1_support", no_l1_fit)
    X, y = _data()
    X_test, y_test = _data(seed=1)
    tree = SoftRegressionTree(depth=2, random_state=0, penalty="feature_l1").fit(X, y)
    assert tree.selected_features_ == [0, 1, 2]
    dense = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    assert tree.score(X_test, y_test) > dense.score(X_test, y_test) - 0.02
    kept = SoftRegressionTree(depth=2, random_state=0, constraints=[srtopt.models.constraints.FeatureSubset([0, 1, 2])])
    np.testing.assert_allclose(tree.predict(X_test), kept.fit(X, y).predict(X_test), rtol=1e-9, atol=1e-9)


def test_the_classifier_screens_by_held_out_accuracy():
    """SoftClassificationTree(penalty="feature_l1") keeps the two columns its three classes depend on."""
    rng = np.random.default_rng(0)
    X = rng.random((400, 8))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 2], [0.5, 1.0])
    tree = srtopt.SoftClassificationTree(depth=2, random_state=0, penalty="feature_l1").fit(X, y)
    assert tree.selected_features_ == [0, 2] and tree.score(X, y) > 0.9


def test_the_screen_keeps_a_feature_by_its_standard_error(monkeypatch):
    """screen_features keeps the features whose mean held-out importance is more than SCREEN_Z standard
    errors above 0, and the most important one when none is."""
    from srtopt.estimators import selection
    from srtopt.solvers.deadline import Deadline

    columns = selection.FOLDS * selection.REPEATS
    values = np.array([np.linspace(0.9, 1.1, columns),  # far above 0
                       np.linspace(-1.0, 1.2, columns),  # mean 0.1 within its error
                       np.zeros(columns)])  # never moves the loss
    monkeypatch.setattr(selection, "_held_out_importances", lambda *args: values)
    X, y = _data(n=30, noise_columns=0)
    assert selection.screen_features(SoftRegressionTree(), X, y, {}, Deadline()) == [0]
    monkeypatch.setattr(selection, "_held_out_importances", lambda *args: values[1:])
    assert selection.screen_features(SoftRegressionTree(), X[:, :2], y, {}, Deadline()) == [0]


def test_sparse_leaves_give_exact_zero_slopes():
    X, y = _data(noise_columns=3)
    tree = SoftRegressionTree(depth=2, random_state=0, penalty="leaf_l1:strength=0.003").fit(X, y)
    dense = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    assert np.sum(tree.beta_[:, 1:] == 0) > 4 and np.sum(dense.beta_[:, 1:] == 0) == 0
    assert tree.score(X, y) > 0.9
    assert {r["ln"].get("solver") for r in tree.history_} <= {"highs", None}  # "auto": the QP


def test_the_support_is_saved(tmp_path):
    X, y = _data()
    tree = SoftRegressionTree(depth=2, random_state=0, max_features=3).fit(X, y)
    tree.save(tmp_path / "m.json")
    again = srtopt.load(tmp_path / "m.json")
    assert again.selected_features_ == [0, 1, 2] and again.n_features_used_ == 3


def test_the_norms_and_the_rounds():
    from srtopt.models.leaves import RegressionLeaves, linear_leaves
    from srtopt.models.terms import SQUARED

    omega, beta = np.zeros((3, 4)), np.zeros((4, 4))
    omega[0, 1], beta[2, 3] = 3.0, 4.0
    np.testing.assert_allclose(feature_norms(omega, beta, linear_leaves(SQUARED, 3)), [1.0, 0.0, 4.0])  # omega / p
    assert [_rounds(p, 3) for p in (3, 4, 6, 16)] == [0, 1, 2, 4]
    spline = RegressionLeaves(SQUARED, SplineBasis.fit(np.random.default_rng(0).random((50, 3))))
    beta = np.zeros((4, spline.basis.n_columns))
    beta[1, spline.basis.wiggle_columns(1)[0]] = 5.0  # a curve alone makes feature 1 used
    np.testing.assert_allclose(feature_norms(omega, beta, spline), [1.0, 5.0, 0.0])


@pytest.mark.parametrize("params, message", [
    ({"max_features": 0}, "max_features must be None or an integer >= 1, got 0"),
    ({"max_features": 10}, "max_features must be None or an integer in 1..9"),
    ({"max_features": 2.5}, "max_features must be None or an integer >= 1, got 2.5"),
    ({"penalty": "feature_l1:strength=-1"}, "feature_l1 strength must be a number >= 0"),
    ({"penalty": "leaf_l1:strength=nan"}, "leaf_l1 strength must be a number >= 0"),
    ({"penalty": "split_l1:strength=-0.1"}, "split_l1 strength must be a number >= 0"),
])
def test_bad_input_is_one_line_before_fitting(params, message, monkeypatch):
    from srtopt.estimators import srt

    X, y = _data()
    monkeypatch.setattr(srt.SoftRegressionTree, "_train", lambda *a: pytest.fail("training started"))
    with pytest.raises(ValueError, match=message) as info:
        SoftRegressionTree(depth=2, **params).fit(X, y)
    assert "\n" not in str(info.value)
