"""What a problem's constraints imply for training, decided in one place.

NODEC-DR, the feasibility steps at either end of training, the estimators and the capture of a
subproblem ask a problem's :class:`ConstraintPolicy` (``problem.policy``); none of them looks at
the constraint terms to decide:

* **which subproblem a node gets** (:attr:`ConstraintPolicy.exact_subproblems`): with constraint
  rows that sum over every training row (parity, group losses: a
  :class:`~.soft_means.SoftMean`), the BN and LN subproblems of E itself (every row, the path
  probabilities above the node included) instead of the paper's proxies on I_t.  A proxy that does
  not see the rows a constraint sums over would meet it by moving their predictions at no cost to
  its objective, and E would rise (docs/departures.md);
* **which iterate may replace another** (:meth:`ConstraintPolicy.keeps`,
  :meth:`ConstraintPolicy.admits`): a step, a heuristic candidate or an Armijo reference step that
  violates the constraints by more than :data:`~.base.FEASIBILITY_TOL` and by more than the
  iterate it replaces is not taken, so a feasible iterate stays feasible;
* **when a subproblem's ascent is taken** (:meth:`ConstraintPolicy.takes_ascent`): never, except
  when it makes the subproblem's constraints hold better (from an infeasible start, feasibility
  comes first);
* **which iterate is best** (:func:`rank`): the feasible one of lowest E; while none is feasible,
  the least infeasible;
* **whether the model is repaired at the ends of training** (:attr:`ConstraintPolicy.repairs`):
  with constraint rows, the start is made feasible and the final leaves are polished so that
  ``predict()`` meets the rows too (:mod:`srtopt.training.feasibility`); a constraint whose
  guarantee on the soft model does not carry over to ``predict()``'s decisions repairs them
  (:meth:`ConstraintPolicy.repair_predictions`: a class's recall), and the constraints on the rates of a
  classifier's decisions (:attr:`ConstraintPolicy.decisions`) are met by moving each leaf's score
  (:func:`srtopt.training.feasibility.repair_decisions`).

Without constraints every rule lets everything through and every violation is 0, so the callers
need no test of their own.
"""

from __future__ import annotations

from .base import FEASIBILITY_TOL


def rank(E: float, violation: float) -> tuple:
    """The sort key of an iterate (E, violation): feasible before infeasible, then the less
    infeasible, then the lower E.

    >>> sorted([(1.0, 0.5), (3.0, 0.0), (2.0, 0.0), (0.5, 0.9)], key=lambda p: rank(*p))
    [(2.0, 0.0), (3.0, 0.0), (1.0, 0.5), (0.5, 0.9)]
    """
    infeasible = violation > FEASIBILITY_TOL
    return (infeasible, violation if infeasible else 0.0, E)


class ConstraintPolicy:
    """The training rules of one problem's constraints (module docstring).

    Parameters
    ----------
    problem : SRTProblem
        The problem; its constraint set decides.
    """

    def __init__(self, problem):
        self.problem = problem
        self.exact_subproblems = bool(problem.constraint_set.soft)
        self.repairs = self.exact_subproblems
        self.decisions = tuple(term for term in problem.constraints if term.decides)

    def violation(self, omega, beta) -> float:
        """The constraints' largest violation at (omega, beta) (0 without constraints)."""
        return self.problem.violation(omega, beta)

    @staticmethod
    def keeps(violation: float, before: float) -> bool:
        """Whether an iterate violating the constraints by ``violation`` may replace one violating them
        by ``before``."""
        return violation <= max(FEASIBILITY_TOL, before)

    def admits(self, candidate: tuple, current: tuple) -> bool:
        """Whether the iterate ``candidate`` = (omega, beta) may replace ``current``."""
        return self.keeps(self.violation(*candidate), self.violation(*current))

    def repair_predictions(self, omega, beta):
        """beta after every constraint's repair of ``predict()`` on the training data (a class's recall bound
        raises its score, :meth:`~.base.Constraint.repair_predictions`; the others leave it)."""
        for term in self.problem.constraints:
            beta = term.repair_predictions(self.problem, omega, beta)
        return beta

    def takes_ascent(self, subproblem, x) -> bool:
        """Whether a solution x that raises ``subproblem``'s objective above its start is still taken."""
        return self.exact_subproblems and \
            subproblem.violation(x) < subproblem.violation(subproblem.start()) - FEASIBILITY_TOL
