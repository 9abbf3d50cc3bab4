import numpy as np
import pytest

from srtopt import kernels
from srtopt.models.srt import SRTProblem
from srtopt.solvers import ExactLeastSquares, IpoptCasadi, NewtonSolver, SklearnLogistic
from srtopt.training.initialization import cluster_initialization
from srtopt.training.nodec import MaxMacroIterations, NodecGS
from srtopt.training.nodec_dr import BranchStep, LeafStep, Thresholds
from srtopt.training.working_sets import subtree_working_sets
from srtopt.tree import Tree

from ..conftest import sklearn_data


def scaled(name, n=None, p=6):
    X, y = sklearn_data(name, n, p)
    span = np.where(np.ptp(X, 0) > 0, np.ptp(X, 0), 1)
    return (X - X.min(0)) / span, (y - y.mean()) / y.std()


def nodec_dr(k0, max_iter=3):
    thresholds = Thresholds()
    return NodecGS(subtree_working_sets,
                   BranchStep(IpoptCasadi(), SklearnLogistic(), thresholds, theta_w=0.1, k0=k0),
                   LeafStep(ExactLeastSquares(), theta_b=0.1, k0=k0),
                   MaxMacroIterations(max_iter), thresholds.decay)


def test_working_sets_follow_the_paper():
    sets = list(subtree_working_sets(Tree(3)))
    assert len(sets) == 7  # 2^D - 1 inner iterations per macro iteration
    assert sets[0] == (1, (1,), ())
    assert sets[2] == (3, (3, 6, 7), (12, 13, 14, 15))
    assert list(subtree_working_sets(Tree(1))) == [(1, (1,), (2, 3))]


@pytest.mark.parametrize("name,depth,seed", [("friedman", 2, 0), ("diabetes", 2, 1), ("diabetes", 3, 2)])
def test_safeguards_make_E_monotone(name, depth, seed):
    X, y = scaled(name)
    problem = SRTProblem(X, y, Tree(depth), 1.0, 2 / (X.shape[1] * (2**depth - 1)), 2 / (X.shape[1] * 2**depth))
    omega, beta, _ = cluster_initialization(problem, 3, seed)
    result = nodec_dr(k0=0).run(problem, omega, beta)
    E = [result.history[0].E_before] + [r.E_after for r in result.history]
    assert all(b <= a + 1e-12 for a, b in zip(E, E[1:])), E
    assert all(r.E_after_bn <= r.E_before + 1e-12 for r in result.history)
    assert result.objective == pytest.approx(min(E))


def test_without_safeguards_the_best_iterate_is_returned():
    X, y = scaled("friedman")
    problem = SRTProblem(X, y, Tree(2), 1.0, 0.0, 0.0)
    omega, beta, _ = cluster_initialization(problem, 3, 0)
    result = nodec_dr(k0=None, max_iter=4).run(problem, omega, beta)
    E = [r.E_after for r in result.history]
    assert result.objective == pytest.approx(min(E + [problem.objective(omega, beta)]))
    assert problem.objective(result.omega, result.beta) == pytest.approx(result.objective)
    assert len(result.history) == 4 * 3 and result.n_macro == 4 and result.stopped_by == "max_iter"
    assert {r.bn["update"] for r in result.history} & {"heuristic-wlr", "heuristic-nlp"}


def test_ln_step_zeroes_the_working_set_gradient(rng):
    X, y = scaled("diabetes", 200)
    problem = SRTProblem(X, y, Tree(2), 1.0, 0.01, 0.02)
    omega, beta, _ = cluster_initialization(problem, 2, 0)
    for k0, rows in ((0, None), (None, "I_t")):
        new_beta, info, _ = LeafStep(theta_b=0.0, k0=k0)(problem, omega, beta, 2, (4, 5), k=1)
        if rows is None:  # safeguarded: the full objective's gradient
            g = problem.objective(omega, new_beta, with_grad=True)[2][[0, 1]]
        else:  # proxy on I_t and the subtree of t
            I_t = np.flatnonzero(kernels.hbp_contains(problem.hbp_leaves(omega), problem.tree, 2))
            sub = problem.leaf_subproblem(omega, new_beta, 2, (4, 5), I_t)
            g = sub.evaluate(sub.start())[1]
        assert np.linalg.norm(g) < 1e-9


def test_initialization_separates_the_clusters():
    X = np.vstack([np.random.default_rng(0).random((40, 2)) * 0.2 + c for c in (0.0, 0.8)])
    y = np.r_[np.zeros(40), np.ones(40)]
    problem = SRTProblem(X, y, Tree(1), 1.0)
    omega, beta, db = cluster_initialization(problem, 4, 0)
    leaves = problem.hbp_leaves(omega)
    assert np.isfinite(db)
    assert len(set(leaves[:40])) == 1 and len(set(leaves[40:])) == 1 and leaves[0] != leaves[-1]
    np.testing.assert_allclose(kernels.hbp_predict(X, omega, beta, problem.tree), y, atol=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reassignment_reopens_a_node_that_sends_every_row_one_way(seed):
    """Root sending all rows left, residuals without linear structure: the WLR of the
    reassignment heuristic (eps3 = 40% of the rows relabelled right) reopens the node
    with class weights balanced on the relabelled classes; with the weights of the
    current routing (all equal) the majority label still wins most rows."""
    rng = np.random.default_rng(seed)
    X = rng.random((1000, 5))
    y = np.sin(6 * X[:, 0]) * X[:, 1] + 0.5 * rng.standard_normal(1000)
    problem = SRTProblem(X, (y - y.mean()) / y.std(), Tree(2), 1.0, 1e-6, 1e-5)
    omega = np.zeros((3, 6))
    omega[0, 0] = 5.0  # u = 5 for every row: all go left
    beta = np.zeros((4, 6))

    def left_share(weights):
        step = BranchStep(IpoptCasadi(), NewtonSolver(), Thresholds(0.1, 0.3, 0.4, 0.8), wlr_weights=weights)
        candidate, info, _ = step.update_branch_node(problem, omega, beta, 1, (1,))
        assert info["update"] == "heuristic-wlr"
        return np.mean(problem.hbp_leaves(candidate) < 6)

    assert 0.35 < left_share("labels") < 0.65
    assert left_share("routing") > 0.7


def test_the_termination_test_stops_at_the_iteration_limit_or_the_deadline():
    from srtopt.solvers.deadline import Deadline

    assert MaxMacroIterations(2)(2, []) == "max_iter"
    assert MaxMacroIterations(10)(2, []) is None  # no deadline: never "time_limit"
    assert MaxMacroIterations(10, Deadline(0))(0, []) == "time_limit"
    assert MaxMacroIterations(10, Deadline(3600))(0, []) is None


def record(macro, E_before, E_after, update="heuristic-nlp"):
    from srtopt.training.nodec import InnerIteration

    return InnerIteration(macro, 0, 1, (1,), (), E_before, E_after, E_after, {"update": update}, {"update": "none"})


@pytest.mark.parametrize("last, stops", [(0.8999, "tol"), (0.85, None)])
def test_tol_stops_when_a_macro_iteration_barely_lowers_the_best_E(last, stops):
    """best E 0.9 after macro 0; macro 1 reaches 0.8999 (1.1e-4 relative: below tol = 1e-3) or 0.85."""
    history = [record(0, 1.0, 0.95), record(0, 0.95, 0.9), record(1, 0.9, 0.92), record(1, 0.92, last)]
    assert MaxMacroIterations(10, tol=1e-3)(2, history) == stops
    assert MaxMacroIterations(10)(2, history) is None  # no tol: max_iter alone


def test_tol_does_not_stop_after_a_macro_iteration_whose_steps_were_all_skipped():
    """The first macro iteration's steps may all fall under the thresholds theta^0 = 1: E unchanged, not a stall."""
    history = [record(0, 1.0, 1.0, update="skipped")]
    assert MaxMacroIterations(10, tol=1e-3)(1, history) is None
    assert MaxMacroIterations(10, tol=1e-3)(1, [record(0, 1.0, 1.0)]) == "tol"
