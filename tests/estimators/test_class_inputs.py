"""The classifier on the inputs a fault probe tried: every bad input one line naming what is wrong,
finite probabilities for finite rows, the same tree for weights scaled by a factor and for any memory
layout of X, no model file that load refuses."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

import srtopt
from srtopt import ORCTClassifier, SoftClassificationTree, SoftRegressionTree
from srtopt.persistence import read_view

RNG = np.random.default_rng(0)
X30 = RNG.random((30, 2))
Y3 = np.array([0, 1, 2] * 10)


def _quick(**params):
    return SoftClassificationTree(depth=1, max_iter=1, random_state=0, **params)


def _refused(make, message):
    with pytest.raises(ValueError, match=message) as info:
        make()
    assert "\n" not in str(info.value)
    return str(info.value)


# ---------------------------------------------------------------- the bad-input table (docs/cli.md)
@pytest.mark.parametrize("y, params, message", [
    (np.zeros(30), {}, r"^y has one class \(0\.0\): a classifier needs two classes or more$"),
    (np.linspace(0, 1, 30), {}, r"^Unknown label type: y looks continuous \(30 distinct values"),
    (np.r_[np.nan, Y3[1:]], {}, r"^y has 1 missing label\(s\) \(NaN, None or pd.NA\), the first in row 0"),
    (Y3, {"class_weight": {0: 1, 7: 2}}, r"^class_weight names the class 7, which y does not have"),
    (Y3, {"constraints": "class_recall:class=5,lower=0.9"}, r"class_recall: class 5 is not a class of y"),
])
def test_the_bad_inputs_of_the_table_are_one_line(y, params, message):
    _refused(lambda: _quick(**params).fit(X30, y), message)


def test_a_class_of_one_row_fits_with_a_warning():
    y = Y3.copy()
    y[0] = 9
    with pytest.warns(UserWarning, match=r"^class 9 has one row \(of positive weight\)"):
        _quick().fit(X30, y)


def test_labels_the_fit_never_saw_count_as_errors_with_a_warning():
    model = _quick().fit(X30, Y3)
    with pytest.warns(UserWarning, match=r"^y holds 1 label\(s\) the tree was not fitted on \(7\)"):
        score = model.score(X30, np.where(np.arange(30) < 3, 7, Y3))
    assert score <= 27 / 30


def test_a_recall_bound_that_cannot_be_met_is_a_warning_and_the_report_says_so():
    """Both classes at recall 0.9 on rows that repeat with the other label: no tree meets both."""
    X = np.r_[X30, X30]
    y = np.r_[np.zeros(30, int), np.ones(30, int)]
    with pytest.warns(UserWarning, match="^the constraints could not be met; the tree is the most feasible one found"):
        model = SoftClassificationTree(depth=1, random_state=0, constraints=[
            "class_recall:class=0,lower=0.9", "class_recall:class=1,lower=0.9"]).fit(X, y)
    assert not all(row["holds"] for row in model.constraint_report_)


# ---------------------------------------------------------------- labels and messages of the probe
@pytest.mark.parametrize("y, message", [
    (np.array(["1", 1, 1.0] * 10, dtype=object), r"^y mixes labels of different types \(number 1 and string '1'\)"),
    (np.array(["a", "b", 3] * 10, dtype=object), r"^y mixes labels of different types \(number 3 and string 'a'\)"),
    (np.array(["a", "b", None] * 10, dtype=object), r"^y has 10 missing label\(s\) \(NaN, None or pd.NA\), the first "
                                                     r"in row 2"),
    (pd.array(["a", "b", pd.NA] * 10, dtype="string"), r"^y has 10 missing label\(s\)"),
    (np.array([1.5, 2, 2.25] * 10, dtype=object), r"^Unknown label type: y looks continuous \(3 distinct values such "
                                                   r"as 1\.5, 2, 2\.25\): a classifier needs class labels"),
])
@pytest.mark.parametrize("estimator", [_quick, lambda: ORCTClassifier(depth=1, n_starts=1)])
def test_label_types_are_one_line_not_a_type_error(y, message, estimator):
    _refused(lambda: estimator().fit(X30, y), message)


@pytest.mark.parametrize("weight", [-1, np.nan, np.inf])
def test_a_bad_class_weight_is_blamed(weight):
    _refused(lambda: _quick(class_weight={0: weight}).fit(X30, Y3),
             rf"^class_weight gives class 0 the weight {weight}: a weight must be a finite number >= 0$")


def test_a_class_weight_of_zero_says_so():
    _refused(lambda: _quick(class_weight={0: 0}).fit(X30, Y3), r"^class 0 has no row of positive weight: class_weight "
                                                                r"gives it 0$")


@pytest.mark.parametrize("estimator", [_quick, lambda: SoftRegressionTree(depth=1, max_iter=1)])
@pytest.mark.parametrize("X, message", [
    (X30[:, 0], r"^X must be 2-D \(n_samples, n_features\), got a 1-D array of 30 values\. Reshape your data"),
    (X30 + 1j, r"^Complex data not supported: X holds complex numbers"),
    (pd.DataFrame(X30, columns=[0, "b"]), r"^X's column names mix strings and other types \(0, 'b'\)"),
])
def test_bad_x_is_one_line_at_fit_and_predict(estimator, X, message):
    _refused(lambda: estimator().fit(X, Y3), message)
    fitted = estimator().fit(X30, Y3)
    _refused(lambda: fitted.predict(X), message)


def test_group_loss_on_a_classifier_is_refused_before_any_fitting():
    message = _refused(lambda: _quick(constraints="group_loss:bound=0.5").fit(X30, Y3, sensitive_features=Y3 % 2),
                       r"^constraints: group_loss constrains a regression tree, not a SoftClassificationTree; a "
                       r"SoftClassificationTree takes class_recall")
    assert "parity (two classes)" in message
    _refused(lambda: SoftRegressionTree(depth=1, constraints="class_recall:class=0,lower=0.5").fit(X30, X30[:, 0]),
             r"^constraints: class_recall constrains a classification tree, not a SoftRegressionTree")


@pytest.mark.parametrize("estimator, y", [(_quick, Y3), (lambda: SoftRegressionTree(depth=1, max_iter=1), X30[:, 0])])
def test_groups_that_no_constraint_compares_are_warned_about(estimator, y):
    with pytest.warns(UserWarning, match=r"^sensitive_features gives the protected groups, but no constraint compares "
                                         r"groups \(parity, group_loss, a row_mean over groups\): they are not used"):
        model = estimator().fit(X30, y, sensitive_features=Y3 % 2)
    assert not hasattr(model, "groups_")


# ---------------------------------------------------------------- numbers at the edges
def test_a_column_whose_range_overflows_is_refused_at_fit():
    X = np.c_[X30, np.where(Y3 == 0, 1e308, -1e308)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning of an overflow on the way
        _refused(lambda: _quick().fit(pd.DataFrame(X, columns=["a", "b", "huge"]), Y3),
                 r"^column 'huge' of X spans -1e\+308 to 1e\+308, a range larger than the largest float")
        _refused(lambda: SoftRegressionTree(depth=1).fit(X30, np.where(Y3 == 0, 1e308, -1e308)), r"^y spans -1e\+308")


def test_a_model_that_load_would_refuse_is_not_written(tmp_path):
    model = _quick().fit(X30, Y3)
    model.feature_importances_ = np.array([np.nan, 0.5])
    _refused(lambda: model.save(tmp_path / "m.json"), r"^SoftClassificationTree cannot be saved, a file of it would "
                                                      r"not load: the model: feature_importances_ holds non-finite "
                                                      r"values$")
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("leaf", ["logistic", "constant"])
def test_probabilities_are_finite_for_every_finite_row(tmp_path, leaf):
    """Rows at +-1e308 (finite) and a feature of training range 1e-11 predicted at 1e300: finite
    probabilities summing to 1, in both mixture modes and in the file predictor."""
    X = np.c_[RNG.random((200, 2)), 1 + 1e-11 * RNG.random(200)]
    y = (X[:, 0] + X[:, 1] > 1).astype(int) + ((X[:, 2] - 1) > 0.7e-11)
    model = SoftClassificationTree(depth=2, leaf=leaf, random_state=0).fit(X, y)
    model.save(tmp_path / "m.json")
    far = np.r_[RNG.choice([-1e308, 1e308], size=(200, 3)), np.c_[X[:5, :2], np.full(5, 1e300)]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning of an overflow either
        found = (model.predict_proba(far), model.predict_proba(far, mixture=True),
                 read_view(tmp_path / "m.json").predict_proba(far))
    for proba in found:
        assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1)


def test_weights_scaled_by_a_factor_give_the_same_tree():
    X, y = load_iris(return_X_y=True)
    fits = [SoftClassificationTree(depth=2, random_state=0).fit(X, y, sample_weight=np.full(len(y), w))
            for w in (1e6, 1e200)]
    assert fits[0].objective_ == fits[1].objective_
    np.testing.assert_array_equal(fits[0].predict_proba(X), fits[1].predict_proba(X))


@pytest.mark.parametrize("mixture", [False, True])
def test_probabilities_are_bit_identical_for_any_layout_of_x(tmp_path, mixture):
    X, y = load_iris(return_X_y=True)
    model = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    reference = model.predict_proba(np.ascontiguousarray(X), mixture=mixture)
    for same in (np.asfortranarray(X), pd.DataFrame(X), X[:, ::-1][:, ::-1]):
        np.testing.assert_array_equal(model.predict_proba(same, mixture=mixture), reference)
    if not mixture:
        model.save(tmp_path / "m.json")
        np.testing.assert_array_equal(read_view(tmp_path / "m.json").predict_proba(np.asfortranarray(X)), reference)
        np.testing.assert_array_equal(srtopt.load(tmp_path / "m.json").predict_proba(pd.DataFrame(X)), reference)
