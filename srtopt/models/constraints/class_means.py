"""Constraints of a soft classification tree on its decisions: the rates at which ``predict()`` gives one class c
over some of the training rows (:class:`ClassRates`), each a soft mean whose values are c's probability
p_c(u_il) at each leaf (:class:`~..terms.class_losses.ClassProbability`).

* :class:`ClassRecall` -- at least ``lower`` of a class's (weighted) training rows classified as that class, the
  per-class accuracy constraints of the ORCT line (Blanquero et al.); :class:`GroupRecall` -- the same in every
  protected group;
* :class:`RateParity` -- ``parity`` on a classifier: the protected groups' rates of predicting ``classes_[1]``
  (fairlearn's selection rates) within ``gap`` of each other: the demographic parity difference of
  ``predict()``;
* :class:`EqualizedOdds` -- their true-positive rates and their false-positive rates within ``gap``: fairlearn's
  equalized odds difference of ``predict()``;
* :class:`ProbabilityParity` -- the groups' mean probabilities of ``classes_[1]`` within ``gap``, for the soft
  model and for ``predict_proba``: the parity of the scores, not of the decisions.

A decision is a step of the scores, so training carries each rate's soft counterpart, the soft model's expected
rate sum_i W_ik sum_l P_il p_lc(x_i), in the same bounds; after training the rates of ``predict()`` are made to
hold by moving each leaf's score of c (:meth:`ClassRates.margins`, :meth:`ClassRates.shifted`): a recall bound
by the least common raise (its soft rate only grows with it), the gaps by the shifts that
:func:`srtopt.training.feasibility.repair_decisions` chooses, the fewest training errors among the shifts that
meet every rate (a MILP on the training rows' decisions).  A gap then binds ``predict()``; its soft rate is
what training held.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from .soft_means import (Parity, SoftMean, WithinGap, _not_a_bound, group_differences, group_pairs,
                         group_weights)


class ClassRates(SoftMean):
    """Rows sum_i W_ik [predict(x_i) = c] within [lower_k, upper_k] on the training rows, c the class of code
    ``code`` (module docstring); subclasses give the row weights W (:meth:`columns`) and the bounds."""

    decides = True

    @property
    def code(self) -> int:
        if getattr(self, "_code", None) is None:
            raise ValueError(f"the {self.name} constraint is not in training units (Constraint.in_training_units)")
        return self._code

    def columns(self, problem) -> np.ndarray:
        """W (n, m): the weights of the rates' rows."""
        raise NotImplementedError

    def bind(self, problem):
        problem.leaf_model.class_values(self.code)  # a value leaf refuses: the rates need a classifier
        if self.needs_groups and problem.groups is None:
            raise ValueError(f"the {self.name} constraint compares the protected groups: fit(X, y, "
                             f"sensitive_features=...)")
        return self._bound(problem, self.columns(problem))

    def leaf_function(self, problem):
        return problem.leaf_model.class_values(self.code)

    def predicted_values(self, problem, prediction) -> np.ndarray:
        """1 where ``predict()`` gives the class (``prediction``: the class probabilities of every row's HBP
        leaf, (n, K)), else 0."""
        return (np.argmax(prediction, axis=1) == self.code).astype(float)

    def margins(self, problem, omega, beta) -> tuple[np.ndarray, np.ndarray]:
        """(m, leaf): each training row's margin m_i = u_ic - max_{k != c} u_ik at its HBP leaf (``predict()``
        gives c where m_i > 0, and at m_i = 0 where c is the first of the tied classes) and that leaf's index."""
        leaves = problem.tree.leaf_rows(problem.hbp_leaves(omega))
        U = problem.leaf_model.scores(problem.Xa, beta[leaves])
        full = np.column_stack([np.zeros(len(U)), U]) if U.shape[1] == 1 else U
        return full[:, self.code] - np.delete(full, self.code, axis=1).max(axis=1), leaves

    def shifted(self, problem, beta, delta) -> np.ndarray:
        """beta with the score of c raised by ``delta[l]`` in leaf l (its intercept; for two classes the logit of
        classes_[1], lowered for class 0): every margin of leaf l's rows grows by delta[l]."""
        beta, q = beta.copy(), problem.Xa.shape[1]
        if problem.leaf_model.n_classes == 2:
            beta[:, 0] += delta if self.code == 1 else -delta
        else:
            beta[:, self.code * q] += delta
        return beta


class ClassRecall(ClassRates):
    """The share of a class's training rows the soft model classifies as that class, >= ``lower``; ``predict()``
    then meets it by the least common raise of the class's score (:meth:`repair_predictions`).

    Parameters
    ----------
    lower : float
        The least recall, in (0, 1].
    **label
        ``class=LABEL``: the class (a label of ``classes_``; the spec form
        ``"class_recall:class=B,lower=0.9"``).

    Raises
    ------
    ValueError
        If ``lower`` is not in (0, 1] or the class is missing.
    """

    name = "class_recall"
    tasks = ("classification",)

    def __init__(self, lower=None, **label):
        if set(label) - {"class"} or "class" not in label:
            raise ValueError(f"{self.name} takes class=LABEL and lower=SHARE (e.g. '{self.name}:class=B,"
                             f"lower=0.9'), got {sorted(label) or 'no class'}")
        if isinstance(lower, bool) or not isinstance(lower, numbers.Real) or not 0 < lower <= 1:
            raise ValueError(f"{self.name} lower must be a share in (0, 1] (the least recall of class "
                             f"{label['class']!r}), got {lower!r}")
        self.label, self.lower_bound, self._code = label["class"], float(lower), None

    def get_params(self, deep=True) -> dict:
        return {"class": self.label, "lower": self.lower_bound}

    def describe(self) -> str:
        return f"{self.name}:class={self.label},lower={self.lower_bound:g}"

    def in_training_units(self, units):
        out = copy.copy(self)
        out._code = units.class_code(self.label, self.name)
        return out

    def columns(self, problem):
        rows = (np.asarray(problem.y) == self.code) * problem.s
        return (rows / rows.sum())[:, None]

    def repair_predictions(self, problem, omega, beta):
        """Raise the class's score by the least delta in every leaf (the intercept of its score; for two
        classes the logit, down for the first class) so that ``predict()`` classifies a share ``lower`` of
        the (weighted) training rows of the class as the class, in every row of W: its recall only grows with
        delta, and so does the soft model's."""
        margin, _ = self.margins(problem, omega, beta)
        delta = max(_least_raise(-margin, self.W[:, k], self.lower_bound) for k in range(self.n_rows))
        if delta < 0:
            return beta
        delta = delta + 1e-9 * max(1.0, abs(delta))
        return self.shifted(problem, beta, np.full(problem.tree.n_leaves, delta))

    @property
    def lower(self):
        return np.full(self.n_rows, self.lower_bound)

    @property
    def upper(self):
        return np.full(self.n_rows, np.inf)

    def row_names(self, labels):
        return [f"recall of class {self.label!r}"]


def _least_raise(shortfall, weights, share) -> float:
    """The least delta with sum_i weights_i [shortfall_i <= delta] >= share * sum_i weights_i (the rows of
    positive weight; -inf without any)."""
    rows = np.flatnonzero(weights > 0)
    if not len(rows):
        return -np.inf
    order = rows[np.argsort(shortfall[rows])]
    needed = np.searchsorted(np.cumsum(weights[order]), share * weights[order].sum() * (1 - 1e-12))
    return float(shortfall[order][min(needed, len(order) - 1)])


class GroupRecall(ClassRecall):
    """A class's recall >= ``lower`` within every protected group (one row per group), for the soft model and
    ``predict()`` (the least common raise of the class's score that meets every group's bound).

    Parameters
    ----------
    lower : float
        The least recall in each group, in (0, 1].
    **label
        ``class=LABEL``: the class (``"group_recall:class=B,lower=0.8"``).

    Raises
    ------
    ValueError
        If ``lower`` is not in (0, 1], the class is missing, or a group has no row of the class.
    """

    name = "group_recall"
    needs_groups = True

    def columns(self, problem):
        rows = (np.asarray(problem.y) == self.code) * problem.s
        return _group_columns(self.name, rows, problem.groups, f"no row of class {self.label!r}", group_weights)

    def row_names(self, labels):
        return [f"recall of class {self.label!r} in group {label}" for label in labels]


def _group_columns(owner, weights, groups, missing, columns) -> np.ndarray:
    """``columns(weights, groups)``, a group with no row of positive weight refused in one line that names it."""
    counts = np.bincount(groups, weights=(weights > 0).astype(float), minlength=int(groups.max()) + 1)
    if np.any(counts == 0):
        raise ValueError(f"{owner}: group {int(np.argmin(counts))} (its code) has {missing}; the rate is undefined")
    return columns(weights, groups)


class RateParity(WithinGap, ClassRates):
    """``parity:gap=d`` on a classifier: |the rate of predicting ``classes_[1]`` in group h - in group g| <= gap
    for every pair of groups (fairlearn's demographic parity difference of ``predict()``, two groups), the
    rates weighted by the sample weights.  Training carries the soft model's expected rates in the same bound
    (module docstring).

    Parameters
    ----------
    gap : float
        The largest difference of the groups' positive rates, in [0, 1].
    """

    name = "parity"
    tasks = ("classification",)
    needs_groups = True
    binds_soft_model = False

    def __init__(self, gap=0.0):
        why = _not_a_bound(gap, "a gap of rates lies in [0, 1]", lambda v: 0 <= v <= 1)
        if why:
            raise ValueError(f"{self.name} gap must be a number in [0, 1] (the largest difference of the groups' "
                             f"rates), got {gap!r}: {why}")
        self.gap, self._code = float(gap), None

    def in_training_units(self, units):
        if len(units.classes) != 2:
            raise ValueError(f"{self.name} compares the groups' rates of the positive class: it needs two classes, "
                             f"not {len(units.classes)}")
        out = copy.copy(self)
        out._code = 1
        return out

    def columns(self, problem):
        return _group_columns(self.name, problem.s, problem.groups, "no row", group_differences)

    def row_names(self, labels):
        return [f"positive rate({labels[h]}) - positive rate({labels[g]})" for g, h in group_pairs(len(labels))]


class EqualizedOdds(RateParity):
    """|true-positive rate of group h - of group g| <= gap and the same of the false-positive rates, for every
    pair of groups: fairlearn's equalized odds difference of ``predict()`` (two classes, ``classes_[1]`` the
    positive one), the rates over each group's rows of the positive and of the negative class.

    Parameters
    ----------
    gap : float
        The largest difference of the groups' true-positive rates and of their false-positive rates, in [0, 1].
    """

    name = "equalized_odds"

    def columns(self, problem):
        positive = np.asarray(problem.y) == 1
        return np.column_stack([
            _group_columns(self.name, problem.s * positive, problem.groups, "no row of the positive class",
                           group_differences),
            _group_columns(self.name, problem.s * ~positive, problem.groups, "no row of the negative class",
                           group_differences)])

    def row_names(self, labels):
        pairs = group_pairs(len(labels))
        return [f"{rate}({labels[h]}) - {rate}({labels[g]})" for rate in ("TPR", "FPR") for g, h in pairs]


class ProbabilityParity(Parity):
    """|mean probability of ``classes_[1]`` over group h - over group g| <= gap for every pair of groups (two
    classes), for the soft model and for ``predict_proba`` (the leaves polished on the HBP routing): the
    parity of the scores, which a classifier's ``parity`` (:class:`RateParity`) carries in training for the
    parity of its decisions.

    Parameters
    ----------
    gap : float
        The largest difference of the groups' mean probabilities, >= 0.
    """

    name = "probability_parity"
    tasks = ("classification",)

    def in_training_units(self, units):
        return ProbabilityParity(self.gap)

    def row_names(self, labels):
        return [f"mean probability({labels[h]}) - mean probability({labels[g]})" for g, h in group_pairs(len(labels))]
