"""Fairness of a classifier's decisions as fairlearn measures it: parity of predict()'s positive rate, equalized
odds, a recall bound in every group, the soft mean probability's own parity, and srtopt.fairness's rates; the
definitions written out here (fairlearn is not a dependency)."""

import numpy as np
import pytest

from srtopt.estimators.classification import SoftClassificationTree
from srtopt.fairness import (constraint_report, demographic_parity_difference, equalized_odds_difference,
                             group_rates, rate_gaps)
from tests.conftest import CLASSIFICATION_DATA


def _rate(predicted, rows):
    return np.mean(predicted[rows])


def fairlearn_differences(y, prediction, group, positive):
    """(demographic parity difference, equalized odds difference) as fairlearn defines them, two groups."""
    hit, actual = prediction == positive, y == positive
    a, b = group, ~group
    parity = abs(_rate(hit, a) - _rate(hit, b))
    odds = max(abs(_rate(hit, a & actual) - _rate(hit, b & actual)), abs(_rate(hit, a & ~actual) - _rate(hit, b & ~actual)))
    return parity, odds


@pytest.fixture(scope="module")
def pima():
    """pima's rows, its labels and the group Age > 30 (Age stays a feature)."""
    if CLASSIFICATION_DATA is None:
        pytest.skip("set SRTOPT_CLASSIFICATION_DATA to the classification datasets' directory")
    from srtopt.datasets import load

    data = load("pima", data_home=CLASSIFICATION_DATA)
    return data.X, data.y, data.X[:, data.feature_names.index("Age")] > 30


@pytest.mark.parametrize("spec, which, gap", [("parity:gap=0.02", 0, 0.02), ("equalized_odds:gap=0.05", 1, 0.05)])
def test_the_gaps_of_predict_hold_as_fairlearn_measures_them(pima, spec, which, gap):
    X, y, group = pima
    free = SoftClassificationTree(depth=3, random_state=0).fit(X, y)
    fair = SoftClassificationTree(depth=3, constraints=spec, random_state=0).fit(X, y, sensitive_features=group)
    assert fairlearn_differences(y, free.predict(X), group, "positive")[which] > 0.15
    measured = fairlearn_differences(y, fair.predict(X), group, "positive")
    assert measured[which] <= gap
    assert measured[which] == pytest.approx((demographic_parity_difference, equalized_odds_difference)[which](
        y, fair.predict(X), group))
    assert all(row["holds_predict"] and row["holds"] for row in fair.constraint_report_)
    assert max(abs(row["predict"]) for row in fair.constraint_report_) == pytest.approx(measured[which])


def test_parity_of_the_decisions_and_of_the_probabilities(pima):
    X, y, group = pima
    decisions = SoftClassificationTree(depth=2, constraints="parity:gap=0.03", random_state=0).fit(
        X, y, sensitive_features=group)
    [row] = decisions.constraint_report_
    assert row["row"] == "positive rate(True) - positive rate(False)" and row["holds"]
    hit = decisions.predict(X) == "positive"
    assert row["predict"] == pytest.approx(hit[group].mean() - hit[~group].mean())
    scores = SoftClassificationTree(depth=2, constraints="probability_parity:gap=0.03", random_state=0).fit(
        X, y, sensitive_features=group)
    [row] = scores.constraint_report_
    p = scores.predict_proba(X)[:, 1]
    assert row["holds"] and row["predict"] == pytest.approx(p[group].mean() - p[~group].mean())
    assert constraint_report(decisions, X, y, group) == decisions.constraint_report_  # the report of any rows


def test_a_recall_bound_in_every_group(pima):
    X, y, group = pima
    tree = SoftClassificationTree(depth=2, constraints="group_recall:class=positive,lower=0.75", random_state=0).fit(
        X, y, sensitive_features=group)
    hit = tree.predict(X) == "positive"
    for row, rows in zip(tree.constraint_report_, (~group, group)):
        assert row["holds_soft"] and row["holds_predict"]
        assert hit[rows & (y == "positive")].mean() >= 0.75
        assert row["predict"] == pytest.approx(hit[rows & (y == "positive")].mean())


def test_rates_and_their_gaps_with_intervals():
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    prediction = np.array([1, 0, 1, 0, 1, 1, 0, 0])
    group = np.array(["a"] * 4 + ["b"] * 4)
    rates = group_rates(y, prediction, group).set_index(["rate", "group"])["value"]
    assert rates.to_dict() == {("selection", "a"): 0.5, ("selection", "b"): 0.5, ("true positive", "a"): 0.5,
                               ("true positive", "b"): 1.0, ("false positive", "a"): 0.5,
                               ("false positive", "b"): 0.0}
    gaps = rate_gaps(y, prediction, group)
    assert gaps["gap"].tolist() == [0.0, 0.5, -0.5] and (gaps["low"] <= gaps["gap"]).all()
    assert demographic_parity_difference(y, prediction, group) == 0.0
    assert equalized_odds_difference(y, prediction, group) == 0.5
    with pytest.raises(ValueError, match="give pos_label"):
        group_rates(np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([0, 0, 1]))


@pytest.mark.parametrize("spec, message", [
    ("equalized_odds:gap=0.05", "group 1 \\(its code\\) has no row of the positive class"),
    ("parity:gap=1.5", r"gap must be a number in \[0, 1\]"),
    ("group_recall:class=1,lower=0.8", "group 1 \\(its code\\) has no row of class 1"),
])
def test_bad_rates_are_refused_in_one_line(spec, message):
    X = np.random.default_rng(0).random((40, 2))
    y = np.repeat([0, 1], 20)
    group = (np.arange(40) < 20).astype(int)  # group 1 holds class 0 alone
    with pytest.raises(ValueError, match=message) as info:
        SoftClassificationTree(depth=1, constraints=spec).fit(X, y, sensitive_features=group)
    assert "\n" not in str(info.value)
