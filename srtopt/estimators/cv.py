"""``SoftRegressionTreeCV``: a SoftRegressionTree whose weight on the splits is chosen by
cross-validation, as RidgeCV chooses its alpha."""

from __future__ import annotations

import math
import numbers
import time

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid
from sklearn.utils.validation import check_is_fitted

from ..solvers.deadline import Deadline
from .params import (INTEGER, NONE, POSITIVE, RANDOM_STATE, HasMethod, Integer, Items, Kind, Options,
                     check_parameters)
from .reading import RegressorScoreMixin
from .regularization import NO_L2, parse_reading
from ..models.constraints import SoftMean
from .constrained import constraint_terms, report_on
from .scaling import check_table
from .soft_tree import _load_kernels
from .srt import SoftRegressionTree

SPLITTER = "a cross-validation splitter"
SPLIT_WEIGHTS = (0.3, 1.0, 10.0)  # chosen in docs/departures.md, "Choosing the split weight by cross-validation"


class SoftRegressionTreeCV(RegressorScoreMixin, BaseEstimator):
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
        Seeds the shuffle of the folds when ``cv`` is an int.
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

    def __init__(self, estimator=None, split_weights=SPLIT_WEIGHTS, cv=5, n_jobs=None, random_state=None,
                 depths=None, time_limit=None, rule="best"):
        self.estimator, self.split_weights, self.cv = estimator, split_weights, cv
        self.n_jobs, self.random_state, self.depths, self.time_limit = n_jobs, random_state, depths, time_limit
        self.rule = rule

    _parameter_constraints = {
        "split_weights": [Items(POSITIVE, "numbers > 0")], "cv": [Integer(2), HasMethod(SPLITTER, "split")],
        "n_jobs": [NONE, INTEGER], "depths": [NONE, Items(Integer(1), "integers >= 1")],
        "estimator": [NONE, Kind("a SoftRegressionTree", SoftRegressionTree)], "random_state": RANDOM_STATE,
        "time_limit": [NONE, POSITIVE], "rule": [Options("best", "one-se")],
    }

    def _check_params(self):
        check_parameters(self)

    def fit(self, X, y, sample_weight=None, sensitive_features=None):
        """Cross-validate every split weight (at every depth of ``depths``), then refit the best on (X, y).

        The score of a candidate is the unweighted R^2 on the held-out fold, averaged over the
        folds, as in GridSearchCV.

        Parameters
        ----------
        X : array-like or DataFrame of shape (N, p)
            Training inputs, finite.  A DataFrame's column names become ``feature_names_in_``.
        y : array-like of shape (N,)
            Training targets, finite.
        sample_weight : array-like of shape (N,), float or None, default=None
            Weights of the rows, for every fit (each fold's share of them), as in
            :meth:`SoftRegressionTree.fit`.
        sensitive_features : array-like of shape (N,), str or None, default=None
            The protected groups of the constraints, for every fit, as in
            :meth:`SoftRegressionTree.fit`.

        Returns
        -------
        self : SoftRegressionTreeCV
            The fitted estimator.

        Raises
        ------
        ValueError
            If a parameter breaks its rules (:class:`~srtopt.estimators.params.InvalidParameterError`;
            also a TypeError, for an ``estimator`` that is not a SoftRegressionTree), the
            estimator's ``regularization`` is not a named reading or already sets ``split=``, or
            a fit refuses the data.
        """
        self._check_params()
        if self.time_limit is not None:
            _load_kernels(SoftRegressionTree)  # a fresh process loads (or compiles) them: before the clock starts
        deadline = Deadline(self.time_limit)
        estimator = clone(self.estimator) if self.estimator is not None else SoftRegressionTree(depth=3)
        reading = _reading_of(estimator.regularization)
        weights = [float(w) for w in self.split_weights]
        check_table(self, X, y)  # errors that name the argument; sets feature_names_in_
        depths = [estimator.depth] if self.depths is None else [int(d) for d in self.depths]
        candidates = [f"{reading}:split={w!r}" for w in weights]
        params = {name: value for name, value in (("sample_weight", sample_weight),
                                                  ("sensitive_features", sensitive_features)) if value is not None}
        splitter = self._splitter()
        held_out = splitter.get_n_splits(X, y) if _soft_constraints(estimator) else 0
        fits = len(depths) * (len(candidates) * splitter.get_n_splits(X, y) + (estimator.leaf_ridge == "auto")) + 1 \
            + held_out
        seconds = deadline.share(fits)
        share = _within(estimator, seconds)
        grid = [{"depth": [d], "regularization": candidates, "leaf_ridge": [_leaf_ridge(share, d, X, y, params)]}
                for d in depths]
        search = _Search(share, grid, deadline.within(deadline.left() - (seconds or 0)),  # a share left for the refit
                         cv=splitter, n_jobs=self.n_jobs)
        search.fit(X, y, **params)
        chosen = search.best_params_ if self.rule == "best" else one_standard_error(search.cv_results_)
        refit = _within(estimator, deadline.share(1 + held_out)).set_params(**chosen)
        self.best_estimator_ = refit.fit(X, y, **params)
        self.constraint_report_ = self.best_estimator_.constraint_report_
        if held_out:
            self.constraint_report_ = _held_out(refit, splitter, X, y, params, self.constraint_report_, deadline)
            self.best_estimator_.constraint_report_ = self.constraint_report_
        self.depth_ = int(chosen["depth"])
        self.split_weight_ = weights[candidates.index(chosen["regularization"])]
        scores = {(params["depth"], weights[candidates.index(params["regularization"])]): float(score)
                  for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"])}
        self.cv_scores_ = {w: scores[self.depth_, w] for w in weights if (self.depth_, w) in scores}
        self.depth_scores_ = {d: max(v for (e, _), v in scores.items() if e == d) for d in depths
                              if any(e == d for e, _ in scores)}
        self.cv_results_ = search.cv_results_
        return self

    def _splitter(self):
        if isinstance(self.cv, numbers.Integral):
            return KFold(int(self.cv), shuffle=True, random_state=self.random_state)
        return self.cv

    def predict(self, X):
        """Predict with ``best_estimator_`` (eq. prediction_model).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, p)
            Inputs, finite, with the features of ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predictions in y's units (:meth:`SoftRegressionTree.predict`).
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)


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

    def __init__(self, estimator, param_grid, deadline, *, cv, n_jobs):
        super().__init__(estimator, param_grid, cv=cv, n_jobs=n_jobs, error_score="raise", refit=False)
        self.deadline = deadline

    def _run_search(self, evaluate_candidates):
        deadline, longest = self.deadline, 0.0
        if math.isinf(deadline.left()):
            evaluate_candidates(ParameterGrid(self.param_grid))
            return
        for candidate in ParameterGrid(self.param_grid):
            if longest and deadline.left() < longest:
                break
            started = time.perf_counter()
            evaluate_candidates([candidate])
            longest = max(longest, time.perf_counter() - started)


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


def _held_out(estimator, splitter, X, y, params, report, deadline) -> list[dict]:
    """``report`` with, per row, ``held_out``: its ``predict()`` value on each held-out fold of ``splitter``, by
    a fit of ``estimator`` on the other folds (:func:`~.constrained.report_on`)."""
    y = np.asarray(y)
    folds = list(splitter.split(X, y))
    values = [[] for _ in report]
    for k, (train, test) in enumerate(folds):
        fitted = _within(estimator, deadline.share(len(folds) - k)).fit(_rows(X, train), y[train],
                                                                      **_fold_params(params, train))
        rows = report_on(fitted, _rows(X, test), y[test], **_fold_params(params, test))
        for row, value in zip(rows, values):
            value.append(row["predict"])
    return [{**row, "held_out": value} for row, value in zip(report, values)]


def _rows(X, index):
    return X.iloc[index] if hasattr(X, "iloc") else np.asarray(X)[index]


def _fold_params(params, index) -> dict:
    """The fit parameters of the rows ``index``: arrays indexed, a column name or a number as they are."""
    return {name: value if isinstance(value, str) or np.ndim(value) == 0 else np.asarray(value)[index]
            for name, value in params.items()}


def _reading_of(regularization) -> str:
    if not isinstance(regularization, str) or parse_reading(regularization)[0] == NO_L2:
        raise ValueError("SoftRegressionTreeCV scales a named regularization reading ('l2', 'l2-slopes', ...); "
                         f"the estimator has regularization={regularization!r}")
    reading, split = parse_reading(regularization)
    if split != 1.0:
        raise ValueError(f"the estimator's regularization {regularization!r} already sets split=; give the "
                         "reading alone and the factors in split_weights")
    return reading
