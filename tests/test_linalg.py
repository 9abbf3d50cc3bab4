"""The normal equations of the weighted ridge least squares, and the ridge regression whose ridge leave-one-out
chooses (the value leaves' centre, the leaf-ridge screen)."""

import numpy as np
import pytest

from srtopt.linalg import ALPHAS, SYRK_COLUMNS, normal_equations, ridge_loo


@pytest.mark.parametrize("columns", [3, SYRK_COLUMNS, 3 * SYRK_COLUMNS])
def test_normal_equations_are_the_weighted_products(columns):
    """Below SYRK_COLUMNS by numpy's product, from it on by BLAS's syrk (then exactly symmetric): the same
    A = 2 Xa^T diag(q) Xa + diag(ridge) and rhs = 2 Xa^T diag(q) y, to rounding; no rows give the ridge alone."""
    rng = np.random.default_rng(0)
    Xa, y, q, ridge = rng.standard_normal((200, columns)), rng.standard_normal(200), rng.random(200), rng.random(columns)
    A, rhs = normal_equations(Xa, y, q, ridge)
    assert columns < SYRK_COLUMNS or np.array_equal(A, A.T)
    np.testing.assert_allclose(A, 2 * Xa.T @ np.diag(q) @ Xa + np.diag(ridge), rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(rhs, 2 * Xa.T @ (q * y), rtol=1e-12, atol=1e-10)
    A, rhs = normal_equations(Xa[:0], y[:0], q[:0], ridge)
    assert np.array_equal(A, np.diag(ridge)) and np.array_equal(rhs, np.zeros(columns))


def test_the_linear_fit_is_ridgecv_s():
    from sklearn.linear_model import RidgeCV

    rng = np.random.default_rng(1)
    X, y, w = rng.random((80, 6)), rng.standard_normal(80), rng.integers(1, 4, size=80)
    center, error = ridge_loo(X, y, np.ones(80))
    reference = RidgeCV(alphas=ALPHAS).fit(X, y)
    np.testing.assert_allclose(center, np.r_[reference.intercept_, reference.coef_], atol=1e-10)
    assert error > 0
    # integer weights are repeated rows: leaving one copy out, as RidgeCV on the repeated rows does
    center, weighted_error = ridge_loo(X, y, w.astype(float))
    reference = RidgeCV(alphas=ALPHAS, store_cv_results=True).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(center, np.r_[reference.intercept_, reference.coef_], atol=1e-10)
    assert weighted_error == pytest.approx(np.min(reference.cv_results_.mean(axis=0)), rel=1e-9)
