"""The pieces of the searches' model selection (srtopt/estimators/search.py): the held-out loss of each row, the
folds' scores as scikit-learn's scorers give them, the plainest candidate within noise, the results table."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import accuracy_score, log_loss, r2_score
from sklearn.model_selection import KFold

from srtopt import SoftClassificationTree, SoftRegressionTree
from srtopt.estimators.search import (PROBABILITY_FLOOR, ROW_LOSSES, Candidate, Evaluated, evaluate, fold_score,
                                      plainest_within_noise, results_table)


def _plainness(candidate):
    return candidate.depth, ["linear", "spline"].index(candidate.leaf)


def _evaluated(losses):
    return {candidate: Evaluated(np.asarray(values, float), [-float(np.mean(values))], [0.1])
            for candidate, values in losses.items()}


def test_the_plainest_within_one_standard_error_of_the_best_is_chosen():
    rng = np.random.default_rng(0)
    base = rng.exponential(1.0, 400)
    plain, curved, deep = Candidate(1, "linear"), Candidate(1, "spline"), Candidate(2, "linear")
    close = _evaluated({plain: base + 0.01 * rng.standard_normal(400) + 0.002, curved: base, deep: base + 0.05})
    assert plainest_within_noise(close, _plainness) == plain  # 0.002 apart, the best's mean known to +-0.05: noise
    assert plainest_within_noise(close, _plainness, rule="best") == curved
    assert plainest_within_noise(close, _plainness, rule="paired-se") == curved  # but it is always 0.002 better
    far = _evaluated({plain: base + 0.3, curved: base, deep: base + 0.05})
    assert plainest_within_noise(far, _plainness) == curved  # 0.3 apart on 400 rows: not noise


def test_the_folds_scores_are_scikit_learns():
    rng = np.random.default_rng(1)
    y = rng.random(50)
    yhat = y + 0.1 * rng.standard_normal(50)
    assert fold_score("r2", (yhat - y) ** 2, y) == pytest.approx(r2_score(y, yhat))
    p = np.clip(rng.random(50), 0.05, 0.95)
    labels = (rng.random(50) < p).astype(int)
    losses = -np.log(np.where(labels == 1, p, 1 - p))
    assert fold_score("log_loss", losses, labels) == pytest.approx(-log_loss(labels, p))
    wrong = (rng.random(50) < 0.2).astype(float)
    assert fold_score("accuracy", wrong, labels) == pytest.approx(accuracy_score(np.zeros(50), wrong))


def test_a_class_a_fold_did_not_see_costs_the_probability_floor():
    X, y = load_breast_cancer(return_X_y=True)
    model = SoftClassificationTree(depth=1, max_iter=1, random_state=0).fit(X[:100], y[:100])
    losses = ROW_LOSSES["log_loss"](model, X[:3], np.array([0, 1, 7]))
    assert losses[2] == pytest.approx(-np.log(PROBABILITY_FLOOR)) and np.all(losses[:2] < 5)


def test_every_candidate_is_scored_on_the_same_folds_and_the_table_reads_as_a_dataframe():
    rng = np.random.default_rng(2)
    X = rng.random((120, 3))
    y = X[:, 0] - X[:, 1] + 0.1 * rng.standard_normal(120)
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    candidates = [Candidate(1, "linear"), Candidate(2, "linear")]
    found = evaluate(SoftRegressionTree(max_iter=2, random_state=0, leaf_ridge=1.0), candidates, folds, X, y, {},
                     "r2")
    for candidate in candidates:
        assert found[candidate].losses.shape == (120,) and len(found[candidate].scores) == 3
        train, test = folds[0]
        tree = SoftRegressionTree(depth=candidate.depth, max_iter=2, random_state=0, leaf_ridge=1.0)
        alone = r2_score(y[test], tree.fit(X[train], y[train]).predict(X[test]))
        assert found[candidate].scores[0] == pytest.approx(alone, rel=1e-12)
    table = pd.DataFrame(results_table(found, candidates[0], _plainness))
    assert table["param_depth"].tolist() == [1, 2] and table["chosen"].tolist() == [True, False]
    assert sorted(table["rank_test_score"]) == [1, 2] and {"split2_test_score", "mean_fit_time"} <= set(table)
