"""``ORRTRegressor``: randomized regression trees (Blanquero, Carrizosa, Molero-Rio and
Romero Morales, 2022) trained by an off-the-shelf NLP solver from random starts."""

from __future__ import annotations

import functools
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .. import kernels
from .._announce import announce_if_slow
from .._spec import parse_spec
from ..models.leaves import linear_leaves
from ..models.orrt import ORRTObjective, soft_prediction
from ..models.terms import make_loss, make_penalties
from ..solvers import make_solver
from ..solvers.base import acceptance, solve_interruptibly
from ..solvers.deadline import Deadline
from ..tree import Tree
from .reading import RegressorScoreMixin, SoftTreeMixin
from .params import NONE, NONNEGATIVE, POSITIVE, RANDOM_STATE, HasMethod, Integer, Kind, Parses, check_parameters
from .tabular import InputsMixin
from .targets import check_target
from .threads import one_blas_thread


def whole_problem_solver(estimator, problem, name: str, auto_specs=None):
    """The "full" solver of ``estimator.solver`` for a baseline that solves its whole problem at once
    (ORRT, ORCT): its ``max_iter`` and ``tol`` unless the spec sets them, checked against ``problem``;
    "auto" tries ``auto_specs`` when given (else :data:`srtopt.solvers.AUTO`'s)."""
    if hasattr(estimator.solver, "solve"):
        solver = make_solver("full", estimator.solver)
    else:
        tol = {} if estimator.tol is None else {"tol": float(estimator.tol)}
        spec, options = parse_spec(estimator.solver)
        shared = {"max_iter": int(estimator.max_iter), **tol,
                  **({"specs": auto_specs} if spec == "auto" and auto_specs else {})}
        solver = make_solver("full", estimator.solver, **{**shared, **options})
    verdict = acceptance(solver, problem)
    if not verdict:
        raise ValueError(f"solver={estimator.solver!r} does not accept this {name} problem: {verdict.reason}")
    return solver


class ORRTRegressor(InputsMixin, SoftTreeMixin, RegressorScoreMixin, BaseEstimator):
    """Optimal randomized regression tree (ORRT), the soft-tree baseline of the paper.

    Same oblique soft splits p_it = F(omega_0t + (1/p) sum_j omega_jt x_ij), logistic
    F of slope ``mu`` (eq. cdf), and linear leaves yhat_it = beta_t . [1, x_i] as
    :class:`SoftRegressionTree`, but the prediction is the probability-weighted sum
    over all leaves, sum_t P_it yhat_it, and training minimises the mean squared error
    of that prediction (eq. formulation), plus optional l2 terms
    lambda_w/2 ||omega||^2 + lambda_b/2 ||beta||^2, over all variables at once from
    random initial solutions (every variable uniform in [-1, 1]).  With ``n_starts``
    > 1 the lowest-objective solution over the starts is kept (ORRT* of the paper's
    appendix).  X is scaled to [0, 1] and y standardized internally (training
    statistics); ``omega_`` and ``beta_`` live in that scaled space.

    The slope ``mu``
        The public ORRT code (and the ORCT code it descends from) writes the split as
        1/(1 + exp(-512 (a^T x / p - mu_t))) on features in [0, 1] with random starts
        in [-1, 1]: exactly our parametrisation (the 1/p factor is already inside,
        omega_0t = -mu_t) with slope 512.  Without bounds, E_ORRT depends on (mu, omega)
        only through mu * omega, so the slope does not change the model class; it sets
        how sharp the random starting splits are.  The default ``mu=512`` reproduces the
        baseline the paper compares against (from such saturated starts the solver stops
        near a single linear model); ``mu=1`` (SRT's slope) trains much better trees, for
        ORRT as a model rather than as the paper's baseline (docs/baselines.md, "ORRT").

    Parameters
    ----------
    depth : int, default=2
        Depth D of the maximal binary tree (2^D - 1 branch nodes, 2^D leaves).
    mu : float, default=512.0
        Slope of the logistic CDF (see above).
    lambda_w, lambda_b : float, default=0.0
        l2 weights of omega and beta (intercepts included); 0 is the paper's ORRT.
    loss, penalty : as for :class:`SoftRegressionTree`, default "squared" and None
        The loss of the soft prediction's residual sum_t P_it yhat_it - y_i (squared:
        eq. formulation) and penalty terms beside the l2 terms (split_l1, feature_l1, ...).
    solver : str or solver object, default="auto"
        A solver spec of kind "full" (:mod:`srtopt.solvers`): "auto" (IPOPT through
        CasADi, L-BFGS Hessian, for a smooth objective; the proximal gradient with a
        nonsmooth penalty), "ipopt", "slsqp" (SciPy SLSQP on the numpy objective and
        gradient, the solver of the ORRT paper and of the paper's comparison),
        "l-bfgs-b", "prox-gradient", "pyomo/<name>", options after a colon; or an
        adapter object, used as given (``max_iter``/``tol`` then do not apply).
    n_starts : int, default=1
        Number of random starts; the best objective is kept.
    max_iter : int, default=200
        Iteration limit of each solve.
    tol : float or None, default=None
        Solver tolerance (None: the solver's default).
    random_state : int, RandomState or None
        Draws the random initial solutions (the only random part).
    time_limit : float or None, default=None
        Seconds for the whole fit: the solver stops at the deadline (IPOPT also while its
        solver is built, returning the start) and no start begins after it; the best start so
        far is kept.

    Attributes
    ----------
    omega_ : ndarray of shape (2^D - 1, p + 1)
        Split weights, row t - 1 for branch node t, column 0 the intercept (scaled units).
    beta_ : ndarray of shape (2^D, p + 1)
        Leaf models, row l for leaf 2^D + l, column 0 the intercept (scaled units).
    leaf_model_ : LeafModel
        The linear leaves of the loss (:mod:`srtopt.leaf_model`), as the readers see them.
    scaler_ : srtopt.view.Scaling
        The training statistics of the internal scaling (x_min, x_scale, y_mean, y_std).
    objective_ : float
        The objective of the best start (scaled units).
    solver_status_ : str
        The solver's status on the best start.
    n_iter_ : int
        The solver's iterations on the best start.
    starts_ : list of dict
        Per start: objective, status, success, iterations, seconds.
    feature_importances_ : ndarray of shape (p,)
        As for :class:`SoftRegressionTree` (the soft shares m_t of the training rows weigh the
        split weights |omega_jt|).
    fit_seconds_ : float
        Wall-clock seconds of the solves.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,), dtype object
        The column names of a DataFrame X; absent when X had none.

    ``leaf_probabilities(X)`` gives the P_t(x) that weigh the leaves in the prediction.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((100, 2))
    >>> y = X[:, 0] + np.where(X[:, 1] > 0.5, 1.0, 0.0)
    >>> model = ORRTRegressor(depth=1, mu=1.0, random_state=0).fit(X, y)
    >>> P = model.leaf_probabilities(X[:3])  # P_t(x) of the leaves 2 and 3
    >>> Xs = model.scaler_.transform(X[:3])
    >>> leaf_models = model.scaler_.inverse_y(model.beta_[:, 0] + Xs @ model.beta_[:, 1:].T)
    >>> bool(np.allclose(model.predict(X[:3]), (P * leaf_models).sum(axis=1)))
    True
    """

    def __init__(self, depth=2, mu=512.0, lambda_w=0.0, lambda_b=0.0, solver="auto", n_starts=1,
                 max_iter=200, tol=None, random_state=None, loss="squared", penalty=None, time_limit=None):
        self.depth, self.mu, self.lambda_w, self.lambda_b = depth, mu, lambda_w, lambda_b
        self.solver, self.n_starts, self.max_iter, self.tol = solver, n_starts, max_iter, tol
        self.random_state, self.loss, self.penalty, self.time_limit = random_state, loss, penalty, time_limit

    _parameter_constraints = {
        "depth": [Integer(1)], "mu": [POSITIVE], "lambda_w": [NONNEGATIVE], "lambda_b": [NONNEGATIVE],
        "n_starts": [Integer(1)], "max_iter": [Integer(1)], "tol": [NONE, POSITIVE], "time_limit": [NONE, POSITIVE],
        "solver": [Kind("a spec string", str), HasMethod("an object with solve(problem, x0)", "solve")],
        "loss": [Parses("a loss name or spec, a Loss or a callable", make_loss)],
        "penalty": [Parses("None, a penalty name or spec, a Penalty or a list of these", make_penalties)],
        "random_state": RANDOM_STATE,
    }

    def _check_params(self):
        check_parameters(self)

    def _make_solver(self, problem):
        return whole_problem_solver(self, problem, "ORRT")

    @one_blas_thread
    def fit(self, X, y):
        """Fit the tree by one solve over all variables from each of ``n_starts`` random starts.

        X is min-max scaled to [0, 1] and y standardized with the training statistics
        (``scaler_``); every start draws each variable uniformly in [-1, 1] and ``solver``
        minimises the objective of eq. (formulation) (plus the l2 and penalty terms) from it; the
        start of lowest objective is kept.

        Parameters
        ----------
        X : array-like or DataFrame of shape (N, p)
            Training inputs, finite.  A DataFrame's column names become ``feature_names_in_``.
        y : array-like of shape (N,)
            Training targets, finite.

        Returns
        -------
        self : ORRTRegressor
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter breaks its rules (:class:`~srtopt.estimators.params.InvalidParameterError`),
            X or y are not finite numbers of matching rows, there are fewer rows than leaves, or
            the solver does not accept the problem.
        """
        self._check_params()
        if self.time_limit is not None:
            _load_kernels()  # a fresh process loads (or compiles) them: before the clock starts
        deadline = Deadline(self.time_limit)
        X, _, _ = self._fit_inputs(X, tables=False)
        y = check_target(self, X, y, 2**self.depth)
        Xs = self._scale_inputs(X, y)
        tree = Tree(int(self.depth))
        q = X.shape[1] + 1
        shape_w, shape_b = (tree.n_branch, q), (tree.n_leaves, q)
        problem = ORRTObjective.from_data(Xs, self.scaler_.transform_y(y), tree,
                                          np.zeros(shape_w), np.zeros(shape_b), float(self.mu),
                                          float(self.lambda_w), float(self.lambda_b), loss=make_loss(self.loss),
                                          penalties=make_penalties(self.penalty))
        solver, rng = self._make_solver(problem), check_random_state(self.random_state)
        start_time = time.perf_counter()
        best, self.starts_ = None, []
        for start in range(self.n_starts):
            if start and deadline.passed():
                break
            x0 = rng.uniform(-1.0, 1.0, problem.n_variables)
            result = solve_interruptibly(solver, problem, x0, deadline)
            x, status, iterations = result.x, result.status, result.iterations
            f = problem.evaluate(x)[0] if result.usable() else np.inf
            if not np.isfinite(f):  # keep the start rather than a non-finite point (none: stopped before one)
                kept = "" if iterations == 0 else " (start kept: non-finite solution)"
                x, f, status = x0, problem.evaluate(x0)[0], status + kept
            self.starts_.append({"objective": float(f), "status": status, "success": result.success,
                                 "iterations": iterations, "seconds": result.seconds})
            if best is None or f < best[1]:
                best = (x, f, status, iterations)
        x, self.objective_, self.solver_status_, self.n_iter_ = best
        if deadline.passed():
            warnings.warn(f"the time limit passed during start {len(self.starts_)} of {self.n_starts}: the best "
                          f"solution found by then is kept", UserWarning, stacklevel=3)
        self.omega_, self.beta_ = problem.split(x)
        self.leaf_model_ = linear_leaves(make_loss(self.loss), X.shape[1])
        self._store_feature_importances(self.scaler_.transform(X), np.ones(X.shape[0]))
        self.fit_seconds_ = time.perf_counter() - start_time
        return self

    def reachable_nodes(self):
        """Every node: the prediction sums over all the leaves."""
        check_is_fitted(self)
        return np.ones(2 ** (int(self.depth) + 1) - 1, dtype=bool)

    def predict(self, X):
        """Predict with the probability-weighted sum over all leaves (eq. formulation).

        The prediction of row i is sum_t P_it yhat_it, with the leaf probabilities P_it of
        :meth:`leaf_probabilities` and the leaf models yhat_it = beta_t . [1, x_i].

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
        yhat = soft_prediction(kernels.split_design(Xs), kernels.leaf_design(Xs), self.omega_, self.beta_,
                               float(self.mu), Tree(int(self.depth)))
        return self.scaler_.inverse_y(yhat)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


@functools.cache
def _load_kernels():
    """Evaluate a tiny ORRT objective once per process, so that numba loads the compiled kernels
    from its disk cache, or compiles them after installation, before the clock of a fit with a
    ``time_limit`` starts."""
    X = np.random.default_rng(0).random((8, 2))
    with announce_if_slow("srtopt: compiling the soft tree's kernels, once after installation (seconds; not "
                          "counted in time_limit)"):
        ORRTObjective.from_data(X, X[:, 0], Tree(1), np.zeros((1, 3)), np.zeros((2, 3))).evaluate(np.zeros(9))
