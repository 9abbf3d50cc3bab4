"""Feature selection: the hard budget ``max_features=k`` (recursive elimination with refits), the
support of a relaxed feature_l1 term given a strength (:func:`l1_support`), and without one the
held-out screen (:func:`screen_features`).

The budget: the features are ranked by their held-out permutation importance (scikit-learn's
``permutation_importance``: how much the loss on rows the tree was not fitted on grows when a
feature's values are shuffled), averaged over ``FOLDS`` folds; half of the excess over k is dropped
(at least one feature) and the ranking is made again on the rest, with the others' weights fixed
to 0 (:class:`~srtopt.models.constraints.FeatureSubset`), until k remain.  The fits are
unpenalized on the kept features, so no shrinkage biases the final tree (a relaxed fit).  The
size of the weights does not rank them: on few rows per leaf coefficient a feature without signal
gets leaf slopes as large as a weak true one (measured in docs/formulations.md, "Sparsity").
"""

from __future__ import annotations

import warnings

import numpy as np

from ..encoding import needs_encoding
from ..models.constraints import FeatureSubset, make_constraints
from ..models.terms import FeatureL1, make_penalties
from ..solvers.deadline import Deadline
from .folds import fold_params
from .targets import take_rows


def check_max_features(value, n_features: int):
    """``value`` (None or an integer >= 1, as SoftRegressionTree declares it) if it is at most the
    number of features p, else a ValueError naming it."""
    if value is None:
        return None
    if value > n_features:
        raise ValueError(f"max_features must be None or an integer in 1..{n_features} (the number of features of "
                         f"X), got {value!r}")
    return int(value)


def feature_norms(omega: np.ndarray, beta: np.ndarray, leaf_model) -> np.ndarray:
    """The group norm of every feature's weights over the splits and the leaves (module docstring): its split
    weights / p and every leaf column that carries it (the columns of its basis and of its pairs, in each of the
    K' score blocks of ``leaf_model``)."""
    p, basis = omega.shape[1] - 1, leaf_model.basis
    owners = np.tile(basis.column_features(), leaf_model.n_outputs)
    squares = np.zeros(p)
    np.add.at(squares, owners[owners >= 0], np.sum(beta[:, owners >= 0] ** 2, axis=0))
    for column, pair in zip(basis.pair_columns(), basis.pairs):  # a pair's weights count for both its features
        squares[list(pair)] += np.sum(beta[:, column::basis.n_columns] ** 2)
    return np.sqrt(np.sum((omega[:, 1:] / p) ** 2, axis=0) + squares)


#: folds of the held-out ranking
FOLDS = 3


#: shuffles of a feature per held-out fold
REPEATS = 5
#: the held-out screen keeps a feature whose importance is more than this many standard errors above 0
#: (chosen on yacht, housing, auto_mpg and lpga2009 with 10 noise columns, confirmed on Friedman #1
#: and diabetes with 10: docs/formulations.md, "Sparsity")
SCREEN_Z = 4.0


def select_features(estimator, X, y, fit_params: dict, k: int, deadline: Deadline) -> list[int]:
    """The k features kept by recursive elimination (module docstring): ``FOLDS`` fits per round of
    clones of ``estimator`` (``max_features=None``, a FeatureSubset added to its constraints).  With a
    time limit the elimination takes half the time left before ``deadline``, each of its fits an
    equal share; once that half has passed, the k best of the last ranking are kept (before any
    ranking: the k of largest univariate statistic, :func:`univariate_ranking`)."""
    selection = deadline.within(deadline.share(2))
    keep, ranking = list(range(X.shape[1])), None
    rounds = _rounds(len(keep), k)
    for done in range(rounds):
        found = _held_out_importances(estimator, X, y, fit_params, keep, selection,
                                      selection.share((rounds - done) * FOLDS))
        if found is None:
            break
        ranking = dict(zip(keep, found.mean(axis=1)))
        kept = len(keep) - max(1, (len(keep) - k + 1) // 2)
        keep = _best(keep, ranking, max(kept, k))
    if len(keep) > k:
        keep = _best(keep, ranking or dict(zip(keep, univariate_ranking(estimator, X, y)[keep])), k)
    return keep


def _best(features, ranking: dict, count: int) -> list[int]:
    """The ``count`` features of ``features`` of largest ``ranking`` (ties: the first), in order."""
    order = np.argsort([-ranking[j] for j in features], kind="stable")
    return sorted(np.asarray(features)[order[:count]].tolist())


def univariate_ranking(estimator, X, y) -> np.ndarray:
    """Each feature's univariate statistic: the F statistic of its one-way analysis of variance by class
    (a classifier), of its correlation with y (a regression); 0 where it is undefined (a constant)."""
    from sklearn.base import is_classifier
    from sklearn.feature_selection import f_classif, f_regression

    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = (f_classif if is_classifier(estimator) else f_regression)(np.asarray(X, float), np.asarray(y))[0]
    return np.nan_to_num(statistic, nan=0.0, posinf=np.finfo(float).max)


def screen_features(estimator, X, y, fit_params: dict, deadline: Deadline) -> list[int]:
    """The features whose held-out permutation importance (``FOLDS`` folds x ``REPEATS`` shuffles, the
    tree of ``estimator`` without its selecting feature_l1 terms fitted on all features) is more than
    ``SCREEN_Z`` standard errors above 0; the most important one when none is.  A column of pure
    noise has importance 0 in expectation; a weak true column is kept when the held-out rows say it
    predicts, whatever the size of its weights.  Each fit gets an equal share of half the time left
    before ``deadline``; once that has passed, every feature is kept."""
    from sklearn.base import clone

    dense = clone(estimator).set_params(penalty=list(relaxed(make_penalties(estimator.penalty))))
    screening = deadline.within(deadline.share(2))
    values = _held_out_importances(dense, X, y, fit_params, list(range(X.shape[1])), screening,
                                   screening.share(FOLDS))
    if values is None:
        return list(range(X.shape[1]))
    mean, error = values.mean(axis=1), values.std(axis=1, ddof=1) / np.sqrt(values.shape[1])
    keep = np.flatnonzero(mean > SCREEN_Z * error)
    return keep.tolist() if keep.size else [int(np.argmax(mean))]


def _held_out_importances(estimator, X, y, fit_params, keep, deadline, time_limit):
    """The permutation importances of the features of ``keep`` on the held-out folds, (len(keep),
    FOLDS x REPEATS): one column per fold and shuffle; each fit within ``time_limit`` seconds, the
    folds done by ``deadline`` (None when it passes before the first is)."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold

    rows = np.arange(len(y))
    constraints = list(make_constraints(estimator.constraints)) + [FeatureSubset(keep)]
    values = []
    for train, test in KFold(FOLDS, shuffle=True, random_state=0).split(rows):
        if deadline.passed():
            break
        model = clone(estimator).set_params(max_features=None, callbacks=None, verbose=0, constraints=constraints,
                                            time_limit=time_limit)
        with warnings.catch_warnings():  # a fit stopped by its share of the time says so: not the user's limit
            warnings.filterwarnings("ignore", message=".*time_limit=.* reached")
            model.fit(take_rows(X, train), np.asarray(y)[train], **fold_params(fit_params, train))
        found = permutation_importances(model, take_rows(X, test), np.asarray(y)[test], keep, deadline)
        if found is None:
            break
        values.append(found)
    return np.hstack(values) if values else None


def permutation_importances(model, X, y, columns, deadline=None):
    """(len(columns), REPEATS): how much ``model``'s score (accuracy, or R^2) on (X, y) drops when each of
    ``columns`` is shuffled, ``REPEATS`` times: scikit-learn's ``permutation_importance`` with
    ``random_state=0``, on these columns alone (the others are not shuffled: a column's shuffles do not
    depend on the others'); None when ``deadline`` passes before the last column."""
    seed = np.random.RandomState(0).randint(np.iinfo(np.int32).max + 1)
    table = needs_encoding(X)  # text or missing cells: shuffled as the table it is
    values = X.copy() if table else np.asarray(X, dtype=float)
    frame = getattr(X, "columns", None)
    shuffled = values.copy()
    baseline = _score(model, X, y)
    out = np.empty((len(columns), REPEATS))
    for row, j in enumerate(columns):
        if deadline is not None and deadline.passed():
            return None
        rng, order = np.random.RandomState(seed), np.arange(len(values))
        for repeat in range(REPEATS):
            rng.shuffle(order)
            if table:
                shuffled.iloc[:, j] = shuffled.iloc[order, j].to_numpy()
                out[row, repeat] = baseline - _score(model, shuffled, y)
                continue
            shuffled[:, j] = shuffled[order, j]
            out[row, repeat] = baseline - _score(model, shuffled if frame is None else
                                                 X.__class__(shuffled, columns=frame, index=X.index), y)
        if table:
            shuffled.iloc[:, j] = values.iloc[:, j].to_numpy()
        else:
            shuffled[:, j] = values[:, j]
    return out


def _score(model, X, y) -> float:
    """Accuracy of a classifier (a label it was not fitted on counts as an error, silently), R^2 of a
    regression."""
    if hasattr(model, "classes_"):
        return float(np.mean(model.predict(X) == y))
    return float(model.score(X, y))


def screens(penalties) -> bool:
    """Whether a feature_l1 term that selects (``relax``) has no strength: its support is the
    held-out screen's (:func:`screen_features`), not an l1 fit's."""
    return any(isinstance(p, FeatureL1) and p.relax and p.strength is None for p in penalties)


def l1_support(estimator, X, y, fit_params: dict, deadline: Deadline) -> list[int]:
    """The features the tree of ``estimator`` with its feature_l1 terms (``relax=False``) uses: the
    support of the relaxed fit (:class:`~srtopt.models.terms.FeatureL1`'s ``relax``), fitted in half
    the time left before ``deadline``."""
    from sklearn.base import clone

    penalties = [FeatureL1(**{**p.get_params(), "relax": False}) if isinstance(p, FeatureL1) else p
                 for p in make_penalties(estimator.penalty)]
    model = clone(estimator).set_params(penalty=penalties, callbacks=None, verbose=0, time_limit=deadline.share(2))
    model.fit(X, y, **fit_params)
    return np.flatnonzero(feature_norms(model.omega_, model.beta_, model.leaf_model_) > 0).tolist()


def relaxed(penalties) -> tuple:
    """The penalty terms without the feature_l1 terms that select and are then dropped (``relax``)."""
    return tuple(p for p in penalties if not (isinstance(p, FeatureL1) and p.relax))


def _rounds(p: int, k: int) -> int:
    """The refits from p features down to k, dropping half the excess (at least one) each time."""
    count = 0
    while p > k:
        p -= max(1, (p - k + 1) // 2)
        count += 1
    return count
