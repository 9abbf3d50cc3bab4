import numpy as np
import pytest

from srtopt.linalg import MAX_CONDITION, cholesky_solve, weighted_ridge


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_cholesky_solve_solves_a_positive_definite_system(rng):
    M = rng.standard_normal((6, 6))
    A, b = M @ M.T + np.eye(6), rng.standard_normal(6)
    np.testing.assert_allclose(cholesky_solve(A, b), np.linalg.solve(A, b), rtol=1e-10)
    np.testing.assert_allclose(cholesky_solve(A, b, max_condition=MAX_CONDITION), np.linalg.solve(A, b), rtol=1e-10)


@pytest.mark.parametrize("case", ["indefinite", "not finite", "ill-conditioned"])
def test_cholesky_solve_refuses(case):
    A, b = np.diag([1.0, 1e-14]), np.ones(2)  # condition 1e14
    if case == "indefinite":
        A = np.diag([1.0, -1.0])
    if case == "not finite":
        b = np.array([1.0, np.nan])
    assert cholesky_solve(A, b, max_condition=MAX_CONDITION) is None
    if case == "ill-conditioned":
        assert cholesky_solve(A, b) is not None  # without the bound it solves


def test_weighted_ridge_is_the_normal_equations_solution(rng):
    Xa = np.c_[np.ones(40), rng.random((40, 3))]
    y, q, ridge = rng.standard_normal(40), rng.random(40), np.array([0.0, 0.1, 0.2, 0.3])
    A = 2 * Xa.T @ (q[:, None] * Xa) + np.diag(ridge)
    np.testing.assert_allclose(weighted_ridge(Xa, y, q, ridge), np.linalg.solve(A, 2 * Xa.T @ (q * y)), rtol=1e-10)


def test_weighted_ridge_on_collinear_columns_takes_the_least_squares_route(rng):
    """Two equal columns and no ridge: singular normal equations; lstsq's minimum-norm solution."""
    x = rng.random(30)
    Xa = np.c_[np.ones(30), x, x]
    y = 1.0 + 2.0 * x
    b = weighted_ridge(Xa, y, np.ones(30), 0.0)
    np.testing.assert_allclose(Xa @ b, y, atol=1e-10)
    np.testing.assert_allclose(b, [1.0, 1.0, 1.0], atol=1e-8)  # the weight split evenly (minimum norm)
