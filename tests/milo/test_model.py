"""MILO formulation: sizes, routing, big-M validity, feasibility of tree points, export.

No MILP solve happens here (those live in tests/estimators/test_milo.py).
"""

import pickle
import re

import numpy as np
import pytest

from srtopt.milo.model import MILOSolution, MILOTree
from srtopt.milo.objective import feature_epsilons, route
from srtopt.tree import Tree


def _data(rng, n=20, p=3):
    X = rng.random((n, p))
    X[0], X[1] = 0.0, 1.0  # hit the bounds of [0, 1]
    y = rng.standard_normal(n)
    return X, (y - y.mean()) / y.std()


def _random_tree(rng, X, depth, B, B0, drop=()):
    tree = Tree(depth)
    p = X.shape[1]
    feats = rng.integers(0, p, tree.n_branch)
    thr = rng.random(tree.n_branch)
    for t in drop:  # non-splitting node: its whole subtree too
        for s in tree.subtree_branch(t):
            feats[s - 1] = -1
    leaf = route(X, feats, thr, depth)
    # smallest right value keeps x + eps <= b for the left points (as in the estimator)
    sol = MILOSolution(feats, thr, rng.uniform(-B0, B0, tree.n_leaves),
                       rng.choice([-B, B], (tree.n_leaves, p)), leaf)
    return sol


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_sizes_match_the_documented_formula(rng, depth):
    X, y = _data(rng)
    N, p = X.shape
    m = MILOTree(X, y, depth)
    nb, nl = 2**depth - 1, 2**depth
    assert m.n_binaries == p * nb + nb + N * nl
    assert m.n_variables == m.n_binaries + nb + nl * (2 * p + 1) + N
    n_route = N * sum(len(m.tree.ancestors_left(t)) + len(m.tree.ancestors_right(t)) for t in m.tree.leaves)
    assert n_route == N * nl * depth
    expected = 2 * nb + (nb - 1) + N + n_route + 2 * N * nl + 2 * p * nl
    assert m.n_constraints == expected
    assert m.sizes()["constraints"] == expected


def test_route_by_hand():
    # depth 2: root splits on x0 at 0.5, node 2 on x1 at 0.3, node 3 does not split
    feats = np.array([0, 1, -1])
    thr = np.array([0.5, 0.3, 0.0])
    X = np.array([[0.2, 0.1], [0.2, 0.3], [0.5, 0.0], [0.9, 0.9], [0.4999, 0.2999]])
    # x0 < 0.5 left; then x1 < 0.3 left (leaf 4) else leaf 5; node 3 sends right (leaf 7)
    assert route(X, feats, thr, 2).tolist() == [4, 5, 7, 7, 4]


def test_feature_epsilons():
    X = np.array([[0.0, 0.5], [0.25, 0.5], [1.0, 0.5], [0.25, 0.5]])
    eps, ok = feature_epsilons(X)
    assert eps[0] == pytest.approx(0.25) and ok.tolist() == [True, False]
    assert eps[1] == 1.0
    tiny = np.array([[0.0], [1e-7], [1.0]])
    assert feature_epsilons(tiny)[0][0] == pytest.approx(1e-7)
    assert feature_epsilons(tiny, 1e-5)[0][0] == 1e-5  # floored above solver tolerances


@pytest.mark.parametrize("seed", range(6))
def test_any_tree_with_extreme_coefficients_is_feasible(seed):
    """Big-M validity: every tree whose coefficients sit at their bounds, with
    every residual it produces, is a feasible point of the MILP (so no big-M
    cuts off a tree)."""
    rng = np.random.default_rng(seed)
    X, y = _data(rng, n=15, p=3)
    for depth in (1, 2, 3):
        m = MILOTree(X, y, depth, coef_bound=2.0, l1=0.01, cp=0.1)
        tree = Tree(depth)
        drop = (2,) if depth >= 2 and seed % 2 else ()
        sol = _random_tree(rng, X, depth, m.coef_bound, m.intercept_bound, drop)
        # make the thresholds MILP-representable (the estimator does the same)
        sol = m.snap_thresholds(sol)
        assert np.array_equal(route(X, sol.features, sol.thresholds, depth), sol.leaf)
        m.set_solution(sol)
        assert m.max_violation() <= 1e-9
        # the objective of the point is the tree's MAE + penalties
        rows = tree.leaf_rows(sol.leaf)
        pred = sol.beta0[rows] + np.einsum("ij,ij->i", X, sol.beta[rows])
        expected = np.abs(y - pred).mean() + 0.01 * np.abs(sol.beta).sum() + 0.1 * (sol.features >= 0).sum()
        assert m.objective_value() == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_left_routing_at_a_non_splitting_node_is_infeasible(rng):
    """Without the (1 - d_m) term of route_left, a node with d = 0 could send
    points left (0 <= 0): check the MILP forbids it."""
    X, y = _data(rng, n=10, p=2)
    m = MILOTree(X, y, 2)
    feats = np.array([0, -1, -1])
    thr = np.array([0.5, 0.0, 0.0])
    leaf = route(X, feats, thr, 2)
    assert set(leaf) <= {5, 7}
    sol = MILOSolution(feats, thr, np.zeros(4), np.zeros((4, 2)), leaf)
    m.set_solution(m.snap_thresholds(sol))
    assert m.max_violation() <= 1e-9
    bad = leaf.copy()
    bad[bad == 5] = 4  # left at node 2, which does not split
    m.set_solution(MILOSolution(feats, m.snap_thresholds(sol).thresholds, np.zeros(4), np.zeros((4, 2)), bad))
    assert m.max_violation() >= 1 - 1e-9


def test_wrong_side_of_a_threshold_is_infeasible(rng):
    X, y = _data(rng, n=12, p=2)
    m = MILOTree(X, y, 1)
    b = float(np.median(X[:, 0]))
    leaf = route(X, np.array([0]), np.array([b]), 1)
    flipped = leaf.copy()
    i = int(np.argmax(X[:, 0] < b))
    flipped[i] = 3
    m.set_solution(MILOSolution(np.array([0]), np.array([b]), np.zeros(2), np.zeros((2, 2)), flipped))
    assert m.max_violation() > 1e-6


def test_min_samples_leaf_adds_leaf_indicators(rng):
    X, y = _data(rng, n=10, p=2)
    m = MILOTree(X, y, 2, min_samples_leaf=3)
    assert m.n_binaries == 2 * 3 + 3 + 10 * 4 + 4
    assert hasattr(m.model, "leaf_min")


def test_constant_feature_cannot_split(rng):
    X, y = _data(rng, n=10, p=3)
    X[:, 1] = 0.0
    m = MILOTree(X, y, 2)
    assert all(m.model.a[1, t].ub == 0 for t in m.tree.branch_nodes)
    assert m.model.a[0, 1].ub == 1


def test_rejects_unscaled_x(rng):
    X, y = _data(rng)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        MILOTree(X * 3, y, 2)
    with pytest.raises(ValueError, match="lengths"):
        MILOTree(X, y[:-1], 2)
    with pytest.raises(ValueError, match="depth"):
        MILOTree(X, y, 0)


def test_big_m_constants_are_reported(rng):
    X, y = _data(rng)
    m = MILOTree(X, y, 2, coef_bound=3.0)
    bm = m.big_m()
    assert bm["route_right"] == 1.0
    assert bm["route_left"] == pytest.approx(1.0 + m.eps.max())
    assert bm["intercept_bound"] == pytest.approx(np.abs(y).max() + 3.0 * X.shape[1])
    assert bm["residual_max"] == pytest.approx(
        (m.intercept_bound + 3.0 * X.sum(axis=1) + np.abs(y)).max()
    )


def test_export_lp_and_mps(rng, tmp_path):
    X, y = _data(rng, n=12, p=2)
    m = MILOTree(X, y, 2)
    lp = m.write(tmp_path / "milo.lp")
    mps = m.write(tmp_path / "milo.mps")
    lp_text = open(lp).read()
    mps_text = open(mps).read()
    # MPS: one column per variable in the COLUMNS section
    cols = mps_text.split("COLUMNS")[1].split("RHS")[0]
    names = {line.split()[0] for line in cols.splitlines()
             if line.strip() and "MARKER" not in line and not line.startswith("*")}
    assert len(names) == m.n_variables
    # LP: the binary section lists exactly the binaries
    binary = re.split(r"\nbinary\n", lp_text)[1].split("\nend")[0]
    assert len(binary.split()) == m.n_binaries
    assert "z(" in lp_text or "z[" in lp_text
    with pytest.raises(ValueError, match="format"):
        m.write(tmp_path / "milo.txt")


def test_pickle_keeps_values(rng):
    X, y = _data(rng, n=10, p=2)
    m = MILOTree(X, y, 2)
    sol = m.snap_thresholds(_random_tree(rng, X, 2, m.coef_bound, m.intercept_bound))
    m.set_solution(sol)
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.objective_value() == pytest.approx(m.objective_value())
    got = m2.get_solution()
    assert np.array_equal(got.leaf, sol.leaf)
    assert np.array_equal(got.features, sol.features)


@pytest.mark.parametrize("loss", ["absolute", "squared"])
def test_every_tree_at_least_as_good_as_the_cutoff_is_feasible(loss):
    """The bounds derived from a cutoff E_inc (coefficients, intercepts, residual big-Ms) cut
    off only worse trees: trees with their exact leaf fits and E <= E_inc are feasible."""
    from srtopt.milo.objective import AxisObjective, tree_objective

    rng = np.random.default_rng(3)
    X, y = _data(rng, n=40, p=3)
    objective = AxisObjective(loss, l1=1e-3)
    trees = [(rng.integers(0, 3, 3), rng.random(3)) for _ in range(6)]
    values = [tree_objective(objective, X, y, f, b, 2) for f, b in trees]
    cutoff = max(v for v, _ in values)
    m = MILOTree(X, y, 2, loss=loss, l1=1e-3, cutoff=cutoff)
    assert m.coef_bound == pytest.approx(cutoff / 1e-3)
    for (features, thresholds), (value, coef) in zip(trees, values):
        sol = m.snap_thresholds(MILOSolution(features, thresholds, coef[:, 0], coef[:, 1:],
                                             route(X, features, thresholds, 2)))
        m.set_solution(sol)
        assert m.max_violation() <= 1e-9
        assert m.objective_value() == pytest.approx(value, rel=1e-9)


def test_squared_loss_model_is_quadratic():
    from pyomo.repn.standard_repn import generate_standard_repn

    rng = np.random.default_rng(4)
    X, y = _data(rng, n=10, p=2)
    m = MILOTree(X, y, 1, loss="squared", l2=0.5)
    repn = generate_standard_repn(m.model.obj.expr, quadratic=True)
    assert len(repn.quadratic_vars) == 10 + 2 * 2  # r_i^2 of 10 rows, beta_jt^2 of 2 leaves x 2 features
    with pytest.raises(ValueError, match="l2 > 0 needs loss='squared'"):
        MILOTree(X, y, 1, l2=0.5)
