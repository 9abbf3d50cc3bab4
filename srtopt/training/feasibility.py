"""The constraints at the two ends of training: a feasible start, and predictions that meet them.

NODEC keeps a feasible iterate feasible (:mod:`.nodec`); these two steps give it one and make
the model that ``predict()`` uses meet the constraints too:

* :func:`restore` -- after the initialization (which ignores the constraint rows): the split
  weights and leaf coefficients clipped to their bounds, then, when a constraint row is still
  violated, the LN subproblem of every leaf over every training row with the constraints
  (a QP for parity, IPOPT for group losses).  beta = 0 meets every parity constraint, so there
  that problem is feasible and training starts feasible; a group-loss bound the initial splits
  cannot meet leaves the least infeasible coefficients IPOPT finds, and NODEC's steps then
  never increase the violation.
* :func:`polish` -- after training: the same LN subproblem with the soft-mean constraints
  also on the predictions of the HBP routing (``predict()`` on the training data), so that they
  hold for both the soft model and the hard one; kept only if its solution meets both.  With
  the predictions clipped to the training range, the rows the solution sends outside it are
  held at the bounds they are clipped to (and kept beyond them, :class:`HeldPredictions`) and the
  problem solved again, until no other row leaves the range (at most ``CLIP_ROUNDS`` solves):
  then the constraints hold for the clipped predictions exactly.

Both solve only before the :class:`~srtopt.solvers.deadline.Deadline` they are given (the fit's
``time_limit``); their solvers stop at it.
"""

from __future__ import annotations

import numpy as np

from ..models.constraints import FEASIBILITY_TOL, HeldPredictions, Routing
from ..solvers.base import acceptance, solve_interruptibly
from ..solvers.deadline import Deadline

CLIP_ROUNDS = 10  # solves of the polish that hold the clipped rows


def restore(problem, omega, beta, ln_solver, deadline: Deadline | None = None):
    """(omega, beta) within the bounds and, where it can be, meeting the constraint rows, solved by
    ``deadline`` (module docstring).  Without constraints, (omega, beta) unchanged."""
    deadline = deadline or Deadline()
    omega, beta = problem.project(omega, beta)
    if problem.violation(omega, beta) <= FEASIBILITY_TOL or deadline.passed():
        return omega, beta
    sub = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(len(problem.y)))
    x = _solve(ln_solver, sub, deadline)
    if x is not None and sub.violation(x) < sub.violation(sub.start()):
        beta = sub.with_x(x)
    return omega, beta


def polish(problem, omega, beta, ln_solver, clip=None, deadline: Deadline | None = None):
    """beta whose soft model and HBP predictions on the training data both meet the soft-mean
    constraints (module docstring), the predictions clipped to ``clip`` = (lower, upper) in training
    units (None: not clipped), solved by ``deadline``; ``beta`` when the constraint policy asks for no
    repair or no solve meets them."""
    if not problem.policy.repairs:
        return beta
    deadline = deadline or Deadline()
    leaves, n = problem.hbp_leaves(omega), len(problem.y)
    held, values, best = np.zeros(n, dtype=bool), np.zeros(n), beta
    for _ in range(CLIP_ROUNDS):
        if deadline.passed():
            return best
        routing = Routing(leaves, held, values)
        hard = [(term, routing) for term in problem.constraint_set.soft]
        if held.any():  # the held rows stay clipped: their predictions are the values held
            rows = np.flatnonzero(held)
            low = values[rows] <= clip[0]
            hold = HeldPredictions(rows, np.where(low, -np.inf, clip[1]), np.where(low, clip[0], np.inf))
            hard.append((hold.bind(problem), Routing(leaves)))
        sub = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(n), hard=hard)
        x = _solve(ln_solver, sub, deadline)
        if x is None or sub.violation(x) > FEASIBILITY_TOL:
            return best
        best = sub.with_x(x)
        if clip is None:
            return best
        prediction = np.einsum("ij,ij->i", problem.Xa, best[problem.tree.leaf_rows(leaves)])
        clipped = np.clip(prediction, *clip)
        leaving = (clipped != prediction) & ~held
        if not leaving.any():
            return best
        held, values = held | leaving, np.where(leaving, clipped, values)
    return best


def _solve(solver, sub, deadline):
    """The solver's x for ``sub`` by ``deadline`` (None if it does not accept it, fails or returns no
    finite point)."""
    if not acceptance(solver, sub):
        return None
    try:
        result = solve_interruptibly(solver, sub, sub.start(), deadline)
    except Exception:  # a solver fault leaves the coefficients as they are
        return None
    return result.x if result.usable() else None
