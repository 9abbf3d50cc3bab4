"""``ORCTClassifier``: optimal randomized classification trees (Blanquero, Carrizosa, Molero-Rio and
Romero Morales, 2021) trained by IPOPT from random starts, the classification twin of
:class:`~srtopt.estimators.orrt.ORRTRegressor`."""

from __future__ import annotations

import dataclasses
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .. import kernels
from ..models.orct import ORCTObjective, class_scores
from ..models.terms.class_losses import MisclassificationCost
from ..solvers.base import solve_interruptibly
from ..solvers.deadline import Deadline
from ..tree import Tree
from ..view import assignment_scores
from .class_targets import ClassTargetsMixin
from .params import (NONE, NONNEGATIVE, POSITIVE, RANDOM_STATE, HasMethod, Integer, Kind, Options, Parses,
                     check_parameters)
from .orrt import whole_problem_solver
from .reading import SoftTreeMixin
from .tabular import InputsMixin
from ..bases import ConstantBasis
from ..leaf_model import LeafModel, Softmax
from .soft_tree import _load_kernels
from .srt import SoftRegressionTree
from .threads import one_blas_thread


#: seconds of a fit without time_limit beyond which its first start warns how long the others will take
LONG_FIT = 60.0


def _warn_if_long(first: float, starts: int) -> None:
    """Warn when ``starts`` starts, the first of which took ``first`` seconds, would take long."""
    if starts > 1 and first * starts > LONG_FIT:
        warnings.warn(f"the first of {starts} starts took {first:.0f} s: the fit will take about "
                      f"{first * starts / 60:.0f} minutes; set time_limit (seconds for the whole fit) or fewer "
                      f"n_starts", UserWarning, stacklevel=4)


class ORCTClassifier(InputsMixin, ClassTargetsMixin, SoftTreeMixin, ClassifierMixin, BaseEstimator):
    """Optimal randomized classification tree (ORCT), the soft-tree baseline of classification.

    The splits are the SRT's, p_it = F(omega_0t + (1/p) sum_j omega_jt x_ij) with the logistic F of
    slope ``mu`` (eq. cdf); leaf t holds class assignments C_tk in [0, 1] with sum_k C_tk = 1 (the
    continuous relaxation of one class per leaf), and training minimises the expected
    misclassification cost sum_i s_i sum_t P_it sum_k W[y_i, k] C_tk (+ lambda_w/2 ||omega||^2)
    over all variables at once, with the paper's constraints: each class is assigned to some leaf
    (sum_t C_tk >= 1, when there are no more classes than leaves) and |omega_jt| <= ``omega_bound``.
    Each start draws omega uniformly in [-omega_bound, omega_bound] (in [-1, 1] when unbounded) and
    each leaf's C_t uniformly on the simplex; the start of lowest objective is kept.  A row is
    predicted by the class of largest sum_t P_it C_tk (the paper's rule, :meth:`predict_proba`);
    ``predict_proba(X, mixture=False)`` gives instead the assignments of its HBP leaf.  X is
    min-max scaled internally (``omega_`` lives in that space).

    Parameters
    ----------
    depth : int, default=2
        Depth D of the maximal binary tree (2^D - 1 branch nodes, 2^D leaves).
    mu : float, default=512.0
        Slope of the logistic CDF, that of the public ORCT code (docs/baselines.md, "ORCT").
    omega_bound : float or None, default=1.0
        Bound on every |omega_jt| (the paper's a_jt, mu_t in [-1, 1]); None: unbounded.
    lambda_w : float, default=0.0
        l2 weight on omega (intercepts included); 0 is the paper's ORCT.
    cost : array-like of shape (K, K) or None, default=None
        W[i, j], the cost of predicting ``classes_[j]`` for a row of ``classes_[i]``, >= 0; None: 1
        off the diagonal, 0 on it (the expected error rate).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplying ``sample_weight`` (scikit-learn's meaning; the per-class
        weights of the misclassification cost).
    solver : str or solver object, default="auto"
        A solver spec of kind "full" (:mod:`srtopt.solvers`): "ipopt" (IPOPT through CasADi,
        exact Hessian by AD), "ipopt:hessian=limited-memory" (the numpy value and gradient, L-BFGS),
        "pyomo/<name>", options after a colon; or an adapter object, used as given.  "auto": "ipopt" up
        to 2500 variables, L-BFGS beyond (:attr:`AUTO_SPECS`).
    n_starts : int, default=20
        Number of random starts; the best objective is kept.  Without ``time_limit``, a first start
        that makes the whole fit take more than a minute warns how long it will take.
    max_iter : int, default=200
        Iteration limit of each solve.
    tol : float or None, default=None
        Solver tolerance (None: the solver's default).
    time_limit : float or None, default=None
        Seconds for the whole fit: the solver stops at the deadline and no start begins after it;
        the best start so far is kept.
    random_state : int, RandomState or None, default=None
        Draws the random starts (the only random part).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The class labels, in the order of the columns of ``predict_proba`` and of ``C_``.
    n_classes_ : int
        K.
    omega_ : ndarray of shape (2^D - 1, p + 1)
        Split weights, row t - 1 for branch node t, column 0 the intercept (scaled units).
    C_ : ndarray of shape (2^D, K)
        Class assignments, row l for leaf 2^D + l (each row sums to 1).
    scaler_ : srtopt.view.Scaling
        The training statistics of the internal scaling of X.
    objective_ : float
        The expected misclassification cost (+ the l2 term) of the best start.
    solver_status_ : str
        The solver's status on the best start.
    n_iter_ : int
        The solver's iterations on the best start.
    starts_ : list of dict
        Per start: objective, status, success, iterations, seconds.
    feature_importances_ : ndarray of shape (p,)
        As for :class:`SoftRegressionTree`.
    fit_seconds_ : float
        Wall-clock seconds of the fit.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,), dtype object
        The column names of a DataFrame X; absent when X had none.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> model = ORCTClassifier(depth=2, n_starts=2, random_state=0).fit(X, y)
    >>> model.predict_proba(X[:2]).shape, model.C_.shape
    ((2, 3), (4, 3))
    """

    def __init__(self, depth=2, mu=512.0, omega_bound=1.0, lambda_w=0.0, cost=None, class_weight=None,
                 solver="auto", n_starts=20, max_iter=200, tol=None, time_limit=None, random_state=None):
        self.depth, self.mu, self.omega_bound, self.lambda_w = depth, mu, omega_bound, lambda_w
        self.cost, self.class_weight, self.solver, self.n_starts = cost, class_weight, solver, n_starts
        self.max_iter, self.tol, self.time_limit, self.random_state = max_iter, tol, time_limit, random_state

    _parameter_constraints = {
        "depth": [Integer(1)], "mu": [POSITIVE], "omega_bound": [NONE, POSITIVE], "lambda_w": [NONNEGATIVE],
        "cost": [Parses("None or a K x K matrix of costs >= 0", MisclassificationCost)],
        "class_weight": [NONE, Options("balanced"), Kind("a dict of class weights", dict)],
        "solver": [Kind("a spec string", str), HasMethod("an object with solve(problem, x0)", "solve")],
        "n_starts": [Integer(1)], "max_iter": [Integer(1)], "tol": [NONE, POSITIVE], "time_limit": [NONE, POSITIVE],
        "random_state": RANDOM_STATE,
    }

    #: what solver="auto" tries: IPOPT with the exact Hessian up to 2500 variables, with L-BFGS beyond (an
    #: iteration on the dense Hessian of 6000 variables takes seconds and cannot be stopped: a time limit
    #: would wait for it), the proximal gradient
    AUTO_SPECS = ["ipopt:max_variables=2500", "ipopt:hessian=limited-memory", "prox-gradient"]

    def _make_solver(self, problem):
        return whole_problem_solver(self, problem, "ORCT", self.AUTO_SPECS)

    def _start(self, problem, rng) -> np.ndarray:
        """omega uniform in [-b, b] (b = omega_bound, 1 when unbounded), each C_t uniform on the simplex."""
        b = 1.0 if self.omega_bound is None else float(self.omega_bound)
        omega = rng.uniform(-b, b, problem.omega.size)
        return np.concatenate([omega, rng.dirichlet(np.ones(problem.n_classes), problem.tree.n_leaves).ravel()])

    @one_blas_thread
    def fit(self, X, y, sample_weight=None):
        """Fit the tree by one IPOPT solve over all variables from each of ``n_starts`` random starts.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, p)
            Training inputs, finite numbers.
        y : array-like of shape (n_samples,)
            Class labels (numbers or strings), at least two classes of two rows each.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights s_i (normalized to sum 1), times the weights of ``class_weight``.

        Returns
        -------
        ORCTClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter breaks its rules, y has one class or looks continuous, a class has no row
            of positive weight, ``cost`` does not have one row and column per class, or the solver
            does not accept the problem.
        """
        check_parameters(self)
        if self.time_limit is not None:
            _load_kernels(SoftRegressionTree)  # a fresh process loads (or compiles) them: before the clock starts
        deadline = Deadline(self.time_limit)
        started = time.perf_counter()
        X, _, _ = self._fit_inputs(X, tables=False)
        codes = self._check_data(X, y)
        weights = self._weights(codes, sample_weight)
        Xs = self._scale_inputs(X, None, weights)  # a row of weight 0 is not in the data
        tree, K = Tree(int(self.depth)), self.n_classes_
        problem = ORCTObjective(Xs, codes, tree, K, np.zeros((tree.n_branch, X.shape[1] + 1)),
                                np.full((tree.n_leaves, K), 1.0 / K), float(self.mu), float(self.lambda_w),
                                self.cost, weights, self.omega_bound)
        solver, rng = self._make_solver(problem), check_random_state(self.random_state)
        best, self.starts_ = None, []
        for start in range(self.n_starts):
            if start and deadline.passed():
                break
            x0 = self._start(problem, rng)
            result = solve_interruptibly(solver, problem, x0, deadline)
            x, status = (result.x, result.status) if result.usable() else (x0, f"{result.status} (start kept)")
            x = problem.repair(x)
            f = problem.evaluate(x)[0]
            self.starts_.append({"objective": float(f), "status": status, "success": result.success,
                                 "iterations": result.iterations, "seconds": result.seconds})
            if start == 0 and self.time_limit is None:
                _warn_if_long(time.perf_counter() - started, self.n_starts)
            if best is None or f < best[1]:
                best = (x, f, status, result.iterations)
        if deadline.passed():
            warnings.warn(f"the time limit passed during start {len(self.starts_)} of {self.n_starts}: the best "
                          f"solution found by then is kept", UserWarning, stacklevel=3)
        x, self.objective_, self.solver_status_, self.n_iter_ = best
        self.omega_, self.C_ = problem.split(x)
        self._store_feature_importances(problem.X, weights)
        self.fit_seconds_ = time.perf_counter() - started
        return self

    def tree_view(self):
        """The fitted tree as the readers see it (:meth:`TreeMixin.tree_view`), its leaves the class
        assignments C_ as constant class-probability leaves (:func:`srtopt.view.assignment_scores`)."""
        view = super().tree_view()
        return dataclasses.replace(view, beta_=assignment_scores(self.C_), leaf_class_proba_=np.asarray(self.C_),
                                   leaf_model_=LeafModel(ConstantBasis(self.n_features_in_), Softmax(len(self.classes_))))

    def reachable_nodes(self):
        """Every node: the prediction sums over all the leaves."""
        check_is_fitted(self)
        return np.ones(2 ** (int(self.depth) + 1) - 1, dtype=bool)

    def predict_proba(self, X, mixture=True):
        """Class scores of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Inputs, with the features of ``fit``.
        mixture : bool, default=True
            True: sum_t P_t(x) C_tk over all leaves (the paper's prediction scores); False: C_t of the
            row's HBP leaf.

        Returns
        -------
        ndarray of shape (n_samples, K)
            Scores of the classes in the order of ``classes_``, each row summing to 1.
        """
        if not isinstance(mixture, (bool, np.bool_)):
            raise ValueError(f"mixture must be True or False, got {mixture!r}")
        Xs, tree = self._scaled(X), Tree(int(self.depth))
        Z = kernels.split_design(Xs)
        if mixture:
            return class_scores(Z, self.omega_, self.C_, float(self.mu), tree)
        return self.C_[tree.leaf_rows(kernels.hbp_leaves(Z, self.omega_, tree))]

    def predict(self, X):
        """The class of largest sum_t P_t(x) C_tk (the paper's rule).

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Inputs.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels of ``classes_``.
        """
        scores = self.predict_proba(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


__all__ = ["ORCTClassifier"]
