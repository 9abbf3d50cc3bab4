"""NODEC-DR (paper section 4.2-4.3): NODEC-GS with subtree working sets, the
UpdateBranchNode procedure with the data-point reassignment heuristic, the
Armijo reference step, gradient thresholds and the k0 convergence safeguards.

Where the paper's text contradicts itself or is silent (the Armijo condition, the
epsilons, the safeguards from inner iteration k0 on, the WLR class weights, subsets of I_t),
the reading taken is written, with its measurements, in docs/departures.md.

Beyond the paper: any working-set rule (:mod:`.working_sets`; the
subproblems are rooted at the lowest common ancestor of the working set), any loss
and penalty terms; with a nonsmooth penalty the Armijo reference is the proximal
Armijo step (the proximal-gradient step of the same length rule), and with a
penalty that couples all blocks (``feature_l1``) each macro iteration ends with
:class:`GroupZeroingStep` (or, for its proximal method, :class:`JointProxStep`).

With constraints (:mod:`srtopt.models.constraints`) every step keeps the iterate feasible:
the BN and LN subproblems carry the constraints (their solvers enforce them), the WLR
proxy of the reassignment heuristic carries the bounds of its split, and a heuristic
candidate that violates a constraint row is dropped for the constrained BN subproblem of
the same node; the Armijo reference is the start when its step would violate them.  With
constraint rows (parity, group losses), which sum over every training row, the BN and LN
subproblems are those of E itself (every row, the path probabilities above the node
included) rather than the paper's proxies on I_t: a proxy that does not see the rows a
constraint sums over would meet it by moving their predictions at no cost to its
objective, and E would rise (docs/departures.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from .. import kernels
from ..models.srt import WLRProxy
from ..models.terms import layout
from ..solvers import make_solver
from ..solvers.armijo import armijo_step
from ..solvers.base import acceptance, solve_interruptibly
from ..solvers.deadline import Deadline
from .nodec import Solve
from .subproblems import branch_subproblem, hbp_rows, leaf_subproblem

LN_ASCENT_TOLERANCE = 1e-12  # relative: an LN solution above its start by more is not taken


@dataclass
class Thresholds:
    """epsilon_1, epsilon_2, epsilon_3 of UpdateBranchNode, decayed by zeta per macro iteration."""

    eps1: float = 0.1
    eps2: float = 0.3
    eps3: float = 0.4
    zeta: float = 0.8

    def decay(self, macro=None):
        self.eps1 *= self.zeta
        self.eps2 *= self.zeta
        self.eps3 *= self.zeta


def _safe(k, k0):
    return k0 is not None and k >= k0


def _solver_name(solver, problem) -> str:
    chosen = getattr(solver, "choose", lambda p: None)(problem)
    return getattr(chosen or solver, "name", type(solver).__name__)


def _solve_safely(solver, subproblem, x0, kind, deadline):
    """Run a solver by ``deadline``; return (x or None, info, :class:`~.nodec.Solve`).  A formulation the
    solver does not accept, an exception and non-finite output are failures (a fallback follows)."""
    accepted = acceptance(solver, subproblem)
    if not accepted:
        return None, {"solver": _solver_name(solver, subproblem), "status": f"not accepted: {accepted.reason}"}, \
            Solve(kind, subproblem)
    try:
        result = solve_interruptibly(solver, subproblem, x0, deadline)  # Ctrl-C ends training
    except Exception as exc:  # a solver fault must not end training (fallback follows)
        return None, {"solver": _solver_name(solver, subproblem), "status": f"raised {type(exc).__name__}: {exc}"}, \
            Solve(kind, subproblem)
    info = {"solver": result.solver or _solver_name(solver, subproblem), "status": result.status,
            "success": result.success,
            "iterations": result.iterations, "seconds": result.seconds}
    return (result.x if result.usable() else None), info, Solve(kind, subproblem, result)


class BranchStep:
    """BN step of NODEC-DR: threshold test, UpdateBranchNode candidate, Armijo reference,
    acceptance by conditions (18)-(19) when the safeguards are on; its solves end by ``deadline``
    (None: none)."""

    def __init__(self, bn_solver, wlr_solver, thresholds: Thresholds, theta_w=0.1, k0=None,
                 tau=1e-6, armijo=None, wlr_C=1.0, wlr_weights="labels", max_rows=None, random_state=None,
                 deadline: Deadline | None = None):
        self.bn_solver, self.wlr_solver, self.thresholds = bn_solver, wlr_solver, thresholds
        self.deadline = deadline or Deadline()
        self.wlr_weights, self.max_rows = wlr_weights, max_rows
        self.rng = check_random_state(random_state)
        self.theta_w, self.k0, self.tau, self.wlr_C = theta_w, k0, tau, wlr_C
        self.armijo = dict(armijo or {})

    def __call__(self, problem, omega, beta, t, W_B, k):
        tree = problem.tree
        rows_W = [tree.branch_index(a) for a in W_B]
        E0, g_omega, _ = problem.objective(omega, beta, with_grad=True)
        g = g_omega[rows_W].ravel()
        if np.linalg.norm(g) <= self.theta_w**k:
            return omega, {"update": "skipped", "grad_norm": float(np.linalg.norm(g))}, []
        candidate, info, solves = self.update_branch_node(problem, omega, beta, t, W_B)
        if not _safe(k, self.k0) and candidate is not None:
            return candidate, info, solves
        x0 = omega[rows_W].ravel()

        def E_of(x):
            trial = omega.copy()
            trial[rows_W] = x.reshape(len(W_B), -1)
            return problem.objective(trial, beta)

        if problem.nonsmooth:  # the proximal Armijo step along the smooth part's gradient
            g_smooth = problem.smooth_objective(omega, beta)[1][rows_W].ravel()
            alpha, x_ref, E_ref = armijo_step(E_of, x0, E0, g_smooth, prox=problem.block_prox("omega", rows_W, omega,
                                                                                             beta), **self.armijo)
        else:
            alpha, x_ref, E_ref = armijo_step(E_of, x0, E0, g, **self.armijo)
        reference = omega.copy()
        reference[rows_W] = x_ref.reshape(len(W_B), -1)
        if not problem.policy.admits((reference, beta), (omega, beta)):
            reference, alpha, E_ref = omega, 0.0, E0  # the Armijo step leaves the feasible set: no step
        info.update(alpha=alpha, E_reference=E_ref)
        if candidate is None:
            info["update"] = "fallback"  # the candidate's solver failed
            return reference, info, solves
        E_cand = problem.objective(candidate, beta)
        step = candidate[rows_W].ravel() - x0
        if E_cand <= E_ref and E_cand <= E0 - self.tau * step @ step:  # conditions (18), (19)
            return candidate, info, solves
        info["rejected"], info["update"] = info["update"], "reference"
        return reference, info, solves

    def update_branch_node(self, problem, omega, beta, t, W_B):
        """UpdateBranchNode: WLR on omega_t if the routing at t is imbalanced, otherwise
        the NLP solver on the BN proxy over omega_{W_B}, rooted at the lowest common
        ancestor r of t and W_B, on the rows I_r.  Returns (candidate or None, info, solves)."""
        tree, eps = problem.tree, self.thresholds
        leaves = problem.hbp_leaves(omega)
        rows = hbp_rows(problem, omega, t)
        info = {"n_rows": len(rows)}
        if len(rows):
            left = kernels.hbp_contains(leaves[rows], tree, 2 * t)
            counts = problem.counts[rows]
            ratio = counts[left].sum() / counts.sum() if counts.sum() > 0 else left.mean()
            info["left_ratio"] = float(ratio)
            if (ratio <= eps.eps1 or ratio >= 1 - eps.eps1) and eps.eps1 * problem.counts.sum() >= 1:  # imbalanced
                candidate, solve_info, solve = self.reassign(problem, omega, beta, t, *self.subsample(rows, left))
                info.update(update="heuristic-wlr", **solve_info)
                if candidate is None or problem.policy.admits((candidate, beta), (omega, beta)):
                    return candidate, info, [solve]
                info["heuristic_dropped"] = "violates the constraints"  # the constrained BN subproblem instead
        sub = branch_subproblem(problem, omega, beta, t, W_B, self.subsample)
        if sub is None:
            return omega, {**info, "update": "empty"}, []
        info["n_rows"] = len(sub.rows)
        x, solve_info, solve = _solve_safely(self.bn_solver, sub, sub.start(), "bn", self.deadline)
        info.update(update="heuristic-nlp", **solve_info)
        if x is None:
            return None, info, [solve]
        if sub.value(x) > sub.value(sub.start()) and not problem.policy.takes_ascent(sub, x):
            info["kept_start"] = True  # never an ascent step
            return omega, info, [solve]
        return sub.with_x(x), info, [solve]

    def reassign(self, problem, omega, beta, t, rows, left):
        """The data-point reassignment heuristic: the WLR proxy on omega_t (rows I_t, their routing
        ``left``) solved; (candidate omega or None when its solver failed, solve info, solve)."""
        wlr = self.wlr_problem(problem, omega, beta, t, rows, left)
        x, info, solve = _solve_safely(self.wlr_solver, wlr, wlr.start(), "wlr", self.deadline)
        if x is None:
            return None, info, solve
        candidate = omega.copy()
        candidate[problem.tree.branch_index(t)] = x
        return candidate, info, solve

    def subsample(self, rows, *aligned):
        """At most ``max_rows`` of the rows (a uniform random subset), and the same entries of
        the arrays ``aligned`` (the rows alone when none is given)."""
        if self.max_rows is not None and len(rows) > self.max_rows:
            keep = np.sort(self.rng.choice(len(rows), size=self.max_rows, replace=False))
            rows, aligned = rows[keep], tuple(a[keep] for a in aligned)
        return (rows, *aligned) if aligned else rows

    def wlr_problem(self, problem, omega, beta, t, rows, left) -> WLRProxy:
        """The WLR proxy (eq. reshuffle) on I_t, with the c_i of the I_t^R points flipped
        when the routing is highly imbalanced.  Rows count by their weights (``problem.counts``: a
        row of weight k as k repeated rows); the flips go by weight, the last row flipped in part
        (its label the flipped share)."""
        counts = problem.counts[rows]
        if counts.sum() <= 0:  # rows of weight 0 alone: each counts 1
            counts = np.ones(len(rows))
        eps, n_t, n_left = self.thresholds, counts.sum(), counts[left].sum()
        c = left.astype(float)
        ratio = n_left / n_t
        if ratio <= eps.eps2 or ratio >= 1 - eps.eps2:
            major = left if n_left >= n_t - n_left else ~left
            n_flip = int(counts[major].sum() * eps.eps3)
            if n_flip > 0:
                errors = self.point_errors(problem, omega, beta, t, rows)
                candidates = np.flatnonzero(major)
                # largest error first; ties by the rows' values, so that the order of the rows does not matter
                order = candidates[np.lexsort((*problem.Z[rows[candidates]].T[::-1], -errors[candidates]))]
                share = np.clip(n_flip - (np.cumsum(counts[order]) - counts[order]), 0.0, counts[order])
                flipped = np.divide(share, counts[order], out=np.zeros(len(order)), where=counts[order] > 0)
                c[order] = c[order] + flipped * (1.0 - 2.0 * c[order])
        side = c if self.wlr_weights == "labels" else left.astype(float)  # the share of a row on side 1
        ones = counts @ side
        # each side's class weight N_t / (2 N_side) on its share of the row: a, b the weights on ln p, ln(1 - p);
        # eq. (reshuffle)'s 1/N_t is the WLR's 1/len(rows): the weights carry len(rows) / N_t
        a = counts * side * (n_t / (2 * (ones or 1.0)))
        b = counts * (1.0 - side) * (n_t / (2 * ((n_t - ones) or 1.0)))
        w = (a + b) * (len(rows) / n_t)
        if self.wlr_weights == "labels":
            c = np.divide(a, a + b, out=c, where=a + b > 0)
        p, mu = problem.n_features, problem.mu
        alpha = mu**2 / (self.wlr_C * n_t * p**2)
        row = [problem.tree.branch_index(t)]
        nonsmooth = tuple(term.exact_block("omega", row, omega, beta) for term in problem.nonsmooth
                          if "omega" in term.blocks)
        return WLRProxy(problem.Z[rows], c, w, mu, omega[row[0]], alpha, nonsmooth=nonsmooth,
                        nonsmooth_scale=problem.counts.sum() / n_t,
                        variable_bounds=problem.constraint_set.split_bounds(row[0]))

    @staticmethod
    def point_errors(problem, omega, beta, t, rows):
        """Error term of each point of I_t in the subtree of t (eq. partial_objective)."""
        tree = problem.tree
        S = kernels.split_probabilities(problem.Z[rows], omega, problem.mu)
        P = kernels.leaf_probabilities(S, tree, t)
        leaves = [tree.leaf_index(l) for l in tree.descendants_leaves(t)]
        R = problem.leaf_model.losses(problem.Xa[rows], problem.targets[rows], beta[leaves])
        return np.sum(P * R, axis=1)


class LeafStep:
    """LN step of NODEC-DR: threshold test, then the leaf subproblem, solved by ``ln_solver``
    (the "auto" choice: exact weighted least squares for the squared loss, a QP for Huber,
    ...), with the "auto" choice as fallback on failure; an ascent is not taken.  Its solves end
    by ``deadline`` (None: none)."""

    def __init__(self, ln_solver=None, theta_b=0.1, k0=None, deadline: Deadline | None = None):
        self.ln_solver = ln_solver or make_solver("ln", "auto")
        self.theta_b, self.k0 = theta_b, k0
        self._fallback = make_solver("ln", "auto")
        self.deadline = deadline or Deadline()

    def safeguards(self, k) -> bool:
        """Whether the convergence safeguards are on at inner iteration k (k >= k0): then the LN
        subproblem is E's own."""
        return _safe(k, self.k0)

    def __call__(self, problem, omega, beta, t, W_L, k):
        beta, info, solves = self._step(problem, omega, beta, t, W_L, k)
        if self.safeguards(k):
            info["safeguards"] = True  # the record says which LN subproblem the step had
        return beta, info, solves

    def _step(self, problem, omega, beta, t, W_L, k):
        if not W_L:
            return beta, {"update": "none"}, []
        tree = problem.tree
        _, _, g_beta = problem.objective(omega, beta, with_grad=True)
        g = g_beta[[tree.leaf_index(l) for l in W_L]]
        if np.linalg.norm(g) <= self.theta_b**k:
            return beta, {"update": "skipped", "grad_norm": float(np.linalg.norm(g))}, []
        sub = leaf_subproblem(problem, omega, beta, t, W_L, self.safeguards(k))
        if sub is None:
            return beta, {"update": "empty"}, []
        x, info, solve = _solve_safely(self.ln_solver, sub, sub.start(), "ln", self.deadline)
        solves = [solve]
        info["update"] = "solved"
        if x is None:
            x, fallback, solve = _solve_safely(self._fallback, sub, sub.start(), "ln-fallback", self.deadline)
            solves.append(solve)
            info.update(update="fallback", fallback_status=fallback["status"])
        if x is None:  # even the fallback failed (non-finite data): keep beta
            info["update"] = "failed"
            return beta, info, solves
        f_start = sub.value(sub.start())  # against the objective the solver reports at x
        if solve.result.objective > f_start + LN_ASCENT_TOLERANCE * max(1.0, abs(f_start)) \
                and not problem.policy.takes_ascent(sub, x):
            info["kept_start"] = True
            return beta, info, solves
        return sub.with_x(x), info, solves


class JointProxStep:
    """The macro step for penalties that couple every block (``feature_l1``): a
    proximal-gradient solve of E over all variables (``solver``, by default
    ``prox-gradient`` with at most 50 iterations) from the current iterate.  Block steps
    only shrink a feature's weights while its other weights are nonzero (the group norm
    is smooth there); this step can set a whole group to zero.  It never increases E.  Its solve
    ends by ``deadline`` (None: none)."""

    def __init__(self, solver=None, deadline: Deadline | None = None):
        self.solver = solver or make_solver("full", "prox-gradient:max_iter=50")
        self.deadline = deadline or Deadline()

    def __call__(self, problem, omega, beta, k):
        full = problem.full(omega, beta)
        x, info, solve = _solve_safely(self.solver, full, full.start(), "joint", self.deadline)
        info["update"] = "joint-prox"
        if x is None or full.evaluate(x)[0] > full.evaluate(full.start())[0]:
            info["kept_start"] = True
            return omega, beta, info, [solve]
        omega, beta = full.split(x)
        return omega, beta, info, [solve]


class GroupZeroingStep:
    """The macro step for feature_l1 with ``method="majorize"``: feature by feature, from the
    smallest group norm up, set the feature's weights in every split and leaf to zero, the leaf
    models refitted on the other features (the LN problem of every leaf, by ``ln_solver``), when
    that does not increase E.  The block steps minimize the term's majorizer, which shrinks the
    groups of unneeded features towards zero without reaching it; this step makes the zeros
    exact, and the refit lets the other features take over what a dropped one fitted
    (docs/formulations.md, "feature_l1").  It never increases E.  Its solves end by ``deadline``
    (None: none)."""

    def __init__(self, ln_solver=None, deadline: Deadline | None = None):
        self.ln_solver = ln_solver or make_solver("ln", "auto")
        self.deadline = deadline or Deadline()

    def __call__(self, problem, omega, beta, k):
        E, p, outputs, q = problem.objective(omega, beta), problem.n_features, problem.leaf_model.n_outputs, \
            problem.Xa.shape[1]
        norms = np.sqrt(np.sum(omega[:, 1:] ** 2, axis=0) + layout.feature_squares(layout.rows(beta, outputs), p))
        zeroed, solves, start = [], [], (omega, beta)
        for j in np.argsort(norms):
            if norms[j] == 0:
                continue
            trial_omega, trial_beta = omega.copy(), beta.copy()
            trial_omega[:, j + 1] = 0.0
            trial_beta[:, layout.feature_columns(j, q, outputs)] = 0.0
            trial_beta = self._refit(problem, trial_omega, trial_beta, solves)
            E_trial = problem.objective(trial_omega, trial_beta)
            if E_trial <= E and problem.policy.admits((trial_omega, trial_beta), start):
                omega, beta, E = trial_omega, trial_beta, E_trial
                zeroed.append(int(j))
        return omega, beta, {"update": "group-zeroing", "zeroed_features": zeroed}, solves

    def _refit(self, problem, omega, beta, solves):
        """beta refitted over every leaf and row with the features whose weights are all zero kept
        at zero (``beta`` itself if the solve fails)."""
        outputs, q = problem.leaf_model.n_outputs, problem.Xa.shape[1]
        dropped = np.flatnonzero(~np.any(omega[:, 1:] != 0, axis=0)
                                 & ~layout.leaf_features_used(beta, outputs, problem.n_features))
        columns = [c for j in dropped for c in layout.feature_columns(j, q, outputs)]
        sub = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(len(problem.y)),
                                      zero_columns=tuple(sorted(columns)))
        x, _, solve = _solve_safely(self.ln_solver, sub, sub.start(), "ln", self.deadline)
        solves.append(solve)
        return beta if x is None else sub.with_x(x)


def macro_step(problem, deadline: Deadline | None = None):
    """The macro step for the nonsmooth penalties of ``problem`` that couple omega and beta
    (None when there is none): :class:`GroupZeroingStep` for majorized feature_l1 terms,
    :class:`JointProxStep` otherwise; its solves end by ``deadline``."""
    coupled = [term for term in problem.nonsmooth if len(term.blocks) > 1]
    if not coupled:
        return None
    if all(getattr(term, "method", None) == "majorize" for term in coupled):
        return GroupZeroingStep(deadline=deadline)
    return JointProxStep(deadline=deadline)
