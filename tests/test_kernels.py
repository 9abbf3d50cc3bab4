import numpy as np
import pytest
from scipy.optimize import approx_fprime
from scipy.special import expit

from srtopt import kernels, srt_objective
from srtopt.tree import Tree
from srtopt.view import oblique_reach

from .conftest import random_tree_problem


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_gradient_matches_finite_differences(rng, depth):
    problem, omega, beta = random_tree_problem(rng, depth)
    f, g_w, g_b = problem.objective(omega, beta, with_grad=True)
    x = np.concatenate([omega.ravel(), beta.ravel()])

    def E(z):
        return problem.objective(z[: omega.size].reshape(omega.shape), z[omega.size:].reshape(beta.shape))

    fd = approx_fprime(x, E, 1e-7)
    np.testing.assert_allclose(np.concatenate([g_w.ravel(), g_b.ravel()]), fd, atol=2e-6)


def test_objective_equals_direct_formula(rng):
    """eq. (obj) written out term by term for a depth-2 tree."""
    X, y = rng.random((7, 2)), rng.standard_normal(7)
    omega, beta = rng.standard_normal((3, 3)), rng.standard_normal((4, 3))
    mu, lw, lb = 1.7, 0.3, 0.2
    F = lambda u: 1 / (1 + np.exp(-mu * u))
    total = 0.0
    for x, yi in zip(X, y):
        p = [F(omega[t, 0] + omega[t, 1:] @ x / 2) for t in range(3)]
        P = [p[0] * p[1], p[0] * (1 - p[1]), (1 - p[0]) * p[2], (1 - p[0]) * (1 - p[2])]
        total += sum(P[l] * (beta[l, 0] + beta[l, 1:] @ x - yi) ** 2 for l in range(4))
    expected = total / 7 + lw / 2 * np.sum(omega**2) + lb / 2 * np.sum(beta**2)
    assert srt_objective(X, y, omega, beta, mu, lw, lb) == pytest.approx(expected, rel=1e-12)


def test_hbp_routing_by_hand_ties_go_left():
    tree = Tree(2)
    # p = 1 feature; split u_t = omega_0t + omega_1t * x
    omega = np.array([[-0.5, 1.0],    # root: left iff x >= 0.5
                      [-0.75, 1.0],   # node 2: left iff x >= 0.75
                      [0.0, -1.0]])   # node 3: left iff x <= 0
    X = np.array([[0.9], [0.75], [0.6], [0.5], [0.3], [0.0]])
    leaves = kernels.hbp_leaves(kernels.split_design(X), omega, tree)
    # 0.75 and 0.5 sit exactly on a split (u = 0): ties go left
    assert leaves.tolist() == [4, 4, 5, 5, 7, 6]
    beta = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 10.0]])
    pred = kernels.hbp_predict(X, omega, beta, tree)
    assert pred.tolist() == [1.0, 1.0, 2.0, 2.0, 4.0 + 3.0, 3.0]


def test_hbp_contains_matches_paths():
    tree = Tree(3)
    leaves = np.array(tree.leaves)
    assert kernels.hbp_contains(leaves, tree, 3).tolist() == [False] * 4 + [True] * 4
    assert kernels.hbp_contains(leaves, tree, 5).tolist() == [False] * 2 + [True] * 2 + [False] * 4


def test_saturated_sigmoid_is_finite():
    Z = np.array([[1.0, 1e6], [1.0, -1e6]])
    S = kernels.split_probabilities(Z, np.array([[0.0, 1.0]]), 1.0)
    assert np.all(np.isfinite(S)) and S.tolist() == [[1.0], [0.0]]


def test_srt_objective_rejects_bad_shapes(rng):
    X, y = rng.random((5, 2)), rng.random(5)
    with pytest.raises(ValueError, match="omega must be"):
        srt_objective(X, y, np.zeros((2, 3)), np.zeros((4, 3)))
    with pytest.raises(ValueError, match="y"):
        srt_objective(X, y[:4], np.zeros((3, 3)), np.zeros((4, 3)))


def test_node_shares_sum_the_leaf_probabilities_below_each_node(rng):
    tree = Tree(3)
    S = rng.random((50, tree.n_branch))
    s = rng.random(50)
    m = kernels.node_shares(S, tree, s)
    P = kernels.leaf_probabilities(S, tree)
    np.testing.assert_allclose(m[tree.n_branch:], s @ P / s.sum())  # leaves: the P_it
    for t in tree.branch_nodes:  # a node holds what its two children hold
        np.testing.assert_allclose(m[t - 1], m[2 * t - 1] + m[2 * t])
    assert m[0] == pytest.approx(1.0)


def test_feature_importances_weigh_split_weights_by_node_share():
    tree = Tree(2)
    omega = np.array([[5.0, 2.0, 0.0, 0.0],   # root: feature 0 only
                      [0.0, 0.0, -4.0, 0.0],  # node 2: feature 1
                      [1.0, 0.0, 0.0, 8.0]])  # node 3: feature 2, reached by no data
    shares = np.array([1.0, 1.0, 0.0, 0.5, 0.5, 0.0, 0.0])
    importances = kernels.feature_importances(omega, shares, tree)
    np.testing.assert_allclose(importances, [2 / 6, 4 / 6, 0.0])
    assert importances.sum() == pytest.approx(1.0)
    # the intercept omega_0t plays no part; no feature used -> all zeros
    np.testing.assert_array_equal(kernels.feature_importances(np.c_[omega[:, :1], np.zeros((3, 3))], shares,
                                                              tree), np.zeros(3))


@pytest.mark.parametrize("root", [1, 2, 5])
def test_subtree_loss_matches_path_products_and_finite_differences(rng, root):
    """The compiled sweep against sum_i s_i sum_l P_il R_il with P from the level products,
    and df/du against central differences of u (one column at a time)."""
    tree, mu = Tree(3), 2.5
    n = 9
    U = rng.standard_normal((n, tree.n_branch))
    leaves = tree.descendants_leaves(root)
    R, s = rng.random((n, len(leaves))), rng.random(n)
    columns = kernels.subtree_columns(tree, root)

    def f(U):
        S = 1 / (1 + np.exp(-mu * U))
        return float(s @ np.sum(kernels.leaf_probabilities(S, tree, root) * R, axis=1))

    S = 1 / (1 + np.exp(-mu * U))
    value, G = kernels.subtree_loss(S[:, columns], R, s, mu)
    assert value == pytest.approx(f(U), rel=1e-12)
    h = 1e-6
    for local, column in enumerate(columns):
        for i in range(n):
            up, down = U.copy(), U.copy()
            up[i, column] += h
            down[i, column] -= h
            assert G[i, local] == pytest.approx((f(up) - f(down)) / (2 * h), abs=1e-8)
    assert kernels.subtree_loss(S[:, columns], R, s, mu, with_grad=False) == (value, None)
    # the sweep's leaf probabilities are the reference's level products, to the bit
    _, G_too, P = kernels.subtree_loss(S[:, columns], R, s, mu, with_leaves=True)
    np.testing.assert_array_equal(P, kernels.leaf_probabilities(S, tree, root))
    np.testing.assert_array_equal(G_too, G)


def test_subtree_columns_are_the_subtree_in_heap_order():
    tree = Tree(3)
    assert kernels.subtree_columns(tree, 1).tolist() == list(range(7))
    assert kernels.subtree_columns(tree, 3).tolist() == [2, 5, 6]  # nodes 3, 6, 7
    assert kernels.subtree_columns(tree, 6).tolist() == [5]


def test_subtree_loss_refuses_a_leaf_count_that_does_not_fit(rng):
    with pytest.raises(ValueError, match="3 branch nodes has 4 leaves, R has 3"):
        kernels.subtree_loss(rng.random((2, 3)), rng.random((2, 3)), np.ones(2), 1.0)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_branch_curvatures_are_the_derivatives_of_the_gradient_in_u(rng, depth):
    """C[:, x, y] = d G[:, a] / d u_b for every pair of local nodes a, b of a subtree (G the
    gradient of subtree_loss in u), by central differences; nodes on separate branches give 0."""
    mu, n, m = 1.7, 9, 2**depth - 1
    U, R, s = rng.standard_normal((n, m)), rng.random((n, m + 1)), rng.random(n)
    nodes = np.arange(1, m + 1)
    C = kernels.branch_curvatures(expit(mu * U), R, s, mu, nodes)
    h = 1e-6
    for b in nodes:
        E = np.zeros(m)
        E[b - 1] = h
        fd = (kernels.subtree_loss(expit(mu * (U + E)), R, s, mu)[1]
              - kernels.subtree_loss(expit(mu * (U - E)), R, s, mu)[1]) / (2 * h)
        np.testing.assert_allclose(C[:, :, b - 1], fd, atol=1e-8, rtol=1e-6)
    if depth > 1:
        np.testing.assert_array_equal(C[:, 1, 2], 0.0)  # nodes 2 and 3: separate branches
        odd = kernels.branch_curvatures(expit(mu * U), R, s, mu, [m, 1])  # any order of the nodes
        np.testing.assert_array_equal(odd, C[:, [m - 1, 0]][:, :, [m - 1, 0]])


def test_weighted_logistic_is_the_wlr_data_term(rng):
    """Value, gradient and curvature weights against softplus / expit in numpy, also where
    mu z . x is far out in both tails (no overflow)."""
    n, q, mu = 13, 4, 1.3
    Z, c, w = rng.standard_normal((n, q)), (rng.random(n) < 0.5).astype(float), rng.random(n) + 0.5
    for scale in (1.0, 500.0):
        x = scale * rng.standard_normal(q)
        u = mu * Z @ x
        f, g, h = kernels.weighted_logistic(Z, c, w, mu, x, with_curvature=True)
        p = expit(u)
        assert f == pytest.approx(np.sum(w * (c * np.logaddexp(0, -u) + (1 - c) * np.logaddexp(0, u))), rel=1e-12)
        np.testing.assert_allclose(g, mu * Z.T @ (w * (p - c)), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(h, w * p * (1 - p), rtol=1e-10, atol=1e-300)
    assert kernels.weighted_logistic(Z, c, w, mu, x)[2].shape == (0,)


@pytest.mark.parametrize("depth", [1, 2])
def test_ctrl_c_inside_a_compiled_kernel_raises_keyboard_interrupt(depth):
    """numba reports a KeyboardInterrupt inside its dispatcher as a SystemError caused by it,
    sometimes through a second SystemError (seen when SIGINT arrived while it unpickled)."""
    def numba_error():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            cause = interrupt
            for _ in range(depth):
                try:
                    raise SystemError("returned a result with an exception set") from cause
                except SystemError as error:
                    cause = error
            raise cause

    with pytest.raises(KeyboardInterrupt):
        with kernels._Interruptible():
            numba_error()
    with pytest.raises(SystemError):  # another SystemError is not turned into an interrupt
        with kernels._Interruptible():
            raise SystemError("something else")


def test_closing_the_splits_of_empty_subtrees_keeps_every_counted_row_and_prunes_the_rest():
    """close_unreached: a split that routes no counted row to one side becomes constant; the counted
    rows keep their HBP leaf, no input reaches the empty subtree, and reachable_nodes says so."""
    rng = np.random.default_rng(3)
    tree = Tree(3)
    omega = rng.standard_normal((tree.n_branch, 3))
    omega[1, 0] = 5.0  # node 2 sends the data below left (to 4): subtree 5 stays empty
    Z = kernels.split_design(rng.random((300, 2)))
    leaves = kernels.hbp_leaves(Z, omega, tree)
    counts = np.zeros(15, dtype=np.int64)
    for level in range(4):
        np.add.at(counts, (leaves >> level) - 1, 1)
    assert counts[4] == 0 and counts[1] > 0
    closed = kernels.close_unreached(omega, counts, tree, mu=2.0)
    np.testing.assert_array_equal(kernels.hbp_leaves(Z, closed, tree), leaves)
    reach = oblique_reach(closed, tree)
    assert set(np.flatnonzero(~reach) + 1) >= {5, 10, 11}
    assert set(np.flatnonzero(~reach) + 1) == {t for t in range(2, 16) if counts[t - 1] == 0}
    anywhere = kernels.split_design(rng.uniform(-50, 50, (5000, 2)))
    assert reach[kernels.hbp_leaves(anywhere, closed, tree) - 1].all()
    S = kernels.split_probabilities(anywhere, closed, 2.0)
    assert np.all(S[:, 1] == 1.0)  # p = F(mu * 40 / mu) is 1 in double precision
    np.testing.assert_array_equal(oblique_reach(omega, tree), np.ones(15, dtype=bool))


def test_node_counts_count_the_rows_whose_hbp_path_visits_each_node():
    tree = Tree(2)
    counts = kernels.node_counts(np.array([4, 4, 5, 7]), tree)
    np.testing.assert_array_equal(counts, [4, 3, 1, 2, 1, 0, 1])  # nodes 1..7


@pytest.mark.parametrize("depth, loss_name", [(1, "squared"), (3, "huber"), (4, "absolute"), (5, "squared")])
def test_incremental_objective_matches_the_full_evaluation(depth, loss_name):
    """Points that differ from the last one in one subtree (as NODEC's steps do), anywhere
    in the tree, and points that differ everywhere: value and gradients as the full kernel."""
    from srtopt.models.leaves import linear_leaves
    from srtopt.models.terms import make_loss

    rng = np.random.default_rng(depth)
    n, p, tree = 500, 4, Tree(depth)
    X, y, s = rng.random((n, p)), rng.standard_normal(n), rng.random(n)
    Z, Xa, loss = kernels.split_design(X), kernels.leaf_design(X), linear_leaves(make_loss(loss_name), p)
    incremental = kernels.IncrementalObjective(Z, Xa, y, s, 1.3, loss, tree)
    in_full = kernels.IncrementalObjective(Z, Xa, y, s, 1.3, loss, tree, max_entries=0)
    omega, beta = 3 * rng.standard_normal((tree.n_branch, p + 1)), rng.standard_normal((tree.n_leaves, p + 1))
    for step in range(30):
        node = int(rng.integers(1, 2 * tree.n_leaves)) if step % 10 else 1
        omega, beta = omega.copy(), beta.copy()
        for a in tree.subtree_branch(node) if tree.is_branch(node) else ():
            omega[a - 1] += rng.standard_normal(p + 1) * (rng.random() < 0.7)
        for leaf in tree.descendants_leaves(node):
            beta[tree.leaf_index(leaf)] += rng.standard_normal(p + 1) * (rng.random() < 0.7)
        expected = kernels.objective_and_gradient(Z, Xa, y, omega, beta, 1.3, s, loss)
        for evaluator in (incremental, in_full):
            f, g_omega, g_beta = evaluator(omega, beta)
            assert f == pytest.approx(expected[0], rel=1e-12)
            np.testing.assert_allclose(g_omega, expected[1], rtol=1e-10, atol=1e-13)
            np.testing.assert_allclose(g_beta, expected[2], rtol=1e-10, atol=1e-13)
        kept = incremental(omega, beta)[1]
        kept[:] = np.nan  # the caller's copy: the kept gradient stays
        np.testing.assert_allclose(incremental(omega, beta)[1], expected[1], rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("change", ["one split", "splits only", "leaves only", "one leaf"])
def test_incremental_objective_redoes_only_what_changed_and_matches_the_full_evaluation(change):
    """A BN step changes splits only, an LN step leaves only, the root's step one split: the
    kept p_it and losses of the rest are reused, and value and gradients stay exact."""
    from srtopt.models.leaves import linear_leaves
    from srtopt.models.terms import make_loss

    rng = np.random.default_rng(7)
    n, p, tree = 400, 3, Tree(4)
    X, y, s = rng.random((n, p)), rng.standard_normal(n), rng.random(n)
    Z, Xa, loss = kernels.split_design(X), kernels.leaf_design(X), linear_leaves(make_loss("squared"), p)
    incremental = kernels.IncrementalObjective(Z, Xa, y, s, 1.1, loss, tree)
    omega, beta = 3 * rng.standard_normal((tree.n_branch, p + 1)), rng.standard_normal((tree.n_leaves, p + 1))
    incremental(omega, beta)
    for node in (1, 2, 5, 11):
        omega, beta = omega.copy(), beta.copy()
        if change == "one split":
            omega[node - 1] += rng.standard_normal(p + 1)
        elif change == "splits only":
            for a in tree.subtree_branch(node):
                omega[a - 1] += rng.standard_normal(p + 1)
        else:
            leaves = tree.descendants_leaves(node)[:1] if change == "one leaf" else tree.descendants_leaves(node)
            for leaf in leaves:
                beta[tree.leaf_index(leaf)] += rng.standard_normal(p + 1)
        f, g_omega, g_beta = incremental(omega, beta)
        expected = kernels.objective_and_gradient(Z, Xa, y, omega, beta, 1.1, s, loss)
        assert f == pytest.approx(expected[0], rel=1e-12)
        np.testing.assert_allclose(g_omega, expected[1], rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(g_beta, expected[2], rtol=1e-10, atol=1e-13)
