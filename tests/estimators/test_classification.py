"""SoftClassificationTree: scikit-learn's classifier conventions, the leaf kinds, the losses, bad input,
the constraints, and the subproblems of a training run."""

import warnings

import casadi as ca
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.utils.estimator_checks import parametrize_with_checks

from srtopt.estimators.classification import SoftClassificationTree
from srtopt.fairness import constraint_report, group_gaps
from srtopt.inspect import capture
from srtopt.models.terms.class_losses import MisclassificationCost

EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_sparse_data": "sparse input is not supported",
}


@parametrize_with_checks([SoftClassificationTree(depth=1, max_iter=2, random_state=0)],
                         expected_failed_checks=lambda est: EXPECTED_FAILURES)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, np.array(["setosa", "versicolor", "virginica"])[y]


@pytest.mark.parametrize("leaf", ["constant", "logistic"])
def test_string_classes_probabilities_and_hbp_predictions(iris, leaf):
    X, labels = iris
    tree = SoftClassificationTree(depth=2, leaf=leaf, random_state=0).fit(X, labels)
    assert list(tree.classes_) == ["setosa", "versicolor", "virginica"] and tree.n_classes_ == 3
    P = tree.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(tree.predict(X), tree.classes_[np.argmax(P, axis=1)])
    assert tree.score(X, labels) > 0.9
    mixture = tree.predict_proba(X, mixture=True)
    np.testing.assert_allclose(mixture.sum(axis=1), 1.0)
    np.testing.assert_allclose(mixture, np.einsum("il,ilk->ik", tree.leaf_probabilities(X), _leaf_mix(tree, X)),
                               atol=1e-12)
    if leaf == "constant":  # a class-probability vector per leaf: every row of a leaf has the same
        leaves = tree.apply(X)
        for t in np.unique(leaves):
            assert np.ptp(P[leaves == t], axis=0).max() < 1e-12
    assert tree.leaf_class_counts_.sum() == pytest.approx(len(X))


def _leaf_mix(tree, X):
    """Every leaf's class probabilities for every row (n, leaves, K), from the coefficients."""
    from srtopt import kernels

    Xa = tree.leaf_model_.design(tree.scaler_.transform(X))
    B = tree.beta_.reshape(len(tree.beta_), -1, Xa.shape[1])
    return kernels.class_probabilities(np.einsum("iq,lkq->ilk", Xa, B), tree.n_classes_)


def test_two_classes_have_one_score_per_leaf():
    X, y = load_breast_cancer(return_X_y=True)
    tree = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    assert tree.beta_.shape == (4, X.shape[1] + 1)  # the logit of classes_[1] on [1, x]
    constant = SoftClassificationTree(depth=2, leaf="constant", random_state=0).fit(X, y)
    assert constant.beta_.shape == (4, 1)
    assert tree.score(X, y) > 0.95


def test_the_expected_cost_loss_weighs_the_errors():
    """ORCT's expected misclassification cost: a costly error on class 0 makes the tree predict class 0 more."""
    X, y = load_breast_cancer(return_X_y=True)
    plain = SoftClassificationTree(depth=2, loss="cost", random_state=0).fit(X, y)
    costly = SoftClassificationTree(depth=2, loss=MisclassificationCost([[0, 20], [1, 0]]), random_state=0).fit(X, y)
    assert np.mean(costly.predict(X) == 0) > np.mean(plain.predict(X) == 0)
    assert np.mean(costly.predict(X)[y == 0] == 0) == 1.0


def test_a_loss_written_as_one_callable_of_the_class_probability():
    """-log(p) as a callable predicts as the built-in log loss (breast cancer, depth 2), and a focal loss and a
    class-weighted one fit."""
    X, y = load_breast_cancer(return_X_y=True)
    built_in = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    mine = SoftClassificationTree(depth=2, loss=lambda p: -ca.log(p), random_state=0).fit(X, y)
    assert np.mean(mine.predict(X) == built_in.predict(X)) >= 0.99
    focal = SoftClassificationTree(depth=2, loss=lambda p: -(1 - p) ** 2 * ca.log(p), random_state=0).fit(X, y)
    assert focal.score(X, y) > 0.95 and focal.leaf_model_.loss.name == "probability-loss"
    weighted = SoftClassificationTree(depth=2, loss=lambda p, c: -(5 - 4 * c) * ca.log(p), random_state=0).fit(X, y)
    assert np.mean(weighted.predict(X) == 0) > np.mean(built_in.predict(X) == 0)  # class 0's errors cost 5x


def test_class_weight_balanced_raises_the_minority_recall():
    X, y = load_breast_cancer(return_X_y=True)
    keep = np.r_[np.flatnonzero(y == 0)[:40], np.flatnonzero(y == 1)]  # 40 of class 0 against 357
    X, y = X[keep], y[keep]
    plain = SoftClassificationTree(depth=1, leaf="constant", random_state=0).fit(X, y)
    balanced = SoftClassificationTree(depth=1, leaf="constant", class_weight="balanced", random_state=0).fit(X, y)
    assert np.mean(balanced.predict(X)[y == 0] == 0) >= np.mean(plain.predict(X)[y == 0] == 0)
    assert balanced.predict_proba(X)[y == 0, 0].mean() > plain.predict_proba(X)[y == 0, 0].mean()


@pytest.mark.parametrize("y, fit, message", [
    (np.zeros(40), {}, "y has one class"),
    (np.linspace(0, 1, 40), {}, "looks continuous"),
    (np.repeat([0, 1], 20), {"class_weight": {0: 1, 7: 2}}, "class_weight names the class 7"),
    (np.repeat([0, 1], 20), {"sample_weight": np.r_[np.zeros(20), np.ones(20)]}, "class 0 has no row of positive"),
    (np.repeat([0, 1], 20), {"constraints": "class_recall:class=5,lower=0.9"}, "class 5 is not a class of y"),
    (np.repeat([0, 1], 20), {"constraints": "class_recall:class=1,lower=1.5"}, r"share in \(0, 1\]"),
    (np.repeat([0, 1, 2], [14, 13, 13]), {"monotonic_cst": [1, 0]}, "it needs two classes"),
])
def test_bad_input_gets_one_line_before_fitting(y, fit, message):
    X = np.random.default_rng(0).random((40, 2))
    params = {k: v for k, v in fit.items() if k != "sample_weight"}
    with pytest.raises(ValueError, match=message) as info:
        SoftClassificationTree(depth=1, **params).fit(X, y, **({"sample_weight": fit["sample_weight"]}
                                                               if "sample_weight" in fit else {}))
    assert "\n" not in str(info.value)


def test_a_class_of_one_row_is_warned_about():
    X = np.random.default_rng(0).random((30, 2))
    y = np.r_[np.zeros(15), np.ones(14), 2]
    with pytest.warns(UserWarning, match="class 2.0 has one row"):
        SoftClassificationTree(depth=1, max_iter=1, random_state=0).fit(X, y)


def test_monotone_probability_of_the_positive_class():
    """monotonic_cst holds exactly: the probability of classes_[1], swept over a feature's training range,
    never moves against its sign, for any row."""
    X, y = load_breast_cancer(return_X_y=True)
    signs = {0: 1, 7: -1}
    tree = SoftClassificationTree(depth=2, monotonic_cst=signs, random_state=0).fit(X, y)
    assert all(row["holds"] for row in tree.constraint_report_)
    rows = X[::25]
    for j, sign in signs.items():
        grid = np.linspace(X[:, j].min(), X[:, j].max(), 40)
        for row in rows:
            swept = np.tile(row, (len(grid), 1))
            swept[:, j] = grid
            steps = np.diff(tree.predict_proba(swept)[:, 1])
            assert np.all(sign * steps >= -1e-12)
    free = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    assert np.any(free.omega_[:, 1 + 7] != 0) or np.any(free.beta_[:, 1 + 7] != 0)


def test_a_class_recall_bound_holds_for_predict():
    X, y = load_breast_cancer(return_X_y=True)  # class 0 (malignant) is the minority
    free = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    bound = SoftClassificationTree(depth=2, constraints="class_recall:class=0,lower=0.99", random_state=0).fit(X, y)
    [row] = bound.constraint_report_
    assert row["holds_soft"] and row["holds_predict"] and row["bound"] == ">= 0.99"
    assert np.mean(bound.predict(X)[y == 0] == 0) >= 0.99 > np.mean(free.predict(X)[y == 0] == 0)
    assert row["predict"] == pytest.approx(np.mean(bound.predict(X)[y == 0] == 0))


def test_parity_of_the_mean_probability():
    rng = np.random.default_rng(1)
    n = 400
    group = rng.integers(0, 2, n)
    X = np.column_stack([rng.random(n), 0.5 * group + 0.5 * rng.random(n)])  # feature 1 tells the group
    y = (X[:, 0] + X[:, 1] + 0.1 * rng.standard_normal(n) > 1.0).astype(int)
    free = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    fair = SoftClassificationTree(depth=2, constraints="probability_parity:gap=0.05", random_state=0).fit(
        X, y, sensitive_features=group)
    [row] = fair.constraint_report_
    assert row["holds"] and abs(row["soft"]) <= 0.05 + 1e-6 and abs(row["predict"]) <= 0.05 + 1e-6
    p_free = free.predict_proba(X, mixture=True)[:, 1]
    assert abs(p_free[group == 1].mean() - p_free[group == 0].mean()) > 0.2
    assert fair.groups_ == [0, 1]
    assert constraint_report(fair, X, y, group) == fair.constraint_report_  # the report of any rows
    [test] = constraint_report(fair, X[:100], y[:100], group[:100])
    assert test["predict"] == pytest.approx(group_gaps(fair.predict_proba(X[:100])[:, 1], group[:100])["gap"][0])
    with pytest.raises(ValueError, match="y holds the label 7, not a class of the fit"):
        constraint_report(fair, X[:3], [0, 1, 7], group[:3])


def test_a_row_mean_bounds_a_mean_of_a_class_probability(tmp_path):
    """RowMean on a classifier: v(p, y) of the probability p of classes_[1] (or of pos_label) and the row's
    indicator y of that class; held for the soft model and for predict_proba on the training data, saved."""
    import srtopt
    from srtopt.models.constraints import RowMean

    X, y = load_breast_cancer(return_X_y=True)
    group = (X[:, 0] > 14).astype(int)
    capped = SoftClassificationTree(depth=2, constraints="row_mean:over='groups',upper=0.6", random_state=0).fit(
        X, y, sensitive_features=group)
    assert all(row["holds"] for row in capped.constraint_report_)
    p = capped.predict_proba(X)[:, 1]
    assert [row["predict"] for row in capped.constraint_report_] == pytest.approx([p[group == 0].mean(),
                                                                                   p[group == 1].mean()])
    free = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    assert free.predict_proba(X)[group == 0, 1].mean() > 0.6
    brier = SoftClassificationTree(depth=2, constraints=RowMean("squared_error", upper=0.012, pos_label=0),
                                   random_state=0).fit(X, y)
    [row] = brier.constraint_report_
    assert row["holds"] and row["predict"] == pytest.approx(np.mean((brier.predict_proba(X)[:, 0] - (y == 0)) ** 2))
    brier.save(tmp_path / "brier.json")
    assert srtopt.load(tmp_path / "brier.json").constraint_report_ == brier.constraint_report_


def test_a_captured_bn_subproblem_reaches_the_same_point_through_every_route(iris):
    """The BN subproblem of a classification run: Newton's method, IPOPT through CasADi and IPOPT
    through Pyomo (pyomo-ripopt, an IPOPT port behind Pyomo's .nl interface) reach the same point."""
    X, labels = iris
    tree = SoftClassificationTree(depth=2, random_state=0)
    bn = capture(tree, X, labels, node=1, macro=1).bn()
    reference = bn.solve("newton:tol=1e-14")
    assert reference.success
    for spec in ("ipopt:tol=1e-10", "pyomo/ripopt:tol=1e-10"):
        try:
            result = bn.solve(spec)
        except Exception as exc:  # pyomo-ripopt is an optional test dependency
            if "ripopt" in spec and "not available" in str(exc):
                pytest.skip(str(exc))
            raise
        assert result.objective == pytest.approx(reference.objective, rel=1e-8, abs=1e-10)
        np.testing.assert_allclose(result.x, reference.x, atol=1e-4)


def test_a_captured_subproblem_refuses_a_solver_that_does_not_take_it(iris):
    """A QP does not take the log loss: one line that says why, not a TypeError from inside the adapter; capture's
    docstring names the classifier."""
    X, labels = iris
    ln = capture(SoftClassificationTree(depth=2, random_state=0), X, labels, node=2, macro=1).ln()
    assert ln.solve("newton").success
    with pytest.raises(ValueError, match=r"^the highs solver does not accept this ln subproblem: R_il is no loss of the "
                                         r"residual with a QP form \(the leaf model's residual_loss is None\); solve "
                                         r"it with a solver that does"):
        ln.solve("qp")
    assert "SoftClassificationTree" in capture.__doc__


def test_the_decision_function_is_the_hbp_leafs_scores(iris):
    from scipy.special import expit, softmax

    X, y = load_breast_cancer(return_X_y=True)
    tree = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    scores = tree.decision_function(X)
    assert scores.shape == (len(X),)
    np.testing.assert_allclose(expit(scores), tree.predict_proba(X)[:, 1], atol=1e-15)
    np.testing.assert_array_equal(scores > 0, tree.predict(X) == tree.classes_[1])
    X, labels = iris
    tree = SoftClassificationTree(depth=2, random_state=0).fit(X, labels)
    np.testing.assert_allclose(softmax(tree.decision_function(X), axis=1), tree.predict_proba(X), atol=1e-15)


def test_time_limit_and_callbacks(iris):
    X, labels = iris
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = SoftClassificationTree(depth=3, max_iter=50, tol=None, callbacks=[lambda state: seen.append(state.k)],
                                      time_limit=0.5, random_state=0).fit(X, labels)
    assert tree.stopped_by_ in ("time_limit", "max_iter") and seen == list(range(len(tree.history_)))


def test_tol_ends_training_once_a_macro_iteration_barely_lowers_the_best_E(iris):
    X, labels = iris
    tree = SoftClassificationTree(depth=2, max_iter=50, random_state=0).fit(X, labels)
    assert tree.stopped_by_ == "tol" and tree.n_iter_ < 50
    E = [record["E_after"] for record in tree.history_]
    last = [E[i] for i, record in enumerate(tree.history_) if record["macro"] == tree.n_iter_ - 1]
    before = min([tree.history_[0]["E_before"]] + E[:len(E) - len(last)])
    assert before - min(last) <= tree.tol * before


def test_the_cluster_start_does_not_depend_on_n_jobs():
    X, y = load_wine(return_X_y=True)
    fits = [SoftClassificationTree(depth=2, init="cluster", n_jobs=jobs, random_state=3).fit(X, y)
            for jobs in (1, 2)]
    np.testing.assert_array_equal(fits[0].omega_, fits[1].omega_)
    np.testing.assert_array_equal(fits[0].beta_, fits[1].beta_)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_integer_sample_weights_give_the_fit_of_repeated_rows(seed):
    """Weights 0-3 against the rows repeated that many times: the same objective and probabilities."""
    rng = np.random.default_rng(seed)
    X = rng.random((200, 4))
    y = (X[:, 0] + X[:, 1] + 0.3 * rng.standard_normal(200) > 1).astype(int)
    w = rng.integers(0, 4, size=200)
    weighted = SoftClassificationTree(depth=2, random_state=0).fit(X, y, sample_weight=w)
    repeated = SoftClassificationTree(depth=2, random_state=0).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert weighted.objective_ == pytest.approx(repeated.objective_, rel=1e-8)
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), rtol=1e-6, atol=1e-9)
