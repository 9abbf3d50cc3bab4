"""The one parameter check: each estimator declares its rules, one function checks them, and the
messages name the parameter, what it must be and what it got."""

import numpy as np
import pytest

from srtopt import MILOTreeRegressor, ORRTRegressor, SoftRegressionTree, SoftRegressionTreeCV
from srtopt.estimators.params import (BOOLEAN, FRACTION, NONE, POSITIVE, HasMethod, Integer, Items, Options, Real,
                                      check_parameters)


@pytest.mark.parametrize("rule, good, bad", [
    (Integer(1), [1, np.int64(3)], [0, 1.0, True, "2"]),
    (POSITIVE, [1e-9, 3, np.float32(2)], [0, -1, float("inf"), float("nan"), True, "1"]),
    (FRACTION, [0, 0.5], [1, -0.1]),
    (Real(0, 1, "both"), [0, 1], [1.5]),
    (Options("a", None), ["a", None, np.str_("a")], ["b", 0, False]),
    (BOOLEAN, [True, np.bool_(False)], [0, 1, "yes"]),
    (Items(Integer(1), "integers >= 1"), [[1, 2], (3,)], [[], [1, 1], [0], "12", 5]),
    (HasMethod("a splitter", "split"), [__import__("sklearn.model_selection").model_selection.KFold(2)], ["ab", 3]),
])
def test_each_rule_accepts_what_it_says_and_nothing_else(rule, good, bad):
    assert all(rule(v) for v in good) and not any(rule(v) for v in bad)


def test_the_message_joins_the_rules_and_shows_the_value():
    class Estimator:
        _parameter_constraints = {"k0": [NONE, Integer(0)], "eps": [FRACTION]}
        k0, eps = -1, 0.5

    with pytest.raises(ValueError, match=r"^k0 must be None or an integer >= 0, got -1$"):
        check_parameters(Estimator())
    Estimator.k0, Estimator.eps = 2, 1.0
    with pytest.raises(ValueError, match=r"^eps must be a number in \[0, 1\), got 1.0$"):
        check_parameters(Estimator())


@pytest.mark.parametrize("estimator", [SoftRegressionTree(), SoftRegressionTreeCV(), MILOTreeRegressor(),
                                       ORRTRegressor()])
def test_every_estimator_declares_rules_for_parameters_it_has(estimator):
    rules = type(estimator)._parameter_constraints
    assert rules and set(rules) <= set(estimator.get_params(deep=False))
    check_parameters(estimator)  # the defaults follow the rules


@pytest.mark.parametrize("estimator, params, message", [
    (SoftRegressionTree, {"tau": 0}, "tau must be a positive finite number, got 0"),
    (SoftRegressionTree, {"time_limit": -1}, "time_limit must be None or a positive finite number, got -1"),
    (SoftRegressionTree, {"verbose": -1}, "verbose must be an integer >= 0 or True or False, got -1"),
    (ORRTRegressor, {"lambda_w": -1}, "lambda_w must be a finite number >= 0, got -1"),
    (ORRTRegressor, {"solver": 3}, "solver must be a spec string or an object with solve(problem, x0), got 3"),
    (MILOTreeRegressor, {"time_limit": None}, "time_limit must be a number > 0 (seconds), got None"),
    (MILOTreeRegressor, {"certify": 1}, "certify must be True or False, got 1"),
    (SoftRegressionTreeCV, {"depths": [2, 2]}, "depths must be None or a non-empty sequence of distinct integers"),
])
def test_fit_refuses_a_bad_parameter_before_any_work(estimator, params, message):
    X, y = np.random.default_rng(0).random((20, 2)), np.arange(20.0)
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        estimator(**params).fit(X, y)
