"""srtopt.training.feasibility: the start restored and the predictions polished to the
constraints, each solving only before the deadline it is given."""

import numpy as np

from srtopt.models.constraints import FEASIBILITY_TOL, Parity
from srtopt.models.srt import SRTProblem
from srtopt.solvers import make_solver
from srtopt.solvers.deadline import Deadline
from srtopt.training.feasibility import polish, restore
from srtopt.tree import Tree


def _problem():
    """A depth-2 tree whose groups differ by 2 in mean, under a parity bound of 0.01."""
    rng = np.random.default_rng(0)
    X, groups = rng.random((80, 3)), rng.integers(0, 2, 80)
    problem = SRTProblem(X, rng.standard_normal(80) + 2 * groups, Tree(2), mu=1.3, lambda_w=0.05, lambda_b=0.02,
                         groups=groups, constraints=(Parity(0.01),))
    return problem, 2 * rng.standard_normal((3, 4)), rng.standard_normal((4, 4))


def test_restore_and_polish_solve_before_the_deadline_and_leave_the_coefficients_after():
    problem, omega, beta = _problem()
    solver = make_solver("ln", "auto")
    assert problem.violation(omega, beta) > FEASIBILITY_TOL
    assert problem.violation(*restore(problem, omega, beta, solver)) <= FEASIBILITY_TOL
    assert not np.array_equal(polish(problem, omega, beta, solver), beta)
    late_omega, late_beta = restore(problem, omega, beta, solver, Deadline(0))
    assert polish(problem, omega, beta, solver, deadline=Deadline(0)) is beta
    for late, projected in zip((late_omega, late_beta), problem.project(omega, beta)):
        np.testing.assert_array_equal(late, projected)
