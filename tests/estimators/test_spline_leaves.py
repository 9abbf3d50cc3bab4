"""Spline leaves (leaf="spline") of both soft trees: what they fit, what they keep of the constraints, what a
file keeps of them, and the refusals."""

import warnings

import numpy as np
import pytest

from srtopt import SoftClassificationTree, SoftRegressionTree, load
from srtopt.persistence import read_view


def _truth(X):
    """sin(9 x0) + 4 (x1 - 1/2)^2: additive and bent, so that a line per leaf needs many leaves."""
    return np.sin(9 * X[:, 0]) + 4 * (X[:, 1] - 0.5) ** 2


@pytest.fixture(scope="module")
def curved():
    rng = np.random.default_rng(0)
    X = rng.random((600, 3))
    return X, _truth(X) + 0.1 * rng.standard_normal(600)


@pytest.fixture(scope="module")
def spline_tree(curved):
    return SoftRegressionTree(depth=2, leaf="spline", random_state=0).fit(*curved)


def _held_out_r2(model, seed=1):
    X = np.random.default_rng(seed).random((2000, 3))
    return model.score(X, _truth(X))


def test_spline_leaves_fit_curves_that_linear_leaves_cannot(curved, spline_tree):
    linear = SoftRegressionTree(depth=2, random_state=0).fit(*curved)
    assert _held_out_r2(spline_tree) > 0.98 > 0.9 > _held_out_r2(linear)  # measured: 0.999 and 0.818
    assert spline_tree.leaf_model_.basis.kind == "spline" and sorted(spline_tree.leaf_model_.basis.curves) == [0, 1, 2]
    assert spline_tree.beta_.shape[1] == spline_tree.leaf_model_.basis.n_columns


def test_a_strong_smoothing_gives_the_linear_leaves_back(curved):
    linear = SoftRegressionTree(depth=1, random_state=0, leaf_ridge=1.0).fit(*curved)
    stiff = SoftRegressionTree(depth=1, random_state=0, leaf_ridge=1.0, leaf="spline:smoothing=1e9").fit(*curved)
    X = np.random.default_rng(3).random((200, 3))
    np.testing.assert_allclose(stiff.predict(X), linear.predict(X), atol=2e-3)


def _never_against(predict, sign, n_features, others=(-0.5, 0.0, 0.4, 1.0, 1.5)):
    """The largest move of ``predict`` against ``sign`` along x0 on a fine grid over [-1, 2] (beyond the training
    range [0, 1]: the extrapolation too), the other features fixed at several values, relative to the spread of
    the predictions (0: monotone; a move of the order of rounding, 1e-16, is allowed for)."""
    x = np.linspace(-1.0, 2.0, 3001)
    worst, spread = 0.0, 0.0
    for v in others:
        values = predict(np.column_stack([x] + [np.full_like(x, v)] * (n_features - 1)))
        worst, spread = max(worst, float(np.max(-sign * np.diff(values)))), max(spread, float(np.ptp(values)))
    return worst / max(spread, 1e-12)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_monotone_feature_keeps_a_curve_that_never_moves_against_its_sign(curved, sign):
    X, y = curved
    tree = SoftRegressionTree(depth=2, leaf="spline", random_state=0, monotonic_cst={0: sign}).fit(X, y)
    assert _never_against(tree.predict, sign, 3) <= 1e-12
    rng = np.random.default_rng(4)
    grid = rng.uniform(-1.0, 2.0, (300, 3))  # every feature anywhere, extrapolation included
    for _ in range(3):
        moved = grid.copy()
        moved[:, 0] += rng.uniform(0.0, 0.5, 300)
        assert np.all(sign * (tree.predict(moved) - tree.predict(grid)) >= -1e-9)
        grid = moved
    assert all(row["holds"] for row in tree.constraint_report_)
    assert np.any(tree.beta_[:, tree.leaf_model_.basis.wiggle_columns(0)] != 0)  # a curve, not its line alone


def test_a_monotone_curve_fits_a_monotone_truth_as_well_as_the_free_tree():
    """y = exp(3 x0) + x1 + noise (docs/leaves.md, "Monotone curves"): the line alone scored 0.893 there."""
    rng = np.random.default_rng(0)
    X, test = rng.random((2000, 2)), rng.random((4000, 2))
    y = np.exp(3 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(2000)
    truth = np.exp(3 * test[:, 0]) + test[:, 1]
    tree = SoftRegressionTree(depth=1, leaf="spline", random_state=0, monotonic_cst=[1, 0]).fit(X, y)
    free = SoftRegressionTree(depth=1, leaf="spline", random_state=0).fit(X, y)
    assert tree.score(test, truth) > free.score(test, truth) - 0.005
    assert _never_against(tree.predict, 1, 2) <= 1e-12


def test_a_monotone_classifier_keeps_a_curve_monotone_in_the_probability_of_the_second_class():
    rng = np.random.default_rng(8)
    X = rng.random((800, 2))
    labels = np.where(np.exp(3 * X[:, 0]) + X[:, 1] + 2 * rng.standard_normal(800) > 6, "yes", "no")
    tree = SoftClassificationTree(depth=1, leaf="spline", random_state=0, monotonic_cst=[1, 0]).fit(X, labels)
    assert list(tree.classes_) == ["no", "yes"]
    assert _never_against(lambda Z: tree.predict_proba(Z)[:, 1], 1, 2) <= 1e-12
    assert all(row["holds"] for row in tree.constraint_report_)
    assert np.any(tree.beta_[:, tree.leaf_model_.basis.wiggle_columns(0)] != 0)


def test_leaf_bounds_bound_a_curves_derivative_everywhere(curved):
    X, y = curved
    tree = SoftRegressionTree(depth=1, leaf="spline", random_state=0,
                              constraints="leaf_bounds:feature=0,lower=-1,upper=0.5").fit(X, y)
    x = np.linspace(-1.0, 2.0, 3001)
    for v in (0.0, 0.5, 1.0):
        grid = np.column_stack([x, np.full_like(x, v), np.full_like(x, v)])
        slope = np.diff(tree.predict(grid)) / np.diff(x)
        same_leaf = np.diff(tree.apply(grid)) == 0  # a split may use x0: the slope within each leaf is bounded
        assert slope[same_leaf].min() >= -1 - 1e-9 and slope[same_leaf].max() <= 0.5 + 1e-9
    assert all(row["holds"] for row in tree.constraint_report_)
    assert np.any(tree.beta_[:, tree.leaf_model_.basis.wiggle_columns(0)] != 0)


def test_parity_holds_with_spline_leaves(curved):
    X, y = curved
    groups = (X[:, 2] > 0.5).astype(int)
    tree = SoftRegressionTree(depth=2, leaf="spline", random_state=0, constraints="parity:gap=0.05").fit(
        X, y + groups, sensitive_features=groups)
    assert all(row["holds"] for row in tree.constraint_report_)
    prediction = tree.predict(X)
    assert abs(prediction[groups == 1].mean() - prediction[groups == 0].mean()) <= 0.05 + 1e-6


def test_a_feature_budget_keeps_the_curves_of_its_features_only(curved):
    X, y = curved
    tree = SoftRegressionTree(depth=1, leaf="spline", random_state=0, max_features=2).fit(X, y)
    assert tree.n_features_used_ <= 2
    dropped = sorted(set(range(3)) - set(tree.selected_features_))
    basis = tree.leaf_model_.basis
    for j in dropped:
        assert np.all(tree.beta_[:, basis.feature_columns(j)] == 0) and np.all(tree.omega_[:, 1 + j] == 0)


def test_a_spline_tree_is_saved_and_read_back(spline_tree, curved, tmp_path):
    path = tmp_path / "spline.json"
    spline_tree.save(path)
    X = np.random.default_rng(5).uniform(-0.5, 1.5, (100, 3))
    np.testing.assert_array_equal(load(path).predict(X), spline_tree.predict(X))
    np.testing.assert_array_equal(read_view(path).predict(X), spline_tree.predict(X))


def test_spline_classification_leaves(tmp_path):
    rng = np.random.default_rng(6)
    X = rng.random((500, 2))
    labels = np.where(np.sin(6 * X[:, 0]) + 0.3 * rng.standard_normal(500) > X[:, 1], "up", "down")
    tree = SoftClassificationTree(depth=1, leaf="spline", random_state=0).fit(X, labels)
    logistic = SoftClassificationTree(depth=1, random_state=0).fit(X, labels)
    test = rng.random((2000, 2))
    truth = np.where(np.sin(6 * test[:, 0]) > test[:, 1], "up", "down")
    assert np.mean(tree.predict(test) == truth) > np.mean(logistic.predict(test) == truth) + 0.03
    proba = tree.predict_proba(rng.uniform(-2.0, 3.0, (50, 2)))
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)
    tree.save(tmp_path / "c.json")
    np.testing.assert_array_equal(read_view(tmp_path / "c.json").predict_proba(test), tree.predict_proba(test))


def test_a_class_recall_bound_holds_with_spline_leaves():
    rng = np.random.default_rng(7)
    X = rng.random((400, 2))
    labels = np.where(X[:, 0] + 0.4 * rng.standard_normal(400) > 0.7, "B", "A")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the bound holds: no warning
        tree = SoftClassificationTree(depth=1, leaf="spline", random_state=0,
                                      constraints="class_recall:class=B,lower=0.9").fit(X, labels)
    assert np.mean(tree.predict(X[labels == "B"]) == "B") >= 0.9


@pytest.mark.parametrize("estimator, leaf, message", [
    (SoftRegressionTree, "spline:n_knots=2", "n_knots must be an integer >= 3"),
    (SoftRegressionTree, "spline:smoothing=-1", "smoothing must be 'gcv' or a number > 0"),
    (SoftRegressionTree, "spline:knots=4", "unknown option 'knots'"),
    (SoftRegressionTree, "quadratic", "leaf must be 'linear', 'spline'"),
    (SoftClassificationTree, "linear", "leaf must be 'constant', 'logistic', 'spline'"),
    (SoftRegressionTree, "spline:n_knots=8,n_knots=9", "option 'n_knots' is given twice"),
    (SoftClassificationTree, "spline:n_knots=8,n_knots=9", "option 'n_knots' is given twice"),
    (SoftClassificationTree, "spline:n_knots=0", "n_knots must be an integer >= 3"),
    (SoftRegressionTree, "spline:steps=-1", r"steps must be an integer >= 0 \(the most steps per feature\)"),
    (SoftClassificationTree, "spline:pairs=1.5", r"pairs must be an integer >= 0 \(the most pairs\)"),
])
def test_bad_leaf_specs_are_refused_in_one_line(curved, estimator, leaf, message):
    X, y = curved
    with pytest.raises(ValueError, match=message):
        estimator(leaf=leaf).fit(X, y if estimator is SoftRegressionTree else y > 1)


@pytest.mark.parametrize("penalty", ["feature_l1", "feature_l1:strength=0.01", "feature_l1:strength=0.01,relax=False"])
@pytest.mark.parametrize("estimator", [SoftRegressionTree, SoftClassificationTree])
def test_feature_l1_says_it_takes_linear_leaves(curved, estimator, penalty):
    """Whichever way the term selects (the held-out screen without a strength, the l1 fit's support, or the term
    kept in E), spline leaves are refused in one line when the fit starts."""
    X, y = curved
    with pytest.raises(ValueError, match="^penalty feature_l1 groups each feature's split weights and linear leaf "
                                         "weights; spline leaves carry more columns per feature"):
        estimator(leaf="spline", penalty=penalty).fit(X, y if estimator is SoftRegressionTree else y > 1)


def _stepped(n, seed):
    """A count x0 (0..11) whose effect jumps at 5 and drops at 9, a bend in x1 and a pair x1 x2."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 12, n), rng.random(n), rng.random(n)]).astype(float)
    truth = (X[:, 0] >= 5) - 1.5 * (X[:, 0] >= 9) + np.sin(5 * X[:, 1]) + 4 * (X[:, 1] - 0.5) * (X[:, 2] - 0.5)
    return X, truth, truth + 0.2 * rng.standard_normal(n)


@pytest.fixture(scope="module")
def stepped():
    X, _, y = _stepped(1500, 0)
    return X, y, SoftRegressionTree(depth=1, leaf="spline:steps=64,pairs=2", random_state=0).fit(X, y)


def test_steps_and_pairs_fit_the_jumps_and_the_interaction_a_curve_smooths_over(stepped):
    X, y, tree = stepped
    test, truth, _ = _stepped(3000, 1)
    basis = tree.leaf_model_.basis
    assert 0 in basis.steps and (1, 2) in basis.pairs
    np.testing.assert_array_equal(basis.steps[0] * 11, np.arange(1, 12))  # every count (scaled) but the smallest
    plain = SoftRegressionTree(depth=1, leaf="spline", random_state=0).fit(X, y)
    assert tree.score(test, truth) > plain.score(test, truth) + 0.05
    assert tree.score(test, truth) > 0.95


def test_a_tree_with_steps_and_pairs_is_saved_read_back_and_written(stepped, tmp_path):
    from srtopt.export import export_html, export_text

    X, _, tree = stepped
    path = tmp_path / "stepped.json"
    tree.save(path)
    np.testing.assert_array_equal(load(path).predict(X), tree.predict(X))
    np.testing.assert_array_equal(read_view(path).predict(X), tree.predict(X))
    text = export_text(tree, feature_names=["count", "a", "b"])
    assert "+f(a & b)[" in text and "f(a & b): a pair's term c (a - median)(b - median)" in text
    assert '"pairs": [{"features": [1, 2]' in export_html(tree)


def test_a_monotone_feature_with_steps_never_moves_against_its_sign(stepped):
    X, y, _ = stepped
    tree = SoftRegressionTree(depth=1, leaf="spline:steps=64,pairs=2", random_state=0,
                              monotonic_cst={0: 1}).fit(X, y)
    basis = tree.leaf_model_.basis
    assert 0 in basis.steps and np.all(tree.beta_[:, basis.step_columns(0)] >= 0)
    assert np.any(tree.beta_[:, basis.step_columns(0)] > 0), "steps up kept"
    assert all(0 not in pair for pair, c in zip(basis.pairs, basis.pair_columns()) if np.any(tree.beta_[:, c] != 0))
    assert _never_against(tree.predict, 1, 3) <= 1e-12
    assert all(row["holds"] for row in tree.constraint_report_)


def test_a_feature_budget_drops_a_features_steps_and_pairs(stepped):
    X, y, _ = stepped
    tree = SoftRegressionTree(depth=1, leaf="spline:steps=64,pairs=2", random_state=0, max_features=2).fit(X, y)
    basis = tree.leaf_model_.basis
    for j in sorted(set(range(3)) - set(tree.selected_features_)):
        assert np.all(tree.beta_[:, basis.feature_columns(j)] == 0)
        assert all(np.all(tree.beta_[:, c] == 0) for c, pair in zip(basis.pair_columns(), basis.pairs) if j in pair)


def test_a_feature_in_a_pair_alone_is_a_feature_used():
    from srtopt.estimators.selection import feature_norms

    tree = SoftRegressionTree(depth=1, leaf="spline:pairs=1", random_state=0)
    rng = np.random.default_rng(5)
    X = rng.random((600, 3))
    tree.fit(X, 4 * (X[:, 0] - 0.5) * (X[:, 1] - 0.5) + X[:, 2])
    beta = np.zeros_like(tree.beta_)
    beta[:, tree.leaf_model_.basis.pair_columns()] = 1.0
    norms = feature_norms(np.zeros_like(tree.omega_), beta, tree.leaf_model_)
    assert list(np.flatnonzero(norms)) == list(tree.leaf_model_.basis.pairs[0])


def test_a_classifier_takes_steps_and_pairs(tmp_path):
    X, truth, _ = _stepped(1200, 2)
    labels = np.where(truth > np.median(truth), "high", "low")
    tree = SoftClassificationTree(depth=1, leaf="spline:steps=64,pairs=2", random_state=0).fit(X, labels)
    basis = tree.leaf_model_.basis
    assert 0 in basis.steps
    plain = SoftClassificationTree(depth=1, leaf="spline", random_state=0).fit(X, labels)
    test, test_truth, _ = _stepped(3000, 3)
    expected = np.where(test_truth > np.median(truth), "high", "low")
    assert tree.score(test, expected) > plain.score(test, expected)
    tree.save(tmp_path / "c.json")
    np.testing.assert_array_equal(load(tmp_path / "c.json").predict_proba(test), tree.predict_proba(test))
