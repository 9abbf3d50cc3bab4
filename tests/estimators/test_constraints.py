"""Constrained trees as a user fits them: monotone predictions exactly, the parity gap and the
group losses met by the soft model and by predict() on the training data, leaf slopes within
their bounds, the report, and every bad input refused in one line before any fitting."""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn.base import clone
from sklearn.model_selection import KFold

import srtopt
from srtopt import SoftRegressionTree, SoftRegressionTreeCV
from srtopt.export import export_constraints, export_text
from srtopt.fairness import constraint_report, group_gaps
from srtopt.models.constraints import CONSTRAINTS, RowMean, register_constraint


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    group = (X[:, 0] + 0.4 * rng.random(n) > 0.7).astype(int)  # the group shows in the features
    y = np.where(X[:, 1] > 0.5, 2 * X[:, 0], -X[:, 2]) - X[:, 3] + 0.8 * group + 0.05 * rng.standard_normal(n)
    return X, y, group


def _gap(prediction, group):
    return prediction[group == 1].mean() - prediction[group == 0].mean()


def test_monotone_predictions_exactly():
    X, y, _ = _data()
    tree = SoftRegressionTree(depth=3, random_state=0, monotonic_cst=[0, 0, -1, -1]).fit(X, y)
    assert np.all(tree.omega_[:, 3:] == 0.0)  # no split uses a constrained feature
    grid = np.linspace(-0.5, 1.5, 41)  # beyond the training range too
    for j in (2, 3):
        rows = np.repeat(X[:60], len(grid), axis=0)
        rows[:, j] = np.tile(grid, 60)
        along = tree.predict(rows).reshape(60, len(grid))
        assert np.all(np.diff(along, axis=1) <= 0.0)
    free = SoftRegressionTree(depth=3, random_state=0).fit(X, y)
    assert tree.score(X, y) > free.score(X, y) - 0.05
    assert all(row["holds"] for row in tree.constraint_report_)


def test_monotone_by_name_and_the_same_as_a_spec():
    X, y, _ = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    by_name = SoftRegressionTree(depth=2, random_state=0, monotonic_cst={"d": -1}).fit(frame, y)
    by_spec = SoftRegressionTree(depth=2, random_state=0, constraints="monotone:d=-1").fit(frame, y)
    np.testing.assert_array_equal(by_name.predict(frame), by_spec.predict(frame))
    assert by_name.constraint_report_[1]["row"] == "d: leaf slopes"


def test_parity_holds_for_the_soft_model_and_predict_on_the_training_data():
    X, y, group = _data()
    free = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    assert abs(_gap(free.predict(X), group)) > 0.3
    tree = SoftRegressionTree(depth=2, random_state=0, constraints="parity:gap=0.05").fit(
        X, y, sensitive_features=group)
    assert abs(_gap(tree.predict(X), group)) <= 0.05 + 1e-9
    (row,) = tree.constraint_report_
    assert row["holds_soft"] and row["holds_predict"] and abs(row["soft"]) <= 0.05 + 1e-6
    assert row["predict"] == pytest.approx(_gap(tree.predict(X), group))
    assert tree.groups_ == [0, 1]
    assert "parity:gap=0.05" in export_constraints(tree) and "holds" in export_text(tree).splitlines()[-2]


def test_parity_holds_for_clipped_predictions():
    X, y, group = _data()
    y = np.clip(y, np.quantile(y, 0.1), None)  # many predictions fall below the training range: clipped
    tree = SoftRegressionTree(depth=2, random_state=0, constraints="parity:gap=0.02").fit(
        X, y, sensitive_features=group)
    assert abs(_gap(tree.predict(X), group)) <= 0.02 + 1e-9


def test_group_losses_bounded_or_a_warning_with_the_most_feasible_tree():
    X, y, group = _data()
    loose = SoftRegressionTree(depth=2, random_state=0, constraints="group_loss:bound=1e6").fit(
        X, y, sensitive_features=group)  # the report gives the unconstrained tree's group losses
    soft = [row["soft"] for row in loose.constraint_report_]
    bound = 0.9 * max(soft)
    tree = SoftRegressionTree(depth=2, random_state=0, constraints=f"group_loss:bound={bound}").fit(
        X, y, sensitive_features=group)
    assert all(row["holds"] for row in tree.constraint_report_)
    assert max(row["soft"] for row in tree.constraint_report_) <= bound * (1 + 1e-6)
    losses = [np.mean((tree.predict(X) - y)[group == k] ** 2) for k in (0, 1)]
    assert max(losses) <= bound * (1 + 1e-6)
    with pytest.warns(UserWarning, match="the constraints could not be met; the tree is the most feasible"):
        hopeless = SoftRegressionTree(depth=2, random_state=0, max_iter=2, constraints="group_loss:bound=1e-6").fit(
            X, y, sensitive_features=group)
    assert not any(row["holds"] for row in hopeless.constraint_report_)


def test_leaf_slopes_within_their_bounds_in_ys_units():
    X, y, _ = _data()
    X = X * [1, 1, 1, 10]  # a feature in other units: the bound is per unit of it
    tree = SoftRegressionTree(depth=2, random_state=0, constraints="leaf_bounds:feature=3,lower=-0.05,upper=0.0")
    tree.fit(X, y)
    slopes = tree.beta_[:, 4] * tree.scaler_.y_std / tree.scaler_.x_scale[3]
    assert np.all(slopes >= -0.05 - 1e-12) and np.all(slopes <= 0.0)
    assert np.isclose(slopes.min(), -0.05)  # active: the unconstrained slope is about -0.1
    assert all(row["holds"] for row in tree.constraint_report_)


def test_a_column_of_the_frame_names_the_groups_and_is_not_a_feature(tmp_path):
    X, y, group = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(group=group)
    tree = SoftRegressionTree(depth=2, random_state=0, constraints="parity:gap=0.05").fit(
        frame, y, sensitive_features="group")
    assert list(tree.feature_names_in_) == ["a", "b", "c", "d"] and tree.sensitive_feature_name_ == "group"
    np.testing.assert_array_equal(tree.predict(frame), tree.predict(frame.drop(columns="group")))
    tree.save(tmp_path / "model.json")
    again = srtopt.load(tmp_path / "model.json")
    np.testing.assert_array_equal(again.predict(frame), tree.predict(frame))
    assert again.constraint_report_ == tree.constraint_report_ and again.groups_ == [0, 1]


def test_small_data_guard_and_cross_validation_take_the_groups():
    X, y, group = _data(n=18)  # 18 rows < 4 leaves x 5 coefficients: the leaf-ridge guard runs
    tree = SoftRegressionTree(depth=2, max_iter=2, random_state=0, constraints="parity:gap=0.1").fit(
        X, y, sensitive_features=group)
    assert tree.leaf_ridge_losses_ and abs(_gap(tree.predict(X), group)) <= 0.1 + 1e-9
    X, y, group = _data(n=40)  # the search's folds (2, repeated 3 times) keep 2 rows of each group in training
    search = SoftRegressionTreeCV(SoftRegressionTree(depth=2, max_iter=2, random_state=0,
                                                     constraints="parity:gap=0.1"),
                                  depths=(2,), leaves=("linear",), leaf_ridges=(1.0,), cv=2, split_weights=(1.0, 10.0),
                                  random_state=0).fit(X, y, sensitive_features=group)
    assert abs(_gap(search.predict(X), group)) <= 0.1 + 1e-9


def test_a_tree_holding_constraint_objects_clones():
    """scikit-learn's clone (the search of SoftRegressionTreeCV, the guard's folds) copies
    constraint objects whose __init__ normalizes its arguments."""
    from sklearn.base import clone

    from srtopt.models.constraints import FeatureSubset, Monotone, Parity

    terms = [FeatureSubset((0, 1, 2)), Parity(1), Monotone({1: -1})]
    copy = clone(SoftRegressionTree(constraints=terms))
    assert [t.key for t in copy.constraints] == [t.key for t in terms]
    assert all(a is not b for a, b in zip(copy.constraints, terms))


def test_a_time_limit_ends_with_the_most_feasible_tree_and_no_error():
    X, y, group = _data(n=2000, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a warning is allowed: the constraint may not be met by then
        tree = SoftRegressionTree(depth=3, random_state=0, time_limit=0.5, max_iter=1000,  # the limit alone stops it
                                  constraints="parity:gap=0.01").fit(X, y, sensitive_features=group)
    assert tree.stopped_by_ == "time_limit" and len(tree.constraint_report_) == 1


@pytest.mark.parametrize("params, fit, message", [
    ({"constraints": "parity:gap=-0.1"}, {}, "parity gap must be a number >= 0"),
    ({"constraints": "group_loss:bound=0"}, {}, "group_loss bound must be a number > 0"),
    ({"monotonic_cst": [1, 0, 0]}, {}, "monotonic_cst has 3 entries, but X has 4 features"),
    ({"monotonic_cst": {"x9": 1}}, {}, "feature 'x9' is not a column of X"),
    ({"monotonic_cst": [1, 0, 0, 0], "constraints": "monotone:x0=-1"}, {}, "contradictory"),
    ({"monotonic_cst": [1, 0, 0, 0], "constraints": "leaf_bounds:feature=0,upper=-1"}, {}, "contradictory"),
    ({"constraints": "parity:gap=0.1"}, {}, "needs the protected groups: fit"),
    ({"constraints": "parity:gap=0.1"}, {"sensitive_features": np.zeros(7)}, "one group per row of X"),
    ({"constraints": "parity:gap=0.1"}, {"sensitive_features": np.zeros(300)}, "single group"),
    ({"constraints": "parity:gap=0.1"}, {"sensitive_features": np.r_[1, np.zeros(299)]}, "group 1.* has 1 row"),
    ({"constraints": "parity:gap=0.1"}, {"sensitive_features": "group"}, "names no column of X"),
    ({"constraints": "parity:gap=0.1"}, {"sensitive_features": np.r_[np.nan, np.nan, np.nan, np.zeros(297)]},
     r"sensitive_features has 3 missing value\(s\) \(NaN or None\), the first in row 0"),
    ({"constraints": "parity:gap=0.1"},
     {"sensitive_features": np.array(["a", "b"] * 149 + [None, "a"], dtype=object)},
     r"sensitive_features has 1 missing value\(s\)"),
    ({"constraints": "parity:gap=abc"}, {}, "parity gap must be a number >= 0 .* got 'abc': not a number$"),
    ({"constraints": "parity:gap=inf"}, {}, "got 'inf': not a finite number$"),
    ({"constraints": "group_loss:bound=nan"}, {}, "got 'nan': not a finite number$"),
])
def test_bad_input_is_one_line_before_fitting(params, fit, message, monkeypatch):
    from srtopt.estimators import srt

    X, y, _ = _data()
    monkeypatch.setattr(srt.SoftRegressionTree, "_train", lambda *a: pytest.fail("training started"))
    with pytest.raises(ValueError, match=message) as info:
        SoftRegressionTree(depth=2, **params).fit(X, y, **fit)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("params, message", [
    ({"constraints": ["leaf_bounds:feature=x1,lower=0,upper=1", "leaf_bounds:feature=x1,lower=-5,upper=-4"]},
     ("contradictory constraints on feature 'x1': leaf_bounds:feature=x1,lower=0,upper=1 needs its leaf slopes >= 0 "
      "and leaf_bounds:feature=x1,lower=-5,upper=-4 needs them <= -4 (y's units per unit of 'x1'); no slope meets "
      "both: drop or change one")),
    ({"monotonic_cst": {"x2": -1}, "constraints": "leaf_bounds:feature=x2,lower=0.5"},
     ("contradictory constraints on feature 'x2': leaf_bounds:feature=x2,lower=0.5,upper=inf needs its leaf slopes "
      ">= 0.5 and monotone:x2=-1 needs them <= 0 ")),
    ({"monotonic_cst": {"x0": 1}, "constraints": "monotone:x0=-1"},
     ("contradictory monotone signs: monotone:x0=-1 makes the prediction decreasing in feature 'x0' and "
      "monotone:x0=1 increasing; keep one")),
])
def test_contradictory_constraints_name_the_feature_and_the_constraints_in_user_units(params, message):
    """A contradiction is said with the feature's name, the two constraints and the bounds as given
    (y and the features scaled far from 1, so training units would show)."""
    X, y, _ = _data()
    frame = pd.DataFrame(X * [1, 100, 0.01, 1], columns=["x0", "x1", "x2", "x3"])
    with pytest.raises(ValueError) as info:
        SoftRegressionTree(depth=1, **params).fit(frame, y * 1000)
    assert str(info.value).startswith(message)


def test_groups_with_no_weight_are_empty_groups():
    X, y, group = _data()
    weights = np.where(group == 1, 0.0, 1.0)
    weights[np.flatnonzero(group == 1)[0]] = 1.0
    with pytest.raises(ValueError, match="group 1 of sensitive_features has 1 row"):
        SoftRegressionTree(depth=2, constraints="parity:gap=0.1").fit(X, y, weights, sensitive_features=group)


# ----------------------------------------------------------------- a user's constraints, written declaratively
class GroupBias(RowMean):
    """Each group's mean residual within +-bound, in y's units (a user's constraint: 5 lines)."""

    name = "group_bias"

    def __init__(self, bound=1.0):
        self.bound = bound
        super().__init__("residual", over="groups", lower=-bound, upper=bound)


@pytest.fixture
def group_bias():
    register_constraint("group_bias", GroupBias)
    yield GroupBias
    del CONSTRAINTS["group_bias"]


def test_a_per_leaf_mean_cap_fits_and_holds_for_predict():
    X, y, _ = _data()
    free = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    leaves = free.apply(X)
    cap = 0.8 * max(free.predict(X)[leaves == t].mean() for t in np.unique(leaves))
    tree = SoftRegressionTree(depth=2, random_state=0, constraints=RowMean("prediction", upper=cap, per_leaf=True))
    tree.fit(X, y)
    assert len(tree.constraint_report_) == 4 and all(row["holds"] for row in tree.constraint_report_)
    prediction, leaves = tree.predict(X), tree.apply(X)
    for row in tree.constraint_report_:
        leaf = int(row["row"].rsplit(" ", 1)[1])
        if np.any(leaves == leaf):
            assert row["predict"] == pytest.approx(prediction[leaves == leaf].mean(), rel=1e-9)
            assert prediction[leaves == leaf].mean() <= cap + 1e-6 * tree.scaler_.y_std
        assert row["bound"] == f"<= {cap:.6g}" and row["soft"] <= cap + 1e-6 * tree.scaler_.y_std


def test_a_users_constraint_reports_in_ys_units_and_saves_by_its_spec(group_bias, tmp_path):
    X, y, group = _data()
    y = 100 + 50 * y  # y's own units: the bound is in them
    tree = SoftRegressionTree(depth=2, random_state=0, constraints=GroupBias(2.0)).fit(X, y, sensitive_features=group)
    residual = tree.predict(X) - y
    rows = tree.constraint_report_
    assert [row["row"] for row in rows] == ["mean residual of group 0", "mean residual of group 1"]
    assert all(row["bound"] == "within +-2" and row["holds"] for row in rows)
    np.testing.assert_allclose([row["predict"] for row in rows], [residual[group == k].mean() for k in (0, 1)])
    assert "group_bias:bound=2.0  mean residual of group 1" in export_constraints(tree)
    tree.save(tmp_path / "model.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # stored: no "was not stored" warning
        again = srtopt.load(tmp_path / "model.json")
    assert again.constraints == ["group_bias:bound=2.0"] and again.constraint_report_ == rows
    refit = again.fit(X, y, sensitive_features=group)
    np.testing.assert_array_equal(refit.predict(X), tree.predict(X))


def test_a_constraint_without_a_spec_is_not_stored_and_says_so(tmp_path):
    X, y, _ = _data()
    tree = SoftRegressionTree(depth=1, random_state=0, max_iter=1,
                              constraints=RowMean(lambda yhat, y: yhat, upper=10.0)).fit(X, y)
    tree.save(tmp_path / "model.json")
    with pytest.warns(UserWarning, match="parameter constraints=RowMean.* was not stored"):
        srtopt.load(tmp_path / "model.json")


def test_the_report_on_other_rows_is_the_report_of_those_rows():
    X, y, group = _data(n=400)
    train, test = slice(0, 300), slice(300, None)
    tree = SoftRegressionTree(depth=2, random_state=0, constraints=["parity:gap=0.05", "monotone:x3=-1"]).fit(
        X[train], y[train], sensitive_features=group[train])
    assert constraint_report(tree, X[train], y[train], group[train]) == tree.constraint_report_
    on_test = constraint_report(tree, X[test], y[test], group[test])
    gap = _gap(tree.predict(X[test]), group[test])
    assert on_test[0]["predict"] == pytest.approx(gap) and on_test[0]["holds_predict"] == (abs(gap) <= 0.05 + 1e-6)
    assert on_test[0]["predict"] == pytest.approx(group_gaps(tree.predict(X[test]), group[test])["gap"][0])
    assert on_test[1:] == tree.constraint_report_[1:]  # the monotone rows do not depend on the rows
    with pytest.raises(ValueError, match="sensitive_features holds the group 7, which the fit did not see"):
        constraint_report(tree, X[test], y[test], np.full(100, 7))


def test_cross_validation_reports_the_held_out_values():
    X, y, group = _data(n=120)
    search = SoftRegressionTreeCV(SoftRegressionTree(depth=1, random_state=0, constraints="parity:gap=0.05"),
                                  depths=(1,), leaves=("linear",), leaf_ridges=(1.0,), split_weights=(1.0,), cv=3,
                                  random_state=0).fit(X, y, sensitive_features=group)
    (row,) = search.constraint_report_
    assert search.best_estimator_.constraint_report_ == [row] and len(row["held_out"]) == 3
    train, test = next(KFold(3, shuffle=True, random_state=0).split(X))
    fold = clone(search.best_estimator_).fit(X[train], y[train], sensitive_features=group[train])
    assert row["held_out"][0] == pytest.approx(_gap(fold.predict(X[test]), group[test]))
    assert "held-out predict()" in export_constraints(search)
