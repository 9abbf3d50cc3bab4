"""scikit-learn regressor for the MILO deterministic tree (ORT-L).

The objective lives in :class:`srtopt.milo.objective.AxisObjective`, its
mixed-integer model in :mod:`srtopt.milo.model` (``MILOTree``), the primal method in
:mod:`srtopt.milo.local_search`, the certificates in
:mod:`srtopt.milo.certificate` and the MILP/MIQP solvers in :mod:`srtopt.solvers.milp`;
this module scales the data, chooses the regularization, runs the stages within one time
limit and turns the best tree into a fitted estimator.
"""

from __future__ import annotations

import functools
import math
import time
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from srtopt._announce import announce_if_slow, say
from srtopt.estimators.params import (
    BOOLEAN,
    NONE,
    NONNEGATIVE,
    POSITIVE,
    RANDOM_STATE,
    VERBOSE,
    Integer,
    Kind,
    OneOf,
    Options,
    Real,
    check_parameters,
)
from srtopt.estimators.reading import RegressorScoreMixin, TreeMixin
from srtopt.estimators.tabular import InputsMixin
from srtopt.estimators.targets import check_target
from srtopt.estimators.threads import one_blas_thread
from srtopt.milo.certificate import certify
from srtopt.milo.local_search import LocalSearch
from srtopt.milo.model import MILOSolution, MILOTree
from srtopt.milo.objective import LOSSES, AxisObjective, route, tree_objective
from srtopt.solvers import SolverUnavailableError, make_solver
from srtopt.solvers.deadline import Deadline
from srtopt.solvers.milp import available_milp_solvers
from srtopt.tree import Tree
from srtopt.view import axis_reach

__all__ = ["MILOTreeRegressor", "available_milp_solvers"]

METHODS = ("auto", "local-search", "milo")
L1_CANDIDATES = (1e-4, 1e-3)  # the "auto" l1 grid (docs: the MILO tree's defaults)
LEAF_FACTORS = (1, 2)  # the "auto" min_samples_leaf grid, times p + 1
CV_ROWS_PER_COEFFICIENT = 50  # "auto" cross-validates when N < this x 2^D (p + 1)
CV_RESTARTS = 10  # descents per cross-validation search
CV_SHARE = 0.3  # of time_limit, at most, for the "auto" choice
#: seconds per N 2^D (D + p) to build the MIP model and hand it to the solver, with a margin: the MIP
#: stage is skipped when the time left is shorter (docs/baselines.md, "The MILO tree")
MIP_SETUP_SECONDS = 1.5e-4
SEARCH_SHARE = 0.5  # of time_limit, at most, for the local search when the MIP stage follows
AUTO_MILO_SIZE = 1000  # method="auto" runs the MIP stage when N 2^D is at most this


# ---------------------------------------------------------------- warm start
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


class MILOTreeRegressor(InputsMixin, TreeMixin, RegressorScoreMixin, BaseEstimator):
    """Deterministic regression tree with axis-aligned splits and linear leaves (ORT-L).

    Depth-D tree trained for the objective of
    :class:`~srtopt.milo.objective.AxisObjective` (by default the squared loss with
    an l1 penalty on the leaf slopes, the objective of ORT-L in the paper's comparison),
    in stages that share ``time_limit``:

    1. the regularization (``l1``, ``min_samples_leaf``) chosen by 3-fold cross-validation
       of the local search when they are "auto" and the data are small for the tree
       (fewer than 50 rows per leaf coefficient); otherwise the first candidate;
    2. the local search of Bertsimas & Dunn (:mod:`srtopt.milo.local_search`):
       ``n_restarts`` descents from the greedy tree, the CART structure and random trees;
    3. a lower bound: exact enumeration certifies depth 1 and, within the time left,
       depth 2 (:mod:`srtopt.milo.certificate`);
    4. ``method="milo"``: the mixed-integer model (:class:`~srtopt.milo.model.MILOTree`,
       a MILP for the absolute loss, an MIQP for the squared loss) solved from the local
       search's tree with the time left; its incumbent replaces the tree if better and
       its bound counts.  The local search stops at half of ``time_limit`` for it, unless
       the model could not be built in the other half: then the stage is skipped and the
       search takes the whole time.  ``"auto"`` runs it on small models only, where a
       solver can close the gap.

    Features are min-max scaled to [0, 1] and y standardized with training statistics;
    predictions are mapped back.

    Parameters
    ----------
    depth : int, default=2
        Depth D of the tree (2^D - 1 branch nodes, 2^D leaves).
    loss : {"squared", "absolute"}, default="squared"
        The loss of the residuals in E.
    l1 : float or "auto", default="auto"
        Weight of the l1 penalty on leaf slopes (scaled units); "auto": 1e-4 or 1e-3.
    l2 : float, default=0.0
        Weight of a squared l2 penalty on leaf slopes (squared loss only).
    cp : float, default=0.0
        Complexity penalty per applied split.
    min_samples_leaf : int or "auto", default="auto"
        A leaf holds no training row or at least this many; "auto": p + 1 or 2 (p + 1).
    method : {"auto", "local-search", "milo"}, default="auto"
        "local-search": stages 1 to 3; "milo": all four; "auto": "milo" for the absolute loss on
        small models (N 2^D at most 1000), "local-search" otherwise.
    time_limit : float, default=60.0
        Seconds for the whole fit (every stage); the tree found so far is returned when it
        is reached.  The first fit in a process loads srtopt's compiled kernels first (or
        compiles them, once after installation: tens of seconds) before the clock starts.
    n_restarts : int, default=50
        Local-search descents (the first from the greedy tree).
    certify : bool, default=True
        Run stage 3 (False: the bound comes from the MIP stage alone, if it runs).
    solver : str or None, default=None
        MIP solver of the "milo" stage: None is "highs" for the absolute loss and "scip"
        (``pip install pyscipopt``) for the squared loss; or any Pyomo solver name.
    warm_start : {"cart", None}, default="cart"
        "cart": the structure of ``DecisionTreeRegressor(max_depth=depth)`` is one of the
        local search's starts.  Booleans are accepted (scikit-learn's checks set
        ``warm_start=False``): True means "cart", False None.
    random_state : int, RandomState or None, default=None
        Seeds the local search, the folds of the "auto" choice, CART and the solver.
    coef_bound, intercept_bound : see ``MILOTree`` (default: valid bounds derived from
        the local search's tree).
    mip_gap : float, default=1e-4
        Relative gap at which the MIP solver stops.
    threads : int, default=1
        Threads of the HiGHS MIP solver.
    solver_options : dict or None
        Extra options passed verbatim to the MIP solver.
    keep_model : bool, default=True
        Keep the ``MILOTree`` (Pyomo model holding the returned tree) in ``model_``.
    verbose : int, default=0
        >= 1: the stages on stderr, and the MIP solver's own log.

    Attributes
    ----------
    scaler_ : srtopt.view.Scaling
        The training statistics of the internal scaling (x_min, x_scale, y_mean, y_std), as for
        :class:`~srtopt.SoftRegressionTree`.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,), dtype object
        The column names of a DataFrame X; absent when X had none.
    split_feature_ : ndarray of shape (2^D - 1,), dtype int64
        Feature of branch node t at index t - 1; -1 when the node does not split (all points go
        right).
    split_threshold_ : ndarray of shape (2^D - 1,)
        Threshold of branch node t at index t - 1 in original units (nan where the node does not
        split).
    split_threshold_scaled_ : ndarray of shape (2^D - 1,)
        The same in scaled units (0 where the node does not split).  A point goes left iff its
        scaled feature value is < the scaled threshold.
    leaf_coef_ : ndarray of shape (2^D, p)
        Leaf slopes in original units, row l for leaf 2^D + l.
    leaf_intercept_ : ndarray of shape (2^D,)
        Leaf intercepts in original units.
    leaf_coef_scaled_ : ndarray of shape (2^D, p)
        Leaf slopes in scaled units (X in [0, 1], y standardized).
    leaf_intercept_scaled_ : ndarray of shape (2^D,)
        Leaf intercepts in scaled units.
    l1_ : float
        The weight of the l1 penalty used (``l1``, or the "auto" choice).
    min_samples_leaf_ : int
        The ``min_samples_leaf`` used (or the "auto" choice).
    cv_scores_ : dict
        {(l1, min_samples_leaf): mean validation MSE} of the "auto" choice (empty when it did
        not run).
    objective_ : float
        The objective E of the returned tree (scaled units).
    mip_bound_ : float
        A proven lower bound on E over every feasible tree (0 when nothing better is proven:
        E >= 0).
    bound_source_ : str
        Who proved ``mip_bound_``: "trivial", "enumeration", or the MIP solver's name.
    mip_gap_ : float
        (objective_ - mip_bound_) / objective_ (0 when objective_ is 0).
    solver_status_ : str
        "optimal" when the gap is within ``mip_gap``, else why the fit stopped
        ("local_optimum", "time_limit", or the MIP solver's termination condition).
    mip_log_ : list of tuple
        (seconds, stage, incumbent E, bound) after each stage.
    local_search_log_ : list of tuple
        (seconds, descent, E) whenever the local search improved.
    warm_start_objective_ : float
        E of the tree the MIP solver started from (nan if it did not run).
    fit_seconds_ : float
        Wall-clock seconds of the fit.
    model_ : MILOTree or None
        The Pyomo model holding the returned tree, for inspection and export, when
        ``keep_model`` and the MIP stage ran; None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((60, 2))
    >>> y = np.where(X[:, 0] < 0.5, 1 + X[:, 1], -X[:, 1])
    >>> tree = MILOTreeRegressor(depth=1, time_limit=10, random_state=0).fit(X, y)
    >>> int(tree.split_feature_[0]), tree.solver_status_, bool(tree.score(X, y) > 0.99)
    (0, 'optimal', True)
    """

    def __init__(
        self,
        depth=2,
        loss="squared",
        l1="auto",
        l2=0.0,
        cp=0.0,
        min_samples_leaf="auto",
        method="auto",
        time_limit=60.0,
        n_restarts=50,
        certify=True,
        solver=None,
        warm_start="cart",
        random_state=None,
        coef_bound=None,
        intercept_bound=None,
        mip_gap=1e-4,
        threads=1,
        solver_options=None,
        keep_model=True,
        verbose=0,
    ):
        self.depth = depth
        self.loss = loss
        self.l1 = l1
        self.l2 = l2
        self.cp = cp
        self.min_samples_leaf = min_samples_leaf
        self.method = method
        self.time_limit = time_limit
        self.n_restarts = n_restarts
        self.certify = certify
        self.solver = solver
        self.warm_start = warm_start
        self.random_state = random_state
        self.coef_bound = coef_bound
        self.intercept_bound = intercept_bound
        self.mip_gap = mip_gap
        self.threads = threads
        self.solver_options = solver_options
        self.keep_model = keep_model
        self.verbose = verbose

    # ------------------------------------------------------------ validation
    _parameter_constraints = {
        "depth": [Integer(1)], "loss": [OneOf(*LOSSES)], "l1": [NONNEGATIVE, Options("auto")],
        "l2": [NONNEGATIVE], "cp": [NONNEGATIVE], "mip_gap": [NONNEGATIVE],
        "min_samples_leaf": [Integer(1), Options("auto")], "method": [OneOf(*METHODS)],
        "time_limit": [Real(0, None, "neither", text="a number > 0 (seconds)")], "n_restarts": [Integer(1)],
        "coef_bound": [POSITIVE, NONE], "intercept_bound": [POSITIVE, NONE],
        "warm_start": [Options("cart", None, True, False)], "threads": [Integer(1)], "certify": [BOOLEAN],
        "solver": [NONE, Kind("a solver name (str)", str)], "verbose": VERBOSE, "random_state": RANDOM_STATE,
        "solver_options": [NONE, Kind("a dict of solver options", dict)], "keep_model": [BOOLEAN],
    }

    def _check_params(self):
        check_parameters(self)
        if self.loss == "absolute" and self.l2 != 0:
            raise ValueError(f"l2 must be 0 with loss='absolute' (its MILO stays a MILP), got {self.l2!r}")

    def _solver_name(self):
        return self.solver or ("scip" if self.loss == "squared" else "highs")

    def _check_solver(self):
        name = self._solver_name()
        try:
            make_solver("milp", name)
        except SolverUnavailableError as exc:
            install = " (`pip install pyscipopt`, or `pip install srtopt[scip]`)" if name == "scip" else ""
            raise ValueError(
                f"solver={name!r} is not available here{install}: {exc}; available MIP solvers: "
                f"{available_milp_solvers() or 'none'}; or use method='local-search'"
            ) from None

    # ------------------------------------------------------------------- fit
    @one_blas_thread
    def fit(self, X, y):
        """Fit the tree in the stages of the class docstring, all within ``time_limit``.

        X is min-max scaled to [0, 1] and y standardized with the training statistics
        (``scaler_``); the regularization is chosen ("auto"), the local search finds a tree, the
        enumeration bounds E, and with ``method="milo"`` the MIP solver improves the tree and the
        bound from the time left.

        Parameters
        ----------
        X : array-like or DataFrame of shape (N, p)
            Training inputs, finite.  A DataFrame's column names become ``feature_names_in_``.
        y : array-like of shape (N,)
            Training targets, finite.

        Returns
        -------
        self : MILOTreeRegressor
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter breaks its rules (:class:`~srtopt.estimators.params.InvalidParameterError`),
            ``l2`` is not 0 with ``loss="absolute"``, X or y are not finite numbers of matching
            rows, or ``method="milo"`` asks for a MIP solver that is not installed.
        """
        self._check_params()
        _load_kernels()
        t0 = time.perf_counter()
        limit = float(self.time_limit)
        deadline = Deadline(limit)
        cv_end, search_end = deadline.within(CV_SHARE * limit), deadline.within(SEARCH_SHARE * limit)
        X, _, _ = self._fit_inputs(X, tables=False)
        y = check_target(self, X, y, 1)
        D = int(self.depth)
        N, p = X.shape
        method = self._method(N, D)
        if method == "milo":
            self._check_solver()
        Xs = np.clip(self._scale_inputs(X, y), 0.0, 1.0)
        ys = self.scaler_.transform_y(y)
        rng = np.random.default_rng(self.random_state if isinstance(self.random_state, Integral) else
                                    check_random_state(self.random_state).randint(2**31 - 1))
        self.mip_log_ = []
        log = lambda stage, value, bound: self.mip_log_.append((time.perf_counter() - t0, stage, value, bound))

        objective = self._objective(Xs, ys, D, rng, cv_end)
        self._say(f"MILO tree of depth {D} on {N} rows x {p} features, {objective.loss} loss, l1 {objective.l1:g}, "
                  f"min_samples_leaf {objective.min_samples_leaf}: local search ({self.n_restarts} descents at most)")
        setup = MIP_SETUP_SECONDS * N * 2**D * (D + p)  # the MIP model's build, before any solve
        if method == "milo" and setup > (1 - SEARCH_SHARE) * limit:  # the MIP stage could not even start
            method = "local-search"  # so the local search takes the whole time
            self._say(f"no MIP stage: building the model takes about {setup:.1f} s, more than the "
                      f"{(1 - SEARCH_SHARE) * limit:.1f} s it would have; the local search takes the whole time")
        starts = [_cart_structure(Xs, ys, D, self.random_state)] if self.warm_start not in (None, False) else []
        restarts = 1 if D == 1 else int(self.n_restarts)  # depth 1: the enumeration below is exact
        found = LocalSearch(Xs, ys, D, objective, random_state=rng).run(
            n_restarts=restarts, deadline=deadline if method == "local-search" else search_end, starts=starts)
        features, thresholds, coef, value = found.features, found.thresholds, found.coef, found.objective
        self.local_search_log_ = found.log
        stopped = "local_optimum" if found.descents >= restarts else "time_limit"
        log("local search", value, 0.0)

        bound, self.bound_source_ = 0.0, "trivial"
        proof = certify(Xs, ys, D, objective, deadline, incumbent=value) if self.certify else None
        if proof is None and self.certify and objective.loss == "squared":
            stopped = "time_limit"  # the enumeration ran out of time before any bound
        if proof is not None:
            bound, self.bound_source_ = proof.bound, "enumeration"
            stopped = stopped if proof.complete else "time_limit"
            if proof.objective < value - 1e-12 * max(1.0, value):
                features, thresholds, coef, value = proof.features, proof.thresholds, proof.coef, proof.objective
            log("enumeration", value, bound)

        self.warm_start_objective_ = float("nan")
        self.model_ = None
        if method == "milo" and _gap(value, bound) > float(self.mip_gap) and setup > deadline.left():
            stopped = "time_limit"
            self._say(f"no MIP stage: building the model takes about {setup:.1f} s, more than the time left")
        elif method == "milo" and _gap(value, bound) > float(self.mip_gap):
            features, thresholds, coef, value, bound, stopped = self._solve_mip(
                Xs, ys, D, objective, features, thresholds, coef, value, bound, stopped, deadline, rng)
            log(self._solver_name(), value, bound)

        self._store(features, thresholds, coef, objective, value, bound, stopped)
        self.fit_seconds_ = time.perf_counter() - t0
        self._say(f"done in {self.fit_seconds_:.1f} s: {self.solver_status_}, objective {self.objective_:.6g}, "
                  f"bound {self.mip_bound_:.6g} ({self.bound_source_}), gap {self.mip_gap_:.3g}")
        return self

    def _method(self, N, D):
        if self.method != "auto":
            return self.method
        return "milo" if N * 2**D <= AUTO_MILO_SIZE and self.loss == "absolute" else "local-search"

    def _objective(self, Xs, ys, D, rng, deadline):
        """The AxisObjective to minimize: the given regularization, or the "auto" choice."""
        N, p = Xs.shape
        l1s = L1_CANDIDATES if self.l1 == "auto" else (float(self.l1),)
        leaves = tuple(f * (p + 1) for f in LEAF_FACTORS) if self.min_samples_leaf == "auto" else (
            int(self.min_samples_leaf),)
        make = lambda l1, leaf: AxisObjective(self.loss, l1, float(self.l2), float(self.cp), leaf,
                                              _coef_bound(self))
        candidates = [make(l1, leaf) for leaf in leaves for l1 in l1s]
        self.cv_scores_ = {}
        if len(candidates) > 1 and N < CV_ROWS_PER_COEFFICIENT * 2**D * (p + 1):
            self.cv_scores_ = cross_validate(Xs, ys, D, candidates, rng, deadline)
            best = min(self.cv_scores_, key=self.cv_scores_.get)
            chosen = candidates[best]
        else:
            chosen = candidates[0]
        self.l1_, self.min_samples_leaf_ = chosen.l1, chosen.min_samples_leaf
        self.cv_scores_ = {(candidates[k].l1, candidates[k].min_samples_leaf): v for k, v in self.cv_scores_.items()}
        return chosen

    def _solve_mip(self, Xs, ys, D, objective, features, thresholds, coef, value, bound, stopped, deadline, rng):
        """The "milo" stage: the MILOTree started from the tree found, solved until ``deadline``."""
        milo = MILOTree(Xs, ys, D, loss=objective.loss, l1=objective.l1, l2=objective.l2, cp=objective.cp,
                        cutoff=value * (1 + 1e-9) + 1e-12, coef_bound=self.coef_bound,
                        intercept_bound=self.intercept_bound, min_samples_leaf=objective.min_samples_leaf)
        leaf = route(Xs, features, thresholds, D)
        start = MILOSolution(features, thresholds, coef[:, 0], coef[:, 1:], leaf)
        milo.set_solution(start)
        self.warm_start_objective_ = value
        name = self._solver_name()
        options = {"threads": int(self.threads), "random_seed": int(rng.integers(2**31 - 1))} \
            if name in ("highs", "appsi_highs") else {}
        options.update(self.solver_options or {})
        remaining = max(deadline.left(), 0.0)
        self._say(f"{name} on the MILO model from E = {value:.6g} for at most {remaining:.1f} s; its log follows")
        solver = make_solver("milp", name, tol=float(self.mip_gap), time_limit=max(remaining, 1e-3),
                             verbosity=int(self.verbose), options=options)
        result = solver.solve(milo, start, deadline=deadline)
        if result.bound is not None and math.isfinite(result.bound) and result.bound > bound:
            bound, self.bound_source_ = float(result.bound), name
        if result.success:
            sol = milo.snap_thresholds(milo.get_solution())
            if np.array_equal(route(Xs, sol.features, sol.thresholds, D), sol.leaf):
                candidate, candidate_coef = tree_objective(objective, Xs, ys, sol.features, sol.thresholds, D)
                if candidate < value - 1e-9 * max(1.0, value):
                    features, thresholds, coef, value = sol.features, sol.thresholds, candidate_coef, candidate
        milo.set_solution(MILOSolution(features, thresholds, coef[:, 0], coef[:, 1:],
                                       route(Xs, features, thresholds, D)))
        self.model_ = milo if self.keep_model else None
        return features, thresholds, coef, value, bound, result.status

    def _store(self, features, thresholds, coef, objective, value, bound, stopped):
        self.objective_ = float(value)
        self.mip_bound_ = float(min(bound, value))
        self.mip_gap_ = _gap(self.objective_, self.mip_bound_)
        self.solver_status_ = "optimal" if self.mip_gap_ <= float(self.mip_gap) else stopped
        self.split_feature_ = np.asarray(features, dtype=np.int64)
        self.split_threshold_scaled_ = np.where(self.split_feature_ >= 0, thresholds, 0.0).astype(float)
        s, f = self.scaler_, np.maximum(self.split_feature_, 0)
        self.split_threshold_ = np.where(
            self.split_feature_ >= 0, s.x_min[f] + self.split_threshold_scaled_ * s.x_scale[f], np.nan
        )
        self.leaf_intercept_scaled_ = coef[:, 0].astype(float)
        self.leaf_coef_scaled_ = coef[:, 1:].astype(float)
        self.leaf_coef_ = s.y_std * self.leaf_coef_scaled_ / s.x_scale
        self.leaf_intercept_ = s.y_mean + s.y_std * (
            self.leaf_intercept_scaled_ - self.leaf_coef_scaled_ @ (s.x_min / s.x_scale)
        )

    def _say(self, text):
        if self.verbose:
            say(text)

    # --------------------------------------------------------------- predict
    def reachable_nodes(self):
        """Mask (index t - 1) of the nodes some input reaches: a node without a split sends every
        row right, so its left subtree is not reached."""
        check_is_fitted(self)
        return axis_reach(self.split_feature_, Tree(int(self.depth)))

    def apply(self, X):
        """Leaf reached by each sample, in paper numbering (2^D .. 2^(D+1)-1)."""
        return route(self._scaled(X), self.split_feature_, self.split_threshold_scaled_, self.depth)

    def predict(self, X):
        """Predict with the linear model of the leaf each row reaches.

        At each branch node a row goes left iff its scaled feature value is below the scaled
        threshold (a node that does not split sends every row right).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, p)
            Inputs, finite, with the features of ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predictions in y's units.
        """
        Xs = self._scaled(X)
        leaf = route(Xs, self.split_feature_, self.split_threshold_scaled_, self.depth)
        rows = leaf - 2**self.depth
        yhat = self.leaf_intercept_scaled_[rows] + np.einsum("ij,ij->i", Xs, self.leaf_coef_scaled_[rows])
        return self.scaler_.inverse_y(yhat)

    def training_residuals(self):
        """MILP residual variables r_i (scaled units) of the stored model."""
        check_is_fitted(self, "model_")
        if self.model_ is None:
            raise ValueError("no MILO model kept: it is kept when the MIP stage ran (method='milo') and "
                             "keep_model=True")
        return self.model_.get_solution().r


def _gap(value, bound) -> float:
    return max(0.0, (value - bound) / value) if value > 0 else 0.0


def _coef_bound(estimator) -> float:
    """The slope bound of the absolute loss's leaf LPs (the MILP's, when given)."""
    return float(estimator.coef_bound) if estimator.coef_bound is not None else math.inf


def cross_validate(Xs, ys, depth, candidates, rng, deadline: Deadline) -> dict:
    """Mean validation MSE of the local search under each objective in ``candidates``, by
    3-fold cross-validation: {index in candidates: score}.  Each search gets an equal share
    of the time to ``deadline`` and at most ``CV_RESTARTS`` descents."""
    from sklearn.model_selection import KFold

    folds = list(KFold(3, shuffle=True, random_state=int(rng.integers(2**31 - 1))).split(Xs))
    scores = {}
    for k, objective in enumerate(candidates):
        errors = []
        for j, (train, test) in enumerate(folds):
            share = deadline.share(max(len(candidates) * len(folds) - (k * len(folds) + j), 1))
            found = LocalSearch(Xs[train], ys[train], depth, objective, random_state=rng).run(
                n_restarts=CV_RESTARTS, deadline=deadline.within(share))
            leaf = route(Xs[test], found.features, found.thresholds, depth) - 2**depth
            pred = found.coef[leaf, 0] + np.einsum("ij,ij->i", Xs[test], found.coef[leaf, 1:])
            errors.append(float(np.mean((ys[test] - pred) ** 2)))
        scores[k] = float(np.mean(errors))
    return scores


@functools.cache
def _load_kernels():
    """Run the local search and the certificate once on a tiny problem, so that numba loads
    their kernels from its disk cache, or compiles them in a fresh installation (tens of
    seconds, more on a loaded machine), before a fit's clock starts: otherwise a first fit
    could spend its whole ``time_limit`` compiling and return the one-leaf tree."""
    rng = np.random.default_rng(0)
    X = rng.random((24, 2))
    y = np.where(X[:, 0] < 0.5, X[:, 1], -X[:, 1])
    with announce_if_slow("srtopt: compiling the MILO tree's kernels, once after installation (up to a minute; "
                          "not counted in time_limit)"):
        for loss in LOSSES:
            objective = AxisObjective(loss, 1e-3, 0.0, 0.0, 3, math.inf)
            found = LocalSearch(X, y, 2, objective, random_state=np.random.default_rng(0)).run(
                n_restarts=1, starts=[])
            certify(X, y, 2, objective, Deadline(), incumbent=found.objective)
