"""The readings of the l2 weights: "none" is None, in Python as on the command line."""

import numpy as np
import pytest

from srtopt import SoftRegressionTree, SoftRegressionTreeCV
from srtopt.estimators.regularization import parse_reading, regularization_lambdas
from srtopt.tree import Tree


@pytest.mark.parametrize("spelling", ["none", "None", "NONE"])
def test_none_spelled_as_a_word_is_no_l2_term(spelling):
    assert regularization_lambdas(spelling, 3, Tree(2), 100) == (0.0, 0.0) == regularization_lambdas(None, 3, Tree(2), 100)
    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    word = SoftRegressionTree(regularization=spelling, max_iter=2, random_state=0).fit(X, y)
    value = SoftRegressionTree(regularization=None, max_iter=2, random_state=0).fit(X, y)
    assert word.objective_ == value.objective_ and (word.lambda_w_, word.lambda_b_) == (0.0, 0.0)
    assert word.get_params()["regularization"] == spelling  # kept as given (scikit-learn's clone)


def test_none_takes_no_option_and_cross_validation_has_no_weight_to_scale():
    assert parse_reading("none") == ("none", 1.0)
    with pytest.raises(ValueError, match="got 'none:split=2'"):
        parse_reading("none:split=2")
    X = np.random.default_rng(0).random((40, 2))
    with pytest.raises(ValueError, match="split_weights scale a named regularization reading"):
        SoftRegressionTreeCV(SoftRegressionTree(regularization="none")).fit(X, X[:, 0])
