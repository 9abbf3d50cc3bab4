"""``SoftClassificationTree``: a soft classification tree with oblique soft splits, trained by the
SRT's NODEC-DR on the soft model's classification loss."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .. import kernels
from ..leaf_model import LeafModel, make_leaf_model
from ..models.leaves import ClassLeaves
from ..models.leaves.fitting import basis_options
from ..models.terms.class_losses import make_class_loss
from ..tree import Tree
from .class_targets import ClassTargetsMixin
from .params import NONE, Kind, Options, Parses, Real, leaf_parameter
from .soft_tree import SoftTree, init_entries

#: the leaf kinds ``leaf`` names, and the basis of each (:mod:`srtopt.bases`)
LEAF_BASES = {"constant": "constant", "logistic": "linear", "spline": "spline"}
INITS = ("cart", "cluster")


def leaf_spec(value):
    """``leaf`` checked: "constant", "logistic", "spline" or a spline spec, a registered leaf model's name
    (:func:`~srtopt.leaf_model.register_leaf_model`), or a LeafModel."""
    value = leaf_parameter(value, tuple(LEAF_BASES), "'constant', 'logistic', 'spline' (options n_knots, smoothing, "
                                                     "steps, pairs)")
    if isinstance(value, str) and value.split(":")[0].strip().lower() in LEAF_BASES:
        basis_options(basis_spec(value))  # a spline's options, refused before the fit
    return value


def basis_spec(leaf: str) -> str:
    """The spec of the leaf basis (:mod:`srtopt.bases`) that a ``leaf`` spec names: "logistic:..." -> "linear:..."."""
    name, colon, options = leaf.partition(":")
    return LEAF_BASES[name.strip().lower()] + colon + options


class SoftClassificationTree(SoftTree, ClassTargetsMixin, ClassifierMixin, BaseEstimator):
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
    leaf : {"constant", "logistic", "spline"}, spec, registered name or LeafModel, default="logistic"
        The leaf model: a class-probability vector, a multinomial logistic regression on the
        features (docs/classification.md has the measurement behind the default), or an additive
        logistic model whose scores are a cubic spline per feature ("spline", "spline:n_knots=7",
        "spline:steps=64,pairs=4" with steps and pair terms; the
        basis of :class:`~srtopt.estimators.srt.SoftRegressionTree`'s spline leaves); or a
        :class:`~srtopt.leaf_model.LeafModel` of your own, or the name it is registered under
        (:func:`~srtopt.leaf_model.register_leaf_model`; made with ``n_classes=K``).
    loss : str, ClassLoss or callable, default="log_loss"
        "log_loss": -log p_l(y_i | x_i), the soft model's log loss; "cost": ORCT's expected
        misclassification cost sum_k p_lk(x_i) C[y_i, k] with C 1 off the diagonal
        (``MisclassificationCost(cost=C)`` for another matrix); a name of
        :func:`~srtopt.models.terms.class_losses.register_class_loss`; a
        :class:`~srtopt.models.terms.class_losses.ClassLoss` of your own; or a callable of the
        probability p of a row's class at a leaf (and, with two arguments, of its class code c)
        returning a CasADi expression, e.g. ``lambda p: -(1 - p) ** 2 * casadi.log(p)`` (the focal
        loss; value, gradient and Hessian by CasADi's AD,
        :class:`~srtopt.models.terms.class_losses.ProbabilityLoss`).
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
        p + 1 for logistic ones, more for spline ones), one after the other; K' = 1 for two classes.
    leaf_model_ : LeafModel
        The fitted leaf model: its basis and its link (the softmax of the K' scores).
    scaler_ : srtopt.view.Scaling
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

    INITS = INITS

    _parameter_constraints = {
        **SoftTree._parameter_constraints,
        "leaf": [Parses("'constant', 'logistic', 'spline', a spline spec or a LeafModel", leaf_spec)],
        "leaf_ridge": [Real(0, None, "neither", text="a number > 0 (a factor on lambda_b)")],
        "loss": [Parses("'log_loss', 'cost', a registered name, a ClassLoss or a callable p -> CasADi expression",
                        make_class_loss)],
        "class_weight": [NONE, Options("balanced"), Kind("a dict {class label: weight}", dict)],
        "init": [Parses("'cart', 'cluster', a callable or a list of these", lambda init: init_entries(init, INITS))],
    }

    def _check_targets(self, X, y):
        codes = self._check_data(X, y)
        if self.monotonic_cst is not None and self.n_classes_ != 2:
            raise ValueError(f"monotonic_cst makes the probability of classes_[1] monotone: it needs two classes, "
                             f"not {self.n_classes_}")
        return self.classes_[codes], codes

    def _row_weights(self, targets, sample_weight):
        return self._weights(targets, sample_weight)

    def _leaf_model(self, n_features):
        """Class leaves of ``loss`` on the basis ``leaf`` names, the registered leaf model it names (given
        ``n_classes=K``), or a copy of the user's leaf model."""
        if isinstance(self.leaf, LeafModel):
            return copy.deepcopy(self.leaf)
        name, _, options = self.leaf.partition(":")
        if name.strip().lower() not in LEAF_BASES:
            return self._registered_leaf_model()
        loss = make_class_loss(self.loss)
        loss.targets(np.zeros(1, dtype=np.int64), self.n_classes_)  # a cost matrix of the wrong size fails here
        return ClassLeaves(loss, self.n_classes_, basis_spec(self.leaf))

    def _registered_leaf_model(self):
        """The registered leaf model ``leaf`` names, made with ``n_classes=K``; refused unless it gives the
        probabilities of K classes."""
        try:
            leaves = make_leaf_model(self.leaf, n_classes=self.n_classes_)
        except ValueError as exc:
            raise ValueError(f"leaf={self.leaf!r}: {exc} (a classifier makes its leaf model with n_classes=K; a "
                             f"leaf model of values is fitted by a SoftRegressionTree)") from None
        if leaves.n_classes != self.n_classes_:
            raise ValueError(f"leaf={self.leaf!r} gives {leaves.n_classes or 'no'} class probabilities, the target "
                             f"has {self.n_classes_} classes")
        return leaves

    def _training_stages(self, problem, context):
        """One problem: lambda_b times ``leaf_ridge``."""
        return [(dataclasses.replace(problem, lambda_b=problem.lambda_b * self.leaf_ridge), None)]

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
        Xs = self._scaled(X)
        if not mixture:
            return self._outputs(Xs)
        return kernels.mixture_probabilities(self.leaf_model_, Xs, self.omega_, self.beta_, Tree(int(self.depth)),
                                             float(self.mu))

    def decision_function(self, X):
        """The scores of each row's HBP leaf (eq. prediction_model), whose softmax is :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Inputs.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, K)
            Two classes: the logit of ``classes_[1]`` (positive: ``predict`` gives ``classes_[1]``); K > 2
            classes: the K scores, in the order of ``classes_`` (scikit-learn's convention).
        """
        Xs = self._scaled(X)  # checks that the tree is fitted
        U = self.leaf_model_.hbp_scores(Xs, self.omega_, self.beta_, Tree(int(self.depth)))
        return U[:, 0] if U.shape[1] == 1 else U

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
        return self._predictions(self._scaled(X))

    def _store_leaf_statistics(self, problem, y, weights):
        """leaf_class_counts_ and leaf_class_proba_ of the HBP routing of the training rows."""
        tree, codes = problem.tree, np.asarray(problem.y, dtype=np.int64)
        rows = tree.leaf_rows(problem.hbp_leaves(self.omega_))
        counts = np.zeros((tree.n_leaves, self.n_classes_))
        np.add.at(counts, (rows, codes), weights)
        self.leaf_class_counts_ = counts
        mass = np.zeros((tree.n_leaves, self.n_classes_))
        np.add.at(mass, rows, weights[:, None] * self._outputs(problem.X))
        with np.errstate(invalid="ignore", divide="ignore"):
            self.leaf_class_proba_ = mass / counts.sum(axis=1, keepdims=True)  # NaN: a leaf without rows

    @classmethod
    def _warm_up_data(cls):
        X = np.random.default_rng(0).random((40, 2))
        return X, np.where(X[:, 0] > X[:, 1], "a", "b")


__all__ = ["SoftClassificationTree"]
