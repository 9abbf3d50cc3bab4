"""The steps and pairs a spline basis gets (srtopt.models.leaves.screening): the candidate thresholds, the GCV of a
block against its direct computation, and what the screens keep on data whose truth is known."""

import numpy as np
import pytest

from srtopt.bases import SplineBasis
from srtopt.models.leaves.screening import (PAIR_ROWS, STEP_ROWS, STRENGTHS, AdditiveFit, ranked_pairs,
                                            screened_pairs, screened_steps, step_thresholds)


def test_step_thresholds():
    levels = np.repeat(np.arange(6) / 5, 40)  # 6 values, 40 rows each
    np.testing.assert_array_equal(step_thresholds(levels, 64), np.arange(1, 6) / 5)
    x = np.linspace(0.0, 1.0, 1000)
    thresholds = step_thresholds(x, 9)
    assert len(thresholds) == 9 and np.all(np.diff(thresholds) > 0)
    np.testing.assert_allclose(thresholds, np.quantile(x, np.arange(1, 10) / 10, method="higher"))
    rare = np.r_[np.zeros(STEP_ROWS - 1), np.full(200, 0.5), np.ones(100)]
    np.testing.assert_array_equal(step_thresholds(rare, 64), [1.0]), "a step needs STEP_ROWS rows on each side"
    assert len(step_thresholds(np.repeat([0.0, 1.0], 50), 64)) == 0, "a binary feature's step is its line"


def test_the_gcv_of_a_block_is_that_of_the_joint_ridge_regression():
    """Without an l2 term, the block's GCV over the strengths (partialled, one eigendecomposition) equals the GCV
    n RSS / (n - tr H)^2 of the joint regression on the basis and the block, computed directly."""
    rng = np.random.default_rng(0)
    X = rng.random((300, 2))
    y = np.sin(5 * X[:, 0]) + (X[:, 1] > 0.4) + 0.2 * rng.standard_normal(300)
    weights = rng.uniform(0.5, 2.0, 300)
    basis = SplineBasis.fit(X)
    fit = AdditiveFit(basis, X, y, weights, 0.0)
    S = (X[:, [1]] >= step_thresholds(X[:, 1], 8)).astype(float)
    score, strength, alone = fit.gcv(S)
    A = np.hstack([basis.design(X), S])
    w = weights / weights.mean()
    direct = []
    for s in STRENGTHS:
        ridge = np.r_[np.zeros(basis.n_columns), np.full(S.shape[1], s)]
        H = A @ np.linalg.solve((A.T * w) @ A + np.diag(ridge), A.T * w)
        direct.append(300 * np.sum(w * (y - H @ y) ** 2) / (300 - np.trace(H)) ** 2)
    assert score == pytest.approx(min(direct), rel=1e-5)
    assert strength == STRENGTHS[int(np.argmin(direct))]
    H0 = basis.design(X) @ np.linalg.pinv((basis.design(X).T * w) @ basis.design(X)) @ (basis.design(X).T * w)
    assert alone == pytest.approx(300 * np.sum(w * (y - H0 @ y) ** 2) / (300 - np.trace(H0)) ** 2, rel=1e-5)


def test_steps_are_kept_where_the_effect_jumps_and_not_on_noise():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 12, 1500) / 11, rng.random(1500), rng.random(1500)])
    y = np.where(X[:, 0] >= 5 / 11, 1.0, 0.0) - np.where(X[:, 0] >= 9 / 11, 1.5, 0.0) + X[:, 1] \
        + 0.3 * rng.standard_normal(1500)
    basis = SplineBasis.fit(X).with_scale(0.1)
    steps, strength = screened_steps(basis, X, y, np.ones(1500), 2 / (3 * 2 * 1500), 64)
    assert sorted(steps) == [0] and strength in STRENGTHS
    np.testing.assert_allclose(steps[0], np.arange(1, 12) / 11)


def test_pairs_are_ranked_by_what_their_product_explains_and_a_repeated_column_counts_once():
    rng = np.random.default_rng(2)
    a, b = rng.random(800), rng.random(800)
    c = (rng.random(800) < 0.5).astype(float)
    centred = np.column_stack([a, b, c, 1 - c]) - [0.5, 0.5, 0.5, 0.5]
    residuals = (3 * centred[:, 0] * centred[:, 2] + 0.1 * rng.standard_normal(800))[:, None]
    ranked = ranked_pairs(centred, residuals, np.ones(800))
    assert ranked[0] == (0, 2) and all(3 not in pair for pair in ranked)
    sparse = np.zeros((800, 2))
    sparse[:PAIR_ROWS - 1] = 1.0  # their product is nonzero on too few rows
    assert ranked_pairs(np.column_stack([sparse, a]), residuals, np.ones(800)) == [(0, 2), (1, 2)][:0] + [
        pair for pair in ranked_pairs(np.column_stack([sparse, a]), residuals, np.ones(800)) if pair != (0, 1)]


def test_the_pairs_that_pay_are_kept():
    rng = np.random.default_rng(3)
    X = rng.random((1500, 4))
    y = 4 * (X[:, 0] - 0.5) * (X[:, 2] - 0.5) + X[:, 1] + 0.2 * rng.standard_normal(1500)
    basis = SplineBasis.fit(X).with_scale(0.1)
    pairs, strength = screened_pairs(basis, X, y, np.ones(1500), 2 / (3 * 2 * 1500), 3)
    assert pairs[0] == (0, 2) and len(pairs) <= 3 and strength in STRENGTHS
    none, _ = screened_pairs(basis, X, X[:, 1] + 0.2 * rng.standard_normal(1500), np.ones(1500), 1e-4, 3)
    assert len(none) <= 1, "on an additive truth, at most a pair that chance favours"


def test_gcv_score_is_n_rss_over_the_residual_degrees_of_freedom_squared():
    """GCV of a ridge smoother, against its hat matrix in numpy; the denominator floored at 1."""
    from srtopt.models.leaves.screening import gcv_score

    rng = np.random.default_rng(0)
    X, y = rng.random((30, 4)), rng.random(30)
    H = X @ np.linalg.solve(X.T @ X + 0.5 * np.eye(4), X.T)
    rss, df = float(np.sum((y - H @ y) ** 2)), float(np.trace(H))
    assert gcv_score(30, rss, df) == pytest.approx(np.mean((y - H @ y) ** 2) / (1 - df / 30) ** 2, rel=1e-12)
    assert gcv_score(3, 2.0, 5.0) == 6.0
