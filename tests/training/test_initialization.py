import numpy as np
import pytest

from srtopt import kernels
from srtopt.models.srt import SRTProblem
from srtopt.solvers import NewtonSolver, SklearnLogistic
from srtopt.training.initialization import cluster_initialization, route, hierarchical_two_means, two_means
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

    X, y = scaled("friedman", 4000)
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
    X, y = scaled("kin8nm", 3000)
    problem = SRTProblem(X, y, Tree(2), 1.0, 1e-8, 1e-6)
    omega, beta, db = cluster_initialization(problem, 2, 0, max_rows=500)
    assert omega.shape == (3, 9) and beta.shape == (4, 9) and np.isfinite(db)
    hierarchy = hierarchical_two_means(X[:500], problem.tree, np.ones(500), np.random.RandomState(0))
    C = route(X[:500], hierarchy, problem.tree)
    for t in problem.tree.leaves:
        np.testing.assert_array_equal(C[t], hierarchy.C[t])


def test_newton_and_sklearn_logistic_give_the_same_initial_splits():
    X, y = scaled("yacht")
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
    X, y = scaled("housing")
    problem = SRTProblem(X, y, Tree(3), 1.0, 1e-8, 1e-6)
    one = cluster_initialization(problem, 6, 3, n_jobs=1)
    two = cluster_initialization(problem, 6, 3, n_jobs=2)
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
    assert one[2] == two[2]
