"""Constrained subproblems and the solvers that take them: IPOPT through CasADi (oracle and
symbolic), SciPy's SLSQP and Pyomo reach the same point of a captured BN subproblem, the QP routes
and SLSQP agree on the LN step, the solvers that cannot take a constraint refuse it in one line naming
those that can, and the bounds-taking adapters (Newton on fixed variables, L-BFGS-B, the
proximal gradient) keep them exactly."""

import re

import numpy as np
import pytest

from srtopt import SoftRegressionTree
from srtopt.inspect import capture
from srtopt.models.constraints import Monotone
from srtopt.models.srt import SRTProblem
from srtopt.models.terms import SplitL1
from srtopt.solvers import SOLVERS, SolverUnavailableError, make_solver
from srtopt.solvers.base import CONSTRAINT_ROUTES, acceptance
from srtopt.tree import Tree


def _data(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    group = (X[:, 0] + 0.3 * rng.random(n) > 0.6).astype(int)  # the group shows in the features
    y = np.where(X[:, 1] > 0.5, 2 * X[:, 0], -X[:, 2]) + 0.8 * group + 0.05 * rng.standard_normal(n)
    return X, y, group


def _solver_or_skip(kind, spec):
    try:
        return make_solver(kind, spec)
    except SolverUnavailableError as exc:
        pytest.skip(f"{spec} unavailable: {exc}")


@pytest.fixture(scope="module")
def captured():
    """The BN subproblem of node 1 in the second macro iteration, and the LN subproblem of node 2 in
    the first, of a parity-constrained fit (gap 0.05: active)."""
    X, y, group = _data()
    tree = SoftRegressionTree(depth=2, random_state=0, constraints="parity:gap=0.05", max_iter=3)
    tree.fit(X, y, sensitive_features=group)
    bn = capture(tree, X, y, node=1, macro=1, sensitive_features=group).bn()
    ln = capture(tree, X, y, node=2, macro=0, sensitive_features=group).ln()
    return bn, ln


@pytest.mark.parametrize("spec", ["ipopt:evaluator=symbolic,tol=1e-10", "ipopt:hessian=limited-memory,tol=1e-10",
                                  "slsqp", "pyomo/ripopt:tol=1e-10", "pyomo/ipopt:tol=1e-10"])
def test_a_captured_bn_subproblem_reaches_the_same_point_through_casadi_and_pyomo(captured, spec):
    bn, _ = captured
    assert bn.formulation.n_constraints == 1 and "constraints: nonlinear" in bn.summary()
    reference = bn.solve("ipopt:tol=1e-10")  # the oracle route with the exact Hessian of the Lagrangian
    lower, upper = bn.formulation.constraint_bounds()
    g = bn.formulation.constraint_values(reference.x)
    assert reference.success and np.isclose(abs(g[0]), upper[0], atol=1e-7)  # the constraint is active
    _solver_or_skip("bn", spec)
    result = bn.solve(spec)
    assert result.success, result.status
    assert bn.formulation.violation(result.x) <= 1e-7
    assert result.objective == pytest.approx(reference.objective, abs=1e-7)
    np.testing.assert_allclose(result.x, reference.x, atol=1e-3)


def test_the_constraint_changes_the_bn_solution(captured):
    bn, _ = captured
    reference = bn.solve("ipopt:tol=1e-10")
    blocks = bn.formulation.constraint_blocks
    bn.formulation.__dict__["constraint_blocks"] = ()  # the same subproblem without its row
    try:
        free = bn.solve("ipopt:tol=1e-10")
    finally:
        bn.formulation.__dict__["constraint_blocks"] = blocks
    assert free.objective < reference.objective - 1e-6
    assert bn.formulation.violation(free.x) > 1e-4


@pytest.mark.parametrize("spec", ["qp", "osqp:tol=1e-12", "qpoases", "ipopt:hessian=exact,tol=1e-12", "slsqp",
                                  "pyomo/highs:options={'qp_regularization_value':0.0}", "pyomo/ripopt:tol=1e-12"])
def test_every_ln_route_finds_the_same_constrained_solution(captured, spec):
    _, ln = captured
    reference = ln.solve("qp")
    result = _solver_or_skip("ln", spec).solve(ln.formulation, ln.x0)
    assert result.success, result.status
    assert ln.formulation.violation(result.x) <= 1e-7
    assert result.objective == pytest.approx(reference.objective, abs=1e-8)


def _monotone_problem(n=80):
    rng = np.random.default_rng(3)
    X, y = rng.random((n, 3)), rng.standard_normal(n)
    problem = SRTProblem(X, y, Tree(2), lambda_w=0.05, lambda_b=0.02, constraints=(Monotone([1, 0, -1]),))
    omega, beta = problem.project(rng.standard_normal((3, 4)), rng.standard_normal((4, 4)))
    return problem, omega, beta


def test_newton_eliminates_fixed_variables_and_matches_ipopt():
    problem, omega, beta = _monotone_problem()
    bn = problem.branch_subproblem(omega, beta, 1, (1,), np.arange(80))
    assert bn.constraint_kinds() == {"fixed"}
    newton = make_solver("bn", "newton:tol=1e-14").solve(bn)
    ipopt = make_solver("bn", "ipopt:tol=1e-10").solve(bn)
    lbfgsb = make_solver("bn", "l-bfgs-b:tol=1e-13,max_iter=2000").solve(bn)
    slsqp = make_solver("bn", "slsqp").solve(bn)
    for result in (newton, ipopt, lbfgsb, slsqp):
        assert result.x[[1, 3]].tolist() == [0.0, 0.0]  # the monotone features' split weights: exactly 0
        assert result.objective == pytest.approx(newton.objective, abs=1e-7)


def test_bounded_leaves_solved_by_the_qp_lbfgsb_slsqp_and_the_proximal_gradient():
    problem, omega, beta = _monotone_problem()
    ln = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(80))
    assert ln.constraint_kinds() == {"bounds"}
    qp = make_solver("ln", "qp").solve(ln)
    slopes = qp.x.reshape(4, 4)
    assert np.all(slopes[:, 1] >= 0) and np.all(slopes[:, 3] <= 0)
    assert np.any(slopes[:, 1] == 0) or np.any(slopes[:, 3] == 0)  # a bound is active: it matters
    for spec in ("l-bfgs-b:tol=1e-14,max_iter=5000", "prox-gradient:tol=1e-14,max_iter=20000", "slsqp"):
        result = make_solver("ln", spec).solve(ln)
        assert ln.violation(result.x) == 0.0
        assert result.objective == pytest.approx(qp.objective, abs=1e-6)


def test_l1_split_weights_and_fixed_variables_together():
    problem, omega, beta = _monotone_problem()
    problem = SRTProblem(problem.X, problem.y, problem.tree, lambda_w=0.05, lambda_b=0.02, penalties=(SplitL1(0.01),),
                         constraints=(Monotone([1, 0, -1]),))
    bn = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(80))
    result = make_solver("bn", "l-bfgs-b:tol=1e-12,max_iter=3000").solve(bn)
    X = result.x.reshape(3, 4)
    assert np.all(X[:, [1, 3]] == 0.0)
    proximal = make_solver("bn", "prox-gradient:tol=1e-14,max_iter=20000").solve(bn)
    assert np.all(proximal.x.reshape(3, 4)[:, [1, 3]] == 0.0)
    assert proximal.objective == pytest.approx(result.objective, abs=1e-5)


def test_solvers_that_cannot_take_a_constraint_refuse_it_naming_those_that_can(captured):
    bn, ln = captured
    for kind, spec, sub in (("bn", "newton", bn.formulation), ("bn", "l-bfgs-b", bn.formulation),
                            ("ln", "exact", ln.formulation), ("ln", "lsqr", ln.formulation)):
        solver = make_solver(kind, spec)
        verdict = acceptance(solver, sub)
        assert not verdict and "solvers that do:" in verdict.reason
        assert all(route in verdict.reason for route in ("ipopt", "slsqp", "pyomo/ripopt"))
        with pytest.raises(ValueError, match="does not take its constraints"):
            solver.solve(sub)

    class Mine:  # a user's adapter: it declares no constraint, so it is never handed one
        name = "mine"

        def solve(self, problem, x0, *, deadline=None):
            raise AssertionError("never called")

    assert not acceptance(Mine(), bn.formulation)
    assert acceptance(make_solver("bn", "auto"), bn.formulation)
    assert make_solver("bn", "auto").choose(bn.formulation).name == "ipopt"
    assert make_solver("ln", "auto").choose(ln.formulation).name == "highs"


@pytest.mark.parametrize("kind", sorted(CONSTRAINT_ROUTES))
def test_a_refusal_names_exactly_the_registered_solvers_that_take_the_constraint(kind):
    text = CONSTRAINT_ROUTES[kind]
    names = {name: factory for registry in ("bn", "ln") for name, factory in SOLVERS[registry].items()}
    takers = {name for name, factory in names.items() if kind in getattr(factory(), "takes_constraints", ())}
    listed = {name for name in names if re.search(rf"(^|[ ,]){re.escape(name)}([ ,]|$)", text)}
    assert takers == listed | ({"highs"} if "qp (HiGHS)" in text else set())
    assert "pyomo/<name>" in text  # any Pyomo solver takes every kind (its model carries them)


def test_a_pyomo_solver_plugin_loads_without_an_import():
    solver = _solver_or_skip("bn", "pyomo/ripopt")
    assert solver.available()
