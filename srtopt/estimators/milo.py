"""scikit-learn regressor for the MILO deterministic tree (ORT-L style).

The formulation lives in :mod:`srtopt.models.milo` (``MILOTree``); the MILP solvers
in :mod:`srtopt.solvers.milp` (kind "milp" of ``make_solver``); this module scales the
data, builds a warm start, calls the solver with a time limit and turns the incumbent
into a fitted tree.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.optimize import linprog
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from srtopt.estimators.reading import TreeMixin
from srtopt.estimators.scaling import MinMaxTarget, _n_rows, scaled_input
from srtopt.models.milo import MILOSolution, MILOTree, route
from srtopt.solvers import SolverUnavailableError, make_solver
from srtopt.solvers.milp import available_milp_solvers
from srtopt.tree import Tree

__all__ = ["MILOTreeRegressor", "available_milp_solvers"]

# ---------------------------------------------------------------- warm start
def _leaf_lp(X, y, n_total, l1, B, B0):
    """Exact leaf model for the MILO objective restricted to one leaf.

    min (1/n_total) sum_i |y_i - b0 - x_i beta| + l1 ||beta||_1, |beta| <= B,
    |b0| <= B0, as an LP: beta = u - v, residual = e+ - e-.
    """
    n, p = X.shape
    if n == 0:
        return 0.0, np.zeros(p)
    # variables: b0, u (p), v (p), e+ (n), e- (n)
    c = np.concatenate([[0.0], np.full(2 * p, l1), np.full(2 * n, 1.0 / n_total)])
    A = np.hstack([np.ones((n, 1)), X, -X, np.eye(n), -np.eye(n)])
    bounds = [(-B0, B0)] + [(0, B)] * (2 * p) + [(0, None)] * (2 * n)
    res = linprog(c, A_eq=A, b_eq=y, bounds=bounds, method="highs")
    if res.status != 0:  # fall back to a clipped least-squares fit
        coef, *_ = np.linalg.lstsq(np.hstack([np.ones((n, 1)), X]), y, rcond=None)
        return float(np.clip(coef[0], -B0, B0)), np.clip(coef[1:], -B, B)
    x = res.x
    return float(x[0]), x[1 : 1 + p] - x[1 + p : 1 + 2 * p]


def _cart_structure(Xs, ys, depth, random_state):
    """Branch features/thresholds (scaled units) of a CART tree, MILP-feasible.

    sklearn sends x <= thr left.  For each split we take b_t = the smallest
    value of feature f among the points that CART sends right at t: then left
    points satisfy x_f + eps_f <= b_t (distinct values differ by >= eps_f) and
    right points x_f >= b_t, i.e. the MILP's ``route_left``/``route_right``.
    A CART leaf above depth D becomes a non-splitting node (d_t = 0) whose
    whole subtree sends points right, as in the MILP.
    """
    tree = Tree(depth)
    cart = DecisionTreeRegressor(max_depth=depth, random_state=random_state).fit(Xs, ys)
    tr = cart.tree_
    feats = np.full(tree.n_branch, -1, dtype=np.int64)
    thr = np.zeros(tree.n_branch)

    def visit(t, k, idx):
        if not tree.is_branch(t):
            return
        if k is None or tr.children_left[k] == -1:
            for s in tree.subtree_branch(t):
                feats[s - 1] = -1
            return
        f = int(tr.feature[k])
        go_left = Xs[idx, f] <= tr.threshold[k]
        if go_left.all() or (~go_left).all():
            visit(t, None, idx)
            return
        feats[t - 1] = f
        thr[t - 1] = float(Xs[idx[~go_left], f].min())
        visit(2 * t, int(tr.children_left[k]), idx[go_left])
        visit(2 * t + 1, int(tr.children_right[k]), idx[~go_left])

    visit(1, 0, np.arange(Xs.shape[0]))
    return feats, thr


def _best_splits(Xs, ys, idx, min_leaf, ridge=1e-8):
    """All admissible axis-aligned splits of the points ``idx`` scored by the sum
    of the least-squares SSE of a linear model in each child (prefix Gram
    matrices, one batched solve per feature).  Returns a list of
    (sse, feature, threshold) sorted by sse; threshold = smallest right value.
    """
    n = idx.size
    out = []
    if n < 2 * min_leaf:
        return out
    Z = np.hstack([np.ones((n, 1)), Xs[idx]])
    yy = ys[idx]
    q = Z.shape[1]
    reg = ridge * np.eye(q)
    for j in range(Xs.shape[1]):
        order = np.argsort(Xs[idx, j], kind="stable")
        xv = Xs[idx[order], j]
        Zo, yo = Z[order], yy[order]
        G = np.cumsum(Zo[:, :, None] * Zo[:, None, :], axis=0)
        c = np.cumsum(Zo * yo[:, None], axis=0)
        s = np.cumsum(yo**2)
        k = np.arange(min_leaf, n - min_leaf + 1)  # left = first k points
        k = k[xv[k - 1] < xv[np.minimum(k, n - 1)]] if k.size else k
        if k.size == 0:
            continue
        GL, cL, sL = G[k - 1], c[k - 1], s[k - 1]
        GR, cR, sR = G[-1] - GL, c[-1] - cL, s[-1] - sL
        bl = np.linalg.solve(GL + reg, cL[..., None])[..., 0]
        br = np.linalg.solve(GR + reg, cR[..., None])[..., 0]
        sse = (sL - np.einsum("kq,kq->k", bl, cL)) + (sR - np.einsum("kq,kq->k", br, cR))
        for kk, e in zip(k, sse):
            out.append((float(max(e, 0.0)), j, float(xv[kk])))
    out.sort(key=lambda r: r[0])
    return out


def _greedy_structure(Xs, ys, depth, min_leaf, lookahead=3):
    """Top-down greedy tree with linear leaves (a warm start for linear-leaf trees).

    At each node the split minimizing the children's linear least-squares SSE is
    taken; at nodes with at least two levels below, the ``lookahead`` best
    candidates are each completed greedily and the one with the lowest final
    SSE is kept, plus at the root the best candidate of every feature (so a feature
    whose gain only shows one level deeper is not missed).  Thresholds are MILP-feasible (smallest right value).
    """
    tree = Tree(depth)
    min_leaf = max(int(min_leaf), Xs.shape[1] + 2)

    def sse_linear(idx):
        if idx.size == 0:
            return 0.0
        Z = np.hstack([np.ones((idx.size, 1)), Xs[idx]])
        coef, *_ = np.linalg.lstsq(Z, ys[idx], rcond=None)
        return float(np.sum((ys[idx] - Z @ coef) ** 2))

    def build(t, idx):
        """Return (sse, {t: (f, b)}) for the subtree rooted at t."""
        if not tree.is_branch(t):
            return sse_linear(idx), {}
        cands = _best_splits(Xs, ys, idx, min_leaf)
        if not cands:
            return sse_linear(idx), {}
        if tree.subtree_depth(t) == 1:
            e, f, b = cands[0]
            return e, {t: (f, b)}
        # lookahead candidates: the best few overall, plus at the root the best of
        # each feature
        chosen, seen = list(cands[: max(1, lookahead)]), set()
        for c in cands if t == 1 else ():
            if c[1] not in seen:
                seen.add(c[1])
                chosen.append(c)
        best = None
        for _, f, b in dict.fromkeys(chosen):
            left = idx[Xs[idx, f] < b]
            right = idx[Xs[idx, f] >= b]
            el, sl = build(2 * t, left)
            er, sr = build(2 * t + 1, right)
            if best is None or el + er < best[0]:
                best = (el + er, {t: (f, b), **sl, **sr})
        return best

    _, splits = build(1, np.arange(Xs.shape[0]))
    feats = np.full(tree.n_branch, -1, dtype=np.int64)
    thr = np.zeros(tree.n_branch)
    # a node without a split sends everything right: drop splits below it
    for t in tree.branch_nodes:
        if t in splits and (t == 1 or feats[t // 2 - 1] >= 0):
            feats[t - 1], thr[t - 1] = splits[t]
    return feats, thr


def _representable(milo: MILOTree, feats, thr):
    """Drop (top-down) splits the MILP cannot represent: the largest left value
    plus eps_f must not exceed b_t (gaps below ``min_epsilon``)."""
    feats, thr, tree = feats.copy(), thr.copy(), milo.tree
    for t in tree.branch_nodes:
        f = int(feats[t - 1])
        if f < 0:
            continue
        leaf = route(milo.X, feats, thr, tree.depth)
        xl = milo.X[np.isin(leaf, tree.descendants_leaves(2 * t)), f]
        if xl.size and xl.max() + milo.eps[f] > thr[t - 1] + 1e-12:
            for s in tree.subtree_branch(t):
                feats[s - 1] = -1
    return feats, thr


def _structure_start(milo: MILOTree, feats, thr) -> MILOSolution:
    """Complete a tree structure with the exact (LP-optimal) leaf models."""
    Xs, ys, tree = milo.X, milo.y, milo.tree
    feats, thr = _representable(milo, feats, thr)
    leaf = route(Xs, feats, thr, tree.depth)
    N, p = Xs.shape
    beta0 = np.zeros(tree.n_leaves)
    beta = np.zeros((tree.n_leaves, p))
    for t in tree.leaves:
        k = tree.leaf_index(t)
        mask = leaf == t
        beta0[k], beta[k] = _leaf_lp(
            Xs[mask], ys[mask], max(N, 1), milo.l1, milo.coef_bound, milo.intercept_bound
        )
    return MILOSolution(feats.copy(), thr.copy(), beta0, beta, leaf)


def _tree_objective(milo: MILOTree, sol: MILOSolution) -> tuple[float, np.ndarray]:
    """MILO objective of a tree evaluated directly (numpy), and its residuals."""
    Xs, ys, tree = milo.X, milo.y, milo.tree
    leaf = route(Xs, sol.features, sol.thresholds, tree.depth)
    rows = tree.leaf_rows(leaf)
    pred = sol.beta0[rows] + np.einsum("ij,ij->i", Xs, sol.beta[rows])
    r = np.abs(ys - pred)
    obj = r.mean() + milo.l1 * np.abs(sol.beta).sum() + milo.cp * np.sum(sol.features >= 0)
    return float(obj), r


class MILOTreeRegressor(TreeMixin, RegressorMixin, BaseEstimator):
    """Optimal deterministic regression tree with linear leaves, by MILO (ORT-L style).

    Depth-D tree with axis-aligned splits and a linear (l1-penalized) model per
    leaf, trained by solving the MILP of :class:`srtopt.models.milo.MILOTree`
    (mean absolute error on standardized y, see there why L1) with a Pyomo
    MILP solver.  Features are min-max scaled to [0, 1] and y standardized
    with training statistics; predictions are mapped back.

    Parameters
    ----------
    depth : int, default=2
    l1 : float, default=1e-3
        l1 penalty on leaf slopes (scaled units).
    cp : float, default=0.0
        Complexity penalty per applied split.
    time_limit : float, default=60.0
        Wall-clock budget in seconds for the whole fit (model build + warm
        start + solve; the solver gets what is left, at least 10% of it).
        When it is hit, the best incumbent is returned and ``mip_gap_`` > 0.
    solver : str, default="highs"
        "highs" (HiGHS through Pyomo's APPSI interface, supports MIP starts) or
        any Pyomo ``SolverFactory`` MILP solver name.
    warm_start : {"cart", "greedy", "best", None}, default="cart"
        "cart": structure of ``DecisionTreeRegressor(max_depth=depth)``;
        "greedy": top-down greedy tree whose splits are scored with linear
        least-squares leaves (with a small lookahead), which suits linear
        leaves much better than CART's constant-leaf criterion; "best": both,
        keep the one with the lower MILO objective.  In every case the leaf
        models are solved exactly for the MILO objective (an LP per leaf) and
        the result is handed to the solver as a MIP start.  The returned tree
        is never worse than the warm start.  Booleans are accepted because
        scikit-learn's convention for a ``warm_start`` parameter is a flag
        (its checks set ``warm_start=False``): True means "cart", False None.
        Note the meaning differs from sklearn's (reuse of a previous fit).
    random_state : int or None
        Seed for CART and for the solver (HiGHS ``random_seed``).
    coef_bound, intercept_bound, min_samples_leaf : see ``MILOTree``.
    mip_gap : float, default=1e-4
        Relative gap at which the solver stops.
    threads : int, default=1
        Solver threads (the machines this runs on are shared).
    solver_options : dict or None
        Extra options passed verbatim to the solver.
    keep_model : bool, default=True
        Keep the ``MILOTree`` (Pyomo model with the solution loaded) in ``model_``.
    verbose : int, default=0
        >= 1: the steps on stderr (model built, warm start, solve, result) and the
        MILP solver's own log (HiGHS prints a line every few seconds while it works).

    Attributes
    ----------
    scaler_ : the training statistics of the internal scaling (x_min, x_scale, y_mean,
        y_std), as for :class:`~srtopt.SoftRegressionTree`.
    split_feature_ : (2^D-1,) int, feature of branch node t at index t-1, -1
        when the node does not split (all points go right).
    split_threshold_ : (2^D-1,) thresholds in original units (nan if no split);
        ``split_threshold_scaled_`` the same in scaled units.  A point goes left
        iff its scaled feature value is < the scaled threshold.
    leaf_coef_ : (2^D, p) and leaf_intercept_ : (2^D,) leaf models in original
        units (``leaf_coef_scaled_``/``leaf_intercept_scaled_`` in scaled units,
        y standardized).
    objective_ : MILO objective of the returned tree (scaled units).
    mip_bound_ : best lower bound proved by the solver (None if unknown).
    mip_gap_ : (objective_ - mip_bound_) / max(|objective_|, 1e-9), >= 0; nan
        if no bound is known.
    solver_status_ : solver termination condition ("optimal", "maxTimeLimit",
        ...), "warm_start" if the solver returned no better tree, or
        "no_incumbent (...)" if there was neither a start nor an incumbent (then
        the tree has no split: one linear model, with a warning).
    warm_start_objective_ : objective of the warm start (nan if none).
    fit_seconds_, solve_seconds_ : wall-clock times.
    model_ : ``MILOTree`` (if keep_model) for inspection / export.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((30, 2))
    >>> y = np.where(X[:, 0] < 0.5, 1 + X[:, 1], -X[:, 1])
    >>> tree = MILOTreeRegressor(depth=1, time_limit=10, random_state=0).fit(X, y)
    >>> int(tree.split_feature_[0]), tree.get_n_leaves(), bool(tree.score(X, y) > 0.99)
    (0, 2, True)
    """

    def __init__(
        self,
        depth=2,
        l1=1e-3,
        cp=0.0,
        time_limit=60.0,
        solver="highs",
        warm_start="cart",
        random_state=None,
        coef_bound=10.0,
        intercept_bound=None,
        min_samples_leaf=1,
        mip_gap=1e-4,
        threads=1,
        solver_options=None,
        keep_model=True,
        verbose=0,
    ):
        self.depth = depth
        self.l1 = l1
        self.cp = cp
        self.time_limit = time_limit
        self.solver = solver
        self.warm_start = warm_start
        self.random_state = random_state
        self.coef_bound = coef_bound
        self.intercept_bound = intercept_bound
        self.min_samples_leaf = min_samples_leaf
        self.mip_gap = mip_gap
        self.threads = threads
        self.solver_options = solver_options
        self.keep_model = keep_model
        self.verbose = verbose

    # ------------------------------------------------------------ validation
    def _check_params(self):
        def bad(name, why):
            raise ValueError(f"{name} {why}, got {getattr(self, name)!r}")

        if not isinstance(self.depth, Integral) or isinstance(self.depth, bool) or self.depth < 1:
            bad("depth", "must be an integer >= 1")
        for name in ("l1", "cp", "mip_gap"):
            v = getattr(self, name)
            if not isinstance(v, Real) or not math.isfinite(v) or v < 0:
                bad(name, "must be a finite number >= 0")
        tl = self.time_limit
        if not isinstance(tl, Real) or isinstance(tl, bool) or not (tl > 0) or math.isnan(tl):
            bad("time_limit", "must be a number > 0 (seconds)")
        if not isinstance(self.coef_bound, Real) or not (self.coef_bound > 0):
            bad("coef_bound", "must be > 0")
        if self.intercept_bound is not None and not (self.intercept_bound > 0):
            bad("intercept_bound", "must be > 0 or None")
        if not isinstance(self.min_samples_leaf, Integral) or self.min_samples_leaf < 1:
            bad("min_samples_leaf", "must be an integer >= 1")
        if not (isinstance(self.warm_start, bool) or self.warm_start in ("cart", "greedy", "best", None)):
            bad("warm_start", "must be 'cart', 'greedy', 'best', None, True ('cart') or False (None)")
        if not isinstance(self.threads, Integral) or self.threads < 1:
            bad("threads", "must be an integer >= 1")
        if not isinstance(self.solver, str):
            bad("solver", "must be a Pyomo solver name (str)")

    def _check_solver(self):
        try:
            make_solver("milp", self.solver)
        except SolverUnavailableError:
            raise ValueError(
                f"solver={self.solver!r} is not available through Pyomo here; available MILP solvers: "
                f"{available_milp_solvers() or 'none'}"
            ) from None

    def _validate_fit_input(self, X, y):
        if y is None:
            raise ValueError(
                "MILOTreeRegressor requires y to be passed, but the target y is None"
            )
        if hasattr(X, "shape") and not hasattr(X, "toarray") and len(getattr(X, "shape", ())) == 1:
            raise ValueError(
                f"X must be 2-D (n_samples, n_features), got a 1-D array of shape {X.shape}; "
                "reshape with X.reshape(-1, 1) for one feature or X.reshape(1, -1) for one sample"
            )
        nx, ny = _n_rows(X), _n_rows(y)
        if nx is not None and ny is not None and nx != ny:
            raise ValueError(f"X and y have inconsistent numbers of samples: X has {nx}, y has {ny}")
        try:
            return validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        except ValueError as e:
            msg = str(e)
            if "could not convert" in msg or "dtype" in msg:
                raise ValueError(f"X and y must be numeric: {msg}") from e
            raise

    # ------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Scale, warm start, solve the MILP within ``time_limit``, store the tree."""
        t0 = time.perf_counter()
        self._check_params()
        X, y = self._validate_fit_input(X, y)
        self._check_solver()
        D = int(self.depth)
        N, p = X.shape

        # the shared scaling convention (srtopt.estimators.scaling), training data only
        self.scaler_ = MinMaxTarget().fit(X, y)
        Xs = np.clip(self.scaler_.transform(X), 0.0, 1.0)
        ys = self.scaler_.transform_y(y)

        milo = MILOTree(
            Xs, ys, D, l1=self.l1, cp=self.cp, coef_bound=self.coef_bound,
            intercept_bound=self.intercept_bound, min_samples_leaf=self.min_samples_leaf,
        )
        self.build_seconds_ = time.perf_counter() - t0
        self._say(f"MILO tree of depth {D} on {N} rows x {p} features: model built in {self.build_seconds_:.2f} s")

        start = None
        self.warm_start_objective_ = float("nan")
        ws = {True: "cart", False: None}.get(self.warm_start, self.warm_start)
        if ws is not None:
            candidates = []
            if ws in ("cart", "best"):
                candidates.append(_cart_structure(Xs, ys, D, self.random_state))
            if ws in ("greedy", "best"):
                candidates.append(_greedy_structure(Xs, ys, D, self.min_samples_leaf))
            counts_ok = lambda s: self.min_samples_leaf <= 1 or not np.any(
                (c := np.bincount(Tree(D).leaf_rows(s.leaf), minlength=2**D)) > 0
            ) or np.all(c[c > 0] >= self.min_samples_leaf)
            for feats, thr in candidates:
                cand = _structure_start(milo, feats, thr)
                if not counts_ok(cand):
                    continue  # violates min_samples_leaf: not a feasible start
                obj, _ = _tree_objective(milo, cand)
                if start is None or obj < self.warm_start_objective_:
                    start, self.warm_start_objective_ = cand, obj
            if start is not None:
                milo.set_solution(start)

        options = {"threads": int(self.threads)} if self.solver in ("highs", "appsi_highs") else {}
        if self.random_state is not None and self.solver in ("highs", "appsi_highs"):
            options["random_seed"] = int(check_random_state(self.random_state).randint(2**31 - 1))
        options.update(self.solver_options or {})
        remaining = max(self.time_limit - (time.perf_counter() - t0), 0.1 * self.time_limit)
        self._say(f"warm start {ws}: objective {self.warm_start_objective_:.6g}; solving with {self.solver} for "
                  f"at most {remaining:.1f} s (time_limit {self.time_limit:g} s); the solver's log follows")
        ts = time.perf_counter()
        solver = make_solver("milp", self.solver, tol=float(self.mip_gap), time_limit=remaining,
                             verbosity=int(self.verbose), options=options)
        result = solver.solve(milo, start)
        status, has_sol, bound = result.status, result.success, result.bound
        obj = result.objective if has_sol else None
        self.solve_seconds_ = time.perf_counter() - ts

        sol, rerouted = None, False
        if has_sol:
            sol = milo.snap_thresholds(milo.get_solution())
            leaf = route(Xs, sol.features, sol.thresholds, D)
            if not np.array_equal(leaf, sol.leaf):  # tolerance trouble: trust the tree
                warnings.warn("MILO incumbent's assignment z disagrees with its splits; re-routing")
                sol, rerouted = _structure_start(milo, sol.features, sol.thresholds), True
        chosen = "solver"
        if start is not None:
            start_obj, _ = _tree_objective(milo, start)
            if sol is None or _tree_objective(milo, sol)[0] > start_obj + 1e-9:
                sol, chosen = start, "warm_start"
        if sol is None:
            # no start and no incumbent within the limit: return the trivial
            # feasible tree (no split, one linear model) rather than nothing
            warnings.warn(
                f"solver {self.solver!r} found no feasible tree within the time limit (status "
                f"{status}) and no warm start was given; returning a tree without splits. "
                "Increase time_limit or use warm_start='cart'."
            )
            sol = _structure_start(milo, np.full(2**D - 1, -1, dtype=np.int64), np.zeros(2**D - 1))
            chosen = "fallback"
        if chosen == "solver" and not rerouted:
            # keep the solver's values (z, r, beta, ...); only b_t is snapped (not in the objective)
            for t in milo.tree.branch_nodes:
                if sol.features[t - 1] >= 0:
                    milo.model.b[t].set_value(float(sol.thresholds[t - 1]))
        else:
            milo.set_solution(sol)  # the model holds exactly the returned tree
        self.model_values_from_ = "solver" if chosen == "solver" and not rerouted else "tree"
        self.objective_, _ = _tree_objective(milo, sol)
        self.solver_status_ = status if chosen == "solver" else (
            "warm_start" if chosen == "warm_start" else f"no_incumbent ({status})"
        )
        self.mip_bound_ = None if bound is None or not math.isfinite(bound) else float(bound)
        if self.mip_bound_ is None:
            self.mip_gap_ = float("nan")
        else:
            self.mip_gap_ = max(0.0, (self.objective_ - self.mip_bound_) / max(abs(self.objective_), 1e-9))
        self.solver_objective_ = None if obj is None else float(obj)

        self.split_feature_ = sol.features.astype(np.int64)
        self.split_threshold_scaled_ = sol.thresholds.astype(float)
        s, f = self.scaler_, np.maximum(self.split_feature_, 0)
        self.split_threshold_ = np.where(
            self.split_feature_ >= 0, s.x_min[f] + self.split_threshold_scaled_ * s.x_scale[f], np.nan
        )
        self.leaf_intercept_scaled_ = sol.beta0.astype(float)
        self.leaf_coef_scaled_ = sol.beta.astype(float)
        self.leaf_coef_ = s.y_std * self.leaf_coef_scaled_ / s.x_scale
        self.leaf_intercept_ = s.y_mean + s.y_std * (
            self.leaf_intercept_scaled_ - self.leaf_coef_scaled_ @ (s.x_min / s.x_scale)
        )
        self.model_ = milo if self.keep_model else None
        self.fit_seconds_ = time.perf_counter() - t0
        self._say(f"done in {self.fit_seconds_:.1f} s: {self.solver_status_}, objective {self.objective_:.6g}, "
                  f"MIP gap {self.mip_gap_:.3g}")
        return self

    def _say(self, text):
        if self.verbose:
            print(text, file=sys.stderr, flush=True)

    # --------------------------------------------------------------- predict
    def apply(self, X):
        """Leaf reached by each sample, in paper numbering (2^D .. 2^(D+1)-1)."""
        return route(scaled_input(self, X), self.split_feature_, self.split_threshold_scaled_, self.depth)

    def predict(self, X):
        """Route deterministically (scaled x_j < threshold goes left) and apply the leaf model."""
        Xs = scaled_input(self, X)
        leaf = route(Xs, self.split_feature_, self.split_threshold_scaled_, self.depth)
        rows = leaf - 2**self.depth
        yhat = self.leaf_intercept_scaled_[rows] + np.einsum("ij,ij->i", Xs, self.leaf_coef_scaled_[rows])
        return self.scaler_.inverse_y(yhat)

    def training_residuals(self):
        """MILP residual variables r_i (scaled units) of the stored model."""
        check_is_fitted(self, "model_")
        if self.model_ is None:
            raise ValueError("keep_model=False: the MILO model was not kept")
        return self.model_.get_solution().r
