"""The SQP solver of the constrained subproblems: its dual QP step (every active set tried, the last one first)
and whole solves of small problems whose solutions are known in closed form."""

import itertools

import numpy as np
import pytest

from srtopt.solvers.deadline import Deadline
from srtopt.solvers.sqp import SQPSolver, _qp_step


class Quadratic:
    """min 1/2 x'Qx + c'x subject to low <= A x <= high, or with ``circle`` the one row |x|^2 <= 1."""

    def __init__(self, Q, c, A=None, low=None, high=None, circle=False):
        self.Q, self.c, self.circle = np.asarray(Q, float), np.asarray(c, float), circle
        self.A = np.ones((1, len(c))) if circle else np.asarray(A, float)
        self.low = np.array([-np.inf]) if circle else np.asarray(low, float)
        self.high = np.array([1.0]) if circle else np.asarray(high, float)

    def evaluate(self, x):
        return 0.5 * x @ self.Q @ x + self.c @ x, self.Q @ x + self.c

    def hessian(self, x):
        return self.Q

    def constraint_bounds(self):
        return self.low, self.high

    def constraint_values(self, x):
        return np.array([x @ x]) if self.circle else self.A @ x

    def constraint_jacobian(self, x):
        return 2 * x[None, :] if self.circle else self.A

    def lagrangian_hessian(self, x, sigma, lam):
        return sigma * self.Q + (2 * lam[0] * np.eye(len(x)) if self.circle else 0.0)


@pytest.mark.parametrize("seed", range(20))
def test_the_last_active_set_tried_first_gives_the_same_step(seed):
    rng = np.random.default_rng(seed)
    n, m = 5, 3
    R = rng.standard_normal((n, n))
    H, grad, J = R @ R.T + np.eye(n), rng.standard_normal(n), rng.standard_normal((m, n))
    low, high = -rng.random(m) * 0.3, np.where(rng.random(m) < 0.5, np.inf, rng.random(m) * 0.3)
    reference_d, reference_nu = _qp_step(H, grad, J, low, high)
    for guess in itertools.product((-1, 0, 1), repeat=m):
        d, nu = _qp_step(H, grad, J, low, high, np.array(guess))
        np.testing.assert_allclose(nu, reference_nu, atol=1e-10)
        np.testing.assert_allclose(d, reference_d, atol=1e-10)
    # the step solves the QP: its rows hold, and it is stationary with the multipliers of the sides they take
    rows = J @ reference_d
    assert np.all(rows >= low - 1e-9) and np.all(rows <= high + 1e-9)
    np.testing.assert_allclose(H @ reference_d + grad + J.T @ reference_nu, 0.0, atol=1e-9)
    assert np.all((reference_nu <= 1e-12) | np.isclose(rows, high)) and np.all((reference_nu >= -1e-12) |
                                                                                 np.isclose(rows, low))


def test_a_linear_row_that_binds():
    """min (x0 - 1)^2 + (x1 - 2)^2 subject to x0 + x1 <= 1: x = (0, 1), multiplier 2."""
    problem = Quadratic(2 * np.eye(2), [-2.0, -4.0], [[1.0, 1.0]], [-np.inf], [1.0])
    result = SQPSolver()._solve(problem, np.zeros(2), Deadline(None))
    assert result.success
    np.testing.assert_allclose(result.x, [0.0, 1.0], atol=1e-8)
    np.testing.assert_allclose(result.raw["multipliers"], [2.0], atol=1e-8)


def test_a_nonlinear_row_that_binds():
    """min 0.05 |x|^2 - (x0 + x1) subject to |x|^2 <= 1: x = (1, 1) / sqrt(2), from an infeasible start."""
    problem = Quadratic(0.1 * np.eye(2), [-1.0, -1.0], circle=True)
    result = SQPSolver()._solve(problem, np.array([1.5, 0.2]), Deadline(None))
    assert result.success
    np.testing.assert_allclose(result.x, [2**-0.5, 2**-0.5], atol=1e-7)


def test_a_long_flat_descent_takes_longer_steps_as_the_capped_ones_succeed():
    """min 1e-4 / 2 (x0 - 100)^2 + (x1 - 1)^2 subject to x0 + x1 <= 1000 (not binding): the Newton step to
    x0 = 100 is capped at STEP_CAP, and the cap doubles while the capped steps are taken whole (5, 10, 20, 40, ...):
    a handful of iterations where a fixed cap of 5 takes 20."""
    problem = Quadratic(np.diag([1e-4, 2.0]), [-1e-2, -2.0], [[1.0, 1.0]], [-np.inf], [1000.0])
    result = SQPSolver()._solve(problem, np.zeros(2), Deadline(None))
    assert result.success and result.iterations <= 8
    np.testing.assert_allclose(result.x, [100.0, 1.0], atol=1e-6)
