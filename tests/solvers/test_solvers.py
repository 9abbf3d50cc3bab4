import numpy as np
import pytest

from srtopt import kernels
from srtopt.models.srt import WLRProxy
from srtopt.solvers import (ExactLeastSquares, IpoptCasadi, ScipyMinimize, SklearnLogistic, armijo_step,
                            make_solver)

from ..conftest import random_tree_problem


def test_armijo_sufficient_decrease(rng):
    problem, omega, beta = random_tree_problem(rng, 2)
    sub = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(60))
    x0 = sub.start()
    f0, g = sub.evaluate(x0)
    alpha, x, f = armijo_step(lambda z: sub.evaluate(z)[0], x0, f0, g, a=8.0, gamma=0.3, delta=0.5)
    assert 0 < alpha <= 8.0
    assert f <= f0 - 0.3 * alpha * g @ g  # eq. (armijo)
    # the step before the accepted one (if any) violated it: alpha is the first that works
    if alpha < 8.0:
        assert sub.evaluate(x0 - 2 * alpha * g)[0] > f0 - 0.3 * 2 * alpha * g @ g


def test_armijo_without_a_descent_step_keeps_the_point():
    """When no step length gives sufficient decrease (here g points uphill), the reference update
    is alpha = 0 and the point and its value unchanged, after max_backtracks halvings."""
    x0 = np.array([1.0, -2.0])
    calls = []
    f = lambda z: calls.append(1) or float(z @ z)
    alpha, x, fx = armijo_step(f, x0, 5.0, -2 * x0, max_backtracks=20)
    assert alpha == 0.0 and np.array_equal(x, x0) and fx == 5.0 and len(calls) == 20


@pytest.mark.parametrize("evaluator", ["oracle", "symbolic"])
def test_ipopt_reaches_a_stationary_point_and_reuses_its_solver(rng, evaluator):
    problem, omega, beta = random_tree_problem(rng, 2)
    solver = IpoptCasadi(tol=1e-9, evaluator=evaluator)
    sub = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(60))
    result = solver.solve(sub, sub.start())
    assert result.success and result.iterations > 0
    assert np.linalg.norm(sub.evaluate(result.x)[1]) < 1e-5
    assert result.objective <= sub.evaluate(sub.start())[0]
    sub2 = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(50))  # same row bucket
    solver.solve(sub2, sub2.start())
    assert len(solver._cache) == 1


class _ScaledQuadratic:
    """f(x) = 1e4 |x - 1|^2: a gradient of 2e4 at 0, so IPOPT scales the objective (by 100 / 2e4)
    and hands that factor to the Hessian callback as lam_f."""

    name = "scaled_quadratic"

    def start(self):
        return np.zeros(3)

    def evaluate(self, x):
        return 1e4 * float(np.sum((x - 1.0) ** 2)), 2e4 * (x - 1.0)

    def hessian(self, x):
        return np.diag([2e4, 2e4, 2e4])


def test_ipopt_oracle_scales_its_hessian_by_lam_f_and_calls_python_four_times_per_iteration(monkeypatch):
    problem = _ScaledQuadratic()
    calls = {"evaluate": 0, "hessian": 0}
    for name in calls:
        method = getattr(problem, name)
        monkeypatch.setattr(problem, name, lambda x, method=method, name=name: (
            calls.__setitem__(name, calls[name] + 1), method(x))[1])
    result = IpoptCasadi(tol=1e-10).solve(problem, problem.start())
    np.testing.assert_allclose(result.x, 1.0, atol=1e-10)
    assert result.iterations == 1  # one exact Newton step on a quadratic: the scaled Hessian is right
    assert calls["hessian"] == result.iterations and calls["evaluate"] <= result.iterations + 2


@pytest.mark.parametrize("hessian,evaluator", [("limited-memory", "oracle"), ("limited-memory", "symbolic"),
                                               ("exact", "symbolic")])
def test_bn_solvers_agree(rng, hessian, evaluator):
    problem, omega, beta = random_tree_problem(rng, 2, n=80)
    sub = problem.branch_subproblem(omega, beta, 2, (2,), np.arange(80))
    ipopt = IpoptCasadi(hessian=hessian, tol=1e-10, evaluator=evaluator).solve(sub, sub.start())
    lbfgs = ScipyMinimize("L-BFGS-B", tol=1e-12, max_iter=1000).solve(sub, sub.start())
    assert ipopt.objective == pytest.approx(lbfgs.objective, abs=1e-6)


def test_exact_least_squares_zeroes_the_leaf_gradient(rng):
    problem, omega, beta = random_tree_problem(rng, 3)
    tree = problem.tree
    for t in (1, 3, 5):
        sub = problem.leaf_subproblem(omega, beta, t, tree.descendants_leaves(t), np.arange(40))
        result = ExactLeastSquares().solve(sub)
        assert np.linalg.norm(sub.evaluate(result.x)[1]) < 1e-10
        lbfgs = ScipyMinimize("L-BFGS-B", tol=1e-14, max_iter=5000).solve(sub, sub.start())
        assert result.objective <= lbfgs.objective + 1e-9


def test_exact_least_squares_without_regularization_on_singular_data(rng):
    """lambda_b = 0 and fewer points than coefficients: falls back to lstsq, still optimal."""
    problem, omega, beta = random_tree_problem(rng, 1, n=60, p=3)
    problem.lambda_b = 0.0
    sub = problem.leaf_subproblem(omega, beta, 1, (2, 3), np.arange(3))
    result = ExactLeastSquares().solve(sub)
    assert np.all(np.isfinite(result.x)) and result.objective < 1e-10


def test_sklearn_logistic_solves_the_wlr_proxy(rng):
    n, p = 200, 3
    X = rng.random((n, p))
    c = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5).astype(float)
    wlr = WLRProxy(kernels.split_design(X), c, np.where(c == 1, 1.2, 0.8), 1.0, np.zeros(p + 1),
                   alpha=1.0 / (n * p**2))
    result = SklearnLogistic(max_iter=1000, tol=1e-10).solve(wlr, wlr.start())
    assert np.linalg.norm(wlr.evaluate(result.x)[1]) < 1e-6
    ipopt = IpoptCasadi(tol=1e-12).solve(wlr, wlr.start())
    assert ipopt.objective == pytest.approx(result.objective, abs=1e-8)


def test_oracle_and_symbolic_evaluators_take_the_same_iterates(rng):
    problem, omega, beta = random_tree_problem(rng, 3, n=120)
    sub = problem.branch_subproblem(omega, beta, 1, problem.tree.branch_nodes, np.arange(120))
    for hessian in ("exact", "limited-memory"):  # exact: the compiled Hessian against CasADi's AD
        a = IpoptCasadi(hessian=hessian, evaluator="oracle").solve(sub, sub.start())
        b = IpoptCasadi(hessian=hessian, evaluator="symbolic").solve(sub, sub.start())
        assert a.iterations == b.iterations and a.success and b.success
        np.testing.assert_allclose(a.x, b.x, rtol=1e-6, atol=1e-8)


def test_the_oracle_needs_the_formulations_hessian_for_the_exact_route(rng):
    problem, omega, beta = random_tree_problem(rng, 2, n=60)
    sub = problem.branch_subproblem(omega, beta, 1, problem.tree.branch_nodes, np.arange(60))

    class NoHessian:  # evaluate only: no Hessian of its own, no CasADi rendering
        name, nonsmooth = "no_hessian", ()

        def start(self):
            return sub.start()

        def evaluate(self, x):
            return sub.evaluate(x)

    assert not IpoptCasadi(hessian="exact", evaluator="oracle").accepts(NoHessian())
    result = IpoptCasadi().solve(NoHessian(), sub.start())  # the default degrades to L-BFGS
    assert result.usable() and result.objective <= sub.evaluate(sub.start())[0]


def test_make_solver_errors_list_available():
    with pytest.raises(ValueError, match="available: .*ipopt"):
        make_solver("bn", "nope")
    solver = IpoptCasadi()
    assert make_solver("bn", solver) is solver


class _SignalsItself:
    """A solver during whose solve SIGINT arrives (sent to this very process)."""

    name = "signals-itself"

    def __init__(self, stops_on_interrupt):
        self.stops_on_interrupt = stops_on_interrupt

    def solve(self, problem, x0, *, deadline=None):
        import os
        import signal

        os.kill(os.getpid(), signal.SIGINT)
        return IpoptCasadi().solve(problem, x0)


@pytest.mark.parametrize("stops_on_interrupt", [True, False])
def test_interrupt_is_raised_once_and_forgotten_after_the_solve(rng, stops_on_interrupt):
    import signal

    from srtopt.solvers.base import interrupt_requested, solve_interruptibly

    problem, omega, beta = random_tree_problem(rng, 2)
    sub = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(60))
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        solve_interruptibly(_SignalsItself(stops_on_interrupt), sub, sub.start())
    assert signal.getsignal(signal.SIGINT) is handler and not interrupt_requested()
    result = IpoptCasadi().solve(sub, sub.start())  # a later solve is not stopped by the old Ctrl-C
    assert result.success and result.status == "Solve_Succeeded"
    assert solve_interruptibly(IpoptCasadi(), sub, sub.start()).success


class _Ended(BaseException):
    """What the test's handler of an ending signal raises (the CLI raises its Terminated so)."""


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_inside_an_ipopt_callback_is_handled_after_the_solve(rng, capfd, name):
    """An ending signal that arrives inside one of CasADi's callbacks (here: the oracle's third
    evaluation) does not raise there, where CasADi would print the exception with a dump of its
    inputs and IPOPT carry on: it is recorded, IPOPT stops at its next iteration, and the
    signal's handler raises once the solve has returned."""
    import os
    import signal

    from srtopt.solvers.base import interrupt_requested, solve_interruptibly

    signum = getattr(signal, name)
    problem, omega, beta = random_tree_problem(rng, 2)
    sub = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(60))
    calls, evaluate = [], sub.evaluate
    sub.evaluate = lambda x: calls.append(x) or evaluate(x)
    free = IpoptCasadi().solve(sub, sub.start())
    evaluations = len(calls)

    def evaluate_and_signal(x):
        calls.append(x)
        if len(calls) == evaluations + 3:
            os.kill(os.getpid(), signum)
        return evaluate(x)

    def ended(signum, frame):
        raise _Ended(signum)

    sub.evaluate = evaluate_and_signal
    previous = signal.signal(signum, ended)
    try:
        with pytest.raises(_Ended):
            solve_interruptibly(IpoptCasadi(), sub, sub.start())
        assert signal.getsignal(signum) is ended and not interrupt_requested()
    finally:
        signal.signal(signum, previous)
    out, err = capfd.readouterr()
    assert "CasADi" not in out + err and "Traceback" not in out + err, out + err
    assert free.success and len(calls) - evaluations < evaluations  # IPOPT stopped early


class _SeesHandler:
    """A solver that records the SIGINT handler in force during its solve."""

    name = "sees-handler"

    def __init__(self, python_loop):
        self.python_loop, self.seen = python_loop, None

    def solve(self, problem, x0, *, deadline=None):
        import signal

        self.seen = signal.getsignal(signal.SIGINT)
        return IpoptCasadi().solve(problem, x0)


def test_solvers_with_a_python_loop_run_under_the_callers_sigint_handler(rng):
    """Newton, exact least squares and L-BFGS-B (python_loop) are called directly: no handler swap,
    Ctrl-C raises inside their loop; the others run under the recording handler."""
    import signal

    from srtopt.solvers import make_solver
    from srtopt.solvers.base import solve_interruptibly

    problem, omega, beta = random_tree_problem(rng, 2)
    sub = problem.branch_subproblem(omega, beta, 1, (1,), np.arange(60))
    handler = signal.getsignal(signal.SIGINT)
    direct, recorded = _SeesHandler(True), _SeesHandler(False)
    solve_interruptibly(direct, sub, sub.start())
    solve_interruptibly(recorded, sub, sub.start())
    assert direct.seen is handler and recorded.seen is not handler
    assert signal.getsignal(signal.SIGINT) is handler
    assert [make_solver(kind, spec).python_loop for kind, spec in
            (("bn", "newton"), ("ln", "exact"), ("bn", "l-bfgs-b"), ("bn", "slsqp"))] == [True, True, True, False]
    assert not getattr(make_solver("bn", "ipopt"), "python_loop", False)


@pytest.mark.parametrize("spec", ["l-bfgs-b", "ipopt", "slsqp", "trust-exact", "newton", "prox-gradient"])
def test_a_deadline_that_passes_during_the_solve_stops_the_solver_at_its_next_iteration(rng, spec):
    """The deadline given to solve reaches the solver's loop (IPOPT's iteration callback, SciPy's
    callback, Newton's and the proximal gradient's loops): it passes at the third evaluation of the
    objective (its moment moved, whatever the clock), and the solve returns its current point."""
    from srtopt.solvers import TerminationCondition, make_solver
    from srtopt.solvers.deadline import Deadline

    problem, omega, beta = random_tree_problem(rng, 2)
    sub = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(60))
    solver = make_solver("bn", spec, tol=1e-14)
    free = solver.solve(sub, sub.start())
    deadline, calls, evaluate = Deadline(), [], sub.evaluate

    def evaluate_until_the_deadline(x):
        calls.append(x)
        if len(calls) == 3:
            deadline.at = -np.inf  # the deadline passes now
        return evaluate(x)

    sub.evaluate = evaluate_until_the_deadline
    stopped = solver.solve(sub, sub.start(), deadline=deadline)
    assert free.iterations > 3 and stopped.iterations <= 3, (free.iterations, stopped.iterations)
    assert stopped.termination_condition is TerminationCondition.maxTimeLimit and stopped.usable()
    assert stopped.objective <= sub.value(sub.start())


def test_l_bfgs_b_solves_the_bn_subproblem_in_scaled_variables_and_returns_omega(rng):
    """variable_scale: 1 for omega_0t, p for the slopes; the solution comes back in omega and
    is a stationary point there (the scaling changes the path, not the problem)."""
    problem, omega, beta = random_tree_problem(rng, 2, n=200, p=4)
    sub = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(200))
    assert sub.variable_scale().tolist() == [1.0, 4.0, 4.0, 4.0, 4.0] * 3
    calls = []
    evaluate = sub.evaluate
    sub.evaluate = lambda x: calls.append(np.array(x)) or evaluate(x)
    result = ScipyMinimize("L-BFGS-B", tol=1e-12, max_iter=500).solve(sub, sub.start())
    np.testing.assert_allclose(calls[0], sub.start())  # the problem sees omega, not x / scale
    assert result.objective == pytest.approx(sub.value(result.x), rel=1e-12)
    assert result.objective < sub.value(sub.start())
    assert np.linalg.norm(sub.evaluate(result.x)[1]) < 1e-5


class _DoubleWell:
    """f(x) = x_0^4 / 4 - x_0^2 / 2 + x_1^2: the Hessian is indefinite for |x_0| < 1/sqrt(3)."""

    nonsmooth = ()

    def evaluate(self, x):
        return x[0] ** 4 / 4 - x[0] ** 2 / 2 + x[1] ** 2, np.array([x[0] ** 3 - x[0], 2 * x[1]])

    def hessian(self, x):
        return np.diag([3 * x[0] ** 2 - 1, 2.0])


def test_newton_takes_a_modified_step_where_the_hessian_is_indefinite():
    """From a point where the Hessian has a negative eigenvalue the pure Newton step would go
    uphill (towards the maximum at 0); the modified step descends to a minimum x_0 = 1."""
    from srtopt.solvers import make_solver
    from srtopt.solvers.newton import _newton_step

    problem, x0 = _DoubleWell(), np.array([0.2, 0.5])
    f0, g0 = problem.evaluate(x0)
    step = _newton_step(problem.hessian(x0), g0)
    assert g0 @ step > 0  # -step is a descent direction
    result = make_solver("bn", "newton").solve(problem, x0)
    assert result.success and result.x == pytest.approx([1.0, 0.0], abs=1e-5)  # decrement below 1e-12
    assert result.objective == pytest.approx(-0.25, abs=1e-11) and result.objective < f0
    with pytest.raises(np.linalg.LinAlgError, match="non-finite"):  # a failed solve: the BN step falls back
        _newton_step(np.full((2, 2), np.nan), g0)


class _WholeHessian:
    """A formulation's value, gradient and Hessian, without its ``hessian_blocks``."""

    def __init__(self, formulation):
        self.evaluate, self.hessian, self.start = formulation.evaluate, formulation.hessian, formulation.start


def test_newton_factorizes_a_block_diagonal_hessian_block_by_block_to_the_same_steps():
    """An LN subproblem of logistic leaves separates by leaf: Newton's steps from its per-leaf blocks are
    the steps of the whole block-diagonal Hessian, iterate for iterate, and reach a stationary point."""
    from srtopt.bases import LinearBasis
    from srtopt.models.leaves import ClassLeaves
    from srtopt.models.srt import SRTProblem
    from srtopt.models.terms.class_losses import LogLoss
    from srtopt.solvers import NewtonSolver
    from srtopt.tree import Tree

    rng = np.random.default_rng(4)
    X, y = rng.random((80, 3)), rng.integers(0, 3, 80)
    problem = SRTProblem(X, y, Tree(2), mu=1.0, lambda_w=0.05, lambda_b=0.02, leaves=ClassLeaves(LogLoss(), 3,
                                                                                                   LinearBasis(3)))
    omega, beta = rng.standard_normal((3, 4)), np.zeros((4, 12))
    sub = problem.leaf_subproblem(omega, beta, 1, (4, 5, 6, 7), np.arange(80))
    blocks = sub.hessian_blocks(sub.start())
    assert blocks.shape == (4, 12, 12)
    for iterations in (1, 3):
        by_blocks = NewtonSolver(max_iter=iterations).solve(sub, sub.start())
        whole = NewtonSolver(max_iter=iterations).solve(_WholeHessian(sub), sub.start())
        np.testing.assert_allclose(by_blocks.x, whole.x, rtol=1e-10, atol=1e-12)
    solved = NewtonSolver().solve(sub, sub.start())
    assert solved.status == "solved" and np.linalg.norm(sub.evaluate(solved.x)[1]) < 1e-6  # decrement 1e-12


def test_auto_bn_solver_is_newton_on_one_node_or_small_subtrees_and_l_bfgs_b_above(rng):
    """The default BN solver: exact-Hessian Newton on the one-node subproblems of NODEC-DR's
    working sets (any size) and on subtree ones of at most 64 variables and 3000 rows,
    L-BFGS-B on the larger subtree ones (their Hessians cost more than they save)."""
    from srtopt.solvers import Auto, make_solver

    problem, omega, beta = random_tree_problem(rng, 2, n=40, p=30)
    rows = np.arange(40)
    one, two, three = (problem.branch_subproblem(omega, beta, 1, working, rows)
                       for working in ((1,), (1, 2), (1, 2, 3)))
    auto = make_solver("bn", "auto")
    assert [auto.choose(sub).name for sub in (one, two, three)] == ["newton", "newton", "l-bfgs-b"]  # 31, 62, 93
    verdict = make_solver("bn", "newton:max_variables=64").accepts(three)
    assert not verdict and "93 variables, more than max_variables=64" in verdict.reason
    verdict = make_solver("bn", "newton:max_blocks=1").accepts(two)
    assert not verdict and "2 nodes" in verdict.reason
    assert make_solver("bn", "newton").accepts(three)  # the Hessian exists for any working set
    many, omega, beta = random_tree_problem(rng, 2, n=3001, p=2)
    big = many.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(3001))  # 9 variables
    assert auto.choose(big).name == "l-bfgs-b"
    verdict = make_solver("bn", "newton:max_rows=3000").accepts(big)
    assert not verdict and "3001 rows, more than max_rows=3000" in verdict.reason
    previous = Auto("bn", specs=["newton:max_blocks=1,needs_minimizer=True,penalties=l2", "l-bfgs-b"])
    assert [previous.choose(sub).name for sub in (one, two, three)] == ["newton", "l-bfgs-b", "l-bfgs-b"]
    with pytest.raises(ValueError, match="specs must be a non-empty list"):
        Auto("bn", specs="l-bfgs-b")


def test_auto_bn_solver_leaves_plain_srt_to_l_bfgs_b(rng):
    """Without an l2 term on the splits the BN subproblem has no minimizer: "auto" does not
    hand it to Newton (which would run the splits to saturation)."""
    from srtopt.solvers import make_solver

    problem, omega, beta = random_tree_problem(rng, 2)
    for lambda_w, expected in ((0.0, "l-bfgs-b"), (1e-4, "newton")):
        problem.lambda_w = lambda_w
        sub = problem.branch_subproblem(omega, beta, 1, (1,), np.arange(60))
        assert sub.has_minimizer is (lambda_w > 0)
        assert make_solver("bn", "auto").choose(sub).name == expected
    problem.lambda_w = 0.0
    verdict = make_solver("bn", "newton:needs_minimizer=True").accepts(
        problem.branch_subproblem(omega, beta, 1, (1,), np.arange(60)))
    assert not verdict and "no minimizer" in verdict.reason


def test_auto_bn_solver_leaves_feature_l1_to_l_bfgs_b(rng):
    """feature_l1's majorizer gives the BN subproblem a Hessian too, but "auto" keeps Newton to
    the SRT l2 model (penalties=l2): the majorized paths were measured with L-BFGS-B."""
    from srtopt.models.terms import FeatureL1
    from srtopt.solvers import make_solver

    problem, omega, beta = random_tree_problem(rng, 2)
    problem.penalties = (FeatureL1(0.01),)
    sub = problem.branch_subproblem(omega, beta, 1, (1,), np.arange(60))
    assert sub.penalty_names() == ("l2", "feature_l1") and callable(sub.hessian)
    assert make_solver("bn", "auto").choose(sub).name == "l-bfgs-b"
    verdict = make_solver("bn", "newton:penalties=l2").accepts(sub)
    assert not verdict and "feature_l1" in verdict.reason
    assert make_solver("bn", "newton").accepts(sub)


@pytest.mark.parametrize("spec", [("ln_solver", "qpoases"), ("ln_solver", "osqp"), ("ln_solver", "highs"),
                                  ("bn_solver", "ipopt")])
def test_no_solver_prints_unless_asked(spec, capfd):
    """qpOASES prints a licence banner when built and OSQP a note per solve, from C: dropped unless
    verbose asks (IPOPT's banner too)."""
    from srtopt import SoftRegressionTree

    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    SoftRegressionTree(depth=2, max_iter=2, random_state=0, **dict([spec])).fit(X, np.sin(4 * X[:, 0]) + X[:, 1])
    assert capfd.readouterr() == ("", "")
