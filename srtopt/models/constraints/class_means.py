"""Constraints of a soft classification tree on its class probabilities (soft means whose values
are a class's probability p_c(u_il) at each leaf, :class:`~..terms.class_losses.ClassProbability`).

* :class:`ClassRecall` -- at least ``lower`` of a class's (weighted) training rows classified as
  that class: sum_{i of class c} s_i sum_l P_il p_lc(x_i) / sum_{i of class c} s_i >= lower on the
  soft model; the per-class accuracy constraints of the ORCT line (Blanquero et al.).  The
  estimator then makes ``predict()`` meet it too (its most probable class).

Parity of the positive rate between groups is :class:`~.soft_means.Parity` on a two-class problem.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from .soft_means import SoftMean


class ClassRecall(SoftMean):
    """The share of a class's training rows the soft model classifies as that class, >= ``lower``.

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
            raise ValueError(f"class_recall takes class=LABEL and lower=SHARE (e.g. 'class_recall:class=B,"
                             f"lower=0.9'), got {sorted(label) or 'no class'}")
        if isinstance(lower, bool) or not isinstance(lower, numbers.Real) or not 0 < lower <= 1:
            raise ValueError(f"class_recall lower must be a share in (0, 1] (the least recall of class "
                             f"{label['class']!r}), got {lower!r}")
        self.label, self.lower_bound, self._code = label["class"], float(lower), None

    def get_params(self, deep=True) -> dict:
        return {"class": self.label, "lower": self.lower_bound}

    def describe(self) -> str:
        return f"class_recall:class={self.label},lower={self.lower_bound:g}"

    def in_training_units(self, units):
        out = copy.copy(self)
        out._code = units.class_code(self.label, "class_recall")
        return out

    @property
    def code(self) -> int:
        if self._code is None:
            raise ValueError("the class_recall constraint is not in training units (Constraint.in_training_units)")
        return self._code

    def bind(self, problem):
        problem.leaf_model.class_values(self.code)  # a value leaf refuses: class_recall needs a classifier
        rows = (np.asarray(problem.y) == self.code) * problem.s
        return self._bound(problem, (rows / rows.sum())[:, None])

    def leaf_function(self, problem):
        return problem.leaf_model.class_values(self.code)

    def repair_predictions(self, problem, omega, beta):
        """Raise the class's score by the least delta in every leaf (the intercept of its score; for two
        classes the logit, down for the first class) so that ``predict()`` classifies a share ``lower`` of
        the (weighted) training rows of the class as the class: its recall only grows with delta, and so
        does the soft model's."""
        leaves, c = problem.leaf_model, self.code
        rows = np.flatnonzero(np.asarray(problem.y) == c)
        leaf_rows = problem.tree.leaf_rows(problem.hbp_leaves(omega)[rows])
        U = leaves.scores(problem.Xa[rows], beta[leaf_rows])
        full = np.column_stack([np.zeros(len(rows)), U]) if leaves.n_classes == 2 else U
        margin = np.delete(full, c, axis=1).max(axis=1) - full[:, c]  # the shift that makes c the most probable
        order = np.argsort(margin)
        weights = problem.s[rows][order]
        needed = np.searchsorted(np.cumsum(weights), self.lower_bound * weights.sum() * (1 - 1e-12))
        delta = margin[order][min(needed, len(order) - 1)]
        if delta < 0:
            return beta
        delta = delta + 1e-9 * max(1.0, abs(delta))
        beta, q = beta.copy(), problem.Xa.shape[1]
        if leaves.n_classes == 2:
            beta[:, 0] += delta if c == 1 else -delta
        else:
            beta[:, c * q] += delta
        return beta

    def predicted_values(self, problem, prediction) -> np.ndarray:
        """1 where ``predict()`` classifies the row as the class (``prediction``: the class probabilities of
        every row's HBP leaf, (n, K))."""
        return (np.argmax(prediction, axis=1) == self.code).astype(float)

    @property
    def lower(self):
        return np.array([self.lower_bound])

    @property
    def upper(self):
        return np.array([np.inf])

    def row_names(self, labels):
        return [f"recall of class {self.label!r}"]
