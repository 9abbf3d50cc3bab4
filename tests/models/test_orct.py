"""ORCT objective (expected misclassification cost): value by hand, numpy gradient against finite
differences, the CasADi and Pyomo renderings against numpy, the constraint rows and bounds, and one
solve through Pyomo's IPOPT (ripopt) reaching the CasADi IPOPT point."""

import numpy as np
import pytest

from srtopt.models.orct import AssignmentRows, ORCTObjective, class_scores
from srtopt.models.pyomo_backend import render_pyomo
from srtopt.solvers import SolverUnavailableError, make_solver
from srtopt.tree import Tree


def _objective(rng, depth, n=25, p=3, K=3, mu=1.7, lambda_w=0.05, cost=None, weights=True, omega_bound=1.0):
    tree = Tree(depth)
    X, codes = rng.random((n, p)), rng.integers(0, K, n)
    omega = rng.uniform(-1, 1, (tree.n_branch, p + 1))
    C = rng.dirichlet(np.ones(K), tree.n_leaves)
    return ORCTObjective(X, codes, tree, K, omega, C, mu, lambda_w, cost, rng.random(n) if weights else None,
                         omega_bound)


def _by_hand(obj, x):
    """E_ORCT with explicit loops over rows, leaves and classes (the paper's products)."""
    omega, C = obj.split(x)
    n, p = obj.X.shape
    total = 0.0
    for i in range(n):
        for t in obj.tree.leaves:
            prob = 1.0
            for a in obj.tree.ancestors_left(t):
                prob *= 1 / (1 + np.exp(-obj.mu * (omega[a - 1, 0] + omega[a - 1, 1:] @ obj.X[i] / p)))
            for a in obj.tree.ancestors_right(t):
                prob *= 1 - 1 / (1 + np.exp(-obj.mu * (omega[a - 1, 0] + omega[a - 1, 1:] @ obj.X[i] / p)))
            cost = sum(obj.W[obj.codes[i], k] * C[obj.tree.leaf_index(t), k] for k in range(obj.n_classes))
            total += obj.s[i] * prob * cost
    return total + 0.5 * obj.lambda_w * np.sum(omega**2)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_value_by_hand_with_a_cost_matrix(rng, depth):
    cost = [[0, 1, 4], [2, 0, 1], [1, 3, 0]]
    obj = _objective(rng, depth, cost=cost)
    np.testing.assert_array_equal(obj.W, cost)
    x = obj.start()
    assert obj.evaluate(x)[0] == pytest.approx(_by_hand(obj, x), rel=1e-12)


def test_the_default_cost_is_the_expected_error_rate(rng):
    """W = 1 off the diagonal: E = 1 - sum_i s_i (score of the row's class), the scores being
    class_scores (each row a distribution over the classes)."""
    obj = _objective(rng, 2, lambda_w=0.0)
    x = obj.start()
    scores = class_scores(obj.Z, obj.omega, obj.C, obj.mu, obj.tree)
    np.testing.assert_allclose(scores.sum(axis=1), 1.0)
    assert obj.evaluate(x)[0] == pytest.approx(1 - obj.s @ scores[np.arange(len(obj.codes)), obj.codes], rel=1e-12)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_gradient_against_finite_differences(rng, depth):
    obj = _objective(rng, depth, cost=[[0, 2, 1], [1, 0, 1], [3, 1, 0]])
    x = obj.start()
    g = obj.evaluate(x)[1]
    h = 1e-6
    fd = np.array([(obj.evaluate(x + h * e)[0] - obj.evaluate(x - h * e)[0]) / (2 * h) for e in np.eye(len(x))])
    np.testing.assert_allclose(g, fd, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("depth, mu", [(1, 1.7), (2, 1.7), (3, 1.7), (2, 512.0)])
def test_casadi_and_pyomo_match_numpy(rng, depth, mu):
    obj = _objective(rng, depth, mu=mu)
    casadi_model, pyomo_model = obj.render(), render_pyomo(obj)
    assert casadi_model.variable_names == pyomo_model.variable_names
    assert len(casadi_model.variable_names) == obj.n_variables
    for x in (obj.start(), obj.start() + 0.3 * rng.standard_normal(obj.n_variables)):
        f, g = obj.evaluate(x)
        assert casadi_model.objective(x) == pytest.approx(f, abs=1e-12, rel=1e-10)
        np.testing.assert_allclose(casadi_model.gradient(x), g, atol=1e-10, rtol=1e-8)
        assert pyomo_model.objective(x) == pytest.approx(f, abs=1e-12, rel=1e-10)
        np.testing.assert_allclose(pyomo_model.gradient(x), g, atol=1e-10, rtol=1e-8)
        np.testing.assert_allclose(casadi_model.constraints(x), obj.constraint_values(x), atol=1e-14)
    m = pyomo_model.model
    assert len(m.constraints) == obj.n_constraints
    assert [m.x[j].lb for j in range(obj.n_variables)] == obj.bounds()[0].tolist()
    assert [m.x[j].ub for j in range(obj.n_variables)] == obj.bounds()[1].tolist()


def test_rows_and_bounds_are_the_papers(rng):
    """sum_k C_tk = 1 per leaf, sum_t C_tk >= 1 per class (only with K <= 2^D), omega in [-1, 1]
    (or free), C in [0, 1]; the rows' Jacobian is exact."""
    obj = _objective(rng, 2, K=3)
    (block,) = obj.constraint_blocks
    lower, upper = obj.constraint_bounds()
    assert obj.n_constraints == 4 + 3 and lower.tolist() == [1.0] * 7 and upper.tolist() == [1.0] * 4 + [np.inf] * 3
    x = obj.start()
    omega, C = obj.split(x)
    np.testing.assert_allclose(obj.constraint_values(x), np.r_[C.sum(axis=1), C.sum(axis=0)])
    assert obj.violation(x) == pytest.approx(0.0, abs=1e-12)
    y = x + rng.standard_normal(x.size)
    np.testing.assert_allclose(block.jacobian(x) @ (y - x), obj.constraint_values(y) - obj.constraint_values(x))
    lo, hi = obj.bounds()
    assert lo.tolist() == [-1.0] * omega.size + [0.0] * C.size and hi.tolist() == [1.0] * (omega.size + C.size)
    assert obj.constraint_kinds() == {"bounds", "linear"}
    assert _objective(rng, 1, K=3).n_constraints == 2  # 3 classes, 2 leaves: no class rows
    assert np.all(np.isinf(_objective(rng, 2, omega_bound=None).bounds()[0][:omega.size]))


def test_repair_projects_onto_the_rows(rng):
    obj = _objective(rng, 2)
    x = obj.start() + 0.2 * rng.standard_normal(obj.n_variables)
    x[obj.omega.size:obj.omega.size + 3] = [-0.5, 0.0, -1.0]  # a leaf with no positive entry
    fixed = obj.repair(x)
    _, C = obj.split(fixed)
    np.testing.assert_allclose(C.sum(axis=1), 1.0)
    assert np.all(C >= 0) and np.all(np.abs(fixed[:obj.omega.size]) <= 1)
    np.testing.assert_allclose(C[0], 1 / 3)


def test_structure_key_shares_a_model_across_data_costs_and_mu(rng):
    a = _objective(rng, 2, n=20, mu=1.0)
    b = _objective(rng, 2, n=20, mu=512.0, cost=[[0, 5, 1], [1, 0, 1], [1, 1, 0]])
    assert a.structure_key == b.structure_key
    assert a.structure_key != _objective(rng, 2, n=21).structure_key
    assert a.structure_key != _objective(rng, 2, n=20, lambda_w=0.0).structure_key
    assert isinstance(a.constraint_blocks[0], AssignmentRows)
    model, x = a.render(), b.start()
    assert float(model.f_function(x, b.render_parameters())) == pytest.approx(b.evaluate(x)[0], rel=1e-10)


def test_a_tiny_instance_solves_to_the_same_point_through_casadi_and_pyomo(rng):
    """IPOPT through CasADi (exact Hessian by AD) and through Pyomo (ripopt) from the same start."""
    obj = _objective(rng, 1, n=30, p=2, K=2, mu=4.0, lambda_w=0.1)
    x0 = obj.start()
    reference = make_solver("full", "ipopt:tol=1e-10").solve(obj, x0)
    assert reference.success, reference.status
    try:
        solver = make_solver("full", "pyomo/ripopt:tol=1e-10")
    except SolverUnavailableError as exc:
        pytest.skip(f"pyomo/ripopt unavailable: {exc}")
    result = solver.solve(obj, x0)
    assert result.success, result.status
    assert obj.violation(result.x) <= 1e-7 and obj.violation(reference.x) <= 1e-7
    assert result.objective == pytest.approx(reference.objective, abs=1e-7)
    assert obj.evaluate(result.x)[0] == pytest.approx(result.objective, abs=1e-8)
    np.testing.assert_allclose(result.x, reference.x, atol=1e-3)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_hessian_against_finite_differences_and_casadi(rng, depth):
    """The numpy Hessian (IPOPT's oracle route) against central differences of the numpy gradient
    and CasADi's AD Hessian; the block in C is 0 (E is linear in C)."""
    obj = _objective(rng, depth, n=40, mu=2.5, lambda_w=0.1, cost=[[0, 2, 1], [1, 0, 1], [3, 1, 0]])
    x = obj.start()
    H = obj.hessian(x)
    h = 1e-6
    fd = np.array([(obj.evaluate(x + h * e)[1] - obj.evaluate(x - h * e)[1]) / (2 * h) for e in np.eye(len(x))])
    np.testing.assert_allclose(H, fd, atol=1e-7)
    np.testing.assert_allclose(H, obj.render().hessian(x), atol=1e-12)
    assert np.array_equal(H, H.T) and not H[obj.omega.size:, obj.omega.size:].any()
