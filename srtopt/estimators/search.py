"""The model selection of the soft trees' searches (:mod:`~.cv`): candidate trees compared by the held-out loss
of every row, along the depths from the shallowest, and the plainest within the noise of the best refit.

A candidate is a depth, a leaf model, a factor on the split weight lambda_w and one on the leaf weight lambda_b
of eq. (obj) (:class:`Candidate`).  Its score is the loss of each held-out row (:data:`ROW_LOSSES`: the squared
error for R^2, the log loss or the 0/1 loss of a classifier) under the folds of a splitter, every candidate on the
same folds, its fits in parallel through joblib (so that a Dask or Ray backend runs them on a cluster).  Of the
candidates, :func:`plainest_within_noise` takes the plainest whose mean loss is within one standard error of the
best's: when candidates differ by less than their noise, the shallower, linear, more regularized tree.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone

from ..encoding import held_out_quietly
from .folds import fold_params
from .targets import take_rows

#: the floor on a probability in the log loss (a class a fold's fit did not see has probability 0)
PROBABILITY_FLOOR = 1e-15


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A tree of the search: its depth, its leaf model (a spec of the estimator's ``leaf`` or a LeafModel), and the
    factors on the reading's lambda_w (``split_weight``) and on lambda_b (``leaf_ridge``)."""

    depth: int
    leaf: object
    split_weight: float = 1.0
    leaf_ridge: float = 1.0

    def params(self, reading=None) -> dict:
        """The tree's parameters: ``regularization`` the named ``reading`` with its split factor (left as the
        estimator's when ``reading`` is None)."""
        params = {"depth": self.depth, "leaf": self.leaf, "leaf_ridge": self.leaf_ridge}
        if reading is not None:
            params["regularization"] = reading if self.split_weight == 1.0 else f"{reading}:split={self.split_weight!r}"
        return params

    def describe(self) -> str:
        """"depth 2, spline leaves" with the factors that are not 1."""
        name = self.leaf if isinstance(self.leaf, str) else type(self.leaf).__name__
        factors = "".join(f", {label} x{value:g}" for label, value in (("lambda_w", self.split_weight),
                                                                       ("lambda_b", self.leaf_ridge)) if value != 1.0)
        return f"depth {self.depth}, {name} leaves{factors}"


def squared_error(model, X, y) -> np.ndarray:
    """(yhat_i - y_i)^2 of each row (R^2's loss)."""
    return (model.predict(X) - np.asarray(y, dtype=float)) ** 2


def log_loss(model, X, y) -> np.ndarray:
    """-log p(y_i | x_i) of each row, a class the fit did not see given probability :data:`PROBABILITY_FLOOR`."""
    P = model.predict_proba(X)
    column = {label: k for k, label in enumerate(model.classes_.tolist())}
    p = np.array([P[i, column[label]] if label in column else 0.0 for i, label in enumerate(np.asarray(y).tolist())])
    return -np.log(np.clip(p, PROBABILITY_FLOOR, 1.0))


def zero_one(model, X, y) -> np.ndarray:
    """1 where the predicted class is wrong (accuracy's loss)."""
    return (model.predict(X) != np.asarray(y)).astype(float)


#: the loss of each held-out row a ``scoring`` is chosen by
ROW_LOSSES = {"r2": squared_error, "log_loss": log_loss, "accuracy": zero_one}


def fold_score(scoring: str, losses: np.ndarray, y) -> float:
    """A fold's score as scikit-learn's scorers give it (higher is better): R^2, the negated mean log loss or the
    accuracy of its held-out rows."""
    if scoring == "r2":
        y = np.asarray(y, dtype=float)
        total = float(np.sum((y - y.mean()) ** 2))
        return 1.0 - float(np.sum(losses)) / total if total > 0 else 0.0
    return -float(np.mean(losses)) if scoring == "log_loss" else 1.0 - float(np.mean(losses))


@dataclasses.dataclass
class Evaluated:
    """What the folds say of a candidate: the loss of each held-out row (the folds' rows in turn), each fold's
    score, and the seconds of each fold's fit."""

    losses: np.ndarray
    scores: list
    seconds: list


def evaluate(tree, candidates, folds, X, y, fit_params, scoring, reading=None, n_jobs=None, time_limit=None):
    """{candidate: :class:`Evaluated`}: each candidate (the parameters of ``tree`` it sets) fitted on the training
    rows of every fold and scored on its held-out rows; the (candidate, fold) fits run through joblib."""
    y = np.asarray(y)
    jobs = [(candidate, train, test) for candidate in candidates for train, test in folds]
    done = Parallel(n_jobs=n_jobs)(
        delayed(_fit_and_lose)(clone(tree).set_params(**candidate.params(reading), time_limit=time_limit), X, y,
                               train, test, fit_params, ROW_LOSSES[scoring]) for candidate, train, test in jobs)
    out = {}
    for (candidate, _, test), (losses, seconds) in zip(jobs, done):
        found = out.setdefault(candidate, Evaluated(np.empty(0), [], []))
        found.losses = np.concatenate([found.losses, losses])
        found.scores.append(fold_score(scoring, losses, y[test]))
        found.seconds.append(seconds)
    return out


def _fit_and_lose(model, X, y, train, test, fit_params, row_loss):
    """(the loss of each row of ``test``, seconds) of ``model`` fitted on the rows ``train``."""
    started = time.perf_counter()
    with held_out_quietly():
        model.fit(take_rows(X, train), y[train], **fold_params(fit_params, train))
        seconds = time.perf_counter() - started
        return row_loss(model, take_rows(X, test), y[test]), seconds


def plainest_within_noise(evaluated: dict, plainness, rule: str = "one-se"):
    """The candidate of ``evaluated`` the search refits: the least mean held-out loss (``rule="best"``), or the
    plainest (least ``plainness(candidate)``) whose mean loss is within one standard error of the best's
    (``rule="one-se"``, Breiman's rule: the standard error of the best's mean loss over its held-out rows), or
    within one standard error of the per-row differences from the best (``rule="paired-se"``)."""
    means = {candidate: float(np.mean(found.losses)) for candidate, found in evaluated.items()}
    best = min(means, key=lambda candidate: (means[candidate], plainness(candidate)))
    if rule == "best":
        return best
    reference = evaluated[best].losses
    noise = {candidate: _standard_error(found.losses - reference if rule == "paired-se" else reference)
             for candidate, found in evaluated.items()}
    return min((c for c in evaluated if means[c] <= means[best] + noise[c]), key=plainness)


def _standard_error(differences: np.ndarray) -> float:
    n = len(differences)
    return float(np.std(differences, ddof=1) / np.sqrt(n)) if n > 1 else 0.0


def results_table(evaluated: dict, chosen, plainness) -> dict:
    """scikit-learn's ``cv_results_`` of the candidates evaluated, in the order of their plainness: ``params`` and
    one ``param_<name>`` column per parameter, ``split<k>_test_score`` (every candidate on the same folds),
    ``mean_test_score`` and ``std_test_score`` over its folds, ``rank_test_score`` (1 the best mean), ``n_folds``,
    ``mean_held_out_loss`` (the rule's), ``mean_fit_time`` and ``chosen``."""
    order = sorted(evaluated, key=plainness)
    params = [dataclasses.asdict(candidate) for candidate in order]
    scores = np.array([evaluated[c].scores for c in order])
    means = scores.mean(axis=1)
    table = {"params": params, **{f"param_{name}": [p[name] for p in params] for name in params[0]}}
    table.update({f"split{k}_test_score": scores[:, k] for k in range(scores.shape[1])})
    ranks = np.empty(len(order), dtype=np.int32)
    ranks[np.argsort(-means, kind="stable")] = np.arange(1, len(order) + 1)
    table.update({"mean_test_score": means, "std_test_score": scores.std(axis=1), "rank_test_score": ranks,
                  "n_folds": np.array([len(evaluated[c].scores) for c in order]),
                  "mean_held_out_loss": np.array([np.mean(evaluated[c].losses) for c in order]),
                  "mean_fit_time": np.array([np.mean(evaluated[c].seconds) for c in order]),
                  "chosen": np.array([candidate == chosen for candidate in order])})
    return table
