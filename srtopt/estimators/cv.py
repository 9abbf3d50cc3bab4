"""The soft trees whose regularization (and depth) are chosen by cross-validation, as RidgeCV chooses its alpha:
``SoftTreeCV``, the search they share; ``SoftRegressionTreeCV`` (the weight on the splits) and
``SoftClassificationTreeCV`` (the depth and the weight on the leaves)."""

from __future__ import annotations

import math
import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid, StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..encoding import held_out_quietly
from ..solvers.deadline import Deadline
from .class_targets import checked_labels, refuse_continuous
from .classification import SoftClassificationTree, leaf_spec
from .params import (INTEGER, NONE, POSITIVE, RANDOM_STATE, HasMethod, Integer, Items, Kind, Options, Parses,
                     check_parameters)
from .reading import RegressorScoreMixin
from .regularization import NO_L2, parse_reading
from ..models.constraints import SoftMean
from .constrained import constraint_terms, report_on
from .folds import fold_params
from .targets import check_rows, check_target, take_rows
from .soft_tree import _load_kernels
from .srt import SoftRegressionTree
from .tabular import InputsMixin

SPLITTER = "a cross-validation splitter"
SPLIT_WEIGHTS = (0.3, 1.0, 10.0)  # chosen in docs/departures.md, "Choosing the split weight by cross-validation"
#: the classifier's candidates, chosen in docs/classification.md, "Choosing the depth and the leaves' l2 weight"
DEPTHS = (1, 2, 3, 4)
LEAF_RIDGES = (1.0, 10.0, 100.0)
#: the leaves compared, chosen in docs/classification.md, "Spline leaves in the search"
LEAVES = ("logistic", "spline")
PROBABILITY_FLOOR = 1e-15  # the experiments' floor on a probability (srtopt.experiments.protocol)


class SoftTreeCV(InputsMixin, BaseEstimator):
    """What the cross-validated soft trees share: candidates (a depth and a regularization of the tree) compared
    by K-fold cross-validation, the best refit on all the data (``best_estimator_``), the search within
    ``time_limit``, and the held-out values of the constraints that average over the data.  Subclasses give the
    tree, the splitter, the score and the candidates of each depth (:meth:`_candidates`), and read the choice
    (:meth:`_store_choice`)."""

    #: the tree class the search tunes, and the splitter of an integer ``cv`` (``FOLDS``, :meth:`_splitter`)
    TREE: type = None
    FOLDS: type = None
    #: a dict of parameter constraints, beside those of the subclass
    _parameter_constraints = {
        "n_jobs": [NONE, INTEGER], "depths": [NONE, Items(Integer(1), "integers >= 1")], "random_state": RANDOM_STATE,
        "time_limit": [NONE, POSITIVE], "cv": [Integer(2), HasMethod(SPLITTER, "split")],
    }

    def _check_params(self):
        check_parameters(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()  # the tree's tables (text, categorical, missing cells), encoded once
        tags.input_tags.allow_nan = tags.input_tags.string = tags.input_tags.categorical = True
        return tags

    def _candidates(self, estimator, depth, X, y, params) -> dict:
        """The grid of one depth: {parameter: values}."""
        raise NotImplementedError

    def _store_choice(self, best, scores):
        """The chosen candidate's attributes, from ``best`` (its parameters) and ``scores`` [(a candidate's
        parameters, its mean score)]."""
        raise NotImplementedError

    def _check_data(self, X, y):
        """y for the search, (X, y) validated with errors that name the argument."""
        raise NotImplementedError

    def _splitter(self):
        """The folds: an integer ``cv`` as shuffled ``FOLDS`` folds seeded by ``random_state``."""
        if isinstance(self.cv, numbers.Integral):
            return self.FOLDS(int(self.cv), shuffle=True, random_state=self.random_state)
        return self.cv

    def _scorer(self):
        """The held-out score as GridSearchCV takes it (None: the tree's ``score``)."""
        return None

    def fit(self, X, y, sample_weight=None, sensitive_features=None):
        """Cross-validate every candidate, then refit the best on (X, y).

        The score of a candidate is its score on the held-out fold (the regressor's R^2; the classifier's
        ``scoring``), averaged over the folds, as in GridSearchCV: weighted by the held-out rows'
        ``sample_weight`` from scikit-learn 1.7 on, which passes them to the scorer (unweighted before).

        Parameters
        ----------
        X : array-like or DataFrame of shape (N, p)
            Training inputs.  A DataFrame's column names become ``feature_names_in_``.
        y : array-like of shape (N,)
            Training targets.
        sample_weight : array-like of shape (N,), float or None, default=None
            Weights of the rows, for every fit (each fold's share of them), as in the tree's ``fit``.
        sensitive_features : array-like of shape (N,), str or None, default=None
            The protected groups of the constraints, for every fit, as in the tree's ``fit``.

        Returns
        -------
        self
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter breaks its rules (:class:`~srtopt.estimators.params.InvalidParameterError`), or
            a fit refuses the data.
        """
        self._check_params()
        if self.time_limit is not None:
            _load_kernels(self.TREE)  # a fresh process loads (or compiles) them: before the clock starts
        deadline = Deadline(self.time_limit)
        estimator = clone(self.estimator) if self.estimator is not None else self.TREE(depth=3)
        if estimator.random_state is None:  # its starts seeded as the folds are: a seeded search repeats itself
            estimator.set_params(random_state=self.random_state)
        matrix = self._fit_inputs(X, sensitive_features)[0]  # the whole table's encoder, for every inner fit
        y = self._check_data(matrix, y)
        depths = [estimator.depth] if self.depths is None else [int(d) for d in self.depths]
        params = {name: value for name, value in (("sample_weight", sample_weight),
                                                  ("sensitive_features", sensitive_features)) if value is not None}
        table = {} if self.encoder_ is None else {"encoder": self.encoder_}
        fit_params = {**params, **table}
        splitter = self._splitter()
        k = splitter.get_n_splits(X, y)
        held_out = k if _soft_constraints(estimator) else 0
        fits = len(depths) * (self._n_candidates(estimator) * k + self._probes(estimator)) + 1 + held_out
        seconds = deadline.share(fits)
        share = _within(estimator, seconds)
        grid = [{"depth": [d], **self._candidates(share, d, X, y, fit_params)} for d in depths]
        search = _Search(share, grid, deadline.within(deadline.left() - (seconds or 0)),  # a share left for the refit
                         cv=splitter, n_jobs=self.n_jobs, scoring=self._scorer(), then=self._then)
        with held_out_quietly():
            search.fit(X, y, **fit_params)
        chosen = self._chosen(search)
        refit = _within(estimator, deadline.share(1 + held_out)).set_params(**chosen)
        self.best_estimator_ = refit.fit(X, y, **fit_params)
        self.constraint_report_ = self.best_estimator_.constraint_report_
        if held_out:
            with held_out_quietly():
                self.constraint_report_ = _held_out(refit, splitter, X, y, params, table, self.constraint_report_,
                                                    deadline)
            self.best_estimator_.constraint_report_ = self.constraint_report_
        self.depth_ = int(chosen["depth"])
        scores = [(candidate, float(score)) for candidate, score in zip(search.cv_results_["params"],
                                                                        search.cv_results_["mean_test_score"])]
        self.depth_scores_ = {d: max(score for candidate, score in scores if candidate["depth"] == d)
                              for d in depths if any(candidate["depth"] == d for candidate, _ in scores)}
        self._store_choice(chosen, scores)
        self.cv_results_ = search.cv_results_
        return self

    def _n_candidates(self, estimator) -> int:
        """Candidates per depth."""
        raise NotImplementedError

    def _then(self, results) -> list[dict]:
        """The candidates evaluated after the grid, given its ``cv_results_`` so far (none)."""
        return []

    def _chosen(self, search) -> dict:
        """The parameters of the candidate refit: the best mean score's."""
        return search.best_params_

    def _probes(self, estimator) -> int:
        """Fits per depth beside the candidates' (0)."""
        return 0

    def predict(self, X):
        """Predict with ``best_estimator_`` (eq. prediction_model).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, p)
            Inputs, with the features of ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The tree's predictions.
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)


class SoftRegressionTreeCV(RegressorScoreMixin, SoftTreeCV):
    """A :class:`SoftRegressionTree` whose lambda_w (the l2 weight on the splits in eq. (obj))
    is chosen by K-fold cross-validation, then refit on all the data.

    The split weight is the dial between sharp and soft splits: below the default the
    splits may sharpen further, above it they stay softer and the tree leans on its leaves'
    linear models.  On small noisy data, where the default depth-3 tree overfits, the
    search picks the heavier weight; where the tree structure pays it keeps the default or
    the lighter one.  Chosen on 16 datasets and confirmed on 17 others (docs/departures.md,
    "Choosing the split weight by cross-validation").  It costs
    ``len(split_weights) * k + 1`` fits for k folds.  With the estimator's
    ``leaf_ridge="auto"`` the small-data factor is chosen once per depth, by one more fit on
    all the rows, and held for every fit of the search.

    Parameters
    ----------
    estimator : SoftRegressionTree or None, default=None
        The tree to tune (cloned); None: ``SoftRegressionTree(depth=3)``.  Its
        ``regularization`` must be a named reading ("l2", the default, or another):
        candidate c is that reading with its lambda_w times c (``"l2:split=c"``), relative
        to each fold's number of rows.
    split_weights : sequence of float > 0, default=(0.3, 1, 10)
        Factors on the reading's lambda_w to compare.
    depths : sequence of int >= 1 or None, default=None
        Tree depths to compare with every split weight (``len(depths) * len(split_weights)
        * k + 1`` fits); None: the estimator's depth only.
    cv : int or cross-validation splitter, default=5
        An int k: ``KFold(k, shuffle=True, random_state=random_state)``; or any
        scikit-learn splitter.
    n_jobs : int or None, default=None
        Fits run in parallel (joblib's meaning: None = 1, -1 = all cores).
    random_state : int, RandomState or None, default=None
        Seeds the shuffle of the folds when ``cv`` is an int, and the trees' starts when the estimator's own
        ``random_state`` is None.
    rule : {"best", "one-se"}, default="best"
        Which candidate is refit: the one of the best mean R^2, or the simplest whose mean R^2 is within one
        standard error (over the folds) of the best's -- the smallest depth, then the heaviest split weight --
        Breiman's one-standard-error rule, for small noisy data where the best mean is mostly luck
        (docs/tabular.md measures it).
    time_limit : float or None, default=None
        Seconds for the whole search, the refit included: each cross-validation fit (and the
        one that resolves ``leaf_ridge="auto"``) gets an equal share, at most the estimator's own
        ``time_limit``; no candidate (a depth and a weight, in that order) starts after the first
        that would not end in time, and the refit gets what is left.

    Attributes
    ----------
    best_estimator_ : SoftRegressionTree
        The tree refit on all the data with the chosen weight and depth (for inspection:
        ``summary()``, :mod:`srtopt.export`, ...).  Fitted on ``X`` as given, so a DataFrame's
        column names are kept (``feature_names_in_``) and it predicts by name.
    split_weight_ : float
        The chosen factor of ``split_weights``.
    depth_ : int
        The chosen depth.
    cv_scores_ : dict
        {factor: mean R^2 over the folds} at the chosen depth (with a ``time_limit``, of the
        candidates evaluated in time).
    depth_scores_ : dict
        {depth: the best mean R^2 over the factors at that depth}.
    cv_results_ : dict
        GridSearchCV's ``cv_results_``.
    constraint_report_ : list of dict
        ``best_estimator_``'s report of its constraints on the training data (empty without
        constraints); with constraint rows that average over the data (parity, group losses, a
        RowMean), each row also holds ``held_out``: its value for ``predict()`` on each held-out
        fold, of k more fits of the chosen candidate (what the constraint is worth on new data;
        ``best_estimator_.constraint_report_`` holds them too).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,), dtype object
        The column names of a DataFrame X; absent when X had none.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(200)
    >>> model = SoftRegressionTreeCV(SoftRegressionTree(depth=2, random_state=0), cv=3,
    ...                              random_state=0).fit(X, y)
    >>> model.split_weight_ in (0.3, 1.0, 10.0), sorted(model.cv_scores_)
    (True, [0.3, 1.0, 10.0])
    """

    TREE, FOLDS = SoftRegressionTree, KFold

    def __init__(self, estimator=None, split_weights=SPLIT_WEIGHTS, cv=5, n_jobs=None, random_state=None,
                 depths=None, time_limit=None, rule="best"):
        self.estimator, self.split_weights, self.cv = estimator, split_weights, cv
        self.n_jobs, self.random_state, self.depths, self.time_limit = n_jobs, random_state, depths, time_limit
        self.rule = rule

    _parameter_constraints = {
        **SoftTreeCV._parameter_constraints, "split_weights": [Items(POSITIVE, "numbers > 0")],
        "estimator": [NONE, Kind("a SoftRegressionTree", SoftRegressionTree)], "rule": [Options("best", "one-se")],
    }

    def _chosen(self, search) -> dict:
        """The best mean R^2's candidate, or with ``rule="one-se"`` the simplest within one standard error."""
        return search.best_params_ if self.rule == "best" else one_standard_error(search.cv_results_)

    def _check_data(self, X, y):
        return check_target(self, X, y, 1)

    def _n_candidates(self, estimator) -> int:
        return len(self.split_weights)

    def _probes(self, estimator) -> int:
        return int(estimator.leaf_ridge == "auto")

    def _candidates(self, estimator, depth, X, y, params):
        """The split weights as readings "l2:split=c" of the estimator's, and its leaf_ridge ("auto" resolved
        once per depth)."""
        reading = _reading_of(estimator.regularization)
        self._factors = {f"{reading}:split={float(w)!r}": float(w) for w in self.split_weights}
        return {"regularization": list(self._factors), "leaf_ridge": [_leaf_ridge(estimator, depth, X, y, params)]}

    def _store_choice(self, best, scores):
        self.split_weight_ = self._factors[best["regularization"]]
        self.cv_scores_ = {self._factors[c["regularization"]]: score for c, score in scores if c["depth"] == self.depth_}


def _held_out_log_loss(estimator, X, y, sample_weight=None) -> float:
    """The negated mean log loss of ``estimator``'s probabilities on (X, y), weighted by ``sample_weight``, a
    class the fold's fit did not see given probability :data:`PROBABILITY_FLOOR` (scikit-learn's scorer
    refuses such a fold)."""
    P = estimator.predict_proba(X)
    column = {label: k for k, label in enumerate(estimator.classes_)}
    p = np.array([P[i, column[label]] if label in column else 0.0 for i, label in enumerate(np.asarray(y))])
    return -float(np.average(-np.log(np.clip(p, PROBABILITY_FLOOR, 1.0)), weights=sample_weight))


#: the scores a classifier's search is chosen by, as GridSearchCV takes them
SCORES = {"log_loss": _held_out_log_loss, "accuracy": "accuracy"}


class SoftClassificationTreeCV(ClassifierMixin, SoftTreeCV):
    """A :class:`SoftClassificationTree` whose depth, l2 weight on the leaves and leaf model are chosen by
    stratified K-fold cross-validation on the held-out log loss (or accuracy), then refit on all the data.

    Deeper trees fit more of small data's noise, and logistic leaves on few rows give confident wrong
    probabilities: the search compares the depths (1, a logistic regression split once, included) and factors
    on lambda_b, the l2 weight of eq. (obj) on the leaves (the tree's ``leaf_ridge``), with the first of
    ``leaves``; then each other leaf model at every depth, with the factor best for the first there (spline
    leaves: a smooth curve per feature in each leaf's scores).  Chosen on 10 of the 20 classification datasets
    and confirmed on the other 10 (docs/classification.md, "Choosing the depth and the leaves' l2 weight" and
    "Spline leaves in the search"): scored by the held-out log loss, its probabilities have a lower test log
    loss than the depth-3 tree's and than logistic regression's; it costs
    ``len(depths) * (len(leaf_ridges) + len(leaves) - 1) * k + 1`` fits for k folds.

    Parameters
    ----------
    estimator : SoftClassificationTree or None, default=None
        The tree to tune (cloned); None: ``SoftClassificationTree()``.  Its ``depth`` and ``leaf_ridge`` are
        the search's.
    depths : sequence of int >= 1 or None, default=(1, 2, 3, 4)
        The depths compared; None: the estimator's depth only.
    leaf_ridges : sequence of float > 0, default=(1, 10, 100)
        The factors on lambda_b compared (the tree's ``leaf_ridge``).
    leaves : sequence of leaf specs or None, default=("logistic", "spline")
        The leaf models compared (the tree's ``leaf``): the first at every depth and factor, each other at every
        depth with the first's best factor there.  None: the estimator's own leaf only.
    scoring : {"log_loss", "accuracy"}, default="log_loss"
        The held-out score a candidate is chosen by: the mean log loss of its probabilities (lower is better)
        or its accuracy.
    cv : int or cross-validation splitter, default=5
        An int k: ``StratifiedKFold(k, shuffle=True, random_state=random_state)``; or any scikit-learn
        splitter.  Five folds choose better than three (docs/classification.md, "How many folds"): each
        candidate is fitted on 80% of the rows, nearer the refit's 100%.
    n_jobs : int or None, default=None
        Fits run in parallel (joblib's meaning: None = 1, -1 = all cores).
    random_state : int, RandomState or None, default=None
        Seeds the shuffle of the folds when ``cv`` is an int, and the trees' starts when the estimator's own
        ``random_state`` is None.
    time_limit : float or None, default=None
        Seconds for the whole search, the refit included, as for :class:`SoftRegressionTreeCV`.

    Attributes
    ----------
    best_estimator_ : SoftClassificationTree
        The tree refit on all the data with the chosen depth and leaf weight.
    classes_ : ndarray of shape (K,)
        The class labels, in the order of the columns of ``predict_proba``.
    depth_ : int
        The chosen depth.
    leaf_ridge_ : float
        The chosen factor on lambda_b.
    leaf_ : str or LeafModel
        The chosen leaf model (the refit tree's ``leaf``).
    cv_scores_ : dict
        {(depth, factor, leaf): mean held-out score} of the candidates evaluated (the negated log loss for
        ``scoring="log_loss"``: higher is better).
    depth_scores_ : dict
        {depth: the best mean score over the factors at that depth}.
    cv_results_ : dict
        GridSearchCV's ``cv_results_``.
    constraint_report_ : list of dict
        ``best_estimator_``'s report of its constraints, with the held-out values of the rows that average over
        the data (as for :class:`SoftRegressionTreeCV`).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,), dtype object
        The column names of a DataFrame X; absent when X had none.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = SoftClassificationTreeCV(depths=(1, 2), leaf_ridges=(1.0, 100.0), random_state=0).fit(X, y)
    >>> model.depth_ in (1, 2), model.leaf_ in ("logistic", "spline"), len(model.cv_scores_)
    (True, True, 6)
    """

    TREE, FOLDS = SoftClassificationTree, StratifiedKFold

    def __init__(self, estimator=None, depths=DEPTHS, leaf_ridges=LEAF_RIDGES, leaves=LEAVES, scoring="log_loss", cv=5,
                 n_jobs=None, random_state=None, time_limit=None):
        self.estimator, self.depths, self.leaf_ridges, self.leaves = estimator, depths, leaf_ridges, leaves
        self.scoring = scoring
        self.cv, self.n_jobs, self.random_state, self.time_limit = cv, n_jobs, random_state, time_limit

    _parameter_constraints = {
        **SoftTreeCV._parameter_constraints, "leaf_ridges": [Items(POSITIVE, "numbers > 0")],
        "leaves": [NONE, Items(Parses("a leaf", leaf_spec), "leaves ('logistic', 'spline', 'constant', a spline spec "
                                                            "or a LeafModel)")],
        "scoring": [Options(*SCORES)], "estimator": [NONE, Kind("a SoftClassificationTree", SoftClassificationTree)],
    }

    def _scorer(self):
        return SCORES[self.scoring]

    def _check_data(self, X, y):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        check_rows(X, y, 1)
        labels = checked_labels(column_or_1d(y, warn=True))
        refuse_continuous(labels)
        check_classification_targets(labels)
        self.classes_, counts = np.unique(labels, return_counts=True)
        if isinstance(self.cv, numbers.Integral) and len(counts) > 1 and counts.max() < self.cv:  # one: the tree's
            raise ValueError(f"cv={self.cv}: stratified folds need a class of at least {self.cv} rows, and the "
                             f"largest class of y has {counts.max()}; pass a smaller cv (at least 2)")
        return labels

    def _n_candidates(self, estimator) -> int:
        return len(self.leaf_ridges) + max(len(self.leaves or ()) - 1, 0)

    def _candidates(self, estimator, depth, X, y, params):
        first = {"leaf": [self.leaves[0]]} if self.leaves else {}
        return {"leaf_ridge": [float(f) for f in self.leaf_ridges], **first}

    def _then(self, results) -> list[dict]:
        """Each leaf of ``leaves`` after the first at every depth, with the factor best for the first leaf there."""
        best = {}
        for params, score in zip(results["params"], results["mean_test_score"]):
            if params["depth"] not in best or score > best[params["depth"]][1]:
                best[params["depth"]] = (params["leaf_ridge"], score)
        return [{"depth": depth, "leaf_ridge": factor, "leaf": leaf} for depth, (factor, _) in best.items()
                for leaf in (self.leaves or ())[1:]]

    def _store_choice(self, best, scores):
        self.leaf_ridge_ = float(best["leaf_ridge"])
        self.leaf_ = self.best_estimator_.leaf
        own = self.best_estimator_.leaf if not self.leaves else self.leaves[0]
        self.cv_scores_ = {(c["depth"], c["leaf_ridge"], c.get("leaf", own)): score for c, score in scores}

    def predict_proba(self, X):
        """``best_estimator_``'s class probabilities (its HBP leaf's), shape (n_samples, K)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    def decision_function(self, X):
        """``best_estimator_``'s scores (:meth:`SoftClassificationTree.decision_function`)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)


def one_standard_error(results) -> dict:
    """The parameters of the simplest candidate of a search's ``cv_results_`` whose mean test score is within
    one standard error (the folds' standard deviation / sqrt(folds)) of the best's: the smallest depth, then
    the heaviest split weight ("l2:split=w")."""
    folds = sum(1 for key in results if key.startswith("split") and key.endswith("_test_score"))
    means = np.asarray(results["mean_test_score"], float)
    best = int(np.nanargmax(means))
    floor = means[best] - results["std_test_score"][best] / np.sqrt(folds)
    params = results["params"]
    within = [i for i in range(len(params)) if means[i] >= floor]
    return params[min(within, key=lambda i: (params[i]["depth"], -_split_weight(params[i]["regularization"])))]


def _split_weight(reading: str) -> float:
    return float(reading.rpartition("split=")[2])


class _Search(GridSearchCV):
    """GridSearchCV that, before a ``deadline`` with a limit, evaluates the candidates one at a time,
    in the grid's order, the folds of each in parallel, and starts none after the first that would
    end after the deadline, judged by the longest so far.  Each fit is bounded by the estimator's own
    ``time_limit`` (its share of the search, :func:`_within`); no refit."""

    def __init__(self, estimator, param_grid, deadline, *, cv, n_jobs, scoring=None, then=None):
        super().__init__(estimator, param_grid, cv=cv, n_jobs=n_jobs, error_score="raise", refit=False,
                         scoring=scoring)
        self.deadline, self.then = deadline, then

    def _run_search(self, evaluate_candidates):
        """The grid, then the candidates ``then(results)`` names after it (None: none)."""
        self._longest = 0.0
        results = self._evaluate(evaluate_candidates, list(ParameterGrid(self.param_grid)))
        extra = self.then(results) if self.then is not None and results is not None else []
        if extra:
            self._evaluate(evaluate_candidates, extra)

    def _evaluate(self, evaluate_candidates, candidates):
        """The results after ``candidates``, one at a time before a deadline (None when none was evaluated)."""
        if math.isinf(self.deadline.left()):
            return evaluate_candidates(candidates)
        results = None
        for candidate in candidates:
            if self._longest and self.deadline.left() < self._longest:
                break
            started = time.perf_counter()
            results = evaluate_candidates([candidate])
            self._longest = max(self._longest, time.perf_counter() - started)
        return results


def _within(estimator, seconds):
    """A clone of ``estimator`` whose ``time_limit`` is at most ``seconds`` (None: its own)."""
    own = estimator.time_limit
    return clone(estimator).set_params(time_limit=own if seconds is None else min(seconds, own or np.inf))


def _leaf_ridge(estimator, depth, X, y, params):
    """The estimator's ``leaf_ridge`` at ``depth``; "auto" is resolved once, by a fit on all the
    rows (its ``leaf_ridge_``), so that the search's fits do not each repeat the comparison."""
    if estimator.leaf_ridge != "auto":
        return estimator.leaf_ridge
    probe = clone(estimator).set_params(depth=depth, callbacks=None, verbose=0)
    return float(probe.fit(X, y, **params).leaf_ridge_)


def _soft_constraints(estimator) -> bool:
    """Whether the estimator has constraint rows that average over the data (their held-out values differ)."""
    return any(isinstance(term, SoftMean) for term in constraint_terms(estimator))


def _held_out(estimator, splitter, X, y, params, table, report, deadline) -> list[dict]:
    """``report`` with, per row, ``held_out``: its ``predict()`` value on each held-out fold of ``splitter``, by
    a fit of ``estimator`` on the other folds (its rows encoded as ``table`` says, :func:`_table_encoder`;
    :func:`~.constrained.report_on`)."""
    y = np.asarray(y)
    folds = list(splitter.split(X, y))
    values = [[] for _ in report]
    for k, (train, test) in enumerate(folds):
        fitted = _within(estimator, deadline.share(len(folds) - k)).fit(take_rows(X, train), y[train],
                                                                      **fold_params(params, train), **table)
        rows = report_on(fitted, take_rows(X, test), y[test], **fold_params(params, test))
        for row, value in zip(rows, values):
            value.append(row["predict"])
    return [{**row, "held_out": value} for row, value in zip(report, values)]


def _reading_of(regularization) -> str:
    if not isinstance(regularization, str) or parse_reading(regularization)[0] == NO_L2:
        raise ValueError("SoftRegressionTreeCV scales a named regularization reading ('l2', 'l2-slopes', ...); "
                         f"the estimator has regularization={regularization!r}")
    reading, split = parse_reading(regularization)
    if split != 1.0:
        raise ValueError(f"the estimator's regularization {regularization!r} already sets split=; give the "
                         "reading alone and the factors in split_weights")
    return reading
