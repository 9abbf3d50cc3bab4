"""Which BN and LN subproblem an inner iteration of NODEC-DR hands to its solvers: the one rule
that training and :func:`srtopt.inspect.capture` share, so a captured subproblem is the one
training solved.

* BN over omega_{W_B}: the proxy of section 4.2 rooted at r, the lowest common ancestor of t and
  W_B (:func:`~.working_sets.subproblem_root`), on the rows I_r whose HBP path contains r (at most
  ``max_rows`` of them, a uniform random subset, their weights scaled to keep the balance); E's
  own subproblem when the problem's constraint policy asks for it.
* LN over beta_{W_L}: the proxy rooted at the lowest common ancestor of t and the parents of W_L,
  on its rows I_r; E's own LN problem (every leaf's rows, root 1) with the convergence safeguards
  on, or when the constraint policy asks for it.
"""

from __future__ import annotations

import numpy as np

from .. import kernels
from .working_sets import subproblem_root


def hbp_rows(problem, omega, node: int) -> np.ndarray:
    """I_t: the training rows whose HBP path contains ``node``."""
    return np.flatnonzero(kernels.hbp_contains(problem.hbp_leaves(omega), problem.tree, node))


def branch_subproblem(problem, omega, beta, t: int, W_B, subsample=None):
    """The BN subproblem of node t and W_B (module docstring), or None when no row reaches its root.

    Parameters
    ----------
    problem : SRTProblem
        The training problem.
    omega, beta : ndarray
        The current split and leaf weights.
    t : int
        The inner iteration's node.
    W_B : tuple of int
        The branch working set.
    subsample : callable or None, default=None
        rows -> the rows kept (a random subset); None: every row of I_r.
    """
    root = subproblem_root(problem.tree, t, W_B)
    rows = hbp_rows(problem, omega, root)
    if len(rows) == 0:
        return None
    if problem.policy.exact_subproblems:
        return problem.exact_branch_subproblem(omega, beta, root, W_B)
    kept = rows if subsample is None else subsample(rows)
    return problem.branch_subproblem(omega, beta, root, W_B, kept, row_weight=len(rows) / len(kept))


def leaf_subproblem(problem, omega, beta, t: int, W_L, safeguards: bool = False):
    """The LN subproblem of node t and W_L (module docstring), or None when no row reaches its root.

    Parameters
    ----------
    problem : SRTProblem
        The training problem.
    omega, beta : ndarray
        The split weights after the BN step and the current leaf weights.
    t : int
        The inner iteration's node.
    W_L : tuple of int
        The leaf working set (non-empty).
    safeguards : bool, default=False
        Whether the convergence safeguards are on (inner iteration k >= k0): then E's own LN problem.
    """
    if safeguards or problem.policy.exact_subproblems:
        return problem.leaf_subproblem(omega, beta, 1, W_L, np.arange(len(problem.y)))
    root = subproblem_root(problem.tree, t, (), W_L)
    rows = hbp_rows(problem, omega, root)
    return problem.leaf_subproblem(omega, beta, root, W_L, rows) if len(rows) else None
