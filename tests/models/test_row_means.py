"""RowMean, a constraint written once: parity, the squared group loss, a group bias and a cap on the
mean prediction are its instances (the same rows, Jacobians and bounds as the hand-written terms);
its per-leaf rows are each leaf's weighted mean; its units (y's mean and standard deviation); its
parameters, spec and copies; bad input.  (Its derivatives against finite differences and its
renderings: tests/models/test_constraints.py.)"""

import copy
import pickle

import casadi as ca
import numpy as np
import pytest

from srtopt.models.constraints import (GroupLoss, Parity, RowMean, TrainingUnits, group_differences, group_weights,
                                       make_constraints, register_constraint)
from srtopt.models.constraints.sets import CONSTRAINTS
from srtopt.models.srt import SRTProblem
from srtopt.models.terms import CASADI, NUMPY
from srtopt.tree import Tree

UNITS = TrainingUnits(("a", "b", "c"), np.array([2.0, 1.0, 4.0]), y_std=3.0, loss_degree=2, y_mean=5.0,
                      x_min=np.array([-1.0, 0.0, 2.0]))


def _problem(terms, n=60, seed=0, groups=2):
    rng = np.random.default_rng(seed)
    tree = Tree(2)
    problem = SRTProblem(rng.random((n, 3)), rng.standard_normal(n), tree, mu=1.2, groups=rng.integers(0, groups, n),
                         weights=rng.random(n) + 0.5, constraints=tuple(t.in_training_units(UNITS) for t in terms))
    return problem, 2 * rng.standard_normal((tree.n_branch, 4)), rng.standard_normal((tree.n_leaves, 4))


@pytest.mark.parametrize("groups", [2, 3])
@pytest.mark.parametrize("hand, declared", [
    (Parity(0.7), RowMean("prediction", over="group_differences", lower=-0.7, upper=0.7)),
    (GroupLoss(2.5), RowMean("squared_error", over="groups", upper=2.5)),
    (GroupLoss(2.5), RowMean(lambda yhat, y: (yhat - y) ** 2, over="groups", upper=2.5, degree=2)),
], ids=["parity", "group_loss", "group_loss-callable"])
def test_parity_and_group_loss_are_row_means(hand, declared, groups):
    problem, omega, beta = _problem((hand, declared), groups=groups)
    a, b = problem.constraint_set.soft
    np.testing.assert_allclose(b.values(problem, omega, beta), a.values(problem, omega, beta), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.jacobian(problem, omega, beta), a.jacobian(problem, omega, beta), atol=1e-12)
    np.testing.assert_allclose(b.lower, a.lower, rtol=1e-14)
    np.testing.assert_allclose(b.upper, a.upper, rtol=1e-14)
    assert b.user_scale(UNITS) == a.user_scale(UNITS)


def test_a_group_bias_and_a_cap_are_means_in_ys_units():
    """The value is written in y's units: the rows are (v of the soft model in y's units) / y_std."""
    bias, cap = RowMean("residual", over="groups", lower=-1.0, upper=1.0), RowMean("prediction", upper=9.0)
    problem, omega, beta = _problem((bias, cap))
    P = problem.leaf_probabilities(omega)
    yhat = UNITS.y_mean + UNITS.y_std * np.sum(P * (problem.Xa @ beta.T), axis=1)  # soft prediction, y's units
    y = UNITS.y_mean + UNITS.y_std * problem.y
    s, g = problem.s, problem.groups
    expected = [np.average((yhat - y)[g == k], weights=s[g == k]) / UNITS.y_std for k in (0, 1)]
    terms = problem.constraint_set.soft
    np.testing.assert_allclose(terms[0].values(problem, omega, beta), expected, rtol=1e-12)
    assert terms[1].values(problem, omega, beta)[0] == pytest.approx(np.average(yhat, weights=s) / UNITS.y_std)
    assert terms[1].upper[0] == pytest.approx(9.0 / UNITS.y_std)
    assert UNITS.standardized_y(9.0) == pytest.approx((9.0 - 5.0) / 3.0)


def test_per_leaf_rows_bound_each_leafs_weighted_mean():
    cap = RowMean("prediction", lower=2.0, upper=9.0, per_leaf=True)
    problem, omega, beta = _problem((cap,))
    term = problem.constraint_set.soft[0]
    P, yhat = problem.leaf_probabilities(omega), problem.Xa @ beta.T  # training units
    Q = problem.s[:, None] * P
    means = UNITS.y_mean + UNITS.y_std * np.sum(Q * yhat, axis=0) / Q.sum(axis=0)  # each leaf's, in y's units
    g = term.values(problem, omega, beta)
    assert term.n_rows == 2 * problem.tree.n_leaves
    for leaf in range(problem.tree.n_leaves):
        low, high = g[2 * leaf], g[2 * leaf + 1]  # sum_i w_i P_il (v_il - bound), bound in training units
        assert (low >= 0) == (means[leaf] >= 2.0) and (high <= 0) == (means[leaf] <= 9.0)
        assert high / Q[:, leaf].sum() * UNITS.y_std + 9.0 == pytest.approx(means[leaf])
    assert list(term.lower[:2]) == [0.0, -np.inf] and list(term.upper[:2]) == [np.inf, 0.0]
    prediction = np.einsum("ij,ij->i", problem.Xa, beta[problem.tree.leaf_rows(problem.hbp_leaves(omega))])
    leaves = problem.tree.leaf_rows(problem.hbp_leaves(omega))
    soft, hard, lower, upper = term.report_values(problem, omega, beta, prediction, leaves)
    np.testing.assert_allclose(soft[1::2] * UNITS.y_std, means, rtol=1e-10)
    assert np.all(lower[::2] == 2.0 / UNITS.y_std) and np.all(upper[1::2] == 9.0 / UNITS.y_std)
    for leaf in range(problem.tree.n_leaves):
        rows = leaves == leaf
        expected = np.average(prediction[rows], weights=problem.s[rows]) if rows.any() else np.nan
        np.testing.assert_allclose(hard[2 * leaf + 1], expected + UNITS.y_mean / UNITS.y_std, rtol=1e-10)
    names = term.row_names([])
    assert names[1] == "mean prediction of all rows at leaf 4" and len(names) == 8


def test_a_mask_selects_rows_by_the_features_in_their_units():
    """over(X) sees X in the user's units (x_min + x_scale x_s): the mean over the rows with a > 0."""
    mask = RowMean("prediction", over=lambda X: X[:, 0] > 0.0, upper=1.0)
    problem, omega, beta = _problem((mask,))
    term = problem.constraint_set.soft[0]
    raw = problem.X * UNITS.x_scale + UNITS.x_min
    chosen = raw[:, 0] > 0
    assert 0 < chosen.sum() < len(chosen)
    np.testing.assert_allclose(term.W[:, 0], np.where(chosen, problem.s, 0) / problem.s[chosen].sum())
    with pytest.raises(ValueError, match="over\\(X\\) must give a mask or weights >= 0 of the 60 rows"):
        _problem((RowMean(over=lambda X: X[:5, 0] > 0, upper=1.0),))
    with pytest.raises(ValueError, match="selects no row of positive weight"):
        _problem((RowMean(over=lambda X: X[:, 0] > 1e9, upper=1.0),))


def test_group_weights_are_each_groups_normalized_weights():
    s, groups = np.array([1.0, 2.0, 1.0, 4.0]), np.array([1, 0, 1, 0])
    v = np.array([3.0, 1.0, 5.0, 4.0])
    np.testing.assert_allclose(group_weights(s, groups).T @ v, [(2 + 16) / 6, 4.0])
    np.testing.assert_allclose(group_differences(s, groups).T @ v, [4.0 - 3.0])
    with pytest.raises(ValueError, match="group 1 has no row of positive weight"):
        group_weights(np.array([1.0, 0.0]), np.array([0, 1]))


class GroupBias(RowMean):
    """Each group's mean residual within +-bound (y's units)."""

    name = "group_bias"

    def __init__(self, bound=1.0):
        self.bound = bound
        super().__init__("residual", over="groups", lower=-bound, upper=bound)


def test_a_subclass_is_a_constraint_of_its_own_by_its_spec():
    register_constraint("group_bias", GroupBias)
    try:
        (made,) = make_constraints("group_bias:bound=2.5")
        assert made == GroupBias(2.5) and made != GroupBias(1.0) and made.get_params() == {"bound": 2.5}
        assert made.describe() == "group_bias:bound=2.5" and made.needs_groups
        assert make_constraints(made.describe()) == (made,)
    finally:
        del CONSTRAINTS["group_bias"]
    plain = RowMean("prediction", over="groups", upper=3.0)
    assert plain.describe() == "row_mean:over='groups',upper=3.0"
    assert make_constraints(plain.describe()) == (plain,)
    assert RowMean(lambda yhat, y: yhat, upper=1.0).describe() == "row_mean:value=<lambda>,upper=1.0"


def test_copies_and_pickles_rebuild_the_formula():
    term = RowMean("squared_error", over="groups", upper=2.0, per_leaf=True).in_training_units(UNITS)
    for other in (copy.deepcopy(term), pickle.loads(pickle.dumps(term))):
        assert other == term
        yhat, y = np.array([0.5, 1.0]), np.array([0.0, 2.0])
        np.testing.assert_array_equal(other.leaf_values(yhat, y, NUMPY), term.leaf_values(yhat, y, NUMPY))
        assert float(ca.Function("v", [], [other.leaf_values(ca.DM(0.5), ca.DM(0.0), CASADI)])()["o0"]) == \
            pytest.approx(term.leaf_values(0.5, 0.0, NUMPY))


@pytest.mark.parametrize("make, message", [
    (lambda: RowMean("median", upper=1), "row_mean value must be one of 'prediction', 'residual'"),
    (lambda: RowMean(over="everyone", upper=1), "row_mean over must be one of 'all', 'groups'"),
    (lambda: RowMean(), "row_mean needs a finite lower or upper bound"),
    (lambda: RowMean(lower=2, upper=1), "row_mean: lower bound 2 above the upper bound 1"),
    (lambda: RowMean(upper="high"), "row_mean upper must be a number or None"),
    (lambda: RowMean(over="group_differences", upper=1, per_leaf=True), "per_leaf bounds each leaf's mean"),
    (lambda: GroupBias(bound=-1), r"group_bias \(GroupBias, a row_mean\): lower bound 1 above the upper bound -1"),
    (lambda: RowMean(upper=1, pos_label="x").in_training_units(TrainingUnits(("a",), np.ones(1))),
     "pos_label='x' names a class; a regression tree has none"),
    (lambda: RowMean(upper=1).in_training_units(TrainingUnits(("a",), np.ones(1), classes=("x", "y", "z"))),
     r"with 3 classes, name the class whose probability it averages \(pos_label=LABEL\)"),
    (lambda: RowMean(upper=1, pos_label="w").in_training_units(TrainingUnits(("a",), np.ones(1), classes=("x", "y"))),
     "class 'w' is not a class of y"),
    (lambda: _problem((RowMean(over="groups", upper=1),))[0].constraint_set.soft[0].bind(
        SRTProblem(np.zeros((4, 1)), np.zeros(4), Tree(1))), "averages over the protected groups"),
])
def test_bad_input_is_refused_in_one_line(make, message):
    with pytest.raises(ValueError, match=message):
        make()
