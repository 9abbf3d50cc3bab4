import numpy as np
import pytest

from srtopt import kernels
from srtopt.models.srt import SRTProblem
from srtopt.solvers import NewtonSolver, SklearnLogistic
from srtopt.training.initialization import (cart_initialization, cluster_initialization, hierarchical_two_means,
                                           linear_split, model_tree_initialization, nearer_second, route,
                                           two_means)
from srtopt.tree import Tree

from .test_nodec import scaled


def _soft_share(problem, omega):
    """Mean over branch nodes of the share of the node's HBP rows with 0.1 < p_it < 0.9."""
    S = kernels.split_probabilities(problem.Z, omega, problem.mu)
    leaves = problem.hbp_leaves(omega)
    shares = [np.mean((S[rows, t - 1] > 0.1) & (S[rows, t - 1] < 0.9))
              for t in problem.tree.branch_nodes
              for rows in [kernels.hbp_contains(leaves, problem.tree, t)] if rows.any()]
    return float(np.mean(shares))


def test_default_initial_splits_are_not_saturated():
    """The logistic regressions of the paper's initialization give sharp splits (most rows where
    the CDF is flat, a tiny BN gradient); the estimator's default split_scale starts softer."""
    from srtopt import SoftRegressionTree

    X, y = scaled("friedman", 4000, p=10)
    problem = SRTProblem(X, y, Tree(3), 1.0, 1e-8, 1e-6)
    paper, _, _ = cluster_initialization(problem, 3, 0)
    default, _, _ = cluster_initialization(problem, 3, 0, split_scale=SoftRegressionTree().init_scale)
    assert _soft_share(problem, paper) < 0.4
    assert _soft_share(problem, default) > 0.6
    beta = np.zeros((8, X.shape[1] + 1))
    beta[:, 0] = np.linspace(-1, 1, 8)
    grad = lambda omega: np.linalg.norm(problem.objective(omega, beta, with_grad=True)[1])
    assert grad(default) > 2 * grad(paper)


def test_two_means_separates_two_clouds_and_respects_weights():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.1, (50, 2)), rng.normal(3, 0.1, (30, 2))])
    labels, centers = two_means(X, np.ones(80), rng)
    assert len(set(labels[:50])) == 1 and len(set(labels[50:])) == 1 and labels[0] != labels[-1]
    np.testing.assert_allclose(np.sort(centers[:, 0]), [X[:50, 0].mean(), X[50:, 0].mean()])
    weights = np.r_[np.ones(50), np.zeros(29), 1.0]  # one point left of the second cloud
    _, centers = two_means(X, weights, rng)
    assert X[79, 0] == pytest.approx(centers[:, 0].max())


def test_subsampled_initialization_routes_every_row():
    """On more rows than max_rows, the hierarchy is built on a subsample and every row is
    routed by the nearest centroids, consistently with the subsample's own assignment."""
    X, y = scaled("friedman", 3000, p=8)
    problem = SRTProblem(X, y, Tree(2), 1.0, 1e-8, 1e-6)
    omega, beta, db = cluster_initialization(problem, 2, 0, max_rows=500)
    assert omega.shape == (3, 9) and beta.shape == (4, 9) and np.isfinite(db)
    hierarchy = hierarchical_two_means(X[:500], problem.tree, np.ones(500), np.random.RandomState(0))
    C = route(X[:500], hierarchy, problem.tree)
    for t in problem.tree.leaves:
        np.testing.assert_array_equal(C[t], hierarchy.C[t])


def test_newton_and_sklearn_logistic_give_the_same_initial_splits():
    X, y = scaled("friedman")
    problem = SRTProblem(X, y, Tree(2), 1.0, 1e-8, 1e-6)
    newton, _, _ = cluster_initialization(problem, 3, 0, NewtonSolver())
    sk, _, _ = cluster_initialization(problem, 3, 0, SklearnLogistic(max_iter=10_000, tol=1e-12))
    np.testing.assert_allclose(newton, sk, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("k", [2, 4, 8])
def test_davies_bouldin_is_scikit_learns(rng, k):
    from sklearn.metrics import davies_bouldin_score

    from srtopt.training.initialization import davies_bouldin

    X = rng.random((300, 5))
    labels = rng.integers(0, k, 300)
    assert davies_bouldin(X, labels) == pytest.approx(davies_bouldin_score(X, labels), rel=1e-12)
    X[labels == 0] = X[labels == 0].mean(axis=0)  # a cluster with no spread (scikit-learn's distance
    assert davies_bouldin(X, labels) == pytest.approx(davies_bouldin_score(X, labels), rel=1e-6)  # formula
    # leaves about 1e-8 where the exact value is 0)


def test_initialization_does_not_depend_on_n_jobs():
    X, y = scaled("diabetes")
    problem = SRTProblem(X, y, Tree(3), 1.0, 1e-8, 1e-6)
    one = cluster_initialization(problem, 6, 3, n_jobs=1)
    two = cluster_initialization(problem, 6, 3, n_jobs=2)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    assert one[2] == two[2]


def test_cart_initialization_routes_rows_as_cart_does():
    """The softened CART splits send every row to the leaf CART sends it to (HBP), the split
    has the requested slope on x_j in [0, 1], and each leaf model is the regression on its rows."""
    from sklearn.tree import DecisionTreeRegressor

    X, y = scaled("diabetes")
    problem = SRTProblem(X, y, Tree(2), 2.0, 1e-8, 1e-6)
    omega, beta, r2 = cart_initialization(problem, slope=8.0, random_state=0)
    cart = DecisionTreeRegressor(max_depth=2, min_samples_leaf=0.05, random_state=0).fit(X, y)
    assert r2 == pytest.approx(cart.score(X, y))
    leaves = problem.hbp_leaves(omega)
    for cart_leaf in np.unique(cart.apply(X)):
        assert len(np.unique(leaves[cart.apply(X) == cart_leaf])) == 1
    root = omega[0]
    j = int(np.flatnonzero(root[1:])[0])
    assert j == cart.tree_.feature[0] and np.count_nonzero(root[1:]) == 1
    # mu * u = slope * (c - x_j): u = omega_0 + omega_j x_j / p
    assert problem.mu * root[1 + j] / X.shape[1] == pytest.approx(-8.0)
    assert problem.mu * root[0] == pytest.approx(8.0 * cart.tree_.threshold[0])
    for k, t in enumerate(problem.tree.leaves):
        rows = leaves == t
        coef = np.linalg.lstsq(problem.Xa[rows], y[rows], rcond=None)[0]
        np.testing.assert_allclose(beta[k], coef, atol=1e-6)


def test_cart_initialization_where_cart_stops_early_sends_rows_left():
    """A node CART does not split (too few rows) sends every row left; its right leaf starts
    from the mean model and receives no row."""
    X, y = scaled("friedman")
    X[:, :] = 0.0
    X[: len(X) // 2, 0] = 1.0  # one feature, two values: CART splits the root only
    problem = SRTProblem(X, y, Tree(2), 1.0, 1e-8, 1e-6)
    omega, beta, _ = cart_initialization(problem, random_state=0)
    assert np.count_nonzero(omega[0, 1:]) == 1
    np.testing.assert_array_equal(omega[1:, 1:], 0.0)
    assert np.all(omega[1:, 0] > 0)
    assert set(np.unique(problem.hbp_leaves(omega))) == {4, 6}
    assert beta[1, 0] == pytest.approx(np.mean(y)) and beta[3, 0] == pytest.approx(np.mean(y))


def test_cart_initialization_on_more_rows_than_max_rows_fits_cart_on_a_subsample():
    X, y = scaled("friedman", 3000, p=8)
    problem = SRTProblem(X, y, Tree(3), 1.0, 1e-8, 1e-6)
    omega, beta, r2 = cart_initialization(problem, random_state=0, max_rows=500)
    assert omega.shape == (7, 9) and beta.shape == (8, 9) and 0 < r2 < 1
    assert np.all(np.count_nonzero(omega[:, 1:], axis=1) == 1)


def _ridge_sse(Xa, y, w, ridge):
    R = ridge * np.eye(Xa.shape[1])
    R[0, 0] = 0.0
    b = np.linalg.solve((Xa.T * w) @ Xa + R, (Xa.T * w) @ y)
    return float(w @ (Xa @ b - y) ** 2 + b @ R @ b)


def test_linear_split_is_the_best_cut_by_brute_force(rng):
    from srtopt.training.initialization import weighted_quantiles

    """linear_split's cumulative normal equations give the cut a direct search over every
    feature and quantile cut finds: the least summed ridge SSE of the two sides."""
    X = rng.random((300, 3))
    X[:, 2] = np.round(X[:, 2] * 4) / 4  # ties: cuts fall on repeated values
    y = np.where(X[:, 1] > 0.6, 3 * X[:, 0], -2 * X[:, 0]) + 0.05 * rng.standard_normal(300)
    w = rng.random(300) + 0.5
    Xa = np.c_[np.ones(300), X]
    j, c = linear_split(X, Xa, y, w, bins=8, min_rows=20, ridge=0.3)
    cuts = weighted_quantiles(X, np.linspace(0, 1, 9)[1:-1], w)  # rows count by their weights
    best = min((_ridge_sse(Xa[m], y[m], w[m], 0.3) + _ridge_sse(Xa[~m], y[~m], w[~m], 0.3), jj, cc)
               for jj in range(3) for cc in np.unique(cuts[:, jj])
               for m in [X[:, jj] <= cc] if min(w[m].sum(), w[~m].sum()) >= 20)
    x = X[:, best[1]]
    assert j == best[1] and best[2] < c == (best[2] + x[x > best[2]].min()) / 2  # midway to the next value
    assert j == 1 and abs(c - 0.6) < 0.1
    assert linear_split(X, Xa, y, w, bins=8, min_rows=200, ridge=0.3) is None  # no cut keeps 200 rows a side


def test_a_model_tree_split_on_repeated_values_leaves_no_row_on_it(rng):
    """On a feature of few values the best cut is one of them: the split goes midway to the next
    value, so no row sits on the softened split (where HBP would route it by rounding)."""
    X = np.round(rng.random((200, 2)) * 3) / 3
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0) + 0.01 * rng.standard_normal(200)
    j, c = linear_split(X, np.c_[np.ones(200), X], y, np.ones(200), bins=8, min_rows=10, ridge=0.1)
    assert j == 0 and c == pytest.approx(0.5) and not np.any(X[:, j] == c)


def test_a_row_as_near_to_both_centroids_goes_to_the_first():
    """Rows on the bisecting hyperplane of c0 and c1 (exactly, before rounding) go to c0 whatever the
    last bits of the products; rows nearer to c1 go to c1."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        c0, c1 = np.round(rng.random((2, 3)) * 8) / 8  # grid centroids, as 2-means gets on grid data
        if np.array_equal(c0, c1):
            continue
        normal = np.linalg.svd((c1 - c0)[None])[2][1:]  # two directions along the hyperplane
        on = (c0 + c1) / 2 + rng.standard_normal((20, 2)) @ normal
        assert not nearer_second(on, c0, c1).any()
        assert nearer_second(on + 1e-6 * (c1 - c0), c0, c1).all()


def test_model_tree_chooses_splits_for_linear_leaves_where_cart_does_not():
    """y = 4 |x_0 - 0.5| + a step of 2 in x_1: a constant-leaf CART splits the root on the step;
    linear leaves fit each side of the kink exactly, so the model tree splits on x_0 at 0.5."""
    rng = np.random.default_rng(3)
    X = rng.random((2000, 3))
    y = 4 * np.abs(X[:, 0] - 0.5) + 2 * (X[:, 1] > 0.5)
    problem = SRTProblem(X, y - y.mean(), Tree(1), 1.0, 1e-8, 1e-6)
    cart, _, _ = cart_initialization(problem, random_state=0)
    model, beta, count = model_tree_initialization(problem, random_state=0)
    assert np.argmax(np.abs(cart[0, 1:])) == 1 and np.argmax(np.abs(model[0, 1:])) == 0 and count == 1
    assert problem.mu * model[0, 0] / (-model[0, 1] / 3) == pytest.approx(0.5, abs=0.05)  # the threshold
    assert np.sign(beta[0, 1]) == -1 and np.sign(beta[1, 1]) == 1  # slopes of the two sides of |x_0 - 0.5|


def test_a_remembered_start_is_the_same_whatever_the_seed_without_a_subsample_and_cannot_be_changed():
    """On fewer rows than max_rows the seed draws nothing, so the leaf-ridge guard's screen (no seed)
    and the fit (seed 0) share one split search; the remembered start comes back as copies."""
    from srtopt.training import initialization

    X, y = scaled("friedman", 200)
    problem = SRTProblem(X, y, Tree(2), 1.0, 1e-8, 1e-6)
    initialization._SPLITS.clear()
    initialization._STARTS.clear()
    first = model_tree_initialization(problem, random_state=None)
    searched = dict(initialization._SPLITS)
    again = model_tree_initialization(problem, random_state=0)
    assert initialization._SPLITS == searched  # no second search
    for a, b in zip(first[:2], again[:2]):
        np.testing.assert_array_equal(a, b)
    again[0][:] = 0.0  # a caller that changes its (remembered) start in place
    np.testing.assert_array_equal(model_tree_initialization(problem, random_state=0)[0], first[0])
    assert np.any(first[0] != 0)


def _wide_data_fits():
    """(X, y, a depth-2 fit of one macro iteration, its wall seconds, a depth-3 fit limited to 1 s) on
    more than WIDE features."""
    import time

    from srtopt import SoftRegressionTree
    from srtopt.training.initialization import WIDE

    rng = np.random.default_rng(0)
    X = rng.random((1500, 4 * WIDE))
    y = np.where(X[:, 7] < 0.5, 2 * X[:, 3], -2 * X[:, 3]) + 0.05 * rng.standard_normal(1500)
    start = time.perf_counter()
    model = SoftRegressionTree(depth=2, max_iter=1, time_limit=60.0, random_state=0).fit(X, y)
    seconds = time.perf_counter() - start
    with pytest.warns(UserWarning, match="time_limit=1 s reached"):
        limited = SoftRegressionTree(depth=3, time_limit=1.0, random_state=0).fit(X, y)
    return X, y, model, seconds, limited


def test_wide_data_start_finds_the_signal_and_honours_the_deadline():
    """More than WIDE features: the split search screens features and leaf columns, still splits on
    the informative feature, and stops at the fit's deadline."""
    X, y, model, _, limited = _wide_data_fits()
    assert model.score(X, y) > 0.9
    assert limited.stopped_by_ == "time_limit"


@pytest.mark.slow
def test_wide_data_start_is_fast():
    _, _, _, seconds, limited = _wide_data_fits()
    assert seconds < 60
    # fit_seconds_ 1.0-1.3 s measured (quiet and loaded): 10 s is >= 7x for a loaded machine, and far below
    # the 17-26 s the fit took before the split search looked at the deadline
    assert limited.fit_seconds_ < 10.0


def test_zero_weights_do_not_make_the_start_singular():
    from srtopt import SoftRegressionTree

    rng = np.random.default_rng(1)
    X = rng.random((400, 5))
    y = X @ np.arange(5.0)
    weights = np.zeros(400)
    weights[:20] = 1.0  # 20 rows count: fewer than the 2 (p + 1) a split needs on each side
    model = SoftRegressionTree(depth=2, random_state=0).fit(X, y, sample_weight=weights)
    assert model.score(X[:20], y[:20]) > 0.99


def test_growing_keeps_the_top_and_splits_each_leaf_on_its_own_rows():
    """y = 4 |x_0 - 0.5| + a step of 2 in x_1: a depth-1 top that splits on the step; grown to
    depth 2, each side splits at the kink x_0 = 0.5 (linear leaves fit each quarter exactly)."""
    from srtopt.training.initialization import GrowInitialization

    rng = np.random.default_rng(3)
    X = rng.random((2000, 3))
    y = 4 * np.abs(X[:, 0] - 0.5) + 2 * (X[:, 1] > 0.5)
    problem = SRTProblem(X, y - y.mean(), Tree(2), 1.0, 1e-8, 1e-6)
    top = np.array([[20.0 * 0.5, 0.0, -20.0 * 3, 0.0]])  # x_1 <= 0.5 goes left, softened

    class Fitted:
        omega_ = top

    omega, beta, info = GrowInitialization(Fitted())(problem, random_state=0)
    np.testing.assert_array_equal(omega[0], top[0])
    assert info == {"model_tree_splits": 2}
    for t in (2, 3):
        assert np.argmax(np.abs(omega[t - 1, 1:])) == 0  # the kink, below each side of the step
        assert problem.mu * omega[t - 1, 0] / (-omega[t - 1, 1] / 3) == pytest.approx(0.5, abs=0.05)
    predicted = kernels.hbp_predict(X, omega, beta, problem.tree)  # each row by its HBP leaf's regression
    assert np.mean((predicted - problem.y) ** 2) < 0.01 * np.var(y)


def test_a_grown_tree_trains_from_its_shallower_fit():
    from srtopt import SoftRegressionTree
    from srtopt.training.initialization import GrowInitialization

    X, y = scaled("friedman", 400, p=5)
    shallow = SoftRegressionTree(depth=2, random_state=0, max_iter=2).fit(X, y)
    deep = SoftRegressionTree(depth=3, init=GrowInitialization(shallow), random_state=0, max_iter=1).fit(X, y)
    assert deep.get_depth() == 3 and np.isfinite(deep.objective_)


@pytest.mark.parametrize("tree", [None, "unfitted", "same depth"])
def test_growing_from_what_is_not_a_shallower_fitted_tree_is_refused(tree):
    from srtopt import SoftRegressionTree
    from srtopt.training.initialization import GrowInitialization

    X, y = scaled("friedman", 100, p=5)
    if tree == "unfitted":
        tree = SoftRegressionTree(depth=1)
    elif tree == "same depth":
        tree = SoftRegressionTree(depth=2, random_state=0, max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="GrowInitialization needs a fitted tree of depth < 2"):
        SoftRegressionTree(depth=2, init=GrowInitialization(tree), max_iter=1).fit(X, y)


def test_weighted_quantiles_are_those_of_the_repeated_rows():
    from srtopt.training.initialization import weighted_quantiles

    rng = np.random.default_rng(0)
    X, w = rng.random((40, 3)), rng.integers(1, 5, size=40).astype(float)
    q = np.linspace(0, 1, 17)[1:-1]
    np.testing.assert_allclose(weighted_quantiles(X, q, w), np.quantile(np.repeat(X, w.astype(int), axis=0), q, axis=0))
    np.testing.assert_array_equal(weighted_quantiles(X, q, np.ones(40)), np.quantile(X, q, axis=0))
