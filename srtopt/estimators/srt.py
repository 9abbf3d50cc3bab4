"""``SoftRegressionTree``: the scikit-learn regressor of the SRT model trained by NODEC-DR."""

from __future__ import annotations

import dataclasses
import functools
import sys
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator

from .. import kernels
from .._announce import announce_if_slow
from ..models.constraints import Monotone, make_constraints
from ..models.srt import SRTProblem
from ..models.terms import LeafShrinkage, make_loss, make_penalties
from ..solvers import make_solver
from ..solvers.deadline import Deadline
from ..training.callbacks import ProgressPrinter, as_callbacks
from ..training.feasibility import polish
from ..training.initialization import ModelTreeInitialization
from ..training.working_sets import make_working_sets
from ..tree import Tree
from .constrained import (
    code_groups,
    constraint_report,
    constraint_terms,
    in_training_units,
    protected_groups,
    training_units,
)
from .leaf_ridge import FOLDS, choose_leaf_ridge, linear_center
from .nodec_tree import NodecTree
from .params import (
    BOOLEAN,
    FRACTION,
    INTEGER,
    NONE,
    NONNEGATIVE,
    POSITIVE,
    RANDOM_STATE,
    VERBOSE,
    Integer,
    Options,
    Pair,
    Parses,
    Real,
    check_parameters,
)
from .reading import RegressorScoreMixin, SoftTreeMixin
from .regularization import parse_reading, regularization_lambdas
from .scaling import (
    MinMaxTarget,
    _n_rows,
    check_fit_arrays,
    check_sample_weight,
    scaled_input,
)
from .threads import one_blas_thread

INITS = ("model-tree", "cluster", "cart")  # the named initializations (SoftRegressionTree's init)


def init_entries(init, names=None) -> list:
    """The entries of ``init``: itself, or the items of a list or tuple, each one of ``INITS`` or a
    callable ``init(problem, random_state)``.

    Raises
    ------
    ValueError
        If the list is empty or an entry is neither.
    """
    names = INITS if names is None else names
    entries = list(init) if isinstance(init, (list, tuple)) else [init]
    if not entries:
        raise ValueError("init must not be an empty list")
    for entry in entries:
        if not (entry in names if isinstance(entry, str) else callable(entry)):
            raise ValueError(f"init must be {', '.join(map(repr, names))}, a callable init(problem, random_state) "
                             f"or a list of these, got {entry!r}")
    return entries


class SoftRegressionTree(NodecTree, SoftTreeMixin, RegressorScoreMixin, BaseEstimator):
    """Soft Regression Tree with single-leaf (HBP) predictions, trained by NODEC-DR.

    The tree has oblique soft splits p_it = F(omega_0t + (1/p) sum_j omega_jt x_ij)
    with the logistic CDF F of slope ``mu`` (eq. cdf) and linear leaves; a point is
    predicted by the leaf of its highest-branch-probability path (eq.
    prediction_model).  Training minimises E of eq. (obj) by the node-based
    decomposition NODEC-DR, starting from the initial tree of ``init``;
    E = sum_i s_i sum_t P_it loss(yhat_it - y_i) + the l2 terms + ``penalty``, with the
    squared loss by default.  X is scaled to [0, 1] and y standardized internally
    (statistics of the training data); ``omega_`` and ``beta_`` live in that scaled space.

    Parameters
    ----------
    depth : int, default=2
        Depth D of the maximal binary tree (2^D - 1 branch nodes, 2^D leaves).
    mu : float, default=1.0
        Slope of the logistic CDF.
    regularization : str, None, float or (float, float), default="l2"
        The l2 weights of eq. (obj) (:func:`regularization_lambdas`).  "l2": the paper's
        "SRT l2" values read on the summed error, lambda_b = 2/(p |tau_L| N) and
        lambda_w = 0.02/(p |tau_B| N), N counted up to 100,000 rows; "l2-slopes",
        "l2-mean", "l2-calibrated": other readings, kept for comparison; None or "none": no l2
        term ("SRT"); numbers: lambda_w, lambda_b.  The measurements behind the choice:
        docs/departures.md, "The l2 weights".
    leaf_ridge : "auto" or float, default="auto"
        A factor on lambda_b, the l2 weight on the leaf models.  "auto": 1, except on small
        data, where the 2^D leaves have on average fewer rows than coefficients
        (N < 2^D (p + 1)): there the factor among 1, 1e2, 1e4, 1e6 with the least 3-fold
        cross-validated loss (:mod:`srtopt.estimators.leaf_ridge`; it keeps a tree from
        fitting noise, docs/departures.md, "Leaf ridge").  A number: that factor.
    leaf_center : {"linear", "zero"}, default="linear"
        What a leaf-ridge factor f > 1 pulls the leaves towards: "linear", the paper's lambda_b
        towards 0 and (f - 1) lambda_b towards the ridge regression of all rows (``leaf_center_``),
        so that a large factor gives that linear model; "zero", f lambda_b towards 0 (the
        paper's term, scaled).
    loss : str, Loss or callable, default="squared"
        loss(r) of the residual r = yhat_it - y_i in eq. (obj) (:mod:`srtopt.models.terms`):
        "squared" (eq. obj); "huber" (r^2 within delta, linear beyond; "huber:delta=0.5",
        default delta 0.3 standard deviations of y); "absolute" (|r| smoothed:
        sqrt(r^2 + epsilon^2) - epsilon, "absolute:epsilon=1e-3"); a
        :class:`~srtopt.models.terms.Loss`; or a callable mapping a CasADi symbol r to a
        CasADi expression, e.g. ``lambda r: casadi.log(casadi.cosh(r))`` (value, gradient
        and Hessian by CasADi's AD).
    penalty : str, Penalty, list of these or None, default=None
        Penalty terms added to E beside the l2 terms: "split_l1" (strength * the l1 norm
        of the split weights omega_jt, j >= 1: sparse oblique splits), "feature_l1"
        (strength * sum_j ||(omega_j., beta_j.)||_2: removes features from the whole
        tree; without a strength, the features that predict on held-out rows are kept), with options
        ("split_l1:strength=0.01"), a
        :class:`~srtopt.models.terms.Penalty` of your own, or a list.  The nonsmooth
        ones give exact zeros (docs/formulations.md, "Penalties and the method for the nonsmooth ones").
    monotonic_cst : array-like of {-1, 0, 1}, dict or None, default=None
        scikit-learn's monotonic constraints: one sign per feature (1 increasing, -1
        decreasing, 0 none), or {feature name or index: sign}.  An exact guarantee for
        ``predict()``: no split uses a constrained feature and every leaf slope on it has the
        sign (:class:`~srtopt.models.constraints.Monotone`; what it costs: docs/constraints.md).
    constraints : str, Constraint, list of these or None, default=None
        Constraints on the model (:mod:`srtopt.models.constraints`): "parity:gap=d" (the mean
        predictions of the protected groups differ by at most d, in y's units),
        "group_loss:bound=e" (each group's mean loss at most e; for the squared loss its mean
        squared error in y's units squared), "leaf_bounds:feature=NAME,lower=a,upper=b" (the
        leaf slopes of a feature within [a, b], y's units per unit of it), "monotone:NAME=-1",
        a :class:`~srtopt.models.constraints.Constraint` or a list.  The group constraints need
        ``fit(..., sensitive_features=...)``.  Every subproblem carries them; the solvers that
        take them are chosen by "auto" (IPOPT for constrained BN subproblems, a QP for the LN
        step); they hold for the soft model of the training objective and for ``predict()``
        on the training data (``constraint_report_``).
    max_features : int or None, default=None
        At most this many features in the whole tree, in splits and leaves: recursive elimination
        with refits (:mod:`srtopt.estimators.selection`; the weights of the other features are 0).
    working_sets : "subtree", "all", "paths" or callable, default="subtree"
        The working-set rule of NODEC-GS (:mod:`srtopt.training.working_sets`): the
        paper's subtree rule; all branch nodes then all leaves; root-to-leaf paths; or
        ``rule(tree) -> [(t, W_B, W_L), ...]`` (deep-copied at fit, as scikit-learn does
        with a ``criterion`` object).  The safeguards (conditions (18)-(19), k0) hold for
        every rule.
    init : "model-tree", "cluster", "cart", callable or list of these, default="model-tree"
        The initial tree.  "model-tree" (not in the paper): the splits of a depth-D tree
        grown greedily for linear leaves, each split x_j <= c chosen so that ridge
        regressions on its two sides fit best, made soft
        (:class:`~srtopt.training.initialization.ModelTreeInitialization`); "cluster": the
        paper's clustering-based procedure
        (:class:`~srtopt.training.initialization.ClusterInitialization` with ``n_init``
        and ``init_scale``); "cart": the splits of a depth-D CART made soft
        (:class:`~srtopt.training.initialization.CartInitialization`); or
        ``init(problem, random_state) -> (omega0, beta0)`` on the scaled data (deep-copied
        at fit).  "model-tree" and "cart" are deterministic: ``random_state`` then only
        seeds the heuristic's subsamples.  Measured against "cluster" in docs/departures.md
        ("A greedy model tree").  A list gives candidates: each runs ``restart_iter`` macro
        iterations (with each of the ``n_restarts`` seeds) and the one with the lowest
        training E continues (``init_chosen_`` is its position in the list).
    max_iter : int, default=10
        Macro iterations M_it of NODEC-DR.
    tol : float or None, default=None
        Stop before ``max_iter`` after a macro iteration that lowered the lowest E reached by less
        than ``tol`` times it (``stopped_by_ == "tol"``); None: run ``max_iter`` (the paper).
    n_init : int, default=10
        Repetitions r of hierarchical 2-means in the "cluster" initialization.
    init_scale : float, default=0.2
        Factor on the initial split weights omega^0 of the "cluster" initialization's
        logistic regressions (1: the paper).  Those splits are so sharp that most rows sit where
        the logistic CDF is flat and the first BN steps barely move (docs/departures.md).
    eps1, eps2, eps3, zeta : float, default 0.1, 0.3, 0.4, 0.8
        Thresholds of the reassignment heuristic and their decay per macro iteration.
        The defaults are the values listed in the paper's experiments.  The algorithm's
        text reads eps1 > eps2 (eps1 flags imbalance, eps2 high imbalance); with the
        listed values every imbalanced node (left share <= eps1 or >= 1 - eps1) is
        treated as highly imbalanced.  The swapped reading (0.3, 0.1) runs too
        (docs/departures.md).
    wlr_weights : {"labels", "routing"}, default="labels"
        Class weights w_i of the WLR proxy (eq. reshuffle), N_t / (2 N_class): counted on
        the labels c_i after the heuristic relabels the I_t^R points ("labels"), or on the
        current routing ("routing", the paper's words), which leaves a node that sends
        every row one way unbalanced (docs/departures.md).
    theta_w, theta_b : float, default=1e-3
        Gradient thresholds (theta)^k below which a BN / LN step is skipped.
    k0 : int or None, default=None
        Inner iteration from which the convergence safeguards (conditions
        (18)-(19) against the Armijo reference) are on; None = never (the
        paper's experiments), 0 = always (E never increases).
    tau : float, default=1e-6
        tau of condition (19).
    bn_solver, ln_solver, wlr_solver : str or solver object, default="auto"
        Solvers of the BN subproblem, of the LN subproblem and of the WLR proxy
        (:mod:`srtopt.solvers`; specs such as "ipopt:tol=1e-8").  "auto" picks per
        subproblem: for the BN step Newton with the exact Hessian when the working set
        is one node or has at most 64 variables and 3000 rows and the splits' only penalty is the l2
        term with lambda_w > 0 (``"newton:max_blocks=1,needs_minimizer=True,penalties=l2"``,
        then ``"newton:max_variables=64,max_rows=3000,..."``), SciPy's L-BFGS-B (tol 1e-6) on the other
        smooth ones and when the nonsmooth part is split_l1, the proximal gradient
        otherwise; for the LN step exact weighted least squares (squared loss), exact
        Newton (the other smooth losses), IPOPT with CasADi's Hessian (a user's smooth
        penalty on the leaves), the proximal gradient (nonsmooth); for the WLR proxy
        Newton to tol 1e-8 (``"newton:tol=1e-8"``), the proximal gradient when a
        nonsmooth penalty applies to the splits.  For the default model these are
        "newton" / "l-bfgs-b", "exact" and "newton".  A solver that does not accept the
        subproblems is refused at fit.
    wlr_C : float, default=1.0
        Inverse l2 strength of the WLR proxy (scikit-learn's C).
    n_restarts, restart_iter : int, default 1, 2
        With ``n_restarts`` > 1, that many initializations (seeds drawn from
        ``random_state``) each run ``restart_iter`` macro iterations; the one with the
        lowest training E continues to ``max_iter`` (with a list ``init``, every entry
        runs with every seed).
    max_subproblem_rows : int or None, default=100_000
        BN and WLR subproblems use at most this many rows of I_t (a uniform random subset,
        its weights scaled by |I_t| / rows so lambda_w keeps its meaning; the paper allows
        "only a subset of data points").  None: all rows.
    clip_predictions : bool, default=True
        Keep predictions within the range of the training targets.
    n_jobs : int or None, default=None
        Threads for the r repetitions of the initialization's 2-means (joblib's meaning:
        None = 1, -1 = all cores); the result does not depend on it.
    time_limit : float or None
        Seconds for the whole fit, initialization included: solvers stop at the deadline,
        training ends after that inner iteration (``stopped_by_ == "time_limit"``).
    callbacks : list of callables or Callback objects, or None
        :class:`~srtopt.training.callbacks.Callback` objects get hooks (fit and run
        begin and end, every inner iteration, every macro iteration); a plain callable is
        called after every inner iteration.  Both receive the training state (iterate,
        k, t, working sets, the subproblems and their solver results, the history
        record) and may stop the fit cleanly with ``state.stop(reason)`` (the best
        iterate so far is kept, ``stopped_by_ == reason``).
    verbose : int, default=0
        Progress on stderr (a :class:`~srtopt.training.callbacks.ProgressPrinter`).  1: a
        line when the initialization starts and ends, one per macro iteration (E, the
        smallest and largest share of the training rows routed to a leaf by HBP,
        seconds), and one for the current inner iteration whenever 5 s passed without a
        line; 2: also one per inner iteration (node t, E before, after the BN step and
        after the LN step, and which update each took).
    random_state : int, RandomState or None
        Seeds the initialization (the only random part).

    Attributes
    ----------
    omega_ : ndarray of shape (2^D - 1, p + 1)
        Split weights in the scaled space, row t - 1 for branch node t, column 0 the intercept
        omega_0t.  A split that routes no training row to one side is closed after training
        (slopes 0, intercept +-40/mu: every row goes to the other side), so the empty subtree is
        pruned: no input reaches it, ``get_n_leaves`` does not count it and the views do not draw
        it (:func:`srtopt.kernels.close_unreached`).
    beta_ : ndarray of shape (2^D, p + 1)
        Leaf models in the scaled space, row l for leaf 2^D + l, column 0 the intercept.
    scaler_ : MinMaxTarget
        The training statistics of the internal scaling (x_min, x_scale, y_mean, y_std).
    n_features_in_ : int
        Number of features seen in ``fit`` (the column named by ``sensitive_features`` excluded).
    feature_names_in_ : ndarray of shape (n_features_in_,), dtype object
        The column names of a DataFrame X; absent when X had none.
    objective_ : float
        E of eq. (obj) at the returned iterate (scaled units).
    n_iter_ : int
        Macro iterations run.
    stopped_by_ : str
        Why training stopped: "max_iter", "tol", "time_limit", or the reason a callback gave to
        ``state.stop``.
    history_ : list of dict
        One per inner iteration: macro, k, node t, W_B, W_L, E before, after the BN step and
        after the LN step, what each step did (update, solver, status, iterations, seconds).
    fit_seconds_ : float
        Wall-clock seconds of the fit, counted as ``time_limit`` counts them.
    lambda_w_ : float
        The l2 weight on the splits in eq. (obj).
    lambda_b_ : float
        The l2 weight on the leaves in eq. (obj): the reading's lambda_b, times ``leaf_ridge_``
        when the factor pulls the leaves towards zero (``leaf_center="zero"``, or an l1 penalty on
        the leaves); with ``leaf_center_`` the excess (factor - 1) lambda_b pulls towards that
        linear model instead.
    leaf_ridge_ : float
        The factor on lambda_b used (``leaf_ridge``; for "auto" the one chosen).
    leaf_ridge_losses_ : dict
        {factor: validation loss} of the cross-validation that chose ``leaf_ridge_`` (empty when
        none ran); for a factor whose fits stopped because it could no longer win, the loss on
        the folds fitted (a lower bound).
    leaf_center_ : ndarray of shape (p + 1,) or None
        The linear model (intercept, slopes; scaled units) the leaves are pulled towards when
        ``leaf_ridge_`` > 1 and ``leaf_center="linear"``; None otherwise.
    init_chosen_ : int
        Position in the list ``init`` of the initialization that continued (0 for a single one).
    init_davies_bouldin_ : float
        Davies-Bouldin index of the "cluster" initialization's partition (nan for the others).
    node_counts_ : ndarray of shape (2^(D+1) - 1,), dtype int64
        Training rows whose HBP path visits node t, at index t - 1.
    leaf_mse_ : ndarray of shape (2^D,)
        Training MSE (y's units) of each leaf's linear model on the rows routed to it (nan
        where no row of positive weight is).
    leaf_r2_ : ndarray of shape (2^D,)
        Training R^2 of each leaf's linear model on the rows routed to it (nan where undefined).
    feature_importances_ : ndarray of shape (p,)
        Importance of each feature in the splits, summing to 1: the sum over branch nodes t of
        m_t |omega_jt|, normalized, where m_t is the soft share of the (weighted) training rows
        that reach t and omega_jt the split weight in the scaled space (x_j in [0, 1], so
        scale-free).  The leaf models are not included; their terms are ranked by the same
        |scaled coefficient| in every view of :mod:`srtopt.export`.
    selected_features_ : list
        The features the tree uses (a nonzero weight in a split or a leaf): their indices, or
        their names when X had column names.
    n_features_used_ : int
        ``len(selected_features_)``.
    y_range_ : ndarray of shape (2,)
        The lowest and highest training target of positive weight (the range of
        ``clip_predictions``).
    constraint_report_ : list of dict
        One per row of the constraints (empty without any): "constraint", "row", "bound"
        (text), "soft" (the value for the soft model of the training objective) and "predict"
        (for ``predict()`` on the training data), in y's units, and "holds" (both within the
        bound), "holds_soft", "holds_predict".
    groups_ : list
        The labels of the protected groups of ``sensitive_features``, in code order; absent
        without them.
    sensitive_feature_name_ : str or None
        The column of X named by ``sensitive_features`` (not a feature; ``predict`` drops it from
        a DataFrame that has it), or None.

    Methods beyond scikit-learn's regressor API: ``apply`` (HBP leaf), ``decision_path``,
    ``leaf_probabilities`` (P_it), ``get_depth``, ``get_n_leaves``, ``summary``, ``save``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 3))
    >>> y = np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2])
    >>> tree = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    >>> tree.get_depth(), tree.omega_.shape, tree.beta_.shape
    (2, (3, 4), (4, 4))
    >>> sorted(set(tree.apply(X)) - {4, 5, 6, 7})  # HBP leaves are numbered 4..7
    []
    >>> P = tree.leaf_probabilities(X[:3])  # P_it, one row per point, one column per leaf
    >>> P.shape, bool(np.allclose(P.sum(axis=1), 1))
    ((3, 4), True)
    >>> float(round(tree.feature_importances_.sum(), 12))
    1.0
    """

    def __init__(self, depth=2, mu=1.0, regularization="l2", max_iter=10, n_init=10,
                 eps1=0.1, eps2=0.3, eps3=0.4, zeta=0.8, theta_w=1e-3, theta_b=1e-3, k0=None,
                 tau=1e-6, bn_solver="auto", ln_solver="auto", wlr_solver="auto", wlr_C=1.0,
                 time_limit=None, callbacks=None, random_state=None, verbose=0, init_scale=0.2,
                 wlr_weights="labels", n_restarts=1, restart_iter=2, max_subproblem_rows=100_000,
                 clip_predictions=True, n_jobs=None, loss="squared", penalty=None, working_sets="subtree",
                 init="model-tree", leaf_ridge="auto", leaf_center="linear", monotonic_cst=None, constraints=None,
                 max_features=None, tol=None):
        self.depth, self.mu, self.regularization = depth, mu, regularization
        self.max_iter, self.n_init, self.tol = max_iter, n_init, tol
        self.eps1, self.eps2, self.eps3, self.zeta = eps1, eps2, eps3, zeta
        self.theta_w, self.theta_b, self.k0, self.tau = theta_w, theta_b, k0, tau
        self.bn_solver, self.ln_solver, self.wlr_solver, self.wlr_C = bn_solver, ln_solver, wlr_solver, wlr_C
        self.time_limit, self.callbacks, self.random_state = time_limit, callbacks, random_state
        self.verbose = verbose
        self.init_scale, self.wlr_weights = init_scale, wlr_weights
        self.n_restarts, self.restart_iter = n_restarts, restart_iter
        self.max_subproblem_rows = max_subproblem_rows
        self.clip_predictions, self.n_jobs = clip_predictions, n_jobs
        self.loss, self.penalty, self.working_sets, self.init = loss, penalty, working_sets, init
        self.leaf_ridge, self.leaf_center = leaf_ridge, leaf_center
        self.monotonic_cst, self.constraints, self.max_features = monotonic_cst, constraints, max_features

    _parameter_constraints = {
        "depth": [Integer(1)], "mu": [POSITIVE], "wlr_C": [POSITIVE], "tau": [POSITIVE], "init_scale": [POSITIVE],
        **{name: [Integer(1)] for name in ("max_iter", "n_init", "n_restarts", "restart_iter")},
        **{name: [FRACTION] for name in ("eps1", "eps2", "eps3", "zeta", "theta_w", "theta_b")},
        "k0": [NONE, Integer(0)], "time_limit": [NONE, POSITIVE], "tol": [NONE, NONNEGATIVE],
        "regularization": [NONE, NONNEGATIVE, Pair(NONNEGATIVE, "finite numbers >= 0 (lambda_w, lambda_b)"),
                           Parses("a reading such as 'l2' or 'l2:split=10'", parse_reading, str)],
        "leaf_ridge": [Options("auto"), Real(0, None, "neither", text="a number > 0 (a factor on lambda_b)")],
        "leaf_center": [Options("linear", "zero")], "wlr_weights": [Options("labels", "routing")],
        "max_subproblem_rows": [NONE, Integer(2)], "clip_predictions": [BOOLEAN], "verbose": VERBOSE,
        "n_jobs": [NONE, INTEGER], "random_state": RANDOM_STATE,
        "max_features": [NONE, Integer(1)],  # at most the number of features: checked at fit
        "loss": [Parses("a loss name or spec, a Loss or a callable", make_loss)],
        "penalty": [Parses("None, a penalty name or spec, a Penalty or a list of these", make_penalties)],
        "constraints": [Parses("None, a constraint spec, a Constraint or a list of these", make_constraints)],
        "monotonic_cst": [NONE, Parses("signs in {-1, 0, 1}, one per feature, or a dict {feature: sign}", Monotone,
                                       (list, tuple, dict, np.ndarray))],
        "working_sets": [Parses("a working-set rule's name or a callable rule(tree)", make_working_sets)],
        "init": [Parses("'model-tree', 'cluster', 'cart', a callable or a list of these", init_entries)],
        **{f"{kind}_solver": [Parses("a solver spec or a solver object", functools.partial(make_solver, kind))]
           for kind in ("bn", "ln", "wlr")},
        "callbacks": [NONE, Parses("a list of Callback objects or callables", as_callbacks, (list, tuple))],
    }

    def _check_params(self):
        check_parameters(self)

    @one_blas_thread
    def fit(self, X, y, sample_weight=None, sensitive_features=None):
        """Fit the tree by NODEC-DR.

        X is min-max scaled to [0, 1] and y standardized with the training statistics
        (``scaler_``); on small data ``leaf_ridge="auto"`` chooses its factor; the initial tree of
        ``init`` is restored to the constraints; NODEC-DR runs macro iterations until
        ``max_iter``, ``time_limit`` or a callback's stop; with constraints the leaves are then
        polished to meet them (``constraint_report_``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (N, p)
            Training inputs, finite.  A DataFrame's column names become ``feature_names_in_``.
        y : array-like of shape (N,)
            Training targets, finite.
        sample_weight : array-like of shape (N,), float or None, default=None
            Weights s_i >= 0 of the rows, normalized to sum to 1 in place of eq. (obj)'s 1/N; a
            row of weight 0 is as if absent.  None: equal weights.
        sensitive_features : array-like of shape (N,), str or None, default=None
            The protected group of every row, for the group constraints ("parity",
            "group_loss"): an array, or the name of a column of the DataFrame X (which is then
            not a feature).

        Returns
        -------
        self : SoftRegressionTree
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter breaks its rules (:class:`~srtopt.estimators.params.InvalidParameterError`),
            X or y are not finite numbers of matching rows, there are fewer rows (of positive
            weight) than leaves, ``max_features`` exceeds p, a constraint names no feature of X
            or lacks its groups, or a solver does not accept the subproblems.

        Warns
        -----
        UserWarning
            When ``time_limit`` ended training (``stopped_by_ == "time_limit"``) or a constraint
            does not hold on the returned tree.
        """
        self._check_params()
        if self.time_limit is not None:
            _load_kernels()  # a fresh installation compiles them: before the clock starts
        started = time.perf_counter()
        deadline = Deadline(self.time_limit)  # time_limit covers the whole fit
        user_constraints = constraint_terms(self)
        X, group_values, self.sensitive_feature_name_ = protected_groups(X, sensitive_features, _n_rows(X))
        frame = X
        X, y = check_fit_arrays(self, X, y, 2**self.depth)
        given = frame if hasattr(frame, "columns") else X  # the inner fits keep a DataFrame's names
        weights = check_sample_weight(sample_weight, X.shape[0], 2**int(self.depth))
        groups = None
        if group_values is not None:
            groups, self.groups_ = code_groups(group_values, weights)
        params = {"sample_weight": sample_weight, "sensitive_features": groups}
        budget, penalties = self._feature_budget(given, y, params, deadline)
        user_constraints += budget
        self.scaler_ = MinMaxTarget().fit(X, y, weights)
        tree = Tree(int(self.depth))
        lambda_w, lambda_b = regularization_lambdas(self.regularization, X.shape[1], tree, weights.sum())
        loss = make_loss(self.loss)
        units = training_units(self, loss)
        problem = SRTProblem(self.scaler_.transform(X), self.scaler_.transform_y(y), tree, float(self.mu), lambda_w,
                             lambda_b, weights, loss, penalties,
                             in_training_units(user_constraints, units), groups)
        self.leaf_ridge_, self.leaf_ridge_losses_ = choose_leaf_ridge(
            self._without_selection(budget, penalties), given, y, None if sample_weight is None else weights,
            lambda_b, deadline, groups, problem)
        problem = self._leaf_shrinkage(problem, lambda_b)
        if self.verbose and self.leaf_ridge_losses_:
            print(f"small data ({X.shape[0]} rows, {2**self.depth} leaves of {X.shape[1] + 1} coefficients): "
                  f"lambda_b times {self.leaf_ridge_:g}, chosen by {FOLDS}-fold cross-validation", file=sys.stderr)
        callbacks = as_callbacks(self.callbacks) + ([ProgressPrinter(self.verbose)] if self.verbose else [])
        solvers = self._solvers(problem)
        result = self._train(problem, solvers, deadline, callbacks)
        self.omega_, self.beta_ = result.omega, result.beta
        self.objective_, self.n_iter_ = result.objective, result.n_macro
        self.history_ = [record.as_dict() for record in result.history]
        self.stopped_by_ = result.stopped_by
        if self.stopped_by_ == "time_limit":
            limit = "the time limit" if self.time_limit is None else f"time_limit={self.time_limit:g} s"
            warnings.warn(f"{limit} reached after {self.n_iter_} macro iteration(s): the "
                          f"tree is the best found by then (stopped_by_='time_limit'); a larger time_limit may "
                          f"find a better one", UserWarning, stacklevel=3)
        self.lambda_w_, self.lambda_b_ = lambda_w, problem.lambda_b
        self.y_range_ = np.array([y[weights > 0].min(), y[weights > 0].max()])
        Xs = problem.X
        self._close_unreached(Xs)
        self._meet_constraints(problem, solvers["ln"], user_constraints, deadline)
        try:
            self._store_training_statistics(Xs, y, weights)
        except MemoryError:  # the model is complete: it must not be lost for want of its statistics
            tree = Tree(int(self.depth))
            self.leaf_mse_, self.leaf_r2_ = np.full(tree.n_leaves, np.nan), np.full(tree.n_leaves, np.nan)
            self.feature_importances_ = np.full(X.shape[1], np.nan)
            warnings.warn("out of memory while computing the training statistics (leaf_mse_, leaf_r2_, "
                          "feature_importances_): they are NaN; the fitted model is complete", UserWarning, stacklevel=3)
        self.fit_seconds_ = time.perf_counter() - started
        for callback in callbacks:
            getattr(callback, "on_fit_end", lambda estimator: None)(self)
        return self

    def _leaf_shrinkage(self, problem, lambda_b):
        """``problem`` with the leaf-ridge factor f = ``leaf_ridge_``: for f > 1 and ``leaf_center="linear"``,
        the paper's lambda_b and (f - 1) lambda_b pulling every leaf towards the linear model of
        :func:`~.leaf_ridge.linear_center` (``leaf_center_``); otherwise lambda_b times f (also
        under an l1 term on the leaves, whose zeros a nonzero center would pull back)."""
        self.leaf_center_ = None
        factor = self.leaf_ridge_
        sparse_leaves = any(not p.smooth and "beta" in p.blocks for p in problem.penalties)
        if factor == 1.0 or self.leaf_center == "zero" or sparse_leaves:
            return dataclasses.replace(problem, lambda_b=lambda_b * factor)
        self.leaf_center_ = self._free_center(problem)
        shrinkage = LeafShrinkage((factor - 1.0) * lambda_b, self.leaf_center_)
        return dataclasses.replace(problem, penalties=(*problem.penalties, shrinkage))

    @staticmethod
    def _free_center(problem):
        """:func:`~.leaf_ridge.linear_center` on the features whose leaf slopes the constraints leave free
        (a FeatureSubset fixes the others at 0: a center on them would pull the kept slopes towards the
        coefficients of a regression that had them)."""
        bounds = problem.constraint_set.bounds
        free = np.ones(problem.n_features, dtype=bool)
        if bounds is not None:
            free = ~((bounds[2][0, 1:] == 0) & (bounds[3][0, 1:] == 0))
        center = np.zeros(problem.n_features + 1)
        center[np.r_[True, free]] = linear_center(problem.X[:, free], problem.y, problem.counts)
        return center

    def _meet_constraints(self, problem, ln_solver, user_constraints, deadline):
        """The coefficients within their bounds exactly, the predictions polished to meet the
        soft-mean constraints (:func:`~srtopt.training.feasibility.polish`), the report, and a
        warning for a constraint that does not hold."""
        clip = self.scaler_.transform_y(self.y_range_) if self.clip_predictions else None
        self.beta_ = polish(problem, self.omega_, self.beta_, ln_solver, clip, deadline)
        self.omega_, self.beta_ = problem.project(self.omega_, self.beta_)
        self.constraint_report_ = constraint_report(self, user_constraints, problem, getattr(self, "groups_", []))
        failing = [row for row in self.constraint_report_ if not row["holds"]]
        if failing:
            worst = ", ".join(f"{row['row']} = {row['soft']:.4g} for the soft model and {row['predict']:.4g} for "
                              f"predict() (bound {row['bound']})" for row in failing[:3])
            when = " within the time limit" if self.stopped_by_ == "time_limit" else ""
            warnings.warn(f"the constraints could not be met{when}; the tree is the most feasible one found: {worst}",
                          UserWarning, stacklevel=4)

    def _named_initializations(self, wlr_solver) -> dict:
        """Name -> factory of the initializations ``init`` may name: "model-tree" and those of
        :class:`~.nodec_tree.NodecTree`."""
        return {"model-tree": ModelTreeInitialization, **super()._named_initializations(wlr_solver)}

    def predict(self, X):
        """Predict with the linear model of each row's HBP leaf (eq. prediction_model).

        Each row follows the branch of higher probability p_it at every node to one leaf
        (:meth:`apply`), whose linear model gives the prediction.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, p)
            Inputs, finite, with the features of ``fit`` (a DataFrame's column of
            ``sensitive_features`` is dropped).

        Returns
        -------
        ndarray of shape (n_samples,)
            Predictions in y's units; with ``clip_predictions``, within ``y_range_``.
        """
        return self._predict_scaled(scaled_input(self, X))

    def _training_prediction(self, problem):
        """predict() of the training rows in the problem's units (standardized y): what the report
        checks the constraints on."""
        return self.scaler_.transform_y(self._predict_scaled(problem.X))

    def _predict_scaled(self, Xs):
        """:meth:`predict` of the scaled rows Xs."""
        y_range = self.y_range_ if self.clip_predictions and hasattr(self, "y_range_") else None
        return kernels.hbp_prediction(Xs, self.omega_, self.beta_, Tree(int(self.depth)), self.scaler_, y_range)

    def summary(self, units="original"):
        """One row per node (pandas DataFrame), see :func:`srtopt.export.summary`."""
        from ..export import summary

        return summary(self, units=units)

    def _store_training_statistics(self, Xs, y, weights):
        """leaf_mse_, leaf_r2_ of the HBP routing of the scaled training data Xs and
        feature_importances_ (computed on standardized y: no overflow for |y| near 1e300, where the
        MSE in y's units is infinite)."""
        tree = Tree(int(self.depth))
        leaves = kernels.hbp_leaves(kernels.split_design(Xs), self.omega_, tree)
        self._store_feature_importances(Xs, weights)
        self._store_selected_features()
        pred, ys = kernels.hbp_predict(Xs, self.omega_, self.beta_, tree), self.scaler_.transform_y(y)
        self.leaf_mse_ = np.full(tree.n_leaves, np.nan)
        self.leaf_r2_ = np.full(tree.n_leaves, np.nan)
        for leaf in tree.leaves:
            rows = leaves == leaf
            w = weights[rows]
            if w.sum() <= 0:
                continue
            sse = np.average((ys[rows] - pred[rows]) ** 2, weights=w)
            sst = np.average((ys[rows] - np.average(ys[rows], weights=w)) ** 2, weights=w)
            with np.errstate(over="ignore"):
                self.leaf_mse_[tree.leaf_index(leaf)] = sse * self.scaler_.y_std * self.scaler_.y_std
            if rows.sum() > 1 and sst > 0:
                self.leaf_r2_[tree.leaf_index(leaf)] = 1.0 - sse / sst

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


@functools.cache
def _load_kernels():
    """Fit a tiny tree once per process, so that numba loads the compiled kernels from its disk
    cache, or compiles them after installation (several seconds, announced), before the clock of
    a fit with a ``time_limit`` starts."""
    X = np.random.default_rng(0).random((40, 2))
    with announce_if_slow("srtopt: compiling the soft tree's kernels, once after installation (seconds; not "
                          "counted in time_limit)"):
        SoftRegressionTree(depth=2, max_iter=1, n_init=1, leaf_ridge=1.0, random_state=0).fit(X, X[:, 0] - X[:, 1])
