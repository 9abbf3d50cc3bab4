"""The searches (srtopt/estimators/cv.py): one search for both tasks, the same parameters, the depths tried while
deeper trees predict better, the plainest within noise refit, the same answer at every run."""

import inspect
import math
import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold, ShuffleSplit, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from srtopt import SoftClassificationTree, SoftClassificationTreeCV, SoftRegressionTree, SoftRegressionTreeCV
from srtopt.export import export_text
from srtopt.persistence import to_dict as model_to_dict

from .test_srt import EXPECTED_FAILURES as SRT_FAILURES

EXPECTED_FAILURES = {**SRT_FAILURES, "check_sample_weight_equivalence_on_dense_data":
                     "the folds of the search are drawn on the rows, so a row of weight 2 and two copies of it fall "
                     "in different folds; its trees themselves take weights as repeated rows"}


@parametrize_with_checks([SoftRegressionTreeCV(SoftRegressionTree(max_iter=2), depths=(1, 2), leaves=("linear",),
                                               cv=2),
                          SoftClassificationTreeCV(SoftClassificationTree(max_iter=2), depths=(1,), cv=2)],
                         expected_failed_checks=lambda est: EXPECTED_FAILURES)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_both_searches_take_the_same_parameters():
    names = [list(inspect.signature(cls).parameters) for cls in (SoftRegressionTreeCV, SoftClassificationTreeCV)]
    assert names[0] == names[1] == ["estimator", "depths", "leaves", "split_weights", "leaf_ridges", "cv", "scoring",
                                    "rule", "n_jobs", "random_state", "time_limit", "verbose"]


@pytest.fixture(scope="module")
def linear_data():
    rng = np.random.default_rng(0)
    X = rng.random((150, 4))
    return X, X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * rng.standard_normal(150)


@pytest.fixture(scope="module")
def step_data():
    rng = np.random.default_rng(1)
    X = rng.random((400, 3))
    return X, np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2]) + np.where(X[:, 1] > 0.5, 1.0, 0.0) \
        + 0.05 * rng.standard_normal(400)


def test_a_linear_target_stops_the_path_early_and_refits_the_chosen_tree(linear_data):
    X, y = linear_data
    model = SoftRegressionTreeCV(cv=3).fit(X, y)
    table = pd.DataFrame(model.cv_results_)
    assert set(table["param_depth"]) == {1, 2}  # depth 2 did not beat depth 1 beyond the noise: no depth 3
    assert model.depth_ == 1 and table.loc[table["chosen"], "param_depth"].item() == 1
    assert set(model.best_params_) == {"depth", "leaf", "split_weight", "leaf_ridge"}
    alone = SoftRegressionTree(depth=1, leaf=model.leaf_, leaf_ridge=model.leaf_ridge_, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.best_estimator_.beta_, alone.beta_)  # the refit is that plain fit
    np.testing.assert_array_equal(model.predict(X), alone.predict(X))
    assert model.n_features_in_ == 4 and not hasattr(model, "feature_names_in_")


def test_a_target_with_steps_goes_deeper(step_data):
    X, y = step_data
    model = SoftRegressionTreeCV(leaves=("linear",), cv=3).fit(X, y)
    depths = pd.DataFrame(model.cv_results_)["param_depth"]
    assert model.depth_ >= 2 and depths.max() >= 3
    assert model.best_score_ == pytest.approx(max(model.cv_results_["mean_test_score"]), abs=0.02)


def test_the_same_data_gives_the_same_tree(step_data):
    """Deterministic by default, as scikit-learn's searches are: the folds and the trees' starts are seeded (seed 0)
    when random_state is None."""
    X, y = step_data
    first, second = (SoftRegressionTreeCV(depths=(1, 2), cv=3).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    labels = np.where(y > 0.5, "high", "low")
    a, b = (SoftClassificationTreeCV(depths=(1, 2), cv=3).fit(X, labels) for _ in range(2))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.best_estimator_.random_state == 0


def test_the_search_is_what_a_user_would_check_by_hand(linear_data):
    """A candidate's score on the first fold is the R^2 of the tree of its parameters fitted on that fold's training
    rows (with the candidates' macro iterations, INNER_ITER)."""
    from srtopt.estimators.cv import INNER_ITER

    X, y = linear_data
    model = SoftRegressionTreeCV(depths=(1,), leaves=("linear",), leaf_ridges=(1.0,), cv=3).fit(X, y)
    train, test = next(KFold(3, shuffle=True, random_state=0).split(X))
    tree = SoftRegressionTree(depth=1, leaf_ridge=1.0, random_state=0, max_iter=INNER_ITER).fit(X[train], y[train])
    assert model.cv_results_["split0_test_score"][0] == pytest.approx(tree.score(X[test], y[test]), rel=1e-12)


def test_small_data_repeats_the_folds_until_enough_rows_are_held_out(step_data):
    """400 rows, cv=4: 100 held out a fold, fewer than HELD_OUT_ROWS in all, so the folds are repeated (reshuffled)
    3 times, REPEATS, and every candidate is scored on all 12 (1,200 held-out rows, fewer than the regression's 2,000,
    SCORED); the first repeat's folds are KFold(4, shuffle=True)'s."""
    from srtopt.estimators.cv import REPEATS

    X, y = step_data
    model = SoftRegressionTreeCV(depths=(1, 2), leaves=("linear",), leaf_ridges=(1.0,), cv=4, random_state=3).fit(X, y)
    table = pd.DataFrame(model.cv_results_)
    assert model.n_splits_ == 4 * REPEATS and set(table["n_folds"]) == {12}
    train, test = next(KFold(4, shuffle=True, random_state=3).split(X))
    tree = SoftRegressionTree(depth=1, random_state=3, max_iter=3).fit(X[train], y[train])
    assert table["split0_test_score"][0] == pytest.approx(tree.score(X[test], y[test]), rel=1e-12)


@pytest.mark.parametrize("search, leaf, rows, scored", [
    (SoftRegressionTreeCV, "linear", 3000, 3), (SoftClassificationTreeCV, "logistic", 3000, 2),
    (SoftRegressionTreeCV, "linear", 8000, 2), (SoftClassificationTreeCV, "logistic", 8000, 1)])
def test_large_data_is_scored_on_the_first_folds_that_hold_out_enough_rows(search, leaf, rows, scored):
    """cv=4: the first folds that hold out the task's rows of SCORED, 2,000 and two folds at least in regression,
    1,000 in classification: on 3,000 rows (750 held out a fold) three folds in regression, two in classification;
    on 8,000 rows (2,000 a fold) two in regression, one in classification."""
    rng = np.random.default_rng(0)
    X = rng.random((rows, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=rows)
    if search is SoftClassificationTreeCV:
        y = (y > 0.5).astype(int)
    model = search(depths=(1,), leaves=(leaf,), leaf_ridges=(1.0,), cv=4).fit(X, y)
    assert model.n_splits_ == 4 and model.cv_results_["n_folds"].tolist() == [scored]
    assert model.max_fits(rows) == scored + 1


def test_weights_and_factors_are_candidates(linear_data):
    """The other split factors at the first leaf factor in the first weights round, then the heavier leaf factor
    with every split factor, whatever the first round said."""
    X, y = linear_data
    model = SoftRegressionTreeCV(depths=(1,), leaves=("linear",), split_weights=(1.0, 10.0), leaf_ridges=(1.0, 100.0),
                                 cv=2).fit(X, y)
    params = sorted(map(tuple, pd.DataFrame(model.cv_results_)[["param_split_weight", "param_leaf_ridge"]].to_numpy()))
    assert params == [(1.0, 1.0), (1.0, 100.0), (10.0, 1.0), (10.0, 100.0)]
    w = model.split_weight_
    assert model.best_estimator_.regularization == ("l2" if w == 1.0 else f"l2:split={w!r}")
    assert model.best_estimator_.leaf_ridge == model.leaf_ridge_


def _walk(losses_of, rule="best", **params):
    """The labels of the rounds ``SoftTreeCV._path`` runs when each candidate's held-out losses are
    ``losses_of(candidate)`` (the search's other ``params`` given)."""
    from srtopt.estimators.search import Evaluated
    from srtopt.solvers.deadline import Deadline

    rounds = []

    def run(label, candidates, folds, n_jobs):
        rounds.append(label)
        return {c: Evaluated(np.asarray(losses_of(c), float), [0.0], [0.0]) for c in candidates}

    search = SoftRegressionTreeCV(leaves=("linear",), rule=rule, **params)
    tree = search._tree()
    search._path(tree, run, [], search._plainness(tree), Deadline(None))
    return rounds


def test_the_path_goes_deeper_and_heavier_while_a_round_pays():
    """Depth 2 lowers the loss and depth 3 does not: no depth 4; lambda_b x10 at depth 2 lowers it and x100 does
    not."""
    loss = {1: 1.0, 2: 0.5, 3: 0.6}
    rounds = _walk(lambda c: [loss[c.depth] - (0.1 if c.leaf_ridge == 10.0 else 0.0)] * 4)
    assert rounds == ["depth 1", "depth 2", "depth 3", "lambda_b x10 at depth 2, linear leaves",
                      "lambda_b x100 at depth 2, linear leaves"]
    rounds = _walk(lambda c: [loss[c.depth] + (0.1 if c.leaf_ridge == 10.0 else 0.0)] * 4)
    assert rounds[-1] == "lambda_b x10 at depth 2, linear leaves"


def test_the_split_factors_alone_do_not_end_the_walk_of_the_leaf_factors():
    """The round of the other split factor at leaf factor 1 does not pay; the leaf factors' rounds follow, and stop
    where a leaf factor does not pay."""
    loss = {1: 1.0, 2: 0.5, 3: 0.6}
    rounds = _walk(lambda c: [loss[c.depth] + (0.2 if c.split_weight == 0.1 else 0.0)
                              + (0.1 if c.leaf_ridge == 10.0 else 0.0)] * 4, split_weights=(1.0, 0.1))
    assert rounds[3:] == ["lambda_b x1 at depth 2, linear leaves", "lambda_b x10 at depth 2, linear leaves"]


def test_depth_5_runs_only_when_the_rule_takes_depth_4():
    """Depth 4 has the least mean loss in both walks; within the noise of depth 3 (paired-se takes depth 3) no
    depth-5 round follows, beyond it one does."""
    noise = np.tile([0.05, -0.05], 50)
    loss = {1: 1.0, 2: 0.8, 3: 0.6, 5: 0.5}
    for depth_4, deeper in ((0.599 + noise, False), (np.full(100, 0.4), True)):
        rounds = _walk(lambda c: depth_4 if c.depth == 4 else np.full(100, loss[c.depth]), "paired-se")
        assert rounds[:4] == ["depth 1", "depth 2", "depth 3", "depth 4"] and ("depth 5" in rounds) == deeper


def test_a_heavier_weight_the_rule_takes_pays():
    """lambda_b x10 loses 0.001 on average, within the noise of the per-row differences: paired-se takes it (the
    plainer), so x100 is tried; "best" does not take it, so the walk stops."""
    noise = np.tile([0.05, -0.05], 50)

    def losses(c):
        return np.full(100, 1.0) + ((0.001 + noise) if c.leaf_ridge == 10.0 else 2.0 if c.leaf_ridge == 100.0 else 0)

    for rule, last in (("paired-se", "lambda_b x100"), ("best", "lambda_b x10")):
        rounds = _walk(lambda c: losses(c) + 0.1 * (c.depth > 1), rule)
        assert rounds[0] == "depth 1" and rounds[1] == "depth 2" and rounds[-1].startswith(last), rule


def test_the_estimators_own_settings_with_none(linear_data):
    X, y = linear_data
    own = SoftRegressionTree(depth=2, leaf="spline", leaf_ridge=10.0, regularization=None, max_iter=2)
    model = SoftRegressionTreeCV(own, depths=None, leaves=None, split_weights=None, leaf_ridges=None, cv=2).fit(X, y)
    assert model.best_params_ == {"depth": 2, "leaf": "spline", "split_weight": 1.0, "leaf_ridge": 10.0}
    assert model.best_estimator_.regularization is None and len(model.cv_results_["params"]) == 1


def test_dataframe_names_and_text_columns_reach_the_refit_tree(linear_data):
    X, y = linear_data
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(kind=np.repeat(["u", "v", "w"], 50))
    frame.loc[3, "f1"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "fitted without feature names", no warning of the held-out folds
        model = SoftRegressionTreeCV(depths=(1,), cv=2).fit(frame, y)
        predictions = model.predict(frame)
    np.testing.assert_array_equal(predictions, model.best_estimator_.predict(frame))
    assert model.feature_names_in_.tolist() == list(frame) and model.n_features_in_ == 5
    assert model.best_estimator_.encoder_ is model.encoder_  # the whole table's encoding, for every fit
    assert "kind = u" in export_text(model.best_estimator_, top=None)
    with pytest.raises(ValueError, match="pass model.best_estimator_"):
        export_text(model)
    with pytest.raises(ValueError, match="save the tree it chose, model.best_estimator_"):
        model_to_dict(model)


def test_a_passed_time_limit_evaluates_the_first_round_and_refits(linear_data):
    X, y = linear_data
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"time_limit=", category=UserWarning)
        model = SoftRegressionTreeCV(depths=(1, 2), cv=3, time_limit=1e-9).fit(X, y)
    assert set(model.cv_results_["param_depth"]) == {1} and model.depth_ == 1
    assert model.best_estimator_.stopped_by_ == "time_limit"


def test_verbose_prints_a_line_per_round_and_the_refit(linear_data, capsys):
    """150 rows, cv=2: the 2 folds repeated 3 times (6 folds of 75 training rows), every candidate on all 6."""
    X, y = linear_data
    SoftRegressionTreeCV(depths=(1, 2), leaves=("linear",), cv=2, verbose=1).fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    labels = [line.split(": ")[1] for line in lines]
    assert labels[:2] == ["depth 1", "depth 2"] and labels[2] == "lambda_b x10 at depth 1, linear leaves"
    assert all(label.startswith("lambda_b x") for label in labels[3:-1])
    assert lines[-1].startswith("SoftRegressionTreeCV: refit depth 1, linear leaves") and "s in all" in lines[-1]
    assert "1 candidate(s) x 6 fold(s) of 75 training rows; best" in lines[0]


def test_any_splitter_is_taken(linear_data):
    X, y = linear_data
    holdout = SoftRegressionTreeCV(depths=(1,), cv=ShuffleSplit(1, test_size=0.25, random_state=0)).fit(X, y)
    assert holdout.n_splits_ == 1 and "split1_test_score" not in holdout.cv_results_
    fraction = SoftRegressionTreeCV(depths=(1,), cv=0.25).fit(X, y)  # the same split, seed 0
    np.testing.assert_array_equal(fraction.cv_results_["split0_test_score"], holdout.cv_results_["split0_test_score"])


@pytest.mark.parametrize("params,error,match", [
    ({"estimator": LinearRegression()}, TypeError, r"estimator must be None or a SoftRegressionTree, got LinearRegr"),
    ({"estimator": SoftRegressionTree(regularization=None)}, ValueError, "split_weights scale a named regularization"),
    ({"estimator": SoftRegressionTree(regularization="l2:split=3")}, ValueError, "already sets split="),
    ({"split_weights": ()}, ValueError, "non-empty sequence of distinct numbers > 0"),
    ({"leaf_ridges": (1.0, -1.0)}, ValueError, "leaf_ridges must be None or a non-empty sequence of distinct numbers"),
    ({"leaves": ("linear", "cubic")}, ValueError, "leaves must be None or a non-empty sequence"),
    ({"cv": 1}, ValueError, "cv must be an integer >= 2 or a fraction in \\(0, 1\\) or a cross-validation splitter, got 1"),
    ({"rule": "median"}, ValueError, "rule must be 'one-se' or 'paired-se' or 'best'"),
    ({"scoring": "log_loss"}, ValueError, "scoring must be 'r2'"),
    ({"depths": (0, 2)}, ValueError, "depths must be None or a non-empty sequence of distinct integers >= 1"),
])
def test_bad_parameters_are_named(linear_data, params, error, match):
    X, y = linear_data
    with pytest.raises(error, match=match):
        SoftRegressionTreeCV(**params).fit(X, y)


# ---------------------------------------------------------------- the classifier's search
def test_the_classifiers_search_chooses_by_the_held_out_log_loss():
    X, y = load_breast_cancer(return_X_y=True)
    labels = np.array(["benign", "malignant"])[1 - y]
    model = SoftClassificationTreeCV(depths=(1, 2), cv=3).fit(X, labels)
    table = pd.DataFrame(model.cv_results_)
    assert set(table["param_leaf"]) == {"logistic", "spline"} and list(model.classes_) == ["benign", "malignant"]
    np.testing.assert_allclose(table["mean_test_score"], -table["mean_held_out_loss"], atol=2e-3)  # fold sizes
    np.testing.assert_array_equal(model.predict(X), model.best_estimator_.predict(X))
    np.testing.assert_array_equal(model.decision_function(X) > 0, model.predict(X) == "malignant")
    by_accuracy = SoftClassificationTreeCV(depths=(1,), leaves=("logistic",), scoring="accuracy", cv=3).fit(X, labels)
    assert 0.9 < by_accuracy.best_score_ <= 1


def test_the_classifiers_search_takes_a_class_of_few_rows_and_refuses_folds_no_class_fills():
    rng = np.random.default_rng(0)
    X = rng.random((60, 2))
    y = np.r_[np.repeat(["a", "b"], 29), ["c", "c"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SoftClassificationTreeCV(depths=(1,)).fit(X, y)
    assert np.all(np.isfinite(model.cv_results_["mean_test_score"]))
    with pytest.raises(ValueError, match=r"cv=4: .* class of at least 4 rows, and the largest class of y has 3; "
                                         r"pass a smaller cv"):
        SoftClassificationTreeCV().fit(X[:6], np.repeat(["a", "b"], 3))


def test_a_seeded_search_seeds_the_trees_unless_they_have_their_own_seed():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::4], y[::4]
    assert SoftClassificationTreeCV(depths=(1,), cv=2, random_state=3).fit(X, y).best_estimator_.random_state == 3
    own = SoftClassificationTreeCV(SoftClassificationTree(random_state=7), depths=(1,), cv=2, random_state=3)
    assert own.fit(X, y).best_estimator_.random_state == 7


def test_the_default_n_jobs_runs_long_rounds_and_rounds_on_running_workers_on_all_cores(monkeypatch):
    """None: the first round and those guessed under PARALLEL_SECONDS in this process, longer ones on all cores;
    every round of two fits or more once a round of this process ran on workers (they are still running), until
    WARM_SECONDS later; an n_jobs given is kept."""
    from srtopt.estimators.cv import PARALLEL_SECONDS, WARM_SECONDS, _Workers

    rounds = SoftRegressionTreeCV()
    assert not _Workers.running()  # as in a fresh process (conftest)
    assert [rounds._jobs(guess, 6) for guess in (0.0, PARALLEL_SECONDS / 2, PARALLEL_SECONDS)] == [1, 1, 6]
    assert rounds._jobs(PARALLEL_SECONDS, 1) == 1
    _Workers.used()
    assert [rounds._jobs(guess, 6) for guess in (0.0, PARALLEL_SECONDS / 2)] == [6, 6] and rounds._jobs(0.0, 1) == 1
    monkeypatch.setattr(_Workers, "last", time.monotonic() - WARM_SECONDS)
    assert rounds._jobs(0.0, 6) == 1
    assert SoftRegressionTreeCV(n_jobs=1)._jobs(1e6, 6) == 1 and SoftClassificationTreeCV(n_jobs=3)._jobs(0.0, 6) == 3


@pytest.mark.slow
def test_parallel_fits_choose_the_same(step_data, monkeypatch, capsys):
    """n_jobs=2 runs the fits in joblib's worker processes, and so does the default for the rounds after the first
    when every round counts as long, and for every round once workers ran: the same scores, choice and tree as
    n_jobs=1."""
    import joblib

    import srtopt.estimators.cv as cv

    X, y = step_data
    serial, parallel = (SoftRegressionTreeCV(depths=(1, 2), cv=3, n_jobs=n).fit(X, y) for n in (1, 2))
    monkeypatch.setattr(cv, "PARALLEL_SECONDS", 0.0)
    monkeypatch.setattr(cv._Workers, "last", -math.inf)  # as if n_jobs=2 had not just run
    default = SoftRegressionTreeCV(depths=(1, 2), cv=3, verbose=1).fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    assert "processes" not in lines[0]
    assert re.search(r"training rows on \d+ processes; best", lines[1]) or joblib.cpu_count() == 1
    monkeypatch.setattr(cv, "PARALLEL_SECONDS", math.inf)
    running = SoftRegressionTreeCV(depths=(1, 2), cv=3, verbose=1).fit(X, y)
    assert re.search(r"training rows on \d+ processes; best", capsys.readouterr().err.splitlines()[0]) \
        or joblib.cpu_count() == 1
    for model in (parallel, default, running):
        np.testing.assert_array_equal(serial.cv_results_["mean_test_score"], model.cv_results_["mean_test_score"])
        np.testing.assert_array_equal(serial.predict(X), model.predict(X))


@pytest.mark.slow
def test_a_dask_cluster_runs_the_search_with_the_same_answer(step_data):
    """Under joblib's Dask backend the (candidate, fold) fits run on a real local cluster's workers."""
    distributed = pytest.importorskip("distributed", reason="the distributed extra: pip install 'srtopt[distributed]'")
    import joblib

    X, y = step_data
    serial = SoftRegressionTreeCV(depths=(1, 2), cv=3).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        with joblib.parallel_backend("dask"):
            remote = SoftRegressionTreeCV(depths=(1, 2), cv=3, n_jobs=-1).fit(X, y)
        assert len(client.scheduler_info()["workers"]) == 2
    assert remote.best_params_ == serial.best_params_
    np.testing.assert_array_equal(remote.cv_results_["mean_test_score"], serial.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(remote.predict(X), serial.predict(X))


@pytest.mark.slow
def test_diabetes_search_at_least_linear_regression():
    """The README's demo data: the default search's 4-fold mean test R^2 is linear regression's, within 0.01."""
    X, y = load_diabetes(return_X_y=True)
    outer = KFold(4, shuffle=True, random_state=0)
    srt, linear = (cross_val_score(model, X, y, cv=outer).mean() for model in (SoftRegressionTreeCV(),
                                                                                LinearRegression()))
    assert srt >= linear - 0.01


def test_max_fits_bounds_the_fits_a_search_runs(step_data, monkeypatch):
    """The count the command line prints: no search runs more fits than max_fits(), the refit included."""
    from srtopt.estimators.soft_tree import SoftTree

    X, y = step_data
    calls = []
    original = SoftTree.fit
    monkeypatch.setattr(SoftTree, "fit", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    search = SoftRegressionTreeCV(depths=(1, 2, 3), cv=4)
    search.fit(X, y)
    table = pd.DataFrame(search.cv_results_)
    assert len(calls) == table["n_folds"].sum() + 1 <= search.max_fits(len(y)) == (3 * 3 + 2) * 12 + 1
    assert search.max_fits() >= search.max_fits(len(y)) > search.max_fits(100_000) == (3 * 3 + 2) * 2 + 1
