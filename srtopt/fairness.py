"""Fairness measured where it matters: on any data, not only the training rows a constraint holds on.

* :func:`group_means` -- each protected group's (weighted) mean of a value, e.g. the predictions;
* :func:`group_gaps` -- the differences of the groups' mean predictions (group h minus group g, for
  every pair g < h: the rows of ``parity``);
* :func:`group_losses` -- each group's mean loss (the rows of ``group_loss``);
* :func:`group_rates` -- a classifier's rates in each group, as fairlearn names them: the selection rate (the
  share of rows predicted ``pos_label``), the true-positive and the false-positive rate;
* :func:`rate_gaps` -- the differences of those rates between the groups (the rows of ``parity`` and
  ``equalized_odds`` on a classifier), and :func:`demographic_parity_difference` and
  :func:`equalized_odds_difference`, fairlearn's two numbers (the largest rate minus the smallest);
* :func:`constraint_report` -- a fitted tree's constraint report (``constraint_report_``) on other
  rows, e.g. a test set.

Each estimate comes with a normal-approximation confidence interval: a group's weighted mean
T = sum_i w_i x_i (w_i its rows' normalized weights) has the variance sum_i w_i^2 (x_i - T)^2
n_g / (n_g - 1) (n_g: its rows of positive weight; with equal weights s^2 / n_g), and a difference of
two groups' means the sum of theirs (the groups are independent samples).  A constraint that holds on
400 training rows says little about new rows: the interval of the same gap on test data shows how
much (docs/constraints.md, "Training data and new data").

>>> import numpy as np
>>> group = np.array([0, 0, 0, 1, 1, 1])
>>> group_gaps(np.array([1.0, 2.0, 3.0, 3.0, 4.0, 5.0]), group)[["pair", "gap", "rows"]]
    pair  gap  rows
0  1 - 0  2.0     6
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from .models.constraints import group_differences, group_pairs, group_weights

LOSSES = {"squared": lambda y, prediction: (prediction - y) ** 2, "absolute": lambda y, prediction: np.abs(prediction - y)}


def _coded(values, groups, sample_weight):
    """(values, group codes 0..G-1, the group labels, the rows' weights) of one length, checked."""
    values = np.asarray(values, dtype=float)
    groups = np.asarray(groups)
    if values.ndim != 1 or groups.shape != values.shape:
        raise ValueError(f"the values and the groups must be 1-D of one length, got shapes {values.shape} and "
                         f"{groups.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError("the values (predictions, targets) must be finite numbers")
    weights = np.ones(len(values)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if weights.shape != values.shape or not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError(f"sample_weight must hold a finite weight >= 0 per row ({len(values)}), got shape "
                         f"{weights.shape}")
    labels, codes = np.unique(groups, return_inverse=True)
    if len(labels) < 2:
        raise ValueError(f"the groups hold a single group ({labels[0]!r} if any): a gap compares two or more")
    return values, codes.ravel(), [v.item() if hasattr(v, "item") else v for v in labels], weights


def _estimates(values, codes, weights, W, confidence):
    """(estimates W^T values, their lower and upper confidence limits), rows independent within groups."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    M = group_weights(weights, codes)
    residual = values - (M.T @ values)[codes]
    counts = np.bincount(codes, weights=(weights > 0).astype(float))
    correction = np.where(counts > 1, counts / np.maximum(counts - 1, 1), np.inf)[codes]
    estimate = W.T @ values
    with np.errstate(invalid="ignore"):
        half = norm.ppf(0.5 + confidence / 2) * np.sqrt((W**2).T @ (residual**2 * correction))
    return estimate, estimate - half, estimate + half


def group_means(values, groups, sample_weight=None, confidence=0.95) -> pd.DataFrame:
    """Each group's weighted mean of ``values`` with its confidence interval.

    Parameters
    ----------
    values : array-like of shape (n,)
        A value per row (predictions, targets, losses).
    groups : array-like of shape (n,)
        Each row's protected group (any comparable labels, two groups or more).
    sample_weight : array-like of shape (n,) or None, default=None
        The rows' weights (None: equal).
    confidence : float, default=0.95
        The interval's level.

    Returns
    -------
    pandas.DataFrame
        One row per group: ``group``, ``rows`` (of positive weight), ``mean``, ``low``, ``high``.
    """
    values, codes, labels, weights = _coded(values, groups, sample_weight)
    estimate, low, high = _estimates(values, codes, weights, group_weights(weights, codes), confidence)
    rows = np.bincount(codes, weights=(weights > 0).astype(float)).astype(int)
    return pd.DataFrame({"group": labels, "rows": rows, "mean": estimate, "low": low, "high": high})


def group_gaps(y_pred, groups, sample_weight=None, confidence=0.95) -> pd.DataFrame:
    """The differences of the groups' mean predictions, mean(group h) - mean(group g) for every pair
    g < h of the sorted group labels (one pair for two groups), with their confidence intervals.

    Parameters
    ----------
    y_pred : array-like of shape (n,)
        The predictions (a classifier's: the probability of the positive class).
    groups : array-like of shape (n,)
        Each row's protected group.
    sample_weight : array-like of shape (n,) or None, default=None
        The rows' weights.
    confidence : float, default=0.95
        The intervals' level.

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``pair`` ("h - g"), ``gap``, ``low``, ``high``, ``rows`` (of both groups).
    """
    values, codes, labels, weights = _coded(y_pred, groups, sample_weight)
    estimate, low, high = _estimates(values, codes, weights, group_differences(weights, codes), confidence)
    rows = np.bincount(codes, weights=(weights > 0).astype(float)).astype(int)
    pairs = group_pairs(len(labels))
    return pd.DataFrame({"pair": [f"{labels[h]} - {labels[g]}" for g, h in pairs], "gap": estimate, "low": low,
                         "high": high, "rows": [rows[g] + rows[h] for g, h in pairs]})


def group_losses(y_true, y_pred, groups, loss="squared", sample_weight=None, confidence=0.95) -> pd.DataFrame:
    """Each group's mean loss with its confidence interval.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        The targets and the predictions.
    groups : array-like of shape (n,)
        Each row's protected group.
    loss : {"squared", "absolute"} or callable, default="squared"
        The loss of a row: (y_pred - y_true)^2, |y_pred - y_true|, or ``loss(y_true, y_pred)`` (arrays).
    sample_weight : array-like of shape (n,) or None, default=None
        The rows' weights.
    confidence : float, default=0.95
        The intervals' level.

    Returns
    -------
    pandas.DataFrame
        One row per group: ``group``, ``rows``, ``loss``, ``low``, ``high``.
    """
    if not callable(loss) and loss not in LOSSES:
        raise ValueError(f"loss must be 'squared', 'absolute' or a callable (y_true, y_pred) -> losses, got {loss!r}")
    y_true, y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred must have one shape, got {y_true.shape} and {y_pred.shape}")
    losses = np.asarray((LOSSES[loss] if isinstance(loss, str) else loss)(y_true, y_pred), dtype=float)
    return group_means(losses, groups, sample_weight, confidence).rename(columns={"mean": "loss"})


#: the rates of :func:`group_rates`: name -> (which true class the rate counts over: None for every row)
RATES = {"selection": None, "true positive": True, "false positive": False}


def _positives(y_true, y_pred, pos_label):
    """(y_true == pos_label, y_pred == pos_label) as floats; pos_label None: the larger of two labels (a
    classifier's ``classes_[1]``)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred must have one shape, got {y_true.shape} and {y_pred.shape}")
    if pos_label is None:
        labels = np.unique(np.concatenate([y_true, y_pred]))
        if len(labels) != 2:
            raise ValueError(f"the labels are {labels[:5].tolist()}: give pos_label, the class whose rates are "
                             f"compared")
        pos_label = labels[1]
    return (y_true == pos_label).astype(float), (y_pred == pos_label).astype(float)


def group_rates(y_true, y_pred, groups, pos_label=None, sample_weight=None, confidence=0.95) -> pd.DataFrame:
    """Each group's selection rate (the share of its rows predicted ``pos_label``), true-positive rate (of its
    rows of ``pos_label``) and false-positive rate (of its other rows), with confidence intervals: fairlearn's
    ``selection_rate``, ``true_positive_rate`` and ``false_positive_rate`` per group.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        The labels and the predicted labels (``predict()``).
    groups : array-like of shape (n,)
        Each row's protected group.
    pos_label : label or None, default=None
        The positive class; None: the larger of the two labels (``classes_[1]``).
    sample_weight : array-like of shape (n,) or None, default=None
        The rows' weights.
    confidence : float, default=0.95
        The intervals' level.

    Returns
    -------
    pandas.DataFrame
        One row per rate and group: ``rate`` ("selection", "true positive", "false positive"), ``group``,
        ``rows`` (counted in the rate), ``value``, ``low``, ``high``.
    """
    actual, predicted = _positives(y_true, y_pred, pos_label)
    weights = np.ones(len(actual)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    frames = []
    for rate, among in RATES.items():
        over = weights if among is None else weights * (actual == among)
        means = group_means(predicted, groups, over, confidence).rename(columns={"mean": "value"})
        frames.append(means.assign(rate=rate)[["rate", "group", "rows", "value", "low", "high"]])
    return pd.concat(frames, ignore_index=True)


def rate_gaps(y_true, y_pred, groups, pos_label=None, sample_weight=None, confidence=0.95) -> pd.DataFrame:
    """The differences of the groups' rates (:func:`group_rates`), group h minus group g for every pair g < h,
    with confidence intervals: the selection rates' (the rows of ``parity`` on a classifier) and the
    true-positive and false-positive rates' (those of ``equalized_odds``).

    Returns
    -------
    pandas.DataFrame
        One row per rate and pair: ``rate``, ``pair`` ("h - g"), ``gap``, ``low``, ``high``, ``rows``.
    """
    actual, predicted = _positives(y_true, y_pred, pos_label)
    weights = np.ones(len(actual)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    frames = []
    for rate, among in RATES.items():
        over = weights if among is None else weights * (actual == among)
        frames.append(group_gaps(predicted, groups, over, confidence).assign(rate=rate))
    return pd.concat(frames, ignore_index=True)[["rate", "pair", "gap", "low", "high", "rows"]]


def demographic_parity_difference(y_true, y_pred, groups, pos_label=None, sample_weight=None) -> float:
    """The largest group's selection rate minus the smallest (fairlearn's ``demographic_parity_difference``)."""
    rates = group_rates(y_true, y_pred, groups, pos_label, sample_weight)
    selection = rates.loc[rates["rate"] == "selection", "value"]
    return float(selection.max() - selection.min())


def equalized_odds_difference(y_true, y_pred, groups, pos_label=None, sample_weight=None) -> float:
    """The larger of the spreads (largest minus smallest over the groups) of the true-positive and of the
    false-positive rates (fairlearn's ``equalized_odds_difference``)."""
    rates = group_rates(y_true, y_pred, groups, pos_label, sample_weight)
    spreads = rates[rates["rate"] != "selection"].groupby("rate")["value"].agg(lambda v: v.max() - v.min())
    return float(spreads.max())


def constraint_report(model, X, y, sensitive_features=None, sample_weight=None) -> list[dict]:
    """A fitted tree's constraint report on the rows (X, y): every constraint row's value for the soft
    model and for ``predict()`` on them and whether it holds there, as ``constraint_report_`` gives it
    for the training rows.

    Parameters
    ----------
    model : SoftRegressionTree or SoftClassificationTree
        A fitted tree (a SoftRegressionTreeCV: its ``best_estimator_``).
    X : array-like or DataFrame of shape (n, p)
        The rows, with the features of the fit (a DataFrame may hold the column of ``sensitive_features``).
    y : array-like of shape (n,)
        Their targets (a classifier's: labels of ``classes_``).
    sensitive_features : array-like of shape (n,), str or None, default=None
        Their groups (labels of the fit's ``groups_``), or the name of a column of X; needed by the
        group constraints.
    sample_weight : array-like of shape (n,) or None, default=None
        The rows' weights.

    Returns
    -------
    list of dict
        One dict per constraint row: ``constraint``, ``row``, ``bound``, ``soft``, ``predict``, ``holds``,
        ``holds_soft``, ``holds_predict``.

    Raises
    ------
    ValueError
        If a group or a class is not one of the fit's.
    """
    from .estimators.constrained import report_on

    model = getattr(model, "best_estimator_", model)
    return report_on(model, X, y, sensitive_features, sample_weight)


__all__ = ["constraint_report", "demographic_parity_difference", "equalized_odds_difference", "group_gaps",
           "group_losses", "group_means", "group_rates", "rate_gaps"]
