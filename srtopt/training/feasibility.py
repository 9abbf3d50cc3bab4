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
* :func:`repair_decisions` -- after the polish, on a classifier: the rates of ``predict()``'s decisions that a
  constraint bounds (parity of the positive rate, equalized odds: :class:`~srtopt.models.constraints.ClassRates`)
  made to hold on the training data by moving each leaf's score of the class, the routing fixed.  Within a leaf
  a shift gives the class to the rows of largest margin first, so the leaf's decisions are a prefix of its
  rows sorted by margin, and the shifts are the prefixes: a MILP over the rows' decisions x_i in {0, 1}, x of a
  row at least x of the next in its leaf's order, lower_k <= sum_i W_ik x_i <= upper_k for every rate, of the
  fewest (weighted) training errors, the fewest changed decisions among them (HiGHS through
  ``scipy.optimize.milp``).  Every leaf giving no row the class meets every gap, so the MILP is feasible.

All three solve only before the :class:`~srtopt.solvers.deadline.Deadline` they are given (the fit's
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


def repair_decisions(problem, omega, beta, deadline: Deadline | None = None):
    """beta with the scores of a class shifted leaf by leaf so that ``predict()``'s rates meet every constraint
    of the policy's ``decisions`` on the training data (module docstring), one class at a time; ``beta``
    itself when they hold, and when the MILP finds no solution by ``deadline``."""
    deadline = deadline or Deadline()
    for code in dict.fromkeys(term.code for term in problem.policy.decisions):
        terms = [term for term in problem.policy.decisions if term.code == code]
        margin, leaves = terms[0].margins(problem, omega, beta)
        W = np.column_stack([term.W for term in terms])
        lower, upper = (np.concatenate([getattr(term, side) for term in terms]) for side in ("lower", "upper"))
        current = _current(problem, terms[0], omega, beta)
        rates = W.T @ current
        if np.all((rates >= lower - FEASIBILITY_TOL) & (rates <= upper + FEASIBILITY_TOL)) or deadline.passed():
            continue
        chosen = _decisions(problem, margin, leaves, current, code, W, lower, upper, deadline)
        if chosen is not None:
            beta = terms[0].shifted(problem, beta, _shifts(margin, leaves, current, chosen, problem.tree.n_leaves))
    return beta


def _current(problem, term, omega, beta) -> np.ndarray:
    """Whether ``predict()`` gives each training row the term's class."""
    leaves = problem.tree.leaf_rows(problem.hbp_leaves(omega))
    return term.predicted_values(problem, problem.leaf_model.predict(problem.Xa, beta[leaves])) > 0


def _decisions(problem, margin, leaves, current, code, W, lower, upper, deadline):
    """The MILP's decisions x (n,) of bool, or None (no solution by the deadline): one binary per leaf and cut
    (the leaf's first j rows by margin given the class, j between rows of different margins), one cut per leaf."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_matrix

    s = problem.s
    of_class = np.asarray(problem.y) == code
    cost = s * np.where(of_class, -1.0, 1.0) + 1e-6 * s * np.where(current, -1.0, 1.0)  # errors, then changes
    cuts, columns, rates, prices = [], [], [], []
    for leaf in np.unique(leaves):
        rows = np.flatnonzero(leaves == leaf)
        rows = rows[np.argsort(-margin[rows], kind="stable")]
        ends = np.r_[0, np.flatnonzero(np.diff(margin[rows]) != 0) + 1, len(rows)]  # cuts between distinct margins
        prefix_cost, prefix_rate = np.r_[0.0, np.cumsum(cost[rows])], np.vstack([np.zeros(W.shape[1]),
                                                                                   np.cumsum(W[rows], axis=0)])
        cuts += [(rows, j) for j in ends]
        columns.append(np.full(len(ends), len(columns)))
        rates.append(prefix_rate[ends])
        prices.append(prefix_cost[ends])
    leaf_of = np.concatenate(columns)
    one_each = csr_matrix((np.ones(len(leaf_of)), (leaf_of, np.arange(len(leaf_of)))))
    constraints = [LinearConstraint(one_each, 1, 1), LinearConstraint(np.vstack(rates).T, lower, upper)]
    left = deadline.left()
    options = {} if not np.isfinite(left) else {"time_limit": max(left, 0.01)}
    result = milp(np.concatenate(prices), integrality=np.ones(len(leaf_of)), bounds=Bounds(0, 1),
                  constraints=constraints, options=options)
    if result.x is None:
        return None
    chosen = np.zeros(len(margin), dtype=bool)
    for (rows, j), picked in zip(cuts, result.x > 0.5):
        if picked:
            chosen[rows[:j]] = True
    return chosen


def _shifts(margin, leaves, current, chosen, n_leaves) -> np.ndarray:
    """The shift delta[l] of leaf l's score that turns its rows' decisions from ``current`` into ``chosen`` (both
    a prefix of its rows by margin): midway between the smallest margin given the class and the largest not;
    0 where the leaf's decisions do not change."""
    delta = np.zeros(n_leaves)
    for leaf in np.unique(leaves):
        at = leaves == leaf
        if np.array_equal(current[at], chosen[at]):
            continue
        given, denied = margin[at][chosen[at]], margin[at][~chosen[at]]
        if len(given) and len(denied):
            delta[leaf] = -(given.min() + denied.max()) / 2
        elif len(given):
            delta[leaf] = -given.min() + 1e-9 * max(1.0, abs(given.min()))
        else:
            delta[leaf] = -denied.max() - 1e-9 * max(1.0, abs(denied.max()))
    return delta


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
