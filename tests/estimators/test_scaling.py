"""Input checks shared by the tree estimators (srtopt/estimators/scaling.py)."""

import numpy as np
import pytest

from srtopt import ORRTRegressor, SoftRegressionTree


@pytest.mark.parametrize("estimator", [SoftRegressionTree, ORRTRegressor])
@pytest.mark.parametrize("X_bad,y_bad,match", [
    (np.array([[np.nan, 1.0]] * 10), np.ones(10), "NaN"),
    (np.array([[np.inf, 1.0]] * 10), np.ones(10), "infinity"),
    (np.arange(10.0), np.ones(10), "X must be 2-D"),
    (np.ones((10, 2)), np.ones(9), "X has 10, y has 9"),
    (np.random.default_rng(0).random((3, 2)), np.ones(3), "fewer than the 4 leaves"),
    (np.array([["a", "b"]] * 10), np.ones(10), "could not convert|dtype"),
    (np.ones((10, 2)), np.r_[np.nan, np.ones(9)], "y contains NaN"),
])
def test_bad_input_names_the_argument(estimator, X_bad, y_bad, match):
    with pytest.raises(ValueError, match=match):
        estimator(depth=2).fit(X_bad, y_bad)
