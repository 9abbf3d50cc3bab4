"""The soft trees whose depth, leaves and regularization are chosen by cross-validation: ``SoftTreeCV``, the one
search of both tasks (:mod:`~.search` holds its pieces), ``SoftRegressionTreeCV`` and ``SoftClassificationTreeCV``.
"""

from __future__ import annotations

import functools
import math
import numbers
import time

import numpy as np
from joblib import cpu_count
from sklearn.base import BaseEstimator, ClassifierMixin, clone, is_classifier
from sklearn.model_selection import (KFold, RepeatedKFold, RepeatedStratifiedKFold, ShuffleSplit, StratifiedKFold,
                                     StratifiedShuffleSplit)
from sklearn.utils.validation import check_is_fitted

from .._announce import say
from ..encoding import held_out_quietly
from ..models.constraints import SoftMean
from ..solvers.deadline import Deadline
from .class_targets import check_labels
from .classification import SoftClassificationTree, leaf_spec as class_leaf_spec
from .constrained import constraint_terms, report_on
from .folds import fold_params
from .params import (NONE, POSITIVE, RANDOM_STATE, VERBOSE, HasMethod, Integer, Items, Kind, Options, Parses, Real,
                     check_parameters)
from .reading import RegressorScoreMixin
from .regularization import NO_L2, parse_reading
from .search import Candidate, evaluate, plainest_within_noise, results_table
from .soft_tree import _load_kernels
from .srt import SoftRegressionTree, leaf_spec as value_leaf_spec
from .tabular import InputsMixin
from .targets import check_target, take_rows

SPLITTER = "a cross-validation splitter"
#: the depths compared (docs/model_selection.md, "What the search does")
DEPTHS = (1, 2, 3, 4, 5)
#: the deepest round after which a deeper one runs whenever the last one paid; after a deeper round, only when the
#: rule takes one of its candidates (docs/model_selection.md, "Depth 5")
OPEN_DEPTH = 4
#: folds of an integer ``cv`` (docs/model_selection.md, "How the defaults were chosen")
CV = 4
#: the factors on lambda_b compared (the first along the depths, the others in turn at the best candidate)
LEAF_RIDGES = (1.0, 10.0, 100.0)
#: macro iterations of the candidates' fits (None: the estimator's ``max_iter``; docs/model_selection.md)
INNER_ITER = 3
#: the folds are repeated (reshuffled) while they hold out fewer rows than this, at most REPEATS times
#: (docs/model_selection.md, "The folds")
HELD_OUT_ROWS, REPEATS = 1000, 3
#: with ``n_jobs=None``, a round whose fits are guessed (from the last round's, twice those for a deeper round) to take
#: this many seconds or more runs on all cores (at most a process per fit of a depth's round), a shorter one in this
#: process: joblib's worker processes take about a second and a half to start, once per process
#: (docs/model_selection.md, "Running on the cores of one machine")
PARALLEL_SECONDS = 2.0
#: a round within this many seconds of one this process ran on workers finds them running (joblib's loky workers
#: stop after 300 s idle) and runs on them whatever its guessed cost: no start to repay
WARM_SECONDS = 240.0
#: per task, (the held-out rows the first folds scored reach, the fewest folds scored): more in regression, where one
#: fold's draw of the training rows decided the depth (docs/model_selection.md, "Two folds in regression")
SCORED = {"regression": (2000, 2), "classification": (1000, 1)}


class _Workers:
    """When a search of this process last ran a round on joblib's workers (time.monotonic())."""

    last = -math.inf

    @classmethod
    def used(cls) -> None:
        cls.last = time.monotonic()

    @classmethod
    def running(cls) -> bool:
        """Whether the workers of the last such round are still running (:data:`WARM_SECONDS`)."""
        return time.monotonic() - cls.last < WARM_SECONDS


class SoftTreeCV(InputsMixin, BaseEstimator):
    """The search both tasks share: candidate trees (a depth, a leaf model, factors on the split and leaf l2
    weights) compared by the held-out loss of every row on the same folds, along the depths from the shallowest
    and the weights from the lightest while a round pays, the plainest within one standard error of the best refit
    on all the rows (:mod:`~.search`).  The subclasses give the tree, the splitter of an integer ``cv``, the
    scorings and the checks of y; their parameters are the same."""

    #: the tree the search tunes, the splitters of an integer ``cv`` (folds, repeated folds) and of a fraction
    #: (one holdout)
    TREE: type = None
    FOLDS: type = None
    REPEATED: type = None
    HOLDOUT: type = None

    _parameter_constraints = {
        "depths": [NONE, Items(Integer(1), "integers >= 1")],
        "split_weights": [NONE, Items(POSITIVE, "numbers > 0")], "leaf_ridges": [NONE, Items(POSITIVE, "numbers > 0")],
        "cv": [Integer(2), Real(0, 1, "neither", text="a fraction in (0, 1)"), HasMethod(SPLITTER, "split")],
        "rule": [Options("one-se", "paired-se", "best")],
        "n_jobs": [NONE, Integer(-(2**31))], "random_state": RANDOM_STATE, "time_limit": [NONE, POSITIVE],
        "verbose": VERBOSE,
    }

    def _check_params(self):
        check_parameters(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()  # the tree's tables (text, categorical, missing cells), encoded once
        tags.input_tags.allow_nan = tags.input_tags.string = tags.input_tags.categorical = True
        return tags

    # ------------------------------------------------------------------ the hooks of the subclasses
    def _check_data(self, X, y):
        """y checked against the tree's columns X (one line naming what is wrong)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, sensitive_features=None):
        """Compare the candidates on the held-out rows of ``cv``'s folds, then refit the chosen one on (X, y).

        Parameters
        ----------
        X : array-like or DataFrame of shape (N, p)
            Training inputs; a table with text columns and empty cells is taken as the trees take it, encoded
            once for every fit of the search.
        y : array-like of shape (N,)
            Training targets.
        sample_weight : array-like of shape (N,), float or None, default=None
            Weights of the rows, for every fit (each fold's share of them), as in the tree's ``fit``; the
            held-out losses are not weighted.
        sensitive_features : array-like of shape (N,), str or None, default=None
            The protected groups of the constraints, for every fit, as in the tree's ``fit``.

        Returns
        -------
        self
            The fitted search.

        Raises
        ------
        ValueError
            If a parameter breaks its rules, or a fit refuses the data.
        """
        self._check_params()
        if self.time_limit is not None:
            _load_kernels(self.TREE)  # a fresh process loads (or compiles) them: before the clock starts
        deadline, started = Deadline(self.time_limit), time.perf_counter()
        matrix = self._fit_inputs(X, sensitive_features)[0]  # the whole table's encoder, for every inner fit
        y = self._check_data(matrix, y)
        tree = self._tree()
        reading = _reading_of(tree.regularization) if self.split_weights is not None else None
        params = {name: value if isinstance(value, str) else np.asarray(value)
                  for name, value in (("sample_weight", sample_weight), ("sensitive_features", sensitive_features))
                  if value is not None}
        fit_params = {**params, **({} if self.encoder_ is None else {"encoder": self.encoder_})}
        folds = list(self._splitter(len(y)).split(matrix, y))
        run = functools.partial(self._round, tree, X, y, fit_params, reading, deadline, started)
        plainness = self._plainness(tree)
        evaluated = self._path(tree, run, folds[:self._enough([len(test) for _, test in folds])], plainness, deadline)
        chosen = plainest_within_noise(evaluated, plainness, self.rule)
        refit = clone(tree).set_params(**chosen.params(reading), time_limit=_left(deadline, tree.time_limit))
        self.best_estimator_ = refit.fit(X, y, **fit_params)
        self._store(chosen, evaluated, len(folds), plainness)
        self.constraint_report_ = self.best_estimator_.constraint_report_
        if any(isinstance(term, SoftMean) for term in constraint_terms(refit)):
            with held_out_quietly():
                once = folds[:int(self.cv)] if isinstance(self.cv, numbers.Integral) else folds  # not repeated
                self.constraint_report_ = _held_out(refit, once, X, y, params, fit_params, self.constraint_report_,
                                                    deadline)
            self.best_estimator_.constraint_report_ = self.constraint_report_
        self.search_seconds_ = time.perf_counter() - started
        self._say(f"refit {chosen.describe()} on {len(y)} rows; {self.search_seconds_:.1f} s in all")
        return self

    def _round(self, tree, X, y, fit_params, reading, deadline, started, label, candidates, folds, n_jobs) -> dict:
        """What ``folds`` say of ``candidates`` (their fits in one joblib call of ``n_jobs``, each within a share
        of the time left), and a line of progress."""
        inner = clone(tree).set_params(verbose=0, callbacks=None,
                                       **({} if INNER_ITER is None else {"max_iter": INNER_ITER}))
        found = evaluate(inner, candidates, folds, X, y, fit_params, self._scoring(), reading, n_jobs,
                         deadline.share(len(candidates) * len(folds) + 2))
        leader = _least(found)
        where = f" on {n_jobs} processes" if self.n_jobs is None and n_jobs > 1 else ""
        self._say(f"{label}: {len(candidates)} candidate(s) x {len(folds)} fold(s) of {len(folds[0][0])} training "
                  f"rows{where}; best {np.mean(found[leader].scores):.4f} ({leader.describe()}); "
                  f"{time.perf_counter() - started:.1f} s")
        return found

    def _path(self, tree, run, folds, plainness, deadline) -> dict:
        """{candidate: what ``folds`` say}: the depths in increasing order, every leaf of a depth in one round with
        the first factor of each grid; then, at the best candidate, the leaf factors in the order given, one round
        each (the other split factors with each).  A further round runs while the last one paid (the round of the
        other split factors with the first leaf factor, whatever it says): one of its
        candidates has the least mean held-out loss so far, or is the one the rule takes (:func:`_paid`); a round
        deeper than :data:`OPEN_DEPTH` only when the rule takes a candidate of the depth before
        (:func:`_opens_deeper`).  With a ``time_limit``, no round starts that would not leave the time of the refit
        (a round's cost guessed from the last)."""
        splits, ridges = self._grids(tree)
        evaluated, per_candidate = {}, 0.0
        workers = min(cpu_count(), len(self._leaves(tree)) * len(folds))  # the fits of a depth's round at most
        walk = functools.partial(self._paying_round, run, folds, deadline, evaluated, plainness, workers)
        for depth in sorted(self._depths(tree)):
            leaves = [Candidate(depth, leaf, splits[0], ridges[0]) for leaf in self._leaves(tree)]
            paid, per_candidate = walk(f"depth {depth}", leaves, per_candidate, deeper=True)
            if not (paid and _opens_deeper(evaluated, depth, plainness, self.rule)):
                break
        leader = _least(evaluated)
        for ridge in ridges:
            weights = [c for c in (Candidate(leader.depth, leader.leaf, w, ridge) for w in splits)
                       if c not in evaluated]
            if weights:
                label = f"lambda_b x{ridge:g} at depth {leader.depth}, {leader.leaf} leaves"
                paid, per_candidate = walk(label, weights, per_candidate)
                if not paid and ridge != ridges[0]:  # the other split factors alone do not end the walk
                    break
        return evaluated

    def _paying_round(self, run, folds, deadline, evaluated, plainness, workers, label, candidates, per_candidate,
                      deeper=False) -> tuple:
        """(whether the round of ``candidates`` paid (:func:`_paid`), the seconds per candidate), what ``folds`` say
        of them added to ``evaluated``; no round, and False, when the time left is less than three times their
        cost guessed at ``per_candidate`` (the first round runs).  Their fits run where :meth:`_jobs` says for that
        cost, doubled for a ``deeper`` round (a tree one level deeper costs about twice as much)."""
        if per_candidate and deadline.left() < 3 * per_candidate * len(candidates):
            self._say(f"time_limit: no round for {label}")
            return False, per_candidate
        started = time.perf_counter()
        guessed = (2.0 if deeper else 1.0) * per_candidate * len(candidates)
        # the same count in every round of two fits or more: loky's pool stops or starts workers to change it
        n_jobs = self._jobs(guessed, workers if len(candidates) * len(folds) > 1 else 1)
        found = run(label, candidates, folds, n_jobs)
        if n_jobs != 1:
            _Workers.used()
        evaluated.update(found)
        return _paid(evaluated, found, plainness, self.rule), (time.perf_counter() - started) / len(candidates)

    def _jobs(self, guessed: float, workers: int):
        """The ``n_jobs`` of a round guessed to take ``guessed`` seconds (0: no guess, the first round): ``n_jobs``
        when given; else ``workers`` (1 for a round of one fit) when they are running (:class:`_Workers`) or from
        :data:`PARALLEL_SECONDS` on, 1 otherwise."""
        if self.n_jobs is not None:
            return self.n_jobs
        return workers if _Workers.running() or (guessed and guessed >= PARALLEL_SECONDS) else 1

    def max_fits(self, n_rows=None) -> int:
        """The most fits a search of these parameters runs on ``n_rows`` rows (None: on any number), the refit
        included: every depth and leaf, then every other factor of the grids at the best, on the folds scored
        (:meth:`_enough`), and the refit."""
        tree = self._tree()
        splits, ridges = self._grids(tree)
        if isinstance(self.cv, numbers.Real) and not isinstance(self.cv, numbers.Integral):
            folds = 1
        elif n_rows is None:
            folds = self._splitter(1).get_n_splits()
        else:
            folds = self._enough([n_rows / _n_splits(self.cv)] * self._splitter(n_rows).get_n_splits())
        return (len(self._depths(tree)) * len(self._leaves(tree)) + len(splits) * len(ridges) - 1) * folds + 1

    def _tree(self):
        """The estimator the candidates are made of, its starts seeded (its own ``random_state``, else the
        search's, else 0: two searches of the same data give the same tree)."""
        tree = clone(self.estimator) if self.estimator is not None else self.TREE()
        if tree.random_state is None:
            tree.set_params(random_state=self.random_state if self.random_state is not None else 0)
        return tree

    def _depths(self, tree) -> tuple:
        return (int(tree.depth),) if self.depths is None else tuple(int(d) for d in self.depths)

    def _leaves(self, tree) -> tuple:
        return (tree.leaf,) if self.leaves is None else tuple(self.leaves)

    def _grids(self, tree) -> tuple:
        """(the split factors, the leaf factors) compared, the first of each along the depths (None: the estimator's
        own)."""
        splits = (1.0,) if self.split_weights is None else tuple(float(w) for w in self.split_weights)
        ridges = (tree.leaf_ridge,) if self.leaf_ridges is None else tuple(float(f) for f in self.leaf_ridges)
        return splits, ridges

    def _plainness(self, tree):
        """The order of plainness of the candidates of ``tree``: the shallower, then the earlier of ``leaves``, then
        the heavier split weight, then the heavier leaf weight."""
        leaves = list(self._leaves(tree))

        def key(candidate) -> tuple:
            ridge = candidate.leaf_ridge if isinstance(candidate.leaf_ridge, numbers.Real) else 0.0
            return candidate.depth, leaves.index(candidate.leaf), -candidate.split_weight, -ridge

        return key

    def _splitter(self, n_rows):
        """The folds of ``n_rows`` rows: an integer ``cv`` as shuffled ``FOLDS`` folds, repeated (``REPEATED``) while
        one round of them holds out fewer than :data:`HELD_OUT_ROWS` rows, :data:`REPEATS` times at most; a
        fraction as one ``HOLDOUT`` split of that share of the rows; both seeded by ``random_state`` (None: 0, the
        same folds at every run); a splitter as it is."""
        seed = self.random_state if self.random_state is not None else 0
        if isinstance(self.cv, numbers.Integral):
            repeats = min(REPEATS, max(1, math.ceil(HELD_OUT_ROWS / max(n_rows, 1))))
            if repeats > 1:
                return self.REPEATED(n_splits=int(self.cv), n_repeats=repeats, random_state=seed)
            return self.FOLDS(int(self.cv), shuffle=True, random_state=seed)
        if isinstance(self.cv, numbers.Real):
            return self.HOLDOUT(1, test_size=float(self.cv), random_state=seed)
        return self.cv

    def _enough(self, held_out) -> int:
        """How many of the first folds, of ``held_out`` rows each, the candidates are scored on: the fewest whose
        held-out rows reach the task's :data:`SCORED` rows, and its fewest folds (all at most)."""
        rows, at_least = SCORED["classification" if is_classifier(self) else "regression"]
        reach = int(np.searchsorted(np.cumsum(held_out), rows)) + 1
        return min(len(held_out), max(reach, at_least))

    def _scoring(self) -> str:
        return self.scoring

    def _store(self, chosen, evaluated, n_splits, plainness):
        """The attributes of the choice."""
        self.best_params_ = {"depth": chosen.depth, "leaf": chosen.leaf, "split_weight": chosen.split_weight,
                             "leaf_ridge": chosen.leaf_ridge}
        self.depth_, self.leaf_ = chosen.depth, chosen.leaf
        self.split_weight_, self.leaf_ridge_ = chosen.split_weight, chosen.leaf_ridge
        self.cv_results_ = results_table(evaluated, chosen, plainness)
        self.best_score_ = float(np.mean(evaluated[chosen].scores))
        self.n_splits_ = n_splits

    def _say(self, line: str) -> None:
        if self.verbose:
            say(f"{type(self).__name__}: {line}")

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


_SEARCH_DOC = """
    Parameters
    ----------
    estimator : {tree} or None, default=None
        The tree to tune (cloned); None: ``{tree}()``.  Its parameters other than those the candidates set
        (``depth``, ``leaf``, ``leaf_ridge``, and with ``split_weights`` the factor of its ``regularization``
        reading) are kept by every fit.
    depths : sequence of int >= 1 or None, default=(1, 2, 3, 4, 5)
        The depths compared, the shallowest first, every leaf of a depth in one round: a deeper round runs while
        the last one paid (one of its candidates has the least mean held-out loss so far, or is the one ``rule``
        takes); after depth 4, only when ``rule`` takes a candidate of the last depth.  None: the estimator's
        depth only.
    leaves : sequence of leaf specs or None, default={leaves}
        The leaf models compared at every depth, the plainest first.  None: the estimator's own leaf only.
    split_weights : sequence of float > 0 or None, default=(1.0,)
        Factors on the reading's lambda_w (the l2 weight of eq. (obj) on the splits; ``"l2:split=w"``): the first
        along the depths, the others at the best candidate of the depths, with each leaf factor.  None: the
        estimator's own ``regularization``.
    leaf_ridges : sequence of float > 0 or None, default=(1.0, 10.0, 100.0)
        Factors on lambda_b (the tree's ``leaf_ridge``): the first along the depths, then the others in the order
        given at the best candidate of the depths, a round each while the last one paid (the round of the other
        split factors with the first leaf factor does not end the walk).  None: the estimator's own ``leaf_ridge``.
    cv : int, float or cross-validation splitter, default=4
        The folds the candidates are scored on: an int k, ``{folds}(k, shuffle=True, random_state=random_state)``,
        repeated (``{repeated}``, at most 3 times) while the k folds hold out fewer than 1000 rows; a fraction f in
        (0, 1), one split holding out that share of the rows (``{holdout}``); or any scikit-learn splitter.  Every
        candidate is scored on the same first folds, as many as hold out {scored} (all when they hold
        fewer).
    scoring : {scorings}, default={scoring!r}
        The held-out loss a candidate is chosen by, row by row: {scoring_text}.
    rule : {{"paired-se", "one-se", "best"}}, default="paired-se"
        "paired-se": the plainest candidate (the shallower, the earlier of ``leaves``, the heavier weights) whose
        mean held-out loss is within one standard error of the per-row differences from the best's; "one-se":
        within one standard error of the best's mean held-out loss (Breiman's rule: a wider margin, which heavy
        tailed losses widen further); "best": the least mean held-out loss.
    n_jobs : int or None, default=None
        The (candidate, fold) fits of a round run in parallel through joblib (1: in this process, -1: all cores;
        under ``joblib.parallel_backend("dask")`` on a Dask cluster).  None: a round whose fits are guessed from the
        last round's (twice those for a deeper round) to take 2 seconds or more on all cores (a process per fit of
        a depth's round at most), the others (and the first) in this process; within 4 minutes of a round on
        workers in this process, which are then still running, every round of two fits or more on them.  The
        choice does not depend on it.
    random_state : int, RandomState or None, default=None
        Seeds the shuffle of the folds, and the trees' starts when the estimator's own ``random_state`` is None.
        None: seed 0, so that two searches of the same data give the same tree.
    time_limit : float or None, default=None
        Seconds for the whole search, the refit included: no round starts when it would not leave the time of the
        refit, and the refit gets what is left (at most the estimator's own ``time_limit``).
    verbose : int, default=0
        1: a line on stderr per round (the depth or the stage, the candidates and folds, the training rows, the
        best score of the round, the seconds so far) and one for the refit.

    Attributes
    ----------
    best_estimator_ : {tree}
        The chosen tree refit on all the rows (for inspection: ``summary()``, :mod:`srtopt.export`, ``save``).
    best_params_ : dict
        The chosen candidate: ``depth``, ``leaf``, ``split_weight`` and ``leaf_ridge``.
    depth_, leaf_, split_weight_, leaf_ridge_ :
        The same, one by one.
    best_score_ : float
        The chosen candidate's mean score over the folds ({score_name}).
    cv_results_ : dict of arrays
        scikit-learn's form (``pandas.DataFrame(cv_results_)`` reads it), one row per candidate evaluated, the
        plainest first: ``params``, ``param_<name>``, ``split<k>_test_score``, ``mean_test_score``,
        ``std_test_score``, ``rank_test_score``, ``mean_held_out_loss`` (what the rule compares),
        ``mean_fit_time`` and ``chosen``.
    n_splits_ : int
        The folds.
    search_seconds_ : float
        Wall-clock seconds of the whole search, the refit included.
    constraint_report_ : list of dict
        ``best_estimator_``'s report of its constraints on the training data (empty without constraints); with
        constraint rows that average over the data (parity, group losses, a RowMean), each row also holds
        ``held_out``: its value for ``predict()`` on each held-out fold of ``cv`` (not repeated), of a fit of the
        chosen candidate on the other folds.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,), dtype object
        The column names of a DataFrame X; absent when X had none.
"""


class SoftRegressionTreeCV(RegressorScoreMixin, SoftTreeCV):
    __doc__ = """A :class:`SoftRegressionTree` whose depth, leaves and leaf weight are chosen by cross-validation on
    the held-out squared error of every row, then refit on all the rows: the search to start with on data of your
    own.

    The depths are tried from 1 up while a deeper round pays; at each depth linear leaves, spline leaves and
    spline leaves with steps and pairs; then stronger l2 weights on the leaves of the best while they pay; the
    plainest candidate within noise of the best is refit (:mod:`~.search`).  Its defaults were chosen on half of
    18 shared tables and confirmed on the other half (docs/model_selection.md).
""" + _SEARCH_DOC.format(tree="SoftRegressionTree", leaves='("linear", "spline", "spline:steps=64,pairs=4")',
                         repeated="RepeatedKFold", folds="KFold", holdout="ShuffleSplit",
                         scored="2000 rows, and two at least",
                         scorings='{"r2"}', scoring="r2", scoring_text="the squared error (R^2's)",
                         score_name="R^2") + """
    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(200)
    >>> model = SoftRegressionTreeCV(depths=(1, 2), cv=3).fit(X, y)
    >>> model.depth_ in (1, 2), model.leaf_ in ("linear", "spline"), sorted(model.cv_results_)[:2]
    (True, True, ['chosen', 'mean_fit_time'])
    """

    TREE, FOLDS, REPEATED, HOLDOUT = SoftRegressionTree, KFold, RepeatedKFold, ShuffleSplit

    def __init__(self, estimator=None, depths=DEPTHS, leaves=("linear", "spline", "spline:steps=64,pairs=4"),
                 split_weights=(1.0,), leaf_ridges=LEAF_RIDGES, cv=CV, scoring="r2", rule="paired-se", n_jobs=None,
                 random_state=None, time_limit=None, verbose=0):
        self.estimator, self.depths, self.leaves = estimator, depths, leaves
        self.split_weights, self.leaf_ridges, self.cv, self.scoring, self.rule = split_weights, leaf_ridges, cv, \
            scoring, rule
        self.n_jobs, self.random_state, self.time_limit, self.verbose = n_jobs, random_state, time_limit, verbose

    _parameter_constraints = {
        **SoftTreeCV._parameter_constraints, "scoring": [Options("r2")],
        "estimator": [NONE, Kind("a SoftRegressionTree", SoftRegressionTree)],
        "leaves": [NONE, Items(Parses("a leaf", value_leaf_spec), "leaves ('linear', 'spline', a spline spec, a "
                                                                  "registered name or a LeafModel)")],
    }

    def _check_data(self, X, y):
        return check_target(self, X, y, 1)


class SoftClassificationTreeCV(ClassifierMixin, SoftTreeCV):
    __doc__ = """A :class:`SoftClassificationTree` whose depth, leaves and leaf weight are chosen by stratified
    cross-validation on the held-out log loss (or accuracy) of every row, then refit on all the rows: the search to
    start with on data of your own.

    The depths are tried from 1 up (a depth-1 tree is a logistic regression split once) while a deeper round
    pays; at each depth logistic and spline leaves; then stronger l2 weights on the leaves of the best while they
    pay; the plainest candidate within noise of the best is refit (:mod:`~.search`).  Its defaults were chosen on
    half of 18 shared tables and the 20 classification sets, and confirmed on the other half of the tables
    (docs/model_selection.md).
""" + _SEARCH_DOC.format(tree="SoftClassificationTree", leaves='("logistic", "spline")', folds="StratifiedKFold",
                         repeated="RepeatedStratifiedKFold", holdout="StratifiedShuffleSplit", scored="1000 rows",
                         scorings='{"log_loss", "accuracy"}', scoring="log_loss",
                         scoring_text='the log loss of its probabilities, or the 0/1 loss ("accuracy")',
                         score_name="the negated log loss, or the accuracy") + """
    classes_ : ndarray of shape (K,)
        The class labels, in the order of the columns of ``predict_proba``.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = SoftClassificationTreeCV(depths=(1, 2), cv=3).fit(X, y)
    >>> model.depth_ in (1, 2), model.leaf_ in ("logistic", "spline"), bool(model.score(X, y) > 0.9)
    (True, True, True)
    """

    TREE, FOLDS, HOLDOUT = SoftClassificationTree, StratifiedKFold, StratifiedShuffleSplit
    REPEATED = RepeatedStratifiedKFold

    def __init__(self, estimator=None, depths=DEPTHS, leaves=("logistic", "spline"), split_weights=(1.0,),
                 leaf_ridges=LEAF_RIDGES, cv=CV, scoring="log_loss", rule="paired-se", n_jobs=None, random_state=None,
                 time_limit=None, verbose=0):
        self.estimator, self.depths, self.leaves = estimator, depths, leaves
        self.split_weights, self.leaf_ridges, self.cv, self.scoring, self.rule = split_weights, leaf_ridges, cv, \
            scoring, rule
        self.n_jobs, self.random_state, self.time_limit, self.verbose = n_jobs, random_state, time_limit, verbose

    _parameter_constraints = {
        **SoftTreeCV._parameter_constraints, "scoring": [Options("log_loss", "accuracy")],
        "estimator": [NONE, Kind("a SoftClassificationTree", SoftClassificationTree)],
        "leaves": [NONE, Items(Parses("a leaf", class_leaf_spec), "leaves ('logistic', 'spline', 'constant', a "
                                                                  "spline spec, a registered name or a LeafModel)")],
    }

    def _check_data(self, X, y):
        labels = check_labels(self, X, y, 1)
        self.classes_, counts = np.unique(labels, return_counts=True)
        if isinstance(self.cv, numbers.Integral) and len(counts) > 1 and counts.max() < self.cv:  # one: the tree's
            raise ValueError(f"cv={self.cv}: stratified folds need a class of at least {self.cv} rows, and the "
                             f"largest class of y has {counts.max()}; pass a smaller cv (at least 2)")
        return labels

    def predict_proba(self, X):
        """``best_estimator_``'s class probabilities (its HBP leaf's), shape (n_samples, K)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    def decision_function(self, X):
        """``best_estimator_``'s scores (:meth:`SoftClassificationTree.decision_function`)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)


def _paid(evaluated: dict, found: dict, plainness, rule: str) -> bool:
    """Whether a round paid, its candidates ``found`` among those ``evaluated``: one of them has the least mean
    held-out loss, or is the one ``rule`` takes (:func:`~.search.plainest_within_noise`).  The first round always
    pays."""
    first = len(evaluated) == len(found)
    return first or bool(set(found) & {_least(evaluated), plainest_within_noise(evaluated, plainness, rule)})


def _opens_deeper(evaluated: dict, depth: int, plainness, rule: str) -> bool:
    """Whether a deeper round may follow the round of ``depth`` that paid: always up to :data:`OPEN_DEPTH`, beyond
    only when ``rule`` takes a candidate of ``depth`` (it beat the shallower ones beyond their noise)."""
    return depth < OPEN_DEPTH or plainest_within_noise(evaluated, plainness, rule).depth == depth


def _n_splits(cv) -> int:
    return int(cv) if isinstance(cv, numbers.Integral) else cv.get_n_splits()


def _least(evaluated: dict):
    """The candidate of the least mean held-out loss."""
    return min(evaluated, key=lambda candidate: float(np.mean(evaluated[candidate].losses)))


def _left(deadline, own):
    """The refit's ``time_limit``: what is left before ``deadline`` (a millisecond at least), at most ``own``."""
    if math.isinf(deadline.left()):
        return own
    left = max(deadline.left(), 1e-3)
    return left if own is None else min(left, own)


def _held_out(estimator, folds, X, y, params, fit_params, report, deadline) -> list[dict]:
    """``report`` with, per row, ``held_out``: its ``predict()`` value on each held-out fold, by a fit of
    ``estimator`` on the other folds (:func:`~.constrained.report_on`)."""
    y = np.asarray(y)
    values = [[] for _ in report]
    for k, (train, test) in enumerate(folds):
        share = deadline.share(len(folds) - k)
        fitted = clone(estimator).set_params(time_limit=share if share is not None else estimator.time_limit)
        fitted.fit(take_rows(X, train), y[train], **fold_params(fit_params, train))
        rows = report_on(fitted, take_rows(X, test), y[test], **fold_params(params, test))
        for row, value in zip(rows, values):
            value.append(row["predict"])
    return [{**row, "held_out": value} for row, value in zip(report, values)]


def _reading_of(regularization) -> str:
    """The named reading of ``regularization`` the split factors scale (one line when there is none)."""
    if not isinstance(regularization, str) or parse_reading(regularization)[0] == NO_L2:
        raise ValueError("split_weights scale a named regularization reading ('l2', 'l2-slopes', ...); the estimator "
                         f"has regularization={regularization!r}: give the estimator a reading, or split_weights=None")
    reading, split = parse_reading(regularization)
    if split != 1.0:
        raise ValueError(f"the estimator's regularization {regularization!r} already sets split=; give the "
                         "reading alone and the factors in split_weights")
    return reading
