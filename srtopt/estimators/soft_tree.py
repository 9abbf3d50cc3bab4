"""``SoftTree``: what :class:`~.srt.SoftRegressionTree` and :class:`~.classification.SoftClassificationTree`
share, whatever their leaves: the parameters of the soft splits and of NODEC-DR, and one ``fit`` (docs/design.md,
"The path of one fit") whose steps the two fill in with a few hooks -- their targets, their row weights, their
leaf model, the small-data rule of their leaves and their statistics.  Predicting goes through the fitted leaf
model (``leaf_model_``, :mod:`srtopt.leaf_model`)."""

from __future__ import annotations

import functools
import time
import warnings

import numpy as np

from .._announce import announce_if_slow
from ..models.constraints import Monotone, make_constraints
from ..models.srt import SRTProblem
from ..models.terms import make_penalties
from ..solvers import make_solver
from ..solvers.deadline import Deadline
from ..training.callbacks import ProgressPrinter, as_callbacks
from ..training.feasibility import polish, repair_decisions
from ..training.working_sets import make_working_sets
from ..tree import Tree
from .constrained import (code_groups, constraint_report, constraint_terms, in_training_units, training_units,
                          used_groups)
from .nodec_tree import NodecTree
from .params import (FRACTION, INTEGER, NONE, NONNEGATIVE, POSITIVE, RANDOM_STATE, VERBOSE, Integer, Options, Pair,
                     Parses, check_parameters)
from .reading import SoftTreeMixin
from .regularization import parse_reading, regularization_lambdas
from .tabular import InputsMixin, by_column_name
from .threads import one_blas_thread


def init_entries(init, names) -> list:
    """The entries of ``init``: itself, or the items of a list or tuple, each one of ``names`` or a callable
    ``init(problem, random_state)``.

    Raises
    ------
    ValueError
        If the list is empty or an entry is neither.
    """
    entries = list(init) if isinstance(init, (list, tuple)) else [init]
    if not entries:
        raise ValueError("init must not be an empty list")
    for entry in entries:
        if not (entry in names if isinstance(entry, str) else callable(entry)):
            raise ValueError(f"init must be {', '.join(map(repr, names))}, a callable init(problem, random_state) "
                             f"or a list of these, got {entry!r}")
    return entries


class SoftTree(InputsMixin, NodecTree, SoftTreeMixin):
    """A soft tree trained by NODEC-DR: oblique soft splits p_it = F(omega_0t + (1/p) sum_j omega_jt x_ij)
    (eq. cdf), a leaf model per leaf (:mod:`srtopt.leaf_model`), E = sum_i s_i sum_l P_il R_il + the l2 terms
    of eq. (obj) + ``penalty`` minimised by NODEC-DR, predictions by the leaf of the highest-branch-probability
    path (eq. prediction_model).  Subclasses give the hooks below, and put scikit-learn's mixins and
    ``BaseEstimator`` after it; the parameters are documented on them."""

    #: the named initializations ``init`` takes (the first is the default of the subclass)
    INITS: tuple = ("cart", "cluster")

    _parameter_constraints = {
        "depth": [Integer(1)], "mu": [POSITIVE], "wlr_C": [POSITIVE], "tau": [POSITIVE], "init_scale": [POSITIVE],
        **{name: [Integer(1)] for name in ("max_iter", "n_init", "n_restarts", "restart_iter")},
        **{name: [FRACTION] for name in ("eps1", "eps2", "eps3", "zeta", "theta_w", "theta_b")},
        "k0": [NONE, Integer(0)], "time_limit": [NONE, POSITIVE], "tol": [NONE, NONNEGATIVE],
        "regularization": [NONE, NONNEGATIVE, Pair(NONNEGATIVE, "finite numbers >= 0 (lambda_w, lambda_b)"),
                           Parses("a reading such as 'l2' or 'l2:split=10'", parse_reading, str)],
        "wlr_weights": [Options("labels", "routing")], "max_subproblem_rows": [NONE, Integer(2)],
        "verbose": VERBOSE, "n_jobs": [NONE, INTEGER], "random_state": RANDOM_STATE,
        "max_features": [NONE, Integer(1)],  # at most the number of features: checked at fit
        "penalty": [Parses("None, a penalty name or spec, a Penalty or a list of these", make_penalties)],
        "constraints": [Parses("None, a constraint spec, a Constraint or a list of these", make_constraints)],
        "monotonic_cst": [NONE, Parses("signs in {-1, 0, 1}, one per feature, or a dict {feature: sign}", Monotone,
                                       (list, tuple, dict, np.ndarray))],
        "working_sets": [Parses("a working-set rule's name or a callable rule(tree)", make_working_sets)],
        **{f"{kind}_solver": [Parses("a solver spec or a solver object", functools.partial(make_solver, kind))]
           for kind in ("bn", "ln", "wlr")},
        "callbacks": [NONE, Parses("a list of Callback objects or callables", as_callbacks, (list, tuple))],
    }

    def _check_params(self):
        check_parameters(self)

    # ------------------------------------------------------------------ the hooks of the subclasses
    def _check_targets(self, X, y):
        """(y as the inner fits of a feature budget take it, the targets the leaf model is trained on: y itself
        or the class codes), y checked against the tree's columns X."""
        raise NotImplementedError

    def _row_weights(self, targets, sample_weight) -> np.ndarray:
        """s_i before normalization."""
        raise NotImplementedError

    def _leaf_model(self, n_features: int):
        """The leaf model of ``leaf`` and ``loss``, before :meth:`~srtopt.leaf_model.LeafModel.fitted`."""
        raise NotImplementedError

    def _training_stages(self, problem, context):
        """The problems the fit trains in turn, as [(problem, macro iterations)] (``problem`` with the subclass's
        rule for its leaves' l2 weight), and what the subclass keeps of the training data (a regressor's
        ``y_range_``): NODEC-DR on the first (its macro iterations None: ``max_iter``), each next one continued
        from the tree before for its macro iterations (:meth:`~.nodec_tree.NodecTree._train_stages`); the last
        is the fitted tree's problem."""
        raise NotImplementedError

    def _store_leaf_statistics(self, problem, y, weights):
        """The statistics of the leaves on the training rows (HBP routing)."""
        raise NotImplementedError

    def _clip(self):
        """(low, high) of the training outputs ``polish`` keeps the predictions within, or None."""
        return None

    @classmethod
    def _warm_up_data(cls):
        """A tiny (X, y) this estimator fits to load its compiled kernels."""
        raise NotImplementedError

    # ------------------------------------------------------------------ fit
    @one_blas_thread
    def fit(self, X, y, sample_weight=None, sensitive_features=None, *, encoder=None):
        """Fit the tree by NODEC-DR (the estimator's docstring says what each step does with its data).

        Parameters
        ----------
        X : array-like or DataFrame of shape (N, p)
            Training inputs.  A DataFrame's column names become ``feature_names_in_``; its text, categorical
            and boolean columns, and missing cells anywhere, are encoded into the tree's columns (``encoder_``,
            :mod:`srtopt.encoding`).
        y : array-like of shape (N,)
            Training targets: numbers (regression) or class labels (classification).
        sample_weight : array-like of shape (N,), float or None, default=None
            Weights s_i >= 0 of the rows, normalized to sum to 1 in place of eq. (obj)'s 1/N; a row of
            weight 0 is as if absent.  None: equal weights.
        sensitive_features : array-like of shape (N,), str or None, default=None
            The protected group of every row, for the group constraints: an array, or the name of a column of
            the DataFrame X (which is then not a feature).
        encoder : srtopt.encoding.TableEncoder or None, default=None
            The fitted encoder of a table the rows X were drawn from: X is encoded by it, whatever X holds.  The
            inner fits of a search or of the leaf-ridge guard pass the whole table's, so that a fold's tree reads
            the table's columns (a fold whose rows hold no missing cell would build no encoder, and refuse its
            held-out rows that do).  None: X is encoded when it needs to be, by an encoder of its own.

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter breaks its rules, X or y are not valid, there are fewer rows (of positive weight)
            than leaves, ``max_features`` exceeds p, a constraint names no feature of X or lacks its groups, or a
            solver does not accept the subproblems.

        Warns
        -----
        UserWarning
            When ``time_limit`` ended training (``stopped_by_ == "time_limit"``) or a constraint does not hold
            on the returned tree.
        """
        self._check_params()
        if self.time_limit is not None:
            _load_kernels(type(self))  # a fresh installation compiles them: before the clock starts
        started = time.perf_counter()
        deadline = Deadline(self.time_limit)  # time_limit covers the whole fit
        user_constraints = constraint_terms(self)
        X, group_values, table = self._fit_inputs(X, sensitive_features, encoder)  # the tree's columns, unscaled
        group_values = used_groups(group_values, user_constraints)
        y, targets = self._check_targets(X, y)
        weights = self._row_weights(targets, sample_weight)
        groups = None
        if group_values is not None:
            groups, self.groups_ = code_groups(group_values, weights)
        inner = {"sample_weight": sample_weight, "sensitive_features": groups, "encoder": self.encoder_}
        budget, penalties = self._feature_budget(table, y, inner, deadline)
        user_constraints = by_column_name(user_constraints + budget, self)  # the table's columns, encoded
        leaves = self._leaf_model(X.shape[1])
        Xs = self._scale_inputs(X, targets if leaves.standardizes else None, weights)
        problem, lambda_b = self._problem(leaves, Xs, targets, weights, penalties, user_constraints, groups)
        stages = self._training_stages(problem, {"table": table, "encoder": self.encoder_, "y": y,
                                                 "sample_weight": sample_weight, "weights": weights,
                                                 "lambda_b": lambda_b, "deadline": deadline, "groups": groups,
                                                 "budget": budget, "penalties": penalties})
        problem = stages[-1][0]
        callbacks = as_callbacks(self.callbacks) + ([ProgressPrinter(self.verbose)] if self.verbose else [])
        solvers = self._solvers(problem)
        result = self._train_stages(stages, solvers, deadline, callbacks)
        self._store_result(result)
        self.lambda_b_ = problem.lambda_b
        self._close_unreached(problem.X)
        try:
            self._meet_constraints(problem, solvers["ln"], user_constraints, deadline)
        except MemoryError:  # the tree is trained: it must not be lost for want of its polish
            self.constraint_report_ = []
            warnings.warn("out of memory while meeting the constraints on the training rows (the polish of the "
                          "leaves, the report): the tree is the one NODEC-DR trained, its constraints not checked "
                          "(constraint_report_ is empty)", UserWarning, stacklevel=3)
        try:
            self._store_training_statistics(problem, y, weights)
        except MemoryError:  # the model is complete: it must not be lost for want of its statistics
            self.feature_importances_ = np.full(X.shape[1], np.nan)
            warnings.warn("out of memory while computing the training statistics (feature_importances_ is NaN, the "
                          "leaves' statistics are absent); the fitted model is complete", UserWarning, stacklevel=3)
        self.fit_seconds_ = time.perf_counter() - started
        for callback in callbacks:
            getattr(callback, "on_fit_end", lambda estimator: None)(self)
        return self

    def _problem(self, leaves, Xs, targets, weights, penalties, user_constraints, groups):
        """(the SRT problem of the scaled rows Xs and the fitted leaf model, the reading's lambda_b): y
        standardized when the leaf model says so (``scaler_``), the l2 weights of ``regularization``, the leaf
        model ``leaves`` fitted on the scaled rows (``leaf_model_``), the constraints in training units."""
        T = self.scaler_.transform_y(targets) if leaves.standardizes else targets
        tree = Tree(int(self.depth))
        self.lambda_w_, lambda_b = regularization_lambdas(self.regularization, Xs.shape[1], tree, weights.sum())
        self.leaf_model_ = leaves.fitted(Xs, T, weights, lambda_b)
        units = training_units(self, self.leaf_model_.residual_loss)
        problem = SRTProblem(Xs, T, tree, float(self.mu), self.lambda_w_, lambda_b, weights, penalties=penalties,
                             constraints=in_training_units(user_constraints, units), groups=groups,
                             leaves=self.leaf_model_)
        return problem, lambda_b

    def _store_result(self, result):
        """The iterate NODEC-DR returned and how it got there; a warning when the time limit ended it."""
        self.omega_, self.beta_ = result.omega, result.beta
        self.objective_, self.n_iter_, self.stopped_by_ = result.objective, result.n_macro, result.stopped_by
        self.history_ = [record.as_dict() for record in result.history]
        if self.stopped_by_ == "time_limit":
            limit = "the time limit" if self.time_limit is None else f"time_limit={self.time_limit:g} s"
            warnings.warn(f"{limit} reached after {self.n_iter_} macro iteration(s): the tree is the best found by "
                          f"then (stopped_by_='time_limit'); a larger time_limit may find a better one", UserWarning,
                          stacklevel=4)

    def _meet_constraints(self, problem, ln_solver, user_constraints, deadline):
        """The leaves polished so that the soft-mean constraints hold for the HBP predictions too
        (:func:`~srtopt.training.feasibility.polish`), the coefficients within their bounds exactly, the
        policy's repair of ``predict()`` (a class-recall bound) and of the rates of its decisions
        (:func:`~srtopt.training.feasibility.repair_decisions`), the report, and a warning for a constraint
        row that does not hold."""
        self.beta_ = polish(problem, self.omega_, self.beta_, ln_solver, self._clip(), deadline)
        self.omega_, self.beta_ = problem.project(self.omega_, self.beta_)
        self.beta_ = problem.policy.repair_predictions(self.omega_, self.beta_)
        self.beta_ = repair_decisions(problem, self.omega_, self.beta_, deadline)
        self.constraint_report_ = constraint_report(self, user_constraints, problem, getattr(self, "groups_", []))
        failing = [row for row in self.constraint_report_ if not row["holds"]]
        if failing:
            worst = ", ".join(f"{row['row']} = {row['soft']:.4g} for the soft model and {row['predict']:.4g} for "
                              f"predict() (bound {row['bound']})" for row in failing[:3])
            when = " within the time limit" if self.stopped_by_ == "time_limit" else ""
            warnings.warn(f"the constraints could not be met{when}; the tree is the most feasible one found: {worst}",
                          UserWarning, stacklevel=4)

    def _store_training_statistics(self, problem, y, weights):
        """feature_importances_, the features used, and the leaves' statistics (:meth:`_store_leaf_statistics`)."""
        self._store_feature_importances(problem.X, weights)
        self._store_selected_features()
        self._store_leaf_statistics(problem, y, weights)

    def _restored_leaf_model(self, leaf_model):
        """The leaf model of a loaded file: this estimator's own (its loss from ``loss``) on the file's fitted
        basis, or the file's when it is of another kind (a leaf model of the user's)."""
        own = self._leaf_model(leaf_model.basis.n_features)
        return own.with_basis(leaf_model.basis) if own.kind == leaf_model.kind else leaf_model

    # ------------------------------------------------------------------ predictions
    def _outputs(self, Xs) -> np.ndarray:
        """The leaf model's predictions at the HBP leaf of each scaled row: values in training units, or class
        probabilities."""
        return self.leaf_model_.hbp_outputs(Xs, self.omega_, self.beta_, Tree(int(self.depth)))

    def _predictions(self, Xs) -> np.ndarray:
        """``predict()`` of the scaled rows Xs (:meth:`~srtopt.leaf_model.LeafModel.hbp_predict`)."""
        return self.leaf_model_.hbp_predict(Xs, self.omega_, self.beta_, Tree(int(self.depth)), self.scaler_,
                                            self._y_range(), getattr(self, "classes_", None))

    def _y_range(self):
        """The range the predictions are clipped to (None: none)."""
        return None

    def _training_prediction(self, problem):
        """``predict()`` of the training rows in the problem's units: what the report checks the constraints
        on."""
        return self._outputs(problem.X)

    def summary(self, units="original"):
        """One row per node (pandas DataFrame), see :func:`srtopt.export.summary`."""
        from ..export import summary

        return summary(self, units=units)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()  # tables: text and categorical columns, missing cells (encoder_)
        tags.input_tags.allow_nan = tags.input_tags.string = tags.input_tags.categorical = True
        return tags


@functools.cache
def _load_kernels(cls):
    """Fit a tiny tree of ``cls`` once per process, so that numba loads the compiled kernels from its disk cache,
    or compiles them after installation (several seconds, announced), before the clock of a fit with a
    ``time_limit`` starts."""
    X, y = cls._warm_up_data()
    with announce_if_slow("srtopt: compiling the soft tree's kernels, once after installation (seconds; not "
                          "counted in time_limit)"):
        cls(depth=2, max_iter=1, n_init=1, random_state=0).fit(X, y)

