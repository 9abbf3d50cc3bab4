"""``SoftClassificationTree``: a soft classification tree with oblique soft splits, trained by the
SRT's NODEC-DR on the soft model's classification loss."""

from __future__ import annotations

import functools
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .. import kernels
from ..models.constraints import Monotone, make_constraints
from ..models.leaves import ClassLeaves
from ..models.srt import SRTProblem
from ..models.terms import make_penalties
from ..models.terms.class_losses import ClassLoss, make_class_loss
from ..solvers import make_solver
from ..solvers.deadline import Deadline
from ..training.callbacks import ProgressPrinter, as_callbacks
from ..training.working_sets import make_working_sets
from ..tree import Tree
from ..training.feasibility import polish
from .constrained import (code_groups, constraint_report, constraint_terms, in_training_units, protected_groups,
                          training_units)
from .class_targets import ClassTargetsMixin
from .nodec_tree import NodecTree
from .params import (FRACTION, INTEGER, NONE, NONNEGATIVE, POSITIVE, RANDOM_STATE, VERBOSE, Integer, Kind, Options,
                     Pair, Parses, Real, check_parameters)
from .reading import SoftTreeMixin
from .regularization import parse_reading, regularization_lambdas
from .scaling import MinMaxTarget, _n_rows, scaled_input
from .srt import _load_kernels, init_entries
from .threads import one_blas_thread

LEAF_KINDS = ("constant", "logistic")
INITS = ("cart", "cluster")
#: the LN solvers "auto" tries: three steps of Newton's method on the exact Hessian while the subproblem has at
#: most 800 coefficients, 30 iterations of L-BFGS-B beyond (the Hessian of K' q coefficients per leaf costs
#: N (K' q)^2); the LN subproblems are convex and warm-started, and inexact steps are measured as accurate
#: (docs/classification.md)
LN_AUTO = ["newton:max_variables=800,max_iter=3", "l-bfgs-b:max_iter=30", "ipopt", "prox-gradient"]


class SoftClassificationTree(NodecTree, ClassTargetsMixin, SoftTreeMixin, ClassifierMixin, BaseEstimator):
    """Soft classification tree: oblique soft splits, class-probability leaves, single-leaf (HBP)
    predictions, trained by NODEC-DR.

    The splits are the SRT's, p_it = F(omega_0t + (1/p) sum_j omega_jt x_ij) (eq. cdf).  Leaf l
    gives the class probabilities softmax(u_il) of its scores u_il = B_l Xa_i: constant leaves
    (Xa = 1, a class-probability vector per leaf, the model of ORCT and MRCT) or multinomial
    logistic leaves (Xa = [1, x], the analogue of the SRT's linear leaves); two classes have one
    score per leaf (the logit of ``classes_[1]``).  Training minimises the soft model's loss
    E = sum_i s_i sum_l P_il loss(u_il, y_i) + the l2 terms of eq. (obj) + ``penalty`` by NODEC-DR
    (the BN subproblems are the SRT's with the leaves' losses R_il; the LN subproblems are convex
    for the log loss: a weighted multinomial logistic regression per leaf).  A row is predicted
    by the leaf of its highest-branch-probability path (eq. prediction_model); the soft mixture of
    all leaves is ``predict_proba(X, mixture=True)``.  X is min-max scaled internally.

    Parameters
    ----------
    depth : int, default=2
        Depth D of the maximal binary tree (2^D - 1 branch nodes, 2^D leaves).
    leaf : {"constant", "logistic"}, default="logistic"
        The leaf model: a class-probability vector, or a multinomial logistic regression on the
        features (docs/classification.md has the measurement behind the default).
    loss : str or ClassLoss, default="log_loss"
        "log_loss": -log p_l(y_i | x_i), the soft model's log loss; "cost": ORCT's expected
        misclassification cost sum_k p_lk(x_i) C[y_i, k] with C 1 off the diagonal
        (``MisclassificationCost(cost=C)`` for another matrix); a
        :class:`~srtopt.models.terms.class_losses.ClassLoss` of your own.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplying ``sample_weight`` (scikit-learn's meaning).
    mu : float, default=1.0
        Slope of the logistic CDF of the splits.
    regularization : str, None, float or (float, float), default="l2"
        The l2 weights lambda_w, lambda_b of eq. (obj), as for
        :class:`~srtopt.estimators.srt.SoftRegressionTree` (its readings, on the classification loss).
    leaf_ridge : float, default=1.0
        A factor on lambda_b, the l2 weight on the leaf coefficients.
    max_iter : int, default=5
        Macro iterations M_it of NODEC-DR (the paper's regression experiments take 10; for
        classification 5 measured as accurate, docs/classification.md).
    tol : float or None, default=1e-3
        Stop before ``max_iter`` after a macro iteration that lowered the lowest E reached by less
        than ``tol`` times it (``stopped_by_ == "tol"``); None: run ``max_iter``.
    init : "cart", "cluster", callable or list of these, default="cart"
        The initial tree: the splits of a depth-D CART classifier made soft, or the paper's
        clustering-based procedure; the leaves start at the smoothed class frequencies of the rows
        each receives; or ``init(problem, random_state) -> (omega0, beta0)``.
    n_init, init_scale : int and float, default 10 and 0.2
        The "cluster" initialization's repetitions and factor on its split weights.
    eps1, eps2, eps3, zeta : float, default 0.1, 0.3, 0.4, 0.8
        Thresholds of the reassignment heuristic and their decay per macro iteration.
    theta_w, theta_b : float, default=1e-3
        Gradient thresholds (theta)^k below which a BN / LN step is skipped.
    k0 : int or None, default=None
        Inner iteration from which the convergence safeguards are on (None: never).
    tau : float, default=1e-6
        tau of condition (19).
    bn_solver, ln_solver, wlr_solver : str or solver object, default="auto"
        Solvers of the BN, LN and WLR subproblems (:mod:`srtopt.solvers`): "auto" takes Newton's
        method with the exact Hessian where it applies; ``bn_solver="ipopt"`` runs IPOPT on the same
        exact Hessian.
    wlr_C : float, default=1.0
        Inverse l2 strength of the WLR proxy.
    wlr_weights : {"labels", "routing"}, default="labels"
        Class weights of the WLR proxy.
    n_restarts, restart_iter : int, default 1, 2
        Restarts and their macro iterations before the best continues.
    max_subproblem_rows : int or None, default=100_000
        Rows of a BN or WLR subproblem at most (a uniform random subset).
    working_sets : "subtree", "all", "paths" or callable, default="subtree"
        The working-set rule of NODEC-GS.
    penalty : str, Penalty, list of these or None, default=None
        Penalty terms beside the l2 terms: "split_l1:strength=..." (sparse splits), "feature_l1:strength=..."
        (features dropped from the whole tree; by default the tree is then refitted on the features kept),
        "leaf_l1:strength=..." (sparse logistic leaves), as for the regression tree.
    monotonic_cst : array-like of {-1, 0, 1}, dict or None, default=None
        Two classes: the probability of ``classes_[1]`` monotone in these features (scikit-learn's
        convention; one sign per feature, or {feature name or index: sign}), exactly, for every input:
        no split uses the feature and every logistic leaf's slope on it has the sign.
    max_features : int or None, default=None
        At most this many features in the whole tree (recursive elimination on held-out permutation
        importance, :mod:`srtopt.estimators.selection`).
    constraints : str, Constraint, list of these or None, default=None
        ``"class_recall:class=B,lower=0.9"``: at least 90% of class B's training rows classified as B,
        by the soft model the training loss is written on and by ``predict()``
        (:class:`~srtopt.models.constraints.ClassRecall`); ``"parity:gap=0.05"`` (two classes): the
        protected groups' mean probabilities of ``classes_[1]`` within 0.05 of each other (needs
        ``fit(..., sensitive_features=...)``); or any constraint of :mod:`srtopt.models.constraints`.
        ``constraint_report_`` says whether each holds.
    time_limit : float or None, default=None
        Seconds for the whole fit.
    callbacks : list or None, default=None
        Training callbacks (:mod:`srtopt.training.callbacks`).
    verbose : int, default=0
        Progress on stderr.
    random_state : int, RandomState or None, default=None
        Seeds the initialization and the heuristic's subsamples.
    n_jobs : int or None, default=None
        Threads of the "cluster" initialization's repetitions.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The class labels, in the order of the columns of ``predict_proba``.
    n_classes_ : int
        K.
    omega_ : ndarray of shape (2^D - 1, p + 1)
        Split weights in the scaled space, column 0 the intercepts.
    beta_ : ndarray of shape (2^D, K' q)
        Leaf coefficients: leaf l's K' score vectors of q coefficients (q = 1 for constant leaves,
        p + 1 for logistic ones), one after the other; K' = 1 for two classes.
    scaler_ : MinMaxTarget
        The training statistics of the internal scaling of X.
    objective_ : float
        E of the returned iterate.
    n_iter_ : int
        Macro iterations run.
    stopped_by_ : str
        Why training stopped.
    history_ : list of dict
        One record per inner iteration.
    lambda_w_, lambda_b_ : float
        The l2 weights used.
    node_counts_ : ndarray of shape (2^(D+1) - 1,)
        Training rows whose HBP path visits node t, at index t - 1.
    leaf_class_counts_ : ndarray of shape (2^D, K)
        The (weighted) training rows of each class that each leaf receives by HBP.
    leaf_class_proba_ : ndarray of shape (2^D, K)
        The class probabilities of each leaf averaged over the (weighted) training rows it receives
        by HBP (a constant leaf's probability vector; NaN for a leaf without training rows): what
        the views show as the leaf's class mix.
    feature_importances_ : ndarray of shape (p,)
        Importance of each feature in the splits (as for the regression tree).
    fit_seconds_ : float
        Wall-clock seconds of the fit.
    constraint_report_ : list of dict
        One row per constraint row (empty without constraints): "constraint", "row", "bound", "soft"
        (the value for the soft model), "predict" (for ``predict()`` on the training data), "holds".
    groups_ : list
        The labels of the protected groups of ``sensitive_features`` (absent without).
    selected_features_ : list
        The features the tree uses (a nonzero weight in a split or a leaf), by name when X had names.
    n_features_used_ : int
        ``len(selected_features_)``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = SoftClassificationTree(depth=2, random_state=0).fit(X, y)
    >>> tree.predict_proba(X[:2]).shape, bool(tree.score(X, y) > 0.9)
    ((2, 3), True)
    """

    def __init__(self, depth=2, leaf="logistic", loss="log_loss", class_weight=None, mu=1.0, regularization="l2",
                 leaf_ridge=1.0, max_iter=5, init="cart", n_init=10, init_scale=0.2, eps1=0.1, eps2=0.3, eps3=0.4,
                 zeta=0.8, theta_w=1e-3, theta_b=1e-3, k0=None, tau=1e-6, bn_solver="auto", ln_solver="auto",
                 wlr_solver="auto", wlr_C=1.0, wlr_weights="labels", n_restarts=1, restart_iter=2,
                 max_subproblem_rows=100_000, working_sets="subtree", penalty=None, monotonic_cst=None,
                 constraints=None, max_features=None, time_limit=None, callbacks=None, verbose=0, random_state=None,
                 n_jobs=None, tol=1e-3):
        self.depth, self.leaf, self.loss, self.class_weight = depth, leaf, loss, class_weight
        self.mu, self.regularization, self.leaf_ridge = mu, regularization, leaf_ridge
        self.max_iter, self.init, self.n_init, self.init_scale = max_iter, init, n_init, init_scale
        self.tol = tol
        self.eps1, self.eps2, self.eps3, self.zeta = eps1, eps2, eps3, zeta
        self.theta_w, self.theta_b, self.k0, self.tau = theta_w, theta_b, k0, tau
        self.bn_solver, self.ln_solver, self.wlr_solver, self.wlr_C = bn_solver, ln_solver, wlr_solver, wlr_C
        self.wlr_weights, self.n_restarts, self.restart_iter = wlr_weights, n_restarts, restart_iter
        self.max_subproblem_rows, self.working_sets, self.penalty = max_subproblem_rows, working_sets, penalty
        self.monotonic_cst, self.constraints, self.max_features = monotonic_cst, constraints, max_features
        self.time_limit, self.callbacks, self.verbose = time_limit, callbacks, verbose
        self.random_state, self.n_jobs = random_state, n_jobs

    AUTO_SPECS = {"ln": LN_AUTO}

    _parameter_constraints = {
        "depth": [Integer(1)], "leaf": [Options(*LEAF_KINDS)], "mu": [POSITIVE], "wlr_C": [POSITIVE],
        "tau": [POSITIVE], "init_scale": [POSITIVE],
        "leaf_ridge": [Real(0, None, "neither", text="a number > 0 (a factor on lambda_b)")],
        **{name: [Integer(1)] for name in ("max_iter", "n_init", "n_restarts", "restart_iter")},
        **{name: [FRACTION] for name in ("eps1", "eps2", "eps3", "zeta", "theta_w", "theta_b")},
        "k0": [NONE, Integer(0)], "time_limit": [NONE, POSITIVE], "tol": [NONE, NONNEGATIVE],
        "wlr_weights": [Options("labels", "routing")],
        "max_subproblem_rows": [NONE, Integer(2)], "verbose": VERBOSE, "n_jobs": [NONE, INTEGER],
        "random_state": RANDOM_STATE,
        "regularization": [NONE, NONNEGATIVE, Pair(NONNEGATIVE, "finite numbers >= 0 (lambda_w, lambda_b)"),
                           Parses("a reading such as 'l2' or 'l2:split=10'", parse_reading, str)],
        "loss": [Parses("'log_loss', 'cost' or a ClassLoss", make_class_loss, (str, ClassLoss))],
        "class_weight": [NONE, Options("balanced"), Kind("a dict {class label: weight}", dict)],
        "penalty": [Parses("None, a penalty name or spec, a Penalty or a list of these", make_penalties)],
        "constraints": [Parses("None, a constraint spec, a Constraint or a list of these", make_constraints)],
        "monotonic_cst": [NONE, Parses("signs in {-1, 0, 1}, one per feature, or a dict {feature: sign}", Monotone,
                                       (list, tuple, dict, np.ndarray))],
        "working_sets": [Parses("a working-set rule's name or a callable rule(tree)", make_working_sets)],
        "init": [Parses("'cart', 'cluster', a callable or a list of these",
                        functools.partial(init_entries, names=INITS))],
        **{f"{kind}_solver": [Parses("a solver spec or a solver object", functools.partial(make_solver, kind))]
           for kind in ("bn", "ln", "wlr")},
        "callbacks": [NONE, Parses("a list of Callback objects or callables", as_callbacks, (list, tuple))],
        "max_features": [NONE, Integer(1)],  # at most the number of features: checked at fit
    }

    def _check_params(self):
        check_parameters(self)

    @one_blas_thread
    def fit(self, X, y, sample_weight=None, sensitive_features=None):
        """Fit the tree by NODEC-DR on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Training inputs (numbers; a DataFrame keeps its column names).
        y : array-like of shape (n_samples,)
            Class labels (numbers or strings), at least two classes.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights s_i (they replace the 1/N of eq. obj), times the weights of ``class_weight``.
        sensitive_features : array-like of shape (n_samples,), str or None, default=None
            The protected group of every row, for ``parity`` (an array, or the name of a column of the
            DataFrame X, which is then not a feature).

        Returns
        -------
        SoftClassificationTree
            The fitted tree.
        """
        self._check_params()
        if self.time_limit is not None:
            _load_kernels()
        started = time.perf_counter()
        deadline = Deadline(self.time_limit)  # time_limit covers the whole fit
        user_constraints = constraint_terms(self)
        X, group_values, self.sensitive_feature_name_ = protected_groups(X, sensitive_features, _n_rows(X))
        given = X  # the budget's inner fits keep a DataFrame's names
        X, codes = self._check_data(X, y)
        given = given if hasattr(given, "columns") else X
        weights = self._weights(codes, sample_weight)
        groups = None
        if group_values is not None:
            groups, self.groups_ = code_groups(group_values, weights)
        params = {"sample_weight": sample_weight, "sensitive_features": groups}
        budget, penalties = self._feature_budget(given, self.classes_[codes], params, deadline)
        user_constraints += budget
        if self.monotonic_cst is not None and self.n_classes_ != 2:
            raise ValueError(f"monotonic_cst makes the probability of classes_[1] monotone: it needs two classes, "
                             f"not {self.n_classes_}")
        self.scaler_ = MinMaxTarget().fit(X, None, weights)
        tree = Tree(int(self.depth))
        lambda_w, lambda_b = regularization_lambdas(self.regularization, X.shape[1], tree, weights.sum())
        leaves = ClassLeaves(make_class_loss(self.loss), len(self.classes_), self.leaf)
        leaves.loss.targets(codes[:1], len(self.classes_))  # a cost matrix of the wrong size fails here
        problem = SRTProblem(self.scaler_.transform(X), codes, tree, float(self.mu), lambda_w,
                             lambda_b * self.leaf_ridge, weights, penalties=penalties,
                             constraints=in_training_units(user_constraints, training_units(self, leaves.loss)),
                             groups=groups, leaves=leaves)
        callbacks = as_callbacks(self.callbacks) + ([ProgressPrinter(self.verbose)] if self.verbose else [])
        solvers = self._solvers(problem)
        result = self._train(problem, solvers, deadline, callbacks)
        self.omega_, self.beta_ = result.omega, result.beta
        self.objective_, self.n_iter_, self.stopped_by_ = result.objective, result.n_macro, result.stopped_by
        self.history_ = [record.as_dict() for record in result.history]
        if self.stopped_by_ == "time_limit":
            limit = "the time limit" if self.time_limit is None else f"time_limit={self.time_limit:g} s"
            warnings.warn(f"{limit} reached after {self.n_iter_} macro iteration(s): the "
                          f"tree is the best found by then (stopped_by_='time_limit')", UserWarning, stacklevel=3)
        self.lambda_w_, self.lambda_b_ = lambda_w, problem.lambda_b
        self._close_unreached(problem.X)
        self._meet_constraints(problem, solvers["ln"], user_constraints, deadline)
        self._store_training_statistics(problem.X, codes, weights)
        self.fit_seconds_ = time.perf_counter() - started
        for callback in callbacks:
            getattr(callback, "on_fit_end", lambda estimator: None)(self)
        return self

    def _meet_constraints(self, problem, ln_solver, user_constraints, deadline):
        """The coefficients within their bounds, the leaves polished so that the constraints hold for the
        HBP leaves too (:func:`~srtopt.training.feasibility.polish`), each class's recall bound met by
        ``predict()`` (:meth:`_meet_recall`), the report, and a warning for a row that does not hold."""
        self.beta_ = polish(problem, self.omega_, self.beta_, ln_solver, deadline=deadline)
        self.omega_, self.beta_ = problem.project(self.omega_, self.beta_)
        self.beta_ = problem.policy.repair_predictions(self.omega_, self.beta_)
        self.constraint_report_ = constraint_report(self, user_constraints, problem, getattr(self, "groups_", []))
        failing = [row for row in self.constraint_report_ if not row["holds"]]
        if failing:
            worst = ", ".join(f"{row['row']} = {row['soft']:.4g} for the soft model and {row['predict']:.4g} for "
                              f"predict() (bound {row['bound']})" for row in failing[:3])
            warnings.warn(f"the constraints could not be met; the tree is the most feasible one found: {worst}",
                          UserWarning, stacklevel=4)

    def _training_prediction(self, problem):
        """predict_proba() of the training rows (their HBP leaves' class probabilities, in code order):
        what the report checks the constraints on (``predict()`` takes the most probable class)."""
        return kernels.hbp_class_probabilities(problem.X, self.omega_, self.beta_, Tree(int(self.depth)),
                                               self.n_classes_, self.leaf == "constant")

    def predict_proba(self, X, mixture=False):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Inputs.
        mixture : bool, default=False
            False: the probabilities of each row's HBP leaf (eq. prediction_model); True: the soft
            model's mixture sum_l P_il p_l(x_i) over all leaves (the model the training loss is
            written on).

        Returns
        -------
        ndarray of shape (n_samples, K)
            Probabilities of the classes, in the order of ``classes_``.
        """
        if not isinstance(mixture, (bool, np.bool_)):
            raise ValueError(f"mixture must be True or False, got {mixture!r}")
        Xs = scaled_input(self, X)
        tree, constant = Tree(int(self.depth)), self.leaf == "constant"
        if not mixture:
            return kernels.hbp_class_probabilities(Xs, self.omega_, self.beta_, tree, self.n_classes_, constant)
        S = kernels.split_probabilities(kernels.split_design(Xs), self.omega_, float(self.mu))
        P = kernels.leaf_probabilities(S, tree)
        Xa = kernels.class_design(Xs, constant)
        B = self.beta_.reshape(tree.n_leaves, -1, Xa.shape[1])
        leaf_probabilities = kernels.class_probabilities(np.einsum("iq,lkq->ilk", Xa, B), self.n_classes_)
        return np.einsum("il,ilk->ik", P, leaf_probabilities)

    def predict_log_proba(self, X):
        """log of :meth:`predict_proba` (the HBP leaf's), shape (n_samples, K)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The most probable class of each row's HBP leaf (eq. prediction_model).

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Inputs.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels of ``classes_``.
        """
        probabilities = self.predict_proba(X)
        return self.classes_[np.argmax(probabilities, axis=1)]

    def _store_training_statistics(self, Xs, codes, weights):
        """leaf_class_counts_ and leaf_class_proba_ of the HBP routing of the scaled training data,
        and feature_importances_."""
        tree = Tree(int(self.depth))
        rows = tree.leaf_rows(kernels.hbp_leaves(kernels.split_design(Xs), self.omega_, tree))
        counts = np.zeros((tree.n_leaves, self.n_classes_))
        np.add.at(counts, (rows, codes), weights)
        self.leaf_class_counts_ = counts
        proba = kernels.hbp_class_probabilities(Xs, self.omega_, self.beta_, tree, self.n_classes_,
                                                self.leaf == "constant")
        mass = np.zeros((tree.n_leaves, self.n_classes_))
        np.add.at(mass, rows, weights[:, None] * proba)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.leaf_class_proba_ = mass / counts.sum(axis=1, keepdims=True)  # NaN: a leaf without rows
        self._store_feature_importances(Xs, weights)
        self._store_selected_features(1 if self.n_classes_ == 2 else self.n_classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


__all__ = ["SoftClassificationTree"]
