"""The protocol of one run: fold split, training-fold-only scaling, scoring."""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold

from srtopt.datasets import load
from srtopt.experiments import (
    RunSpec,
    canonical_params,
    execute_run,
    fold_indices,
    register_method,
    run_benchmark,
)
from srtopt.experiments.store import ResultStore


class Recorder:
    """A regressor that remembers what it was fitted on and asked to predict."""

    calls: list = []

    def __init__(self, depth, seed):
        self.depth, self.seed = depth, seed

    def fit(self, X, y):
        self.X_fit, self.y_fit = np.array(X), np.array(y)
        self.mean_ = float(np.mean(y))
        Recorder.calls.append(self)
        self.predicted = []
        return self

    def predict(self, X):
        self.predicted.append(np.array(X))
        return np.full(len(X), self.mean_)


def _standardized_train_y(y, fold):
    train, _ = fold_indices(len(y), 4, 3, fold)
    yt = y[train]
    return (yt - yt.mean()) / yt.std()


def test_fold_indices_are_the_papers_kfold():
    train, test = fold_indices(308, 4, 7, 2)
    expected = list(KFold(n_splits=4, shuffle=True, random_state=7).split(np.zeros((308, 1))))[2]
    np.testing.assert_array_equal(train, expected[0])
    np.testing.assert_array_equal(test, expected[1])
    with pytest.raises(ValueError):
        fold_indices(308, 4, 7, 4)


def test_scaling_statistics_come_from_the_training_fold_only(data_home, isolated_methods, tmp_path):
    """Fails on any leakage of test rows into the X/y scaling statistics."""
    Recorder.calls = []
    register_method("recorder", lambda depth, seed, **p: Recorder(depth, seed))
    run_benchmark(["housing"], [2], ["recorder"], folds=4, seeds=1, split_seed=3,
                  store=tmp_path / "r.db", jobs=1, quiet=True, data_home=data_home)
    X, y, _ = load("housing", data_home)
    assert len(Recorder.calls) == 4
    outside = 0
    with ResultStore(tmp_path / "r.db") as store:
        stored = {r["fold"]: r for r in store.rows()}
    for est in Recorder.calls:
        fit_X, fit_y = est.X_fit, est.y_fit
        # which fold: the one whose standardized training targets were fitted
        fold = next(f for f in range(4) if len(_standardized_train_y(y, f)) == len(fit_y)
                    and np.allclose(_standardized_train_y(y, f), fit_y))
        train, test = fold_indices(len(y), 4, 3, fold)
        # X: exactly [0, 1] on the training fold
        assert np.array_equal(fit_X.min(axis=0), np.zeros(X.shape[1]))
        assert np.array_equal(fit_X.max(axis=0), np.ones(X.shape[1]))
        x_min, x_max = X[train].min(axis=0), X[train].max(axis=0)
        np.testing.assert_allclose(fit_X, (X[train] - x_min) / (x_max - x_min))
        # the test rows are scaled with the training statistics, not their own
        test_X = est.predicted[-1]
        np.testing.assert_allclose(test_X, (X[test] - x_min) / (x_max - x_min))
        outside += int(np.any(test_X < 0) or np.any(test_X > 1))
        # y: standardized with the training mean and std
        assert abs(np.mean(fit_y)) < 1e-12 and abs(np.std(fit_y) - 1) < 1e-12
        np.testing.assert_allclose(fit_y, (y[train] - y[train].mean()) / y[train].std())
        # R^2 of the constant training-mean prediction: on the standardized
        # scale, equal to the raw-scale R^2
        raw_r2 = r2_score(y[test], np.full(len(test), y[train].mean()))
        assert stored[fold]["r2_test"] == pytest.approx(raw_r2, abs=1e-12)
        assert stored[fold]["r2_train"] == pytest.approx(0.0, abs=1e-12)
        assert stored[fold]["n_train"] == len(train) and stored[fold]["n_test"] == len(test)
    # the maximum of a feature is in exactly one test fold: there it exceeds 1
    assert outside >= 1


def test_execute_run_times_the_fit_and_reads_n_iter(data_home, monkeypatch):
    """The fit alone is timed: a clock that only the fit (1 s) and the predictions (100 s each)
    move, so no wall-clock time enters the test."""
    import srtopt.experiments.protocol as protocol

    clock = [0.0]
    monkeypatch.setattr(protocol.time, "perf_counter", lambda: clock[0])

    class Slow:
        def __init__(self):
            self.n_iter_ = np.array([3, 7])

        def fit(self, X, y):
            clock[0] += 1.0
            self.mean_ = 0.0
            return self

        def predict(self, X):
            clock[0] += 100.0  # prediction is not part of the training time
            return np.zeros(len(X))

    spec = RunSpec("yacht", 2, "slow", canonical_params({}), 4, 0, 1, 5)
    result = execute_run(spec, lambda depth, seed: Slow(), data_home)
    assert result["status"] == "ok", result["error"]
    assert result["seconds"] == 1.0
    assert result["iterations"] == 7


def test_execute_run_stores_errors_instead_of_raising(data_home):
    def broken(depth, seed, **params):
        raise ImportError("cannot import name 'ORRTRegressor' from 'srtopt'")

    spec = RunSpec("yacht", 2, "broken", "{}", 4, 0, 0, 0)
    result = execute_run(spec, broken, data_home)
    assert result["status"] == "error" and result["r2_test"] is None
    assert "ImportError: cannot import name 'ORRTRegressor'" in result["error"]

    class NaNs(Recorder):
        def predict(self, X):
            return np.full(len(X), np.nan)

    result = execute_run(spec, lambda d, s: NaNs(d, s), data_home)
    assert result["status"] == "error" and "non-finite" in result["error"]


def test_params_are_passed_to_the_factory_and_canonical(data_home, isolated_methods, tmp_path):
    seen = []

    def factory(depth, seed, **params):
        seen.append((depth, seed, params))
        return Recorder(depth, seed)

    register_method("p", factory)
    run_benchmark(["yacht"], [3], ["p"], folds=2, seeds=[11], params={"p": {"b": 1, "a": [2]}},
                  store=tmp_path / "p.db", jobs=1, quiet=True, data_home=data_home)
    assert seen == [(3, 11, {"a": [2], "b": 1})] * 2
    with ResultStore(tmp_path / "p.db") as store:
        assert {r["params"] for r in store.rows()} == {'{"a":[2],"b":1}'}


# ---- classification ----------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:The least populated class:UserWarning")
def test_classification_folds_are_stratified_kfold():
    from sklearn.model_selection import StratifiedKFold

    y = np.array(["a"] * 30 + ["b"] * 10 + ["c"] * 2)
    for fold, (train, test) in enumerate(StratifiedKFold(4, shuffle=True, random_state=5)
                                         .split(np.zeros((42, 1)), y)):
        got = fold_indices(42, 4, 5, fold, y)
        np.testing.assert_array_equal(got[0], train)
        np.testing.assert_array_equal(got[1], test)


class ClassRecorder:
    """A classifier that remembers its training data and answers fixed probabilities (0.7 for the
    training fold's majority code, the rest spread evenly), with ``classes_`` in reversed order."""

    calls: list = []

    def __init__(self, depth, seed):
        self.depth, self.seed = depth, seed

    def fit(self, X, y):
        self.X_fit, self.y_fit = np.array(X), np.array(y)
        self.classes_ = np.unique(y)[::-1]
        self.majority_ = np.bincount(y).argmax()
        ClassRecorder.calls.append(self)
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)

    def predict_proba(self, X):
        k = len(self.classes_)
        row = [0.7 if label == self.majority_ else 0.3 / (k - 1) for label in self.classes_]  # text labels too
        return np.tile(row, (len(X), 1))


def _class_data(rng):
    """Labels as text, one class with a single row (absent from the training fold of its test fold)."""
    X = rng.random((41, 3)) * [1, 10, 100] + [0, -5, 7]
    y = np.array(["b"] * 24 + ["a"] * 16 + ["zz"])
    return X, y


def test_classification_run_scales_codes_and_scores(rng):
    ClassRecorder.calls = []
    X, y = _class_data(rng)
    for fold in range(4):
        spec = RunSpec("glass", 2, "rec", "{}", 4, 1, fold, 0)  # a classification dataset's slug: its protocol
        result = execute_run(spec, lambda depth, seed: ClassRecorder(depth, seed), data=(X, y))
        assert result["status"] == "ok", result["error"]
        est = ClassRecorder.calls[-1]
        train, test = fold_indices(41, 4, 1, fold, y)
        x_min, x_max = X[train].min(axis=0), X[train].max(axis=0)
        np.testing.assert_allclose(est.X_fit, (X[train] - x_min) / (x_max - x_min))
        classes = sorted(set(y[train]))
        assert list(est.y_fit) == [classes.index(label) for label in y[train]]
        # scored on the labels: predicted label = the training majority ("b")
        assert result["accuracy_test"] == np.mean(y[test] == "b")
        assert result["accuracy_train"] == np.mean(y[train] == "b")
        # log loss: 0.7 for "b", 0.3 / (K - 1) for another known class, 1e-15 for an unknown one
        k = len(classes)
        p = [0.7 if label == "b" else 0.3 / (k - 1) if label in classes else 1e-15 for label in y[test]]
        assert result["log_loss_test"] == pytest.approx(-np.mean(np.log(p)), rel=1e-12)
        assert result["leaves"] is None and result["r2_test"] is None
        assert (result["n_train"], result["n_test"]) == (len(train), len(test))
    assert any("zz" not in y[fold_indices(41, 4, 1, f, y)[0]] for f in range(4))  # the unknown class was tested


def test_classification_log_loss_and_leaves_of_a_real_tree(rng):
    from sklearn.tree import DecisionTreeClassifier

    X, y = _class_data(rng)
    spec = RunSpec("glass", 3, "cart", "{}", 4, 0, 2, 0)
    result = execute_run(spec, lambda depth, seed: DecisionTreeClassifier(max_depth=depth, random_state=seed),
                         data=(X, y))
    train, test = fold_indices(41, 4, 0, 2, y)
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X[train], y[train])  # labels as text
    proba = tree.predict_proba(X[test])
    p = [proba[i, list(tree.classes_).index(label)] if label in tree.classes_ else 0.0
         for i, label in enumerate(y[test])]
    assert result["log_loss_test"] == pytest.approx(-np.mean(np.log(np.clip(p, 1e-15, 1))), rel=1e-12)
    assert result["accuracy_test"] == np.mean(tree.predict(X[test]) == y[test])
    assert result["leaves"] == tree.get_n_leaves()


def test_classification_run_errors_are_stored(rng):
    X, y = _class_data(rng)
    spec = RunSpec("glass", 2, "bad", "{}", 4, 0, 0, 0)

    class NaNProba(ClassRecorder):
        def predict_proba(self, X):
            return np.full((len(X), len(self.classes_)), np.nan)

    class TextClasses(ClassRecorder):
        def fit(self, X, y):
            super().fit(X, y)
            self.classes_ = np.array(["a", "b"])
            return self

    class Narrow(ClassRecorder):
        def predict_proba(self, X):
            return super().predict_proba(X)[:, :1]

    for cls, message in ((NaNProba, "predict_proba returned non-finite values"),
                         (TextClasses, r"classes_ is \['a', 'b'\], not among the class codes 0..1"),
                         (Narrow, r"predict_proba returned shape \(\d+, 1\), expected \(\d+, 2\)")):
        result = execute_run(spec, lambda depth, seed: cls(depth, seed), data=(X[:40], y[:40]))
        assert result["status"] == "error" and result["accuracy_test"] is None
        assert re.search(message, result["error"]), result["error"]
