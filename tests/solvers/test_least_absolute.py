"""srtopt.solvers.least_absolute: the LAD-lasso leaf fit against a direct LP and its optimality."""

import numpy as np
import pytest

from srtopt.solvers.least_absolute import lad_lasso_fit


def test_value_is_the_objective_at_the_coefficients_and_no_perturbation_improves_it():
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.standard_t(2, 40)
    coef, value = lad_lasso_fit(X, y, mu1=0.3)
    objective = lambda c: np.abs(y - c[0] - X @ c[1:]).sum() + 0.3 * np.abs(c[1:]).sum()
    assert value == pytest.approx(objective(coef), rel=1e-9)
    for _ in range(200):  # a convex function: a local check of optimality
        assert objective(coef + 1e-3 * rng.standard_normal(4)) >= value - 1e-9


def test_bounded_slopes_and_empty_input():
    X = np.linspace(0, 1, 11)[:, None]
    coef, _ = lad_lasso_fit(X, 10 * X[:, 0], mu1=0.0, coef_bound=3.0)
    assert coef[1] == pytest.approx(3.0)
    coef, value = lad_lasso_fit(np.zeros((0, 2)), np.zeros(0), mu1=1.0)
    assert coef.tolist() == [0.0, 0.0, 0.0] and value == 0.0


@pytest.mark.parametrize("coef_bound", [np.inf, 0.5])
def test_after_the_deadline_the_fit_is_the_least_squares_slopes_with_their_exact_value(coef_bound):
    """No time left for the linear program: least-squares slopes (within the bound), the median
    residual as intercept, and the objective at them, which is no lower than the LP's minimum."""
    from srtopt.solvers.deadline import Deadline

    rng = np.random.default_rng(1)
    X = rng.random((60, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.standard_t(2, 60)
    exact, minimum = lad_lasso_fit(X, y, mu1=0.3, coef_bound=coef_bound)
    coef, value = lad_lasso_fit(X, y, mu1=0.3, coef_bound=coef_bound, deadline=Deadline(0))
    slopes = np.clip(np.linalg.lstsq(np.c_[np.ones(60), X], y, rcond=None)[0][1:], -coef_bound, coef_bound)
    np.testing.assert_allclose(coef[1:], slopes)
    assert coef[0] == pytest.approx(np.median(y - X @ slopes))
    assert value == pytest.approx(np.abs(y - coef[0] - X @ coef[1:]).sum() + 0.3 * np.abs(coef[1:]).sum(), rel=1e-12)
    assert value >= minimum - 1e-9 and not np.allclose(coef, exact)
