"""The one solver contract: every registered adapter says whether it is available (and why not),
which formulations it accepts (and why not), its version; shares tol, max_iter, time_limit
and verbosity; survives scikit-learn's clone; maps its raw status through the one termination
table; stops by the deadline it is given and refuses the constraints it does not take.
register_solver adds a user's solver; "auto" picks per subproblem."""

import copy
import time

import numpy as np
import pytest
from sklearn.base import clone

from srtopt import SoftRegressionTree
from srtopt.models.terms import FeatureL1, Huber, Penalty, SplitL1
from srtopt.solvers import (SOLVERS, Acceptance, Availability, Solver, SolverResult, TerminationCondition,
                            make_solver, register_solver)
from srtopt.solvers.base import CONSTRAINT_KINDS, acceptance
from srtopt.solvers.deadline import Deadline

from ..conftest import random_tree_problem

ALL = sorted((kind, name) for kind, names in SOLVERS.items() for name in names)
SHARED = ("tol", "max_iter", "time_limit", "verbosity")


@pytest.mark.parametrize("kind,name", ALL, ids=[f"{k}:{n}" for k, n in ALL])
def test_every_adapter_follows_the_contract(kind, name):
    solver = SOLVERS[kind][name]()
    status = solver.available()
    assert isinstance(status, Availability)
    if not status:
        assert status.install, "an unavailable solver says what to install"
        return
    assert isinstance(solver.version(), str) and solver.version()
    params = solver.get_params()
    assert set(SHARED) <= set(params)
    twin = copy.deepcopy(solver)  # what scikit-learn's clone does with an adapter parameter
    assert twin is not solver and twin.get_params() == params
    assert isinstance(solver.accepts(object()), Acceptance) and not solver.accepts(object())
    assert solver.accepts(object()).reason


def _available(kind, name):
    solver = SOLVERS[kind][name]()
    if not solver.available():
        pytest.skip(f"{kind}:{name} unavailable: {solver.available().install}")
    return solver


@pytest.fixture(scope="module")
def formulations():
    """One unconstrained formulation of each kind an adapter may take: a BN and an LN subproblem, a
    WLR proxy, E over all variables, and a MILO tree model with its start loaded."""
    from srtopt.milo.model import MILOSolution, MILOTree
    from srtopt.training.nodec_dr import BranchStep, Thresholds

    problem, omega, beta = random_tree_problem(np.random.default_rng(2), 2, n=50)
    rows = np.arange(50)
    wlr = BranchStep(None, None, Thresholds()).wlr_problem(problem, omega, beta, 1, rows, rows < 20)
    X, y = problem.X[:20], problem.y[:20]
    milo = MILOTree(X, y, 1)
    milo.set_solution(MILOSolution(np.array([0]), np.array([0.5]), np.zeros(2), np.zeros((2, 3)),
                                   np.where(X[:, 0] < 0.5, 2, 3)))
    smooth = [problem.branch_subproblem(omega, beta, 1, (1, 2, 3), rows),
              problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, rows), wlr, problem.full(omega, beta)]
    for formulation in smooth:  # the compiled kernels loaded before any clock starts
        formulation.evaluate(formulation.start())
    return [*smooth, milo]


@pytest.mark.parametrize("kind,name", ALL, ids=[f"{k}:{n}" for k, n in ALL])
def test_every_adapter_returns_its_start_at_once_for_a_deadline_already_passed(formulations, kind, name):
    from srtopt.solvers.milp import _values

    solver = _available(kind, name)
    problem = next(f for f in formulations if acceptance(solver, f))
    milp = not hasattr(problem, "start")
    start = _values(problem) if milp else problem.start()
    began = time.perf_counter()
    result = solver.solve(problem, None if milp else start, deadline=Deadline(0))
    assert time.perf_counter() - began < 0.5
    assert result.termination_condition is TerminationCondition.maxTimeLimit and not result.success
    np.testing.assert_array_equal(result.x, start)
    assert milp or result.objective == problem.evaluate(start)[0]


def _carriers():
    """{constraint kind: a subproblem that carries it}: fixed (a feature subset, BN), bounds (a monotone
    leaf slope, LN), linear (parity, LN), nonlinear (parity, BN)."""
    from srtopt.models.constraints import FeatureSubset, Monotone, Parity
    from srtopt.models.srt import SRTProblem
    from srtopt.tree import Tree

    rng = np.random.default_rng(0)
    X, groups = rng.random((80, 3)), rng.integers(0, 2, 80)
    y, rows = rng.standard_normal(80) + 2 * groups, np.arange(80)
    omega, beta = 2 * rng.standard_normal((3, 4)), rng.standard_normal((4, 4))

    def problem(constraint):
        return SRTProblem(X, y, Tree(2), mu=1.3, lambda_w=0.05, lambda_b=0.02, groups=groups, constraints=(constraint,))

    bn = lambda p: p.branch_subproblem(omega, beta, 1, (1, 2, 3), rows)  # noqa: E731
    ln = lambda p: p.leaf_subproblem(omega, beta, 1, p.tree.leaves, rows)  # noqa: E731
    carriers = {"fixed": bn(problem(FeatureSubset([0, 1]))), "bounds": ln(problem(Monotone([1, 0, 0]))),
                "linear": ln(problem(Parity(0.01))), "nonlinear": bn(problem(Parity(0.01)))}
    assert {kind: sorted(sub.constraint_kinds()) for kind, sub in carriers.items()} == {
        kind: [kind] for kind in carriers}
    return carriers


@pytest.mark.parametrize("kind,name", ALL, ids=[f"{k}:{n}" for k, n in ALL])
def test_every_adapter_refuses_the_constraints_it_does_not_take(kind, name):
    solver = _available(kind, name)
    for constraint, problem in _carriers().items():
        if constraint in solver.takes_constraints:
            continue
        assert not acceptance(solver, problem)
        with pytest.raises(ValueError, match=f"does not take its constraints \\({constraint}\\)"):
            solver.solve(problem, deadline=Deadline(60))
    assert solver.takes_constraints <= CONSTRAINT_KINDS


@pytest.mark.parametrize("time_limit,seconds,bound", [(100.0, 5.0, 5.0), (2.0, 60.0, 2.0), (None, None, np.inf)])
def test_highs_qp_gives_each_qp_the_time_left_to_the_earlier_of_its_limit_and_the_deadline(
        formulations, time_limit, seconds, bound):
    solver = make_solver("ln", "highs", time_limit=time_limit)
    result = solver.solve(formulations[1], deadline=Deadline(seconds))
    assert result.success and 0 < solver._highs.getOptionValue("time_limit")[1] <= bound


def test_an_adapter_whose_solve_does_not_take_the_deadline_is_refused_at_configuration():
    class Old:
        name = "old"

        def solve(self, problem, x0):
            raise AssertionError("never called")

    class OldSubclass(Halving):
        def _solve(self, problem, x0):
            raise AssertionError("never called")

    with pytest.raises(ValueError, match="'old': solve must take the deadline"):
        make_solver("bn", Old())
    with pytest.raises(ValueError, match="_solve must take the deadline, _solve\\(problem, x0, deadline\\)"):
        make_solver("bn", OldSubclass())


@pytest.fixture
def subproblems():
    problem, omega, beta = random_tree_problem(np.random.default_rng(2), 2, n=50)
    rows = np.arange(50)
    bn = lambda: problem.branch_subproblem(omega, beta, 1, (1, 2, 3), rows)  # noqa: E731
    ln = lambda: problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, rows)  # noqa: E731
    return problem, bn, ln


def test_accepts_follows_the_formulation(subproblems):
    problem, bn, ln = subproblems
    exact, highs, lbfgsb, ipopt, prox = (make_solver("ln", "exact"), make_solver("ln", "highs"),
                                         make_solver("bn", "l-bfgs-b"), make_solver("bn", "ipopt:hessian=exact"),
                                         make_solver("bn", "prox-gradient"))
    assert exact.accepts(ln()) and highs.accepts(ln()) and lbfgsb.accepts(bn()) and ipopt.accepts(bn())
    problem.loss = Huber(0.5)
    verdict = exact.accepts(ln())
    assert not verdict and "not the squared residual" in verdict.reason
    assert highs.accepts(ln())
    problem.loss, problem.penalties = Huber(0.5), (SplitL1(0.01),)
    assert lbfgsb.accepts(bn()) and not ipopt.accepts(bn()) and prox.accepts(bn())  # l1: variable split
    problem.penalties = (FeatureL1(0.01, method="prox"),)
    verdict = lbfgsb.accepts(bn())
    assert not verdict and "weighted l1" in verdict.reason and prox.accepts(bn())
    assert not highs.accepts(ln()) and prox.accepts(ln())


class LeafLogCosh(Penalty):
    """A smooth penalty on the leaf slopes that is not a diagonal quadratic: no exact Hessian of
    the LN subproblem, so "auto" hands it to IPOPT (CasADi's Hessian)."""

    name = "leaf-logcosh"
    blocks = ("beta",)

    def value(self, omega, beta):
        return 0.01 * float(np.sum(np.log(np.cosh(beta[:, 1:]))))

    def gradient(self, omega, beta):
        g = np.zeros_like(beta)
        g[:, 1:] = 0.01 * np.tanh(beta[:, 1:])
        return np.zeros_like(omega), g

    def casadi(self, omega, beta):
        import casadi as ca

        return 0.01 * ca.sum1(ca.sum2(ca.log(ca.cosh(beta[:, 1:]))))


@pytest.mark.parametrize("loss,penalty,bn,ln,wlr", [
    ("squared", (), "newton", "exact", "newton"),
    (Huber(0.3), (), "newton", "newton", "newton"),
    ("absolute", (), "newton", "newton", "newton"),
    ("squared", (LeafLogCosh(),), "newton", "ipopt", "newton"),
    ("squared", (SplitL1(0.01),), "l-bfgs-b", "exact", "prox-gradient"),
    ("squared", (FeatureL1(0.01),), "l-bfgs-b", "exact", "prox-gradient"),
    ("squared", (FeatureL1(0.01, method="prox"),), "prox-gradient", "prox-gradient", "prox-gradient"),
])
def test_auto_picks_by_the_formulation(subproblems, loss, penalty, bn, ln, wlr):
    from srtopt.models.terms import make_loss
    from srtopt.training.nodec_dr import BranchStep, Thresholds

    problem, make_bn, make_ln = subproblems
    problem.loss, problem.penalties = make_loss(loss), penalty
    assert make_solver("bn", "auto").choose(make_bn()).name == bn
    assert make_solver("ln", "auto").choose(make_ln()).name == ln
    step = BranchStep(None, None, Thresholds())
    omega = np.zeros((3, problem.n_features + 1))
    beta = np.zeros((4, problem.n_features + 1))
    wlr_problem = step.wlr_problem(problem, omega, beta, 1, np.arange(50), np.arange(50) < 20)
    assert make_solver("wlr", "auto").choose(wlr_problem).name == wlr


class Slowed:
    """A real BN subproblem whose every evaluation takes 5 ms more."""

    def __init__(self, problem):
        self.problem, self.name, self.nonsmooth = problem, "slowed", ()

    def start(self):
        return self.problem.start()

    def evaluate(self, x):
        time.sleep(0.005)
        return self.problem.evaluate(x)


UNENDING = ["ipopt:tol=1e-14,max_iter=100000", "prox-gradient:tol=1e-30,max_iter=100000",
            "slsqp:tol=1e-30,max_iter=100000"]  # unlimited, each solve runs for minutes


def _solve_with_a_time_limit(bn, spec):
    """(the result, the problem, wall seconds) of a solve of a slowed BN subproblem limited to 0.1 s."""
    problem = Slowed(bn())
    start = time.perf_counter()
    result = make_solver("bn", spec, time_limit=0.1).solve(problem, problem.start() * 3)
    return result, problem, time.perf_counter() - start


@pytest.mark.parametrize("spec", UNENDING)
def test_time_limit_of_a_solve_ends_it_with_max_time_limit(subproblems, spec):
    result, problem, _ = _solve_with_a_time_limit(subproblems[1], spec)
    assert result.termination_condition is TerminationCondition.maxTimeLimit and result.usable()
    assert result.objective <= problem.evaluate(problem.start() * 3)[0]


@pytest.mark.slow
@pytest.mark.parametrize("spec", UNENDING)
def test_time_limit_of_a_solve_holds_on_the_clock(subproblems, spec):
    assert _solve_with_a_time_limit(subproblems[1], spec)[2] < 2.0  # the 0.1 s limit, on a loaded machine


class Halving(Solver):
    """A user's BN solver, in one file: gradient steps of a fixed length."""

    name = "halving"

    def __init__(self, step=0.5, tol=None, max_iter=20, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.step = step

    def _solve(self, problem, x0, deadline):
        x = x0.copy()
        for _ in range(self.max_iter):
            x = x - self.step * problem.evaluate(x)[1]
        return self._result(x, problem.evaluate(x)[0], "solved", self.max_iter)


def test_register_a_solver_and_train_with_it_by_name():
    register_solver("bn", "halving", Halving)
    try:
        assert make_solver("bn", "halving:step=0.1").step == 0.1
        rng = np.random.default_rng(0)
        X = rng.random((120, 3))
        y = np.where(X[:, 0] > 0.5, X[:, 1], -X[:, 2])
        tree = SoftRegressionTree(depth=2, max_iter=2, n_init=1, eps1=0.0, bn_solver="halving:max_iter=5",
                                  random_state=0)
        assert clone(tree).get_params()["bn_solver"] == "halving:max_iter=5"
        tree.fit(X, y)
        assert {r["bn"].get("solver") for r in tree.history_} >= {"halving"}
    finally:
        del SOLVERS["bn"]["halving"]


def test_a_solver_that_does_not_accept_the_subproblems_is_refused_at_fit():
    X = np.random.default_rng(0).random((60, 2))
    with pytest.raises(ValueError, match="ln_solver='exact' does not accept .*not the squared residual"):
        SoftRegressionTree(depth=2, loss="huber", ln_solver="exact").fit(X, X[:, 0])


def test_milp_solvers_through_the_same_layer():
    solver = make_solver("milp", "highs", time_limit=5.0)
    assert solver.available() and "HiGHS" in solver.version()
    verdict = solver.accepts(object())
    assert not verdict and "MILO" in verdict.reason
    assert not acceptance(make_solver("bn", "l-bfgs-b"), object())


def test_results_of_a_users_adapter_without_a_termination_condition():
    result = SolverResult(np.zeros(1), 0.0, True, "whatever", 1, 0.0)
    assert result.termination_condition is TerminationCondition.convergenceCriteriaSatisfied


@pytest.mark.parametrize("loss", [Huber(0.3), Huber(1.0), "absolute"])
def test_newton_reaches_the_optimum_of_the_ln_problem(subproblems, loss):
    """The "auto" LN solver of the smooth losses (exact Newton on the LN Hessian) reaches the
    optimum that IPOPT and, for Huber, HiGHS's QP reach."""
    from srtopt.models.terms import make_loss

    problem, _, ln = subproblems
    problem.loss = make_loss(loss)
    sub = ln()
    f = {spec: sub.evaluate(make_solver("ln", spec).solve(sub, sub.start()).x)[0]
         for spec in ["newton", "ipopt:hessian=exact,tol=1e-12"] + (["highs"] if isinstance(loss, Huber) else [])}
    assert max(f.values()) - min(f.values()) <= 1e-9 * max(1.0, abs(f["newton"])), f
