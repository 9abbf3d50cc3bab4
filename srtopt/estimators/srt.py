"""``SoftRegressionTree``: the scikit-learn regressor of the SRT model trained by NODEC-DR."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
from sklearn.base import BaseEstimator

from .._announce import say
from ..leaf_model import LeafModel, make_leaf_model
from ..models.leaves import RegressionLeaves
from ..models.leaves.fitting import basis_options
from ..models.terms import LeafShrinkage, make_loss
from ..training.initialization import ModelTreeInitialization
from .leaf_ridge import FOLDS, WARM_ITER, choose_leaf_ridge
from .params import BOOLEAN, Options, Parses, Real, leaf_parameter
from .reading import RegressorScoreMixin
from .targets import check_sample_weight, check_target
from .soft_tree import SoftTree, init_entries

INITS = ("model-tree", "cluster", "cart")  # the named initializations (SoftRegressionTree's init)
LEAVES = ("linear", "spline")  # the leaves SoftRegressionTree builds itself (its leaf)


def leaf_spec(value):
    """``leaf`` checked: "linear", "spline" or a spec "spline:n_knots=7,smoothing=gcv", a registered leaf model's
    name (:func:`~srtopt.leaf_model.register_leaf_model`), or a LeafModel."""
    value = leaf_parameter(value, LEAVES, "'linear', 'spline' (options n_knots, smoothing, steps, pairs)")
    if isinstance(value, str) and value.split(":")[0].strip().lower() in LEAVES:
        basis_options(value)  # a spline's options, refused before the fit
    return value


class SoftRegressionTree(SoftTree, RegressorScoreMixin, BaseEstimator):
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
        cross-validated loss, if it beats 1 by a standard error (:mod:`srtopt.estimators.leaf_ridge`;
        it keeps a tree from fitting noise, docs/departures.md, "Leaf ridge"); a factor f > 1
        continues the tree of factor 1 for one macro iteration with f.  A number: that factor,
        from the initialization.
    leaf_center : {"linear", "zero"}, default="linear"
        What a leaf-ridge factor f > 1 pulls the leaves towards: "linear", the paper's lambda_b
        towards 0 and (f - 1) lambda_b towards the ridge regression of all rows (``leaf_center_``; a leaf
        model of your own: its ``center``), so that a large factor gives that one model; "zero", f lambda_b
        towards 0 (the paper's term, scaled).
    loss : str, Loss or callable, default="squared"
        loss(r) of the residual r = yhat_it - y_i in eq. (obj) (:mod:`srtopt.models.terms`):
        "squared" (eq. obj); "huber" (r^2 within delta, linear beyond; "huber:delta=0.5",
        default delta 0.3 standard deviations of y); "absolute" (|r| smoothed:
        sqrt(r^2 + epsilon^2) - epsilon, "absolute:epsilon=1e-3"); a
        :class:`~srtopt.models.terms.Loss`; or a callable mapping a CasADi symbol r to a
        CasADi expression, e.g. ``lambda r: casadi.log(casadi.cosh(r))`` (value, gradient
        and Hessian by CasADi's AD).
    leaf : {"linear", "spline"}, spec, registered name or LeafModel, default="linear"
        The leaf model.  "linear": the SRT's linear leaves yhat = beta_0 + sum_j beta_j x_j (eq. obj).
        "spline": an additive model per leaf, yhat = beta_0 + sum_j f_j(x_j), each f_j the linear term plus a
        cubic spline on knots at the training quantiles of x_j (5, ``"spline:n_knots=7"``), extrapolated
        linearly; its smoothness (a P-spline penalty on the curves' second differences) chosen by
        generalized cross-validation on one additive model of all rows (``"spline:smoothing=1e-3"`` fixes
        it); the splits stay oblique on the raw features (:mod:`srtopt.bases`).  ``"spline:steps=64,pairs=4"``
        adds, where generalized cross-validation on that model says they pay, steps to a feature's curve (at
        its distinct values or up to 64 quantiles) and up to 4 bilinear pair terms c (x_j - m_j)(x_k - m_k)
        (docs/leaves.md, "Steps and pairs").  A
        :class:`~srtopt.leaf_model.LeafModel` of your own, or the name it is registered under
        (:func:`~srtopt.leaf_model.register_leaf_model`: ``"poisson"``, ``"poisson:basis=spline"``); it owns its
        loss, so ``loss`` is for "linear" and "spline" (docs/leaves.md, "Writing a leaf model").
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
    beta_ : ndarray of shape (2^D, q)
        Leaf models in the scaled space, row l for leaf 2^D + l, column 0 the intercept; q = p + 1 for linear
        leaves (the slopes in columns 1..p), more for spline leaves (``leaf_model_.basis`` says which columns
        carry each feature).
    leaf_model_ : LeafModel
        The fitted leaf model: its basis (for spline leaves the knots and the smoothness) and its link.
    scaler_ : srtopt.view.Scaling
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
    leaf_center_ : ndarray of shape (q,) or None
        The leaf (for linear leaves the intercept and slopes; scaled units) the leaves are pulled towards when
        ``leaf_ridge_`` > 1 and ``leaf_center="linear"`` (the leaf model's ``center``); None otherwise.
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
                 max_features=None, tol=None, leaf="linear"):
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
        self.leaf = leaf

    INITS = INITS

    _parameter_constraints = {
        **SoftTree._parameter_constraints,
        "leaf": [Parses("'linear', 'spline', a spline spec or a LeafModel", leaf_spec)],
        "leaf_ridge": [Options("auto"), Real(0, None, "neither", text="a number > 0 (a factor on lambda_b)")],
        "leaf_center": [Options("linear", "zero")], "clip_predictions": [BOOLEAN],
        "loss": [Parses("a loss name or spec, a Loss or a callable", make_loss)],
        "init": [Parses("'model-tree', 'cluster', 'cart', a callable or a list of these",
                        lambda init: init_entries(init, INITS))],
    }

    def _check_targets(self, X, y):
        y = check_target(self, X, y, 2**self.depth)
        return y, y

    def _row_weights(self, targets, sample_weight):
        return check_sample_weight(sample_weight, len(targets), 2**int(self.depth))

    def _leaf_model(self, n_features):
        """The leaf model of ``leaf``: value leaves of ``loss`` on the basis it names, the registered leaf model it
        names, or a copy of the user's."""
        if isinstance(self.leaf, LeafModel):
            return copy.deepcopy(self.leaf)
        if self.leaf.split(":")[0].strip().lower() in LEAVES:
            return RegressionLeaves(make_loss(self.loss), self.leaf)
        leaves = make_leaf_model(self.leaf)
        if leaves.n_classes is not None:
            raise ValueError(f"leaf={self.leaf!r} gives class probabilities ({type(leaves).__name__}): fit a "
                             f"SoftClassificationTree")
        return leaves

    def _training_stages(self, problem, context):
        """``y_range_``, and ``leaf_ridge`` (on small data, "auto" chooses its factor by cross-validation,
        :func:`~.leaf_ridge.choose_leaf_ridge`) as a larger lambda_b or a pull towards the model of all rows.  Where
        "auto" chose a factor f > 1 for leaves without curves, two stages: the tree of the paper's lambda_b first,
        then ``WARM_ITER`` macro iterations with f from it: the fit that the leaf-ridge comparison judged on its
        folds (:mod:`~.leaf_ridge`).  Leaves of curves (a basis with smoothness columns) are fitted with f from the
        start: continued from the paper's lambda_b they kept its curves (docs/departures.md, "Leaf ridge")."""
        self.y_range_ = np.array([context["y"][context["weights"] > 0].min(), context["y"][context["weights"] > 0].max()])
        sample_weight = None if context["sample_weight"] is None else context["weights"]
        self.leaf_ridge_, self.leaf_ridge_losses_ = choose_leaf_ridge(
            self._without_selection(context["budget"], context["penalties"]), context["table"], context["y"],
            sample_weight, context["lambda_b"], context["deadline"], context["groups"], problem, context["encoder"])
        if self.verbose and self.leaf_ridge_losses_:
            say(f"small data ({problem.X.shape[0]} rows, {problem.tree.n_leaves} leaves of {problem.Xa.shape[1]} "
                f"coefficients): lambda_b times {self.leaf_ridge_:g}, chosen by {FOLDS}-fold cross-validation")
        trained = self._leaf_shrinkage(problem, context["lambda_b"])
        curves = problem.leaf_model.basis.smooth_columns().size > 0
        if self.leaf_ridge == "auto" and self.leaf_ridge_ != 1.0 and not curves:
            return [(problem, None), (trained, WARM_ITER)]
        return [(trained, None)]

    def _leaf_shrinkage(self, problem, lambda_b):
        """``problem`` with the leaf-ridge factor f = ``leaf_ridge_``: for f > 1 and ``leaf_center="linear"``,
        the paper's lambda_b and (f - 1) lambda_b pulling every leaf towards the leaf model's model of all rows
        (its ``center``: for value leaves the ridge regression of all rows on the leaf basis; ``leaf_center_``);
        otherwise lambda_b times f (also under an l1 term on the leaves, whose zeros a nonzero center would pull
        back)."""
        self.leaf_center_ = None
        factor = self.leaf_ridge_
        sparse_leaves = any(not p.smooth and "beta" in p.blocks for p in problem.penalties)
        if factor == 1.0 or self.leaf_center == "zero" or sparse_leaves:
            return dataclasses.replace(problem, lambda_b=lambda_b * factor)
        self.leaf_center_ = problem.leaf_model.center(problem)
        shrinkage = LeafShrinkage((factor - 1.0) * lambda_b, self.leaf_center_)
        return dataclasses.replace(problem, penalties=(*problem.penalties, shrinkage))

    def _clip(self):
        return self.scaler_.transform_y(self.y_range_) if self.clip_predictions else None

    def _named_initializations(self, wlr_solver) -> dict:
        """Name -> factory of the initializations ``init`` may name: "model-tree" and those of
        :class:`~.nodec_tree.NodecTree`."""
        return {"model-tree": ModelTreeInitialization, **super()._named_initializations(wlr_solver)}

    def predict(self, X):
        """Predict with the leaf model of each row's HBP leaf (eq. prediction_model).

        Each row follows the branch of higher probability p_it at every node to one leaf
        (:meth:`apply`), whose model gives the prediction.

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
        return self._predictions(self._scaled(X))

    def _training_prediction(self, problem):
        """predict() of the training rows in the problem's units (standardized y): what the report
        checks the constraints on."""
        return self.scaler_.transform_y(self._predictions(problem.X))

    def _y_range(self):
        """The range ``clip_predictions`` keeps the predictions within (None: no clipping)."""
        return self.y_range_ if self.clip_predictions and hasattr(self, "y_range_") else None

    def _store_leaf_statistics(self, problem, y, weights):
        """leaf_mse_ and leaf_r2_ of the HBP routing of the training rows (computed on standardized y: no
        overflow for |y| near 1e300, where the MSE in y's units is infinite)."""
        tree = problem.tree
        leaves = problem.hbp_leaves(self.omega_)
        pred, ys = self._outputs(problem.X), self.scaler_.transform_y(y)
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

    @classmethod
    def _warm_up_data(cls):
        X = np.random.default_rng(0).random((40, 2))
        return X, X[:, 0] - X[:, 1]
