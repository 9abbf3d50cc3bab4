"""Every constraint term: its numpy values and Jacobians (and the blocks' Hessians) against finite
differences, its CasADi (g/lbg/ubg, lbx/ubx) and Pyomo (Constraint components, variable bounds)
renderings against numpy, in the full problem and in the BN and LN subproblems; the specs, the
units and the checks of bad input."""

import casadi as ca
import numpy as np
import pyomo.environ as pyo
import pytest

from srtopt.bases import SplineBasis
from srtopt.models.constraints import (CONSTRAINTS, Constraint, ConstraintSet, GroupLoss, HeldPredictions,
                                       LeafBounds, Monotone, Parity, Routing, RowMean, TrainingUnits, make_constraints,
                                       register_constraint)
from srtopt.models.leaves import RegressionLeaves
from srtopt.models.pyomo_backend import render_pyomo
from srtopt.models.srt import SRTProblem
from srtopt.models.terms import Huber
from srtopt.tree import Tree

TERMS = {
    "parity": (Parity(0.1),),
    "parity-3-groups": (Parity(0.1),),
    "group_loss": (GroupLoss(0.5),),
    "group_loss-huber": (GroupLoss(0.5),),
    "monotone+bounds": (Monotone([1, 0, -1]), LeafBounds({1: (-0.5, 2.0)})),
    "monotone+bounds-spline": (Monotone([1, 0, -1]), LeafBounds({1: (-0.5, 2.0)})),  # rows on the curves' slopes
    "all": (Parity(0.2), GroupLoss(0.8), Monotone([0, 1, 0])),
    # a user's constraints, written declaratively: each leaf's mean prediction in [-0.5, 0.3], a CasADi value
    # per group in units where y has mean 1 and standard deviation 2, a mask of the rows per leaf
    "row_mean-per_leaf": (RowMean("prediction", lower=-0.5, upper=0.3, per_leaf=True),),
    "row_mean-callable": (RowMean(lambda yhat, y: ca.log(1 + (yhat - y) ** 2), over="groups", upper=0.4)
                          .in_training_units(TrainingUnits(("a", "b", "c"), np.ones(3), 2.0, 2, (), 1.0)),),
    "row_mean-mask": (RowMean("residual", over=lambda X: np.column_stack([X[:, 0] > 0.5, X[:, 1]]), upper=0.1,
                              per_leaf=True),),
}


def _problem(name, depth=2, n=70, seed=0):
    rng = np.random.default_rng(seed)
    tree = Tree(depth)
    X, y = rng.random((n, 3)), rng.standard_normal(n)
    groups = rng.integers(0, 3 if name.endswith("3-groups") else 2, n)
    loss = Huber(0.6) if name.endswith("huber") else None
    leaves = RegressionLeaves(basis=SplineBasis.fit(X).with_scale(0.5)) if name.endswith("spline") else None
    problem = SRTProblem(X, y, tree, mu=1.3, lambda_w=0.05, lambda_b=0.02, groups=groups, constraints=TERMS[name],
                         leaves=leaves, **({"loss": loss} if loss else {}))
    omega = 2 * rng.standard_normal((tree.n_branch, 4))
    beta = rng.standard_normal((tree.n_leaves, problem.Xa.shape[1]))
    return problem, omega, beta


def _formulations(problem, omega, beta):
    """The full problem, a BN subproblem (proxy and E's own), LN subproblems (soft and hard routing)."""
    tree, rows = problem.tree, np.arange(len(problem.y))
    routing = Routing(problem.hbp_leaves(omega))
    return {
        "full": problem.full(omega, beta),
        "bn-root": problem.branch_subproblem(omega, beta, 1, tree.branch_nodes, rows[:50]),
        "bn-node": problem.branch_subproblem(omega, beta, 2, (2,), rows[::2]),
        "bn-exact": problem.exact_branch_subproblem(omega, beta, 3, (3,)),
        "ln": problem.leaf_subproblem(omega, beta, 2, (4, 5), rows[:40]),
        "ln-hard": problem.leaf_subproblem(omega, beta, 1, tree.leaves, rows,
                                           hard=[(t, routing) for t in problem.constraint_set.soft]),
    }


def _finite_difference(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))]).T


CASES = [(name, kind) for name in TERMS for kind in ("full", "bn-root", "bn-node", "bn-exact", "ln", "ln-hard")]


@pytest.mark.parametrize("name, kind", [case for case in CASES if case[0] != "monotone+bounds"  # no rows
                                        and not (case[0].endswith("spline") and case[1].startswith("bn"))])
def test_jacobian_and_hessian_match_finite_differences(name, kind):
    problem, omega, beta = _problem(name)
    formulation = _formulations(problem, omega, beta)[kind]
    x = formulation.start() + 0.05
    assert formulation.n_constraints > 0
    J = formulation.constraint_jacobian(x)
    np.testing.assert_allclose(J, _finite_difference(formulation.constraint_values, x), atol=1e-6, rtol=1e-5)
    if kind == "full":
        return  # the full problem's rows have no Hessian of their own (IPOPT takes CasADi's there)
    lam = np.random.default_rng(1).standard_normal(formulation.n_constraints)
    H = formulation.constraint_hessian(x, lam)
    np.testing.assert_allclose(H, _finite_difference(lambda v: lam @ formulation.constraint_jacobian(v), x),
                               atol=1e-6, rtol=1e-5)
    if kind.startswith("bn"):  # the Lagrangian's Hessian in one pass equals its two parts
        np.testing.assert_allclose(formulation.lagrangian_hessian(x, 0.7, lam),
                                   0.7 * formulation.hessian(x) + H, atol=1e-12)


@pytest.mark.parametrize("name, kind", CASES)
def test_casadi_and_pyomo_renderings_match_numpy(name, kind):
    problem, omega, beta = _problem(name, n=40)
    formulation = _formulations(problem, omega, beta)[kind]
    x = formulation.start() + 0.05
    model = formulation.render()
    bounds = formulation.bounds()
    if formulation.n_constraints:
        np.testing.assert_allclose(model.constraints(x), formulation.constraint_values(x), atol=1e-10)
        np.testing.assert_array_equal(model.lbg, formulation.constraint_bounds()[0])
        np.testing.assert_array_equal(model.ubg, formulation.constraint_bounds()[1])
    else:
        assert model.g is None
    if bounds is not None:
        np.testing.assert_array_equal(model.lbx, bounds[0])
        np.testing.assert_array_equal(model.ubx, bounds[1])
    assert model.objective(x) == pytest.approx(formulation.evaluate(x)[0], abs=1e-10)
    pyomo_model = render_pyomo(formulation)
    pyomo_model.set_x(x)
    rows = list(pyomo_model.model.component_data_objects(pyo.Constraint))
    np.testing.assert_allclose([pyo.value(c.body) for c in rows], formulation.constraint_values(x), atol=1e-10)
    if bounds is not None:
        lower = [-np.inf if v.lb is None else v.lb for v in pyomo_model.variables]
        upper = [np.inf if v.ub is None else v.ub for v in pyomo_model.variables]
        np.testing.assert_array_equal(lower, bounds[0])
        np.testing.assert_array_equal(upper, bounds[1])


def test_a_block_sees_the_whole_models_constraint_with_the_rest_fixed():
    problem, omega, beta = _problem("all")
    full = problem.constraint_values(omega, beta)
    for formulation in _formulations(problem, omega, beta).values():
        if formulation.n_constraints and not getattr(formulation, "hard", ()):
            np.testing.assert_allclose(formulation.constraint_values(formulation.start()), full, atol=1e-9)


def test_parity_is_the_difference_of_the_groups_mean_soft_predictions():
    problem, omega, beta = _problem("parity")
    P = problem.leaf_probabilities(omega)
    soft = np.sum(P * (problem.Xa @ beta.T), axis=1)
    g = problem.groups
    assert problem.constraint_values(omega, beta)[0] == pytest.approx(soft[g == 1].mean() - soft[g == 0].mean())


def test_parity_has_a_row_per_pair_of_groups_and_group_loss_one_per_group():
    problem, omega, beta = _problem("parity-3-groups")
    assert problem.constraint_set.soft[0].n_rows == 3
    problem, omega, beta = _problem("group_loss")
    loss = (problem.Xa @ beta.T - problem.y[:, None]) ** 2
    soft = np.sum(problem.leaf_probabilities(omega) * loss, axis=1)
    expected = [soft[problem.groups == k].mean() for k in (0, 1)]
    np.testing.assert_allclose(problem.constraint_values(omega, beta), expected)


def test_hard_routing_holds_clipped_rows_at_their_values():
    problem, omega, beta = _problem("parity")
    leaves = problem.hbp_leaves(omega)
    prediction = np.einsum("ij,ij->i", problem.Xa, beta[problem.tree.leaf_rows(leaves)])
    held = prediction > np.quantile(prediction, 0.8)
    values = np.where(held, 7.0, 0.0)
    sub = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(len(problem.y)),
                                  hard=[(problem.constraint_set.soft[0], Routing(leaves, held, values))])
    effective = np.where(held, 7.0, prediction)
    g = problem.groups
    assert sub.constraint_values(sub.start())[1] == pytest.approx(effective[g == 1].mean() - effective[g == 0].mean())
    rows = np.flatnonzero(held)
    hold = HeldPredictions(rows, np.full(len(rows), 6.0), np.full(len(rows), np.inf)).bind(problem)
    sub = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(len(problem.y)),
                                  hard=[(hold, Routing(leaves))])
    np.testing.assert_allclose(sub.constraint_values(sub.start())[1:], prediction[rows])  # after the soft parity


def test_monotone_fixes_the_split_weights_and_signs_the_leaf_slopes():
    problem, omega, beta = _problem("monotone+bounds")
    lo_w, hi_w, lo_b, hi_b = problem.constraint_set.bounds
    assert np.all(lo_w[:, [1, 3]] == 0) and np.all(hi_w[:, [1, 3]] == 0) and np.all(np.isinf(lo_w[:, [0, 2]]))
    assert np.all(lo_b[:, 1] == 0) and np.all(hi_b[:, 3] == 0)
    assert np.all(lo_b[:, 2] == -0.5) and np.all(hi_b[:, 2] == 2.0)
    np.testing.assert_array_equal(problem.constraint_set.split_features(), [False, True, False])
    omega, beta = problem.project(omega, beta)
    assert problem.violation(omega, beta) == 0.0
    kinds = {kind: f.constraint_kinds() for kind, f in _formulations(problem, omega, beta).items()}
    assert kinds["bn-root"] == {"fixed"} and kinds["ln"] == {"bounds"}


def test_a_curves_slope_bounds_are_rows_on_every_leaf_and_projecting_meets_them():
    problem, omega, beta = _problem("monotone+bounds-spline")
    basis = problem.leaf_model.basis
    lo_b, hi_b = problem.constraint_set.bounds[2:]
    assert np.all(np.isinf(lo_b[:, basis.feature_columns(0)])) and np.all(np.isinf(hi_b[:, basis.feature_columns(2)]))
    full = problem.full(omega, beta)
    slopes = [basis.slopes(j, beta) for j in (0, 1, 2)]  # (leaves, K - 1) each
    expected = np.concatenate([np.concatenate([s[l] for s in slopes]) for l in range(problem.tree.n_leaves)])
    np.testing.assert_allclose(full.constraint_values(full.start()), expected, atol=1e-12)
    assert problem.violation(omega, beta) > 0.1
    omega, beta = problem.project(omega, beta)
    assert problem.violation(omega, beta) <= 1e-12
    kinds = {kind: f.constraint_kinds() for kind, f in _formulations(problem, omega, beta).items()}
    assert kinds["bn-root"] == {"fixed"} and kinds["ln"] == {"linear"}


def test_a_violation_is_measured_in_training_units():
    problem, omega, beta = _problem("parity")
    g = problem.constraint_values(omega, beta)[0]
    assert problem.violation(omega, beta) == pytest.approx(max(abs(g) - 0.1, 0.0))


# ------------------------------------------------------------------------------ specs, units
def test_specs_objects_and_the_registry():
    terms = make_constraints(["parity:gap=0.02", "group_loss:bound=0.3", "monotone:Weight=-1",
                              "leaf_bounds:feature=x1,lower=0", Parity(0.5)])
    assert terms == (Parity(0.02), GroupLoss(0.3), Monotone(Weight=-1), LeafBounds(feature="x1", lower=0),
                     Parity(0.5))
    assert make_constraints(None) == ()

    class Cap(RowMean):
        name = "cap"

        def __init__(self, level=1.0):
            self.level = level
            super().__init__("prediction", upper=level)

    register_constraint("cap", Cap)
    try:
        assert make_constraints("cap:level=2") == (Cap(2),) and Cap(2) != Cap(3)
        assert make_constraints("cap:level=2")[0].describe() == "cap:level=2"
    finally:
        del CONSTRAINTS["cap"]

    class Unenforced(Constraint):  # neither rows nor bounds: no formulation would carry it
        name = "unenforced"

    with pytest.raises(ValueError, match="is neither a SoftMean .* nor VariableBounds"):
        make_constraints(Unenforced())
    with pytest.raises(ValueError, match="unknown constraint 'nope'"):
        make_constraints("nope")
    with pytest.raises(ValueError, match="bad options for constraint 'parity'"):
        make_constraints("parity:width=1")


@pytest.mark.parametrize("make, message", [
    (lambda: Parity(-0.1), "parity gap must be a number >= 0"),
    (lambda: Parity(float("nan")), "parity gap must be a number >= 0"),
    (lambda: GroupLoss(0.0), "group_loss bound must be a number > 0"),
    (lambda: GroupLoss(-1), "group_loss bound must be a number > 0"),
    (lambda: Monotone([1, 2]), "must be -1, 0 or 1"),
    (lambda: Monotone({"a": 1}, a=-1), "contradictory signs"),
    (lambda: LeafBounds(feature="a", lower=1, upper=0), "lower bound 1.0 above its upper bound 0.0"),
])
def test_bad_terms_are_one_line_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_units_map_names_and_scales():
    units = TrainingUnits(("a", "b"), np.array([2.0, 10.0]), y_std=4.0, loss_degree=2)
    assert Parity(0.4).in_training_units(units) == Parity(0.1)
    assert GroupLoss(32.0).in_training_units(units) == GroupLoss(2.0)
    assert LeafBounds({"b": (-1.0, None)}).in_training_units(units).bounds == {1: (-2.5, np.inf)}
    assert Monotone({"b": -1}).in_training_units(units).signs == [0, -1]
    with pytest.raises(ValueError, match="feature 'c' is not a column of X"):
        Monotone({"c": 1}).in_training_units(units)
    with pytest.raises(ValueError, match="monotonic_cst has 3 entries, but X has 2 features"):
        Monotone([1, 0, 0]).in_training_units(units)
    with pytest.raises(ValueError, match="contradictory signs"):
        Monotone({"a": 1, 0: -1}).in_training_units(units)


def test_contradictory_bounds_and_missing_groups_are_refused():
    with pytest.raises(ValueError, match="contradictory constraints"):
        ConstraintSet((Monotone([1, 0]), LeafBounds({0: (None, -1.0)})), q=3, n_branch=3, n_leaves=4)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="needs the protected groups"):
        SRTProblem(rng.random((20, 2)), rng.standard_normal(20), Tree(1), constraints=(Parity(0.1),))


def test_an_installed_packages_constraint_is_found_by_its_entry_point(tmp_path, monkeypatch):
    """A name that no one registered is looked up in the entry points "srtopt.constraints" (what an
    installed package declares in its pyproject.toml), loaded once, and listed among the known names."""
    (tmp_path / "capping-0.1.dist-info").mkdir()
    (tmp_path / "capping.py").write_text("from srtopt.models.constraints import RowMean\n\n\n"
                                         "def cap(level=1.0):\n    return RowMean('prediction', upper=level)\n")
    info = tmp_path / "capping-0.1.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: capping\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[srtopt.constraints]\nmean_cap = capping:cap\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(ValueError, match="unknown constraint 'nope'; use one of 'monotone', .*'mean_cap'"):
            make_constraints("nope")
        assert "mean_cap" not in CONSTRAINTS
        assert make_constraints("mean_cap:level=2.5") == (RowMean("prediction", upper=2.5),)
        assert "mean_cap" in CONSTRAINTS
    finally:
        CONSTRAINTS.pop("mean_cap", None)
