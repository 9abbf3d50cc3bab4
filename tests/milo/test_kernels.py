"""srtopt.milo.kernels: exact leaf fits (against scikit-learn's Lasso and least squares), the
split scan (against refitting every threshold), routing."""

import numpy as np
import pytest
from sklearn.linear_model import Lasso, LinearRegression

from srtopt.milo.kernels import leaf_fits, route, scan_splits, subtree_leaves

EXACT = 2**62


def _lasso_value(X, y, mu1):
    """scikit-learn's Lasso minimizes ||y - Xb||^2 / (2n) + alpha ||b||_1: alpha = mu1 / (2n)."""
    model = Lasso(alpha=mu1 / (2 * len(y)), tol=1e-14, max_iter=1_000_000).fit(X, y)
    r = y - model.predict(X)
    return r @ r + mu1 * np.abs(model.coef_).sum(), model


@pytest.mark.parametrize("seed", range(12))
def test_leaf_fit_is_the_exact_lasso(seed):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(3, 40)), int(rng.integers(1, 8))
    X = rng.random((n, p))
    if seed % 3 == 0:
        X[:, 0] = X[:, -1]  # collinear columns: coordinate descent crawls there
    y = rng.standard_normal(n)
    mu1 = float(10 ** rng.uniform(-3, 0))
    coef, value, counts = leaf_fits(X, y, np.zeros(n, np.int64), 1, mu1, 0.0)
    expected, model = _lasso_value(X, y, mu1)
    assert counts[0] == n
    assert value[0] <= expected * (1 + 1e-9) + 1e-12  # never worse than the reference solver
    assert value[0] == pytest.approx(expected, rel=1e-6, abs=1e-9)
    r = y - coef[0, 0] - X @ coef[0, 1:]
    assert value[0] == pytest.approx(r @ r + mu1 * np.abs(coef[0, 1:]).sum(), rel=1e-12, abs=1e-12)


def test_leaf_fit_without_penalty_is_least_squares_and_an_empty_leaf_is_zero():
    rng = np.random.default_rng(0)
    X, y = rng.random((30, 3)), rng.standard_normal(30)
    leaf = np.zeros(30, np.int64)
    coef, value, counts = leaf_fits(X, y, leaf, 2, 0.0, 0.0)
    ols = LinearRegression().fit(X, y)
    np.testing.assert_allclose(coef[0], np.r_[ols.intercept_, ols.coef_], atol=1e-8)
    assert value[0] == pytest.approx(np.sum((y - ols.predict(X)) ** 2), rel=1e-9)
    assert counts.tolist() == [30, 0] and np.all(coef[1] == 0) and value[1] == 0


def test_scan_equals_refitting_every_threshold():
    rng = np.random.default_rng(1)
    n, p = 70, 3
    X = np.round(rng.random((n, p)), 2)  # ties: thresholds only between distinct values
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(n)
    features, thresholds = np.array([0, 1, 2]), np.array([0.5, 0.4, 0.6])
    rows = np.arange(n)
    left = subtree_leaves(X, rows, features, thresholds, 2, 1)
    right = subtree_leaves(X, rows, features, thresholds, 3, 1)
    mu1, min_leaf = 0.05, 3
    value, threshold, none = scan_splits(X, y, rows, left, 2, right, 2, mu1, 0.0, min_leaf, np.full(p, 1e-5),
                                         EXACT, 0, np.arange(p))
    for j in range(p):
        best = np.inf
        for b in np.unique(X[:, j])[1:]:
            trial = features.copy(), thresholds.copy()
            trial[0][0], trial[1][0] = j, b
            leaf = route(X, *trial, 2) - 4
            counts = np.bincount(leaf, minlength=4)
            if np.any((counts > 0) & (counts < min_leaf)) or min(np.sum(X[:, j] < b), np.sum(X[:, j] >= b)) < 3:
                continue
            best = min(best, leaf_fits(X, y, leaf, 4, mu1, 0.0)[1].sum())
        assert value[j] == pytest.approx(best, rel=1e-9)
        # the threshold found sends the same rows left as some value between two distinct values
        lo = X[X[:, j] < threshold[j], j].max()
        hi = X[X[:, j] >= threshold[j], j].min()
        assert lo < threshold[j] <= hi
    all_right = route(X, np.array([-1, 1, 2]), thresholds, 2) - 4
    assert none == pytest.approx(leaf_fits(X, y, all_right, 4, mu1, 0.0)[1].sum(), rel=1e-9)


def test_coarse_scan_is_a_screening_that_finds_the_exact_value_of_its_choice():
    rng = np.random.default_rng(2)
    X = rng.random((2000, 2))
    y = np.where(X[:, 0] < 0.37, 1.0, -1.0) + 0.1 * rng.standard_normal(2000)
    rows = np.arange(2000)
    zeros = np.zeros(2000, np.int64)
    eps = np.full(2, 1e-9)
    coarse = scan_splits(X, y, rows, zeros, 1, zeros, 1, 0.0, 0.0, 1, eps, 64, 2, np.arange(2))
    exact = scan_splits(X, y, rows, zeros, 1, zeros, 1, 0.0, 0.0, 1, eps, EXACT, 0, np.arange(2))
    assert coarse[0][0] == pytest.approx(exact[0][0], rel=1e-9)  # refined around the best coarse position
    assert coarse[1][0] == pytest.approx(exact[1][0])
    assert abs(coarse[1][0] - 0.37) < 0.01


def test_route_by_hand():
    X = np.array([[0.2, 0.9], [0.7, 0.1], [0.7, 0.8]])
    # root x0 < 0.5; node 2 does not split (everyone right); node 3 x1 < 0.5
    leaf = route(X, np.array([0, -1, 1]), np.array([0.5, 0.0, 0.5]), 2)
    assert leaf.tolist() == [5, 6, 7]
