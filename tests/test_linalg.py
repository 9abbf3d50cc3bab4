"""The ridge regression whose ridge leave-one-out chooses (the value leaves' centre, the leaf-ridge screen)."""

import numpy as np
import pytest

from srtopt.linalg import ALPHAS, ridge_loo


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
