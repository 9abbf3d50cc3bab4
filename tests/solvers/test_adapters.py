"""Every solver adapter through one interface: same optimum, clear errors, clone-safe specs."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_diabetes, make_friedman1

from srtopt import SoftRegressionTree
from srtopt.inspect import capture
from srtopt.solvers import (SOLVERS, Availability, IpoptCyipopt, PyomoSolver, ScipyHessian, SolverResult,
                            SolverUnavailableError, TerminationCondition, available_solvers, make_solver,
                            parse_spec, termination)

from ..conftest import random_tree_problem

BN_SPECS = {
    "ipopt": "ipopt:tol=1e-10",
    "ipopt-exact": "ipopt:tol=1e-10,hessian=exact",
    "cyipopt": "cyipopt:tol=1e-10",
    "cyipopt-exact": "cyipopt:tol=1e-10,hessian=exact",
    "l-bfgs-b": "l-bfgs-b:tol=1e-13,max_iter=2000",
    "slsqp": "slsqp:tol=1e-13,max_iter=500",
    "trust-exact": "trust-exact:tol=1e-8",
    "newton": "newton:tol=1e-14",
    "pyomo/ipopt": "pyomo/ipopt:tol=1e-10",
    "pyomo/ripopt": "pyomo/ripopt:tol=1e-10",
}
LN_SPECS = {
    "qpoases": "qpoases",
    "osqp": "osqp:tol=1e-12",
    "highs": "highs",
    "pyomo/highs": "pyomo/highs:options={'qp_regularization_value':0.0}",
}


def _solver_or_skip(kind, spec):
    try:
        return make_solver(kind, spec)
    except SolverUnavailableError as exc:
        pytest.skip(f"{spec} unavailable: {exc}")


@pytest.fixture
def bn_subproblem():
    problem, omega, beta = random_tree_problem(np.random.default_rng(1), 2, n=60)
    return problem.branch_subproblem(0.3 * omega, beta, 1, (1, 2, 3), np.arange(60))


@pytest.mark.parametrize("name", sorted(BN_SPECS))
def test_every_bn_solver_reaches_the_same_local_minimum(bn_subproblem, name):
    reference = make_solver("bn", "ipopt:tol=1e-12,hessian=exact").solve(bn_subproblem, bn_subproblem.start())
    result = _solver_or_skip("bn", BN_SPECS[name]).solve(bn_subproblem, bn_subproblem.start())
    assert isinstance(result, SolverResult) and result.usable()
    assert result.termination_condition is TerminationCondition.convergenceCriteriaSatisfied, result.status
    assert result.objective == pytest.approx(reference.objective, abs=1e-6)
    assert result.objective == pytest.approx(bn_subproblem.evaluate(result.x)[0], abs=1e-12)
    assert result.seconds > 0 and result.raw_status == result.status


@pytest.fixture(scope="module")
def captured_bn():
    """BN subproblems captured from small fits where SciPy's own tolerances stopped early: a flat
    one (gradient 5e-6, curvature 1e-3: SLSQP stopped at the start after one iteration, 3.4e-6
    above the optimum), a near-singular one (curvatures of 6e-7: IPOPT at 1e-6 stopped 3.8e-7
    above it, trust-krylov 2e-3), and one the proximal gradient at 1e-10 left 9e-7 above it."""
    rng = np.random.default_rng(0)
    X = rng.random((600, 5))
    y = np.where(X[:, 0] > 0.5, np.sin(4 * X[:, 1]), X[:, 2] ** 2 - X[:, 3]) + 0.05 * rng.standard_normal(600)
    diabetes = load_diabetes(return_X_y=True)
    friedman = make_friedman1(300, noise=1.0, random_state=0)
    cases = [(SoftRegressionTree(depth=3, regularization=1e-3, max_iter=5, random_state=0), (X, y), 17),
             (SoftRegressionTree(depth=3, max_iter=3, random_state=0), diabetes, 20),
             (SoftRegressionTree(depth=2, max_iter=4, random_state=0), friedman, 1)]
    return [capture(tree, *data, k=k).bn() for tree, data, k in cases]


@pytest.mark.parametrize("name", list(SOLVERS["bn"]))
def test_every_registered_bn_route_reaches_a_captured_optimum_by_default(captured_bn, name):
    solver = _solver_or_skip("bn", name)
    for bn in captured_bn:
        optimum = min(bn.solve("newton:tol=1e-14").objective, bn.solve("ipopt:tol=1e-12").objective)
        result = bn.solve(solver)
        assert result.termination_condition is TerminationCondition.convergenceCriteriaSatisfied, result.status
        assert result.objective - optimum <= 1e-7 * abs(optimum), (bn.k, result.iterations)


@pytest.mark.parametrize("name", sorted(LN_SPECS))
def test_every_ln_solver_finds_the_same_solution(rng, name):
    problem, omega, beta = random_tree_problem(rng, 2, n=70)
    sub = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(70))
    exact = make_solver("ln", "exact").solve(sub)
    result = _solver_or_skip("ln", LN_SPECS[name]).solve(sub, sub.start())
    assert result.success, result.status
    np.testing.assert_allclose(result.x, exact.x, atol=1e-8)
    assert result.objective == pytest.approx(exact.objective, abs=1e-10)


def test_unknown_and_unavailable_solvers_are_clear_errors():
    with pytest.raises(SolverUnavailableError, match=r"unknown bn solver 'nope'; available: l-bfgs-b, newton, ipopt, .*slsqp"):
        make_solver("bn", "nope")
    missing = PyomoSolver("surely_not_a_solver")
    assert not missing.available()
    with pytest.raises(SolverUnavailableError, match="surely_not_a_solver.*not available.*available: l-bfgs-b, newton, ipopt"):
        make_solver("bn", "pyomo/surely_not_a_solver")

    class Missing:
        name = "missing"

        def available(self):
            return Availability(False, "pip install missing")

        def solve(self, problem, x0, *, deadline=None):
            raise AssertionError("never called")

    with pytest.raises(SolverUnavailableError, match="pip install missing"):
        make_solver("bn", Missing())
    with pytest.raises(ValueError, match="bad options"):
        make_solver("bn", "ipopt:nonsense=1")


def test_pyomo_ipopt_without_executable_names_the_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    status = PyomoSolver("ipopt").available()
    assert not status and "ipopt" in status.install and "conda" in status.install


def test_cyipopt_reports_how_to_install_when_missing(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "cyipopt":
            raise ImportError("no cyipopt")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    status = IpoptCyipopt().available()
    assert not status and "coinor-libipopt-dev" in status.install and "pip install cyipopt" in status.install


def test_specs_parse_options_and_configure_the_adapter():
    assert parse_spec("IPOPT:tol=1e-8, hessian=exact, max_iter=50") == (
        "ipopt", {"tol": 1e-8, "hessian": "exact", "max_iter": 50})
    solver = make_solver("bn", "ipopt:tol=1e-8,hessian=exact")
    assert (solver.tol, solver.hessian) == (1e-8, "exact")
    assert make_solver("bn", "slsqp", tol=1e-9).tol == 1e-9
    assert set(available_solvers("ln")) == set(SOLVERS["ln"])


def test_result_keeps_the_old_positional_fields_and_one_termination_mapping():
    result = SolverResult(np.zeros(2), 1.0, False, "Maximum_Iterations_Exceeded", 200, 0.1)
    assert result.termination_condition is TerminationCondition.unknown  # no guessing from the text
    assert termination("ipopt", "Maximum_Iterations_Exceeded") is TerminationCondition.iterationLimit
    assert termination("scipy:l-bfgs-b", 1) is TerminationCondition.iterationLimit
    assert termination("pyomo", "maxTimeLimit") is TerminationCondition.maxTimeLimit
    assert termination("highs", "Optimal") is TerminationCondition.convergenceCriteriaSatisfied
    assert termination("ipopt", "Some_New_Status", success=True) is TerminationCondition.convergenceCriteriaSatisfied
    assert SolverResult(np.zeros(1), 0.0, True, "Solve_Succeeded", 3, 0.1).termination_condition \
        is TerminationCondition.convergenceCriteriaSatisfied


@pytest.fixture(scope="module")
def small_data():
    rng = np.random.default_rng(3)
    X = rng.random((120, 3))
    return X, np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2]) + 0.05 * rng.standard_normal(120)


@pytest.mark.parametrize("bn_solver, name", [("ipopt:tol=1e-8", "ipopt"), ("l-bfgs-b", "l-bfgs-b"),
                                             (ScipyHessian("trust-exact"), "trust-exact")])
def test_training_with_any_solver_by_one_argument(small_data, bn_solver, name):
    """The solvers given by one argument solve every BN (NLP) and LN subproblem of the fit; a clone
    trains the same way."""
    X, y = small_data
    tree = SoftRegressionTree(depth=2, regularization=1e-3, max_iter=2, n_init=2, bn_solver=bn_solver,
                              ln_solver="qpoases", random_state=0)
    twin = clone(tree).fit(X, y)
    assert twin.score(X, y) > 0.5
    bn = [record["bn"] for record in twin.history_ if record["bn"].get("update") == "heuristic-nlp"]
    ln = [record["ln"] for record in twin.history_ if "solver" in record["ln"]]
    assert bn and {step["solver"] for step in bn} == {name}
    assert ln and {step["solver"] for step in ln} == {"qpoases"}


def test_solver_objects_are_sklearn_params():
    tree = SoftRegressionTree(bn_solver=ScipyHessian("trust-exact", tol=1e-6))
    assert tree.get_params()["bn_solver__tol"] == 1e-6
    tree.set_params(bn_solver__tol=1e-9, bn_solver__method="trust-krylov")
    assert (tree.bn_solver.tol, tree.bn_solver.name) == (1e-9, "trust-krylov")
    twin = clone(tree)
    assert twin.bn_solver is not tree.bn_solver and twin.bn_solver.get_params() == tree.bn_solver.get_params()


def test_unavailable_solver_fails_before_training(small_data):
    X, y = small_data
    with pytest.raises(ValueError, match="^bn_solver: bn solver 'pyomo/surely_not_a_solver' is not available"):
        SoftRegressionTree(depth=2, n_init=1, bn_solver="pyomo/surely_not_a_solver").fit(X, y)


@pytest.mark.parametrize("params", [{"ln_solver": "qp"}, {"bn_solver": "ipopt"}, {"ln_solver": "qpoases"}],
                         ids=["highs", "ipopt", "qpoases"])
def test_a_tree_fitted_with_an_adapter_object_pickles_without_its_compiled_solvers(params, capfd):
    X = np.random.default_rng(0).random((120, 3))
    y = X @ [1.0, 2.0, 3.0] + np.sin(5 * X[:, 0])
    adapters = {key: make_solver(key[:2], spec) for key, spec in params.items()}
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=2, **adapters).fit(X, y)
    capfd.readouterr()
    again = pickle.loads(pickle.dumps(tree))
    np.testing.assert_array_equal(again.predict(X), tree.predict(X))
    assert capfd.readouterr().out == ""  # no solver is rebuilt on loading (qpOASES prints when built)
    adapter = next(iter(adapters.values()))
    copy = getattr(again, next(iter(adapters)))
    assert copy is not adapter and copy.get_params() == adapter.get_params()
