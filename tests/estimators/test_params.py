"""The one parameter check: each estimator declares its rules, one function checks them, and the
messages name the parameter, what it must be and what it got."""

import numpy as np
import pytest

from srtopt import MILOTreeRegressor, ORCTClassifier, ORRTRegressor, SoftRegressionTree, SoftRegressionTreeCV
from srtopt.estimators.params import (BOOLEAN, FRACTION, NONE, NONNEGATIVE, POSITIVE, HasMethod, Integer,
                                      InvalidParameterError, Items, Options, Pair, Parses, Real, check_parameters)


@pytest.mark.parametrize("rule, good, bad", [
    (Integer(1), [1, np.int64(3)], [0, 1.0, True, "2"]),
    (POSITIVE, [1e-9, 3, np.float32(2)], [0, -1, float("inf"), float("nan"), True, "1"]),
    (FRACTION, [0, 0.5], [1, -0.1]),
    (Real(0, 1, "both"), [0, 1], [1.5]),
    (Options("a", None), ["a", None, np.str_("a")], ["b", 0, False]),
    (BOOLEAN, [True, np.bool_(False)], [0, 1, "yes"]),
    (Items(Integer(1), "integers >= 1"), [[1, 2], (3,)], [[], [1, 1], [0], "12", 5]),
    (HasMethod("a splitter", "split"), [__import__("sklearn.model_selection").model_selection.KFold(2)], ["ab", 3]),
    (Integer(0, 9), [0, 9], [-1, 10]),
    (Pair(NONNEGATIVE, "numbers >= 0"), [(0, 0), [1e-3, 2], np.array([1.0, 1.0])], [(1,), (1, -1), (1, 2, 3), "ab"]),
    (Parses("an int", lambda v: int(v), str), ["12"], ["1.5", 12]),
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
                                       ORRTRegressor(), ORCTClassifier()])
def test_every_estimator_declares_rules_for_each_of_its_parameters(estimator):
    assert set(type(estimator)._parameter_constraints) == set(estimator.get_params(deep=False))
    check_parameters(estimator)  # the defaults follow the rules


@pytest.mark.parametrize("estimator, params, message", [
    (SoftRegressionTree, {"tau": 0}, "tau must be a positive finite number, got 0"),
    (SoftRegressionTree, {"time_limit": -1}, "time_limit must be None or a positive finite number, got -1"),
    (SoftRegressionTree, {"verbose": -1}, "verbose must be an integer >= 0 or True or False, got -1"),
    (ORRTRegressor, {"lambda_w": -1}, "lambda_w must be a finite number >= 0, got -1"),
    (ORRTRegressor, {"solver": 3}, "solver must be a spec string or an object with solve(problem, x0), got 3"),
    (ORCTClassifier, {"omega_bound": 0}, "omega_bound must be None or a positive finite number, got 0"),
    (ORCTClassifier, {"class_weight": "equal"}, "class_weight must be None or 'balanced' or a dict of class weights, "
                                                "got 'equal'"),
    (MILOTreeRegressor, {"time_limit": None}, "time_limit must be a number > 0 (seconds), got None"),
    (MILOTreeRegressor, {"certify": 1}, "certify must be True or False, got 1"),
    (SoftRegressionTreeCV, {"depths": [2, 2]}, "depths must be None or a non-empty sequence of distinct integers"),
    (SoftRegressionTree, {"random_state": -1}, "random_state must be None or an integer in 0..4294967295 or a "
                                               "numpy RandomState, got -1"),
    (SoftRegressionTree, {"max_features": 0}, "max_features must be None or an integer >= 1, got 0"),
    (SoftRegressionTree, {"regularization": (1e-3, -1)}, "regularization must be None or a finite number >= 0 or "
                                                         "a pair of finite numbers >= 0"),
    (SoftRegressionTree, {"regularization": "l1"}, "regularization must be one of 'l2', 'l2-slopes'"),
    (SoftRegressionTree, {"loss": "huber:delta=x"}, "loss: bad options for loss 'huber'"),
    (SoftRegressionTree, {"penalty": ["split_l1", "l0"]}, "penalty: unknown penalty 'l0'"),
    (SoftRegressionTree, {"constraints": "parity:gap"}, "constraints: "),
    (SoftRegressionTree, {"monotonic_cst": [1, 2]}, "monotonic_cst: "),
    (SoftRegressionTree, {"monotonic_cst": "x"}, "monotonic_cst must be None or signs in {-1, 0, 1}"),
    (SoftRegressionTree, {"working_sets": "leaves"}, "working_sets: unknown working_sets 'leaves'"),
    (SoftRegressionTree, {"init": []}, "init must not be an empty list"),
    (SoftRegressionTree, {"init": ["cart", "kmeans"]}, "init must be 'model-tree', 'cluster', 'cart', a callable"),
    (SoftRegressionTree, {"bn_solver": "no-such-solver"}, "bn_solver: unknown bn solver 'no-such-solver'"),
    (SoftRegressionTree, {"callbacks": print}, "callbacks must be None or a list of Callback objects or callables"),
    (SoftRegressionTree, {"callbacks": [3]}, "callbacks: a callback must be a Callback or a callable, got 3"),
    (ORRTRegressor, {"loss": 3}, "loss must be a name, a Loss object or a callable, got 3"),
    (MILOTreeRegressor, {"keep_model": "yes"}, "keep_model must be True or False"),
    (MILOTreeRegressor, {"solver_options": ["threads"]}, "solver_options must be None or a dict of solver options"),
    (SoftRegressionTreeCV, {"random_state": 1.5}, "random_state must be None or an integer"),
])
def test_fit_refuses_a_bad_parameter_before_any_work(estimator, params, message):
    X, y = np.random.default_rng(0).random((20, 2)), np.arange(20.0)
    with pytest.raises(InvalidParameterError) as error:
        estimator(**params).fit(X, y)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)
