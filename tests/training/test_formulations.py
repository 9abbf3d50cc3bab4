"""Training with any loss, penalty and working-set rule: the safeguards keep E non-increasing,
nonsmooth penalties give exact zeros, callbacks see the state and stop the run cleanly."""

import casadi as ca
import numpy as np
import pytest

from srtopt import ORRTRegressor, SoftRegressionTree
from srtopt.solvers import SolverResult
from srtopt.training.callbacks import Callback
from srtopt.training.initialization import WarmStart
from srtopt.training.working_sets import make_working_sets, subproblem_root
from srtopt.tree import Tree

from ..conftest import pairwise, sklearn_data

LOSSES = ["squared", "huber", "absolute", lambda r: ca.log(ca.cosh(r))]
PENALTIES = [None, "split_l1:strength=1e-3", "feature_l1:strength=1e-3,relax=False"]  # the l1 fit itself


def sibling_pairs(tree):
    """A user's rule: the two children of every branch node above the last level, then the root."""
    for t in tree.branch_nodes:
        if tree.is_branch(2 * t):
            yield t, (2 * t, 2 * t + 1), ()
    yield 1, (1,), tree.leaves


RULES = ["subtree", "all", "paths", sibling_pairs]


@pytest.fixture(scope="module", params=["friedman", "diabetes"])
def data(request):
    X, y = sklearn_data(request.param)
    rows = np.random.default_rng(0).choice(len(y), 90, replace=False)
    return X[rows], y[rows]


def _E(history):
    return [history[0]["E_before"]] + [r["E_after"] for r in history]


# 96 combinations (0.1-1 s each): the quick loop runs the 16 that take every pair of values of any two
# of the four (pairwise), the full run all of them
@pytest.mark.parametrize("data, loss, penalty, rule", pairwise(
    ["friedman", "diabetes"], LOSSES, PENALTIES, RULES,
    ids=[["friedman", "diabetes"], ["squared", "huber", "absolute", "user-logcosh"], ["l2", "split_l1", "feature_l1"],
         ["subtree", "all", "paths", "user"]]), indirect=["data"])
def test_safeguards_keep_E_non_increasing(data, loss, penalty, rule):
    model = SoftRegressionTree(depth=2, max_iter=2, n_init=1, k0=0, loss=loss, penalty=penalty, working_sets=rule,
                               leaf_ridge=1.0, random_state=0).fit(*data)
    E = _E(model.history_)
    assert len(E) > 2
    for record in model.history_:
        assert record["E_after_bn"] <= record["E_before"] + 1e-12, record
        assert record["E_after"] <= record["E_after_bn"] + 1e-12, record
    assert all(b <= a + 1e-12 for a, b in zip(E, E[1:])), E
    assert E[-1] < E[0] and model.objective_ == pytest.approx(min(E))


def test_working_set_rules_and_their_subproblem_roots():
    tree = Tree(3)
    assert list(make_working_sets("all")(tree)) == [(1, tree.branch_nodes, tree.leaves)]
    paths = list(make_working_sets("paths")(tree))
    assert len(paths) == 8 and paths[5] == (6, (1, 3, 6), (13,))
    assert subproblem_root(tree, 6, (1, 3, 6), (13,)) == 1
    assert subproblem_root(tree, 3, tree.subtree_branch(3), tree.descendants_leaves(3)) == 3
    assert subproblem_root(tree, 2, (4, 5), ()) == 2
    with pytest.raises(ValueError, match="not \\(branch node"):
        list(make_working_sets(lambda tree: [(1, (), ())])(tree))
    with pytest.raises(ValueError, match="unknown working_sets 'rows'"):
        make_working_sets("rows")


def test_path_rule_solves_subproblems_that_are_not_subtrees(data):
    seen = []
    SoftRegressionTree(depth=2, max_iter=1, n_init=1, working_sets="paths", random_state=0, eps1=0.0,
                       callbacks=[lambda state: seen.append((state.W_B, state.solves))]).fit(*data)
    bn = [(W_B, s.subproblem) for W_B, solves in seen for s in solves if s.kind == "bn"]
    assert bn and all(sub.root == 1 and sub.working == W_B and len(W_B) == 2 for W_B, sub in bn)


def test_split_l1_gives_exact_zeros_and_fewer_features_per_split(data):
    dense = SoftRegressionTree(depth=2, random_state=0).fit(*data)
    sparse = SoftRegressionTree(depth=2, random_state=0, penalty="split_l1:strength=1e-3",
                                init=WarmStart.from_estimator(dense)).fit(*data)
    assert np.count_nonzero(sparse.omega_[:, 1:]) < np.count_nonzero(dense.omega_[:, 1:])
    assert np.any(sparse.omega_[:, 1:] == 0.0)


def test_feature_l1_removes_features_from_every_split_and_leaf(data):
    X, y = data
    X = np.hstack([X, np.random.default_rng(1).random((len(y), 4))])  # noise columns
    model = SoftRegressionTree(depth=2, random_state=0, k0=0, leaf_ridge=1.0,  # the l1 fit itself, unrelaxed
                               penalty="feature_l1:strength=0.03,relax=False").fit(X, y)
    removed = np.all(model.omega_[:, 1:] == 0.0, axis=0) & np.all(model.beta_[:, 1:] == 0.0, axis=0)
    assert removed.sum() >= 4
    zeroing = [r["bn"] for r in model.history_ if r["bn"].get("update") == "group-zeroing"]
    assert len(zeroing) == model.n_iter_ and any(info["zeroed_features"] for info in zeroing)


class Recorder(Callback):
    """Records the hooks in order and stops the run after inner iteration ``stop_at``."""

    def __init__(self, stop_at):
        self.stop_at, self.calls, self.states = stop_at, [], []

    def on_fit_begin(self, problem, estimator):
        self.calls.append("fit_begin")

    def on_run_begin(self, state):
        self.calls.append("run_begin")

    def on_inner_iteration(self, state):
        self.calls.append("inner")
        self.states.append((state.k, state.t, state.W_B, state.W_L, [(s.kind, s.subproblem, s.result)
                                                                      for s in state.solves],
                            state.problem.objective(state.omega, state.beta) == state.record.E_after == state.E))
        if state.k == self.stop_at:
            state.stop("enough")

    def on_macro_end(self, state):
        self.calls.append("macro_end")

    def on_run_end(self, state, result):
        self.calls.append("run_end")

    def on_fit_end(self, estimator):
        self.calls.append("fit_end")


def test_a_callback_sees_the_state_and_stops_the_fit_cleanly(data):
    recorder = Recorder(stop_at=4)
    model = SoftRegressionTree(depth=2, max_iter=5, n_init=1, random_state=0, callbacks=[recorder]).fit(*data)
    assert model.stopped_by_ == "enough" and len(model.history_) == 5
    assert recorder.calls == ["fit_begin", "run_begin"] + ["inner"] * 3 + ["macro_end"] + ["inner"] * 2 \
        + ["macro_end", "run_end", "fit_end"]
    k, t, W_B, W_L, solves, _ = recorder.states[1]
    assert (k, t, W_B, W_L) == (1, 2, (2,), (4, 5))
    kinds = [kind for kind, _, _ in solves]
    assert kinds[-1] == "ln" and kinds[0] in ("bn", "wlr")
    assert all(isinstance(result, SolverResult) and sub is not None for _, sub, result in solves)
    assert all(consistent for *_, consistent in recorder.states)  # the state's iterate is the record's
    assert model.objective_ == min(_E(model.history_)) and np.isfinite(model.predict(data[0])).all()


def test_plain_callables_get_the_state(data):
    ks = []  # one run (leaf_ridge=1: no continued run with a leaf-ridge factor, which starts at k = 0 again)
    SoftRegressionTree(depth=2, max_iter=1, n_init=1, random_state=0, leaf_ridge=1.0,
                       callbacks=[lambda s: ks.append(s.k)]).fit(*data)
    assert ks == [0, 1, 2]


@pytest.mark.parametrize("loss,penalty", [("huber", None), ("squared", "split_l1:strength=1e-3"),
                                          ("absolute", "feature_l1:strength=1e-3")])
def test_orrt_takes_the_same_terms(data, loss, penalty):
    model = ORRTRegressor(depth=2, mu=1.0, max_iter=60, loss=loss, penalty=penalty, random_state=0).fit(*data)
    assert np.isfinite(model.objective_) and model.score(*data) > 0.3
    if penalty and penalty.startswith("split_l1"):
        assert np.any(model.omega_[:, 1:] == 0.0)
