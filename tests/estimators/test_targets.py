"""The checks of the targets and inputs of a fit, as the estimators run them (srtopt/estimators/targets.py, srtopt/inputs.py)."""

import numpy as np
import pytest

from srtopt import ORRTRegressor, SoftRegressionTree


@pytest.mark.parametrize("estimator", [SoftRegressionTree, ORRTRegressor])
@pytest.mark.parametrize("X_bad,y_bad,match", [
    (np.array([[np.inf, 1.0]] * 10), np.ones(10), "infinity"),
    (np.arange(10.0), np.ones(10), "X must be 2-D"),
    (np.ones((10, 2)), np.ones(9), "X has 10, y has 9"),
    (np.random.default_rng(0).random((3, 2)), np.ones(3), "fewer than the 4 leaves"),
    (np.ones((10, 2)), np.r_[np.nan, np.ones(9)], "y contains NaN"),
])
def test_bad_input_names_the_argument(estimator, X_bad, y_bad, match):
    with pytest.raises(ValueError, match=match):
        estimator(depth=2).fit(X_bad, y_bad)


@pytest.mark.parametrize("X_bad,match", [
    (np.array([[np.nan, 1.0]] * 10), {SoftRegressionTree: "column 'x0' of X is empty \\(every cell missing\\): drop it",
                                      ORRTRegressor: "NaN"}),
    (np.array([["a", "b"]] * 10), {ORRTRegressor: "X is not numeric .values such as .a.*: this estimator takes numbers only"}),
])
def test_what_only_the_soft_tree_takes(X_bad, match):
    """The soft tree encodes text and missing cells (srtopt.encoding) but refuses a column with nothing in it;
    ORRT takes numbers only."""
    for estimator, expected in match.items():
        with pytest.raises(ValueError, match=expected):
            estimator(depth=2).fit(X_bad, np.arange(10.0))


def _outlier_data():
    rng = np.random.default_rng(0)
    X = rng.random((120, 3))
    y = X @ [1.0, 2.0, -1.0] + 0.1 * rng.standard_normal(120)
    y[7] = 1e12
    return X, y


@pytest.mark.parametrize("estimator", [SoftRegressionTree, ORRTRegressor])
def test_a_target_dominated_by_a_few_values_warns_with_what_to_do(estimator):
    X, y = _outlier_data()
    with pytest.warns(UserWarning, match=r"y is dominated by 1 extreme value: its standard deviation is "
                                         r"9\.09e\+10, 0\.\d+ without them.*Remove or clip the extreme "
                                         r"values, or transform y \(e\.g\. a log\)") as record:
        estimator(depth=2, max_iter=1, **({"n_init": 1} if estimator is SoftRegressionTree else {})).fit(X, y)
    assert record[0].filename == __file__  # points at the caller's fit
    # once: the leaf-ridge guard's fold fits (their own rows' numbers) do not repeat it
    assert sum("y is dominated" in str(w.message) for w in record) == 1


@pytest.mark.parametrize("y", [
    np.random.default_rng(1).standard_normal(500),
    np.random.default_rng(2).lognormal(0.0, 2.0, 500),  # heavy-tailed, but not a few values
    np.r_[np.zeros(10), 1e12],  # too few rows to speak of "a few" among many
])
def test_ordinary_or_heavy_tailed_targets_do_not_warn(y, recwarn):
    X = np.random.default_rng(0).random((len(y), 2))
    from srtopt.inputs import fit_scaling

    fit_scaling(X, y)
    assert not [w for w in recwarn if "dominated" in str(w.message)]


def test_messages_name_the_problem():
    X = np.random.default_rng(0).random((40, 3))
    import pandas as pd

    for labels in (np.array(["a"] * 40), pd.Series(["a"] * 40)):  # class labels: the line points to the classifier
        with pytest.raises(ValueError, match=r"y must be numbers, got values such as 'a': for class labels use "
                                             r"SoftClassificationTree"):
            SoftRegressionTree(depth=1).fit(X, labels)

    frame = pd.DataFrame(X, columns=["u", "v", "w"])
    frame.iloc[3, 2] = np.inf
    with pytest.raises(ValueError, match=r"contains infinity.*\(first in column 'w'\)"):
        SoftRegressionTree(depth=1).fit(frame, X[:, 0])
    X[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"contains NaN.*\(first in column 1\)"):
        ORRTRegressor(depth=1).fit(X, X[:, 0])
