"""CasADi renderings of every formulation against the numpy reference evaluator."""

import numpy as np
import pytest

from srtopt import kernels
from srtopt.models.casadi_backend import padded_rows
from srtopt.models.srt import WLRProxy

from ..conftest import random_tree_problem


def _check(formulation, x, hess_tol=1e-5):
    model = formulation.render()
    f, g = formulation.evaluate(x)
    assert model.objective(x) == pytest.approx(f, abs=1e-10, rel=1e-10)
    np.testing.assert_allclose(model.gradient(x), g, atol=1e-10, rtol=1e-9)
    # exact Hessian (CasADi AD) against central differences of the reference gradient
    H = model.hessian(x)
    h = 1e-6
    fd = np.array([(formulation.evaluate(x + h * e)[1] - formulation.evaluate(x - h * e)[1]) / (2 * h)
                   for e in np.eye(len(x))])
    np.testing.assert_allclose(H, fd.T, atol=hess_tol, rtol=1e-4)
    np.testing.assert_allclose(H, H.T, atol=1e-12)


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_full_objective(rng, depth):
    problem, omega, beta = random_tree_problem(rng, depth, n=25, p=2)
    _check(problem.full(omega, beta), problem.full(omega, beta).start())


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_branch_subproblems_on_every_node(rng, depth):
    problem, omega, beta = random_tree_problem(rng, depth, n=40, p=2)
    leaves = problem.hbp_leaves(omega)
    tree = problem.tree
    for t in tree.branch_nodes:
        rows = np.flatnonzero(kernels.hbp_contains(leaves, tree, t))
        for working in {(t,), tree.subtree_branch(t)}:
            sub = problem.branch_subproblem(omega, beta, t, working, rows)
            x = sub.start() + 0.1 * rng.standard_normal(sub.start().shape)
            _check(sub, x)


def test_branch_proxy_at_root_equals_E_up_to_constants(rng):
    problem, omega, beta = random_tree_problem(rng, 3)
    sub = problem.branch_subproblem(omega, beta, 1, problem.tree.branch_nodes, np.arange(60))
    constant = 0.5 * problem.lambda_b * np.sum(beta**2)
    assert sub.evaluate(sub.start())[0] + constant == pytest.approx(problem.objective(omega, beta))


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_leaf_subproblem(rng, depth):
    problem, omega, beta = random_tree_problem(rng, depth, n=30, p=2)
    tree = problem.tree
    for t in tree.branch_nodes:
        sub = problem.leaf_subproblem(omega, beta, t, tree.descendants_leaves(t), np.arange(20))
        _check(sub, sub.start() + 0.1)


def test_wlr_proxy(rng):
    Z = np.hstack([np.ones((30, 1)), rng.random((30, 3)) / 3])
    wlr = WLRProxy(Z, (rng.random(30) < 0.4).astype(float), rng.random(30) + 0.5, 1.5,
                   rng.standard_normal(4), alpha=0.2)
    _check(wlr, wlr.start())


def test_rendered_model_is_inspectable(rng):
    problem, omega, beta = random_tree_problem(rng, 2)
    rows = np.arange(37)
    sub = problem.branch_subproblem(omega, beta, 2, (2,), rows)
    model = sub.render()
    assert model.x.numel() == 4 and len(model.variable_names) == 4
    assert model.variable_names[0] == "omega[2][0]"
    assert "4 variables" in repr(model)
    # data are padded to a power of two so one compiled solver serves many I_t sizes
    assert padded_rows(37) == 64 and sub.structure_key[3] == 64
    assert problem.branch_subproblem(omega, beta, 2, (2,), np.arange(50)).structure_key == sub.structure_key


@pytest.mark.parametrize("root,working", [(1, (1,)), (4, (4,)), (2, (2, 4, 5)), (1, (1, 2, 4)), (1, (3, 5)),
                                          (1, tuple(range(1, 8))), (2, (4,))])
def test_branch_subproblem_hessian_matches_the_gradient(rng, root, working):
    """The numpy Hessian of the BN proxy (one node or several, ancestors and separate branches)
    against central differences of the reference gradient, and symmetric."""
    problem, omega, beta = random_tree_problem(rng, 3, n=40, p=2)
    sub = problem.branch_subproblem(omega, beta, root, working, np.arange(40))
    x = sub.start() + 0.1 * rng.standard_normal(sub.start().shape)
    H = sub.hessian(x)
    h = 1e-6
    fd = np.array([(sub.evaluate(x + h * e)[1] - sub.evaluate(x - h * e)[1]) / (2 * h) for e in np.eye(len(x))])
    np.testing.assert_allclose(H, fd.T, atol=1e-7, rtol=1e-5)
    np.testing.assert_array_equal(H, H.T)


def test_branch_subproblem_has_no_hessian_with_a_nonsmooth_penalty(rng):
    from srtopt.models.terms import SplitL1

    problem, omega, beta = random_tree_problem(rng, 2, n=30, p=2)
    problem.penalties = (SplitL1(0.01),)
    assert problem.branch_subproblem(omega, beta, 1, (1,), np.arange(30)).hessian is None
