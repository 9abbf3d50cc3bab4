"""Soft means: constraint rows g_k = sum_i W_ik sum_l P_il v(yhat_il, y_i) on the soft model."""

from __future__ import annotations

import copy
import numbers

import numpy as np

from ... import kernels
from ..leaves import ClassLeaves, LinearValues
from ..terms.class_losses import ClassProbability
from ..terms.operations import NUMPY
from .base import Constraint


class SoftMean(Constraint):
    """Rows g_k(omega, beta) = sum_i W_ik sum_l P_il v_il, lower_k <= g_k <= upper_k.

    The values v_il of a row at a leaf come from the term's leaf function (:meth:`leaf_function`, a
    leaf model of :mod:`..leaves` whose "losses" are the values): by default
    :class:`~..leaves.LinearValues`, v(yhat_il, y_i) of a regression leaf, which subclasses write
    once (:meth:`leaf_values`, over an operations namespace of :mod:`.terms`) with its numpy
    derivatives in yhat; a classification term gives a class's probability.  Subclasses also
    give the row weights W (:meth:`row_weights`) and the bounds.  ``linear``: v is linear in the
    leaf coefficients (then g is linear in beta)."""

    linear = False

    def leaf_values(self, yhat, y, ops):
        raise NotImplementedError

    def leaf_derivative(self, yhat, y):
        raise NotImplementedError

    def leaf_second_derivative(self, yhat, y):
        raise NotImplementedError

    def row_weights(self, s, groups) -> np.ndarray:
        raise NotImplementedError

    def leaf_function(self, problem):
        """The leaf model that gives v_il and its derivatives (module docstring)."""
        return LinearValues(self)

    def predicted_values(self, problem, prediction) -> np.ndarray:
        """v_i of ``predict()``'s prediction of every training row (training units), whose W-weighted sums
        the report compares with the bounds: v(prediction_i, y_i)."""
        return self.leaf_values(np.asarray(prediction)[:, None], problem.y[:, None], NUMPY)[:, 0]

    @property
    def lower(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def upper(self) -> np.ndarray:
        raise NotImplementedError

    def row_names(self, labels) -> list[str]:
        raise NotImplementedError

    def bind(self, problem):
        if self.needs_groups and problem.groups is None:
            raise ValueError(f"the {self.name} constraint needs the protected groups: fit(X, y, "
                             f"sensitive_features=...)")
        out = copy.copy(self)
        out._W = self.row_weights(problem.s, problem.groups)
        out._leaves = self.leaf_function(problem)
        return out

    @property
    def leaves(self):
        """The leaf function of the bound constraint (:meth:`leaf_function`)."""
        try:
            return self._leaves
        except AttributeError:
            raise ValueError(f"the {self.name} constraint is not bound to training data (Constraint.bind)") from None

    @property
    def W(self) -> np.ndarray:
        """The row weights W (n, m) of the bound constraint."""
        try:
            return self._W
        except AttributeError:
            raise ValueError(f"the {self.name} constraint is not bound to training data (Constraint.bind)") from None

    @property
    def n_rows(self) -> int:
        return self.W.shape[1]

    def values(self, problem, omega, beta) -> np.ndarray:
        """g (m,) at (omega, beta) over every training row of ``problem``."""
        V = self.leaves.losses(problem.Xa, problem.targets, beta)
        return self.W.T @ np.sum(problem.leaf_probabilities(omega) * V, axis=1)

    def jacobian(self, problem, omega, beta) -> np.ndarray:
        """dg/dx (m, omega.size + beta.size), x = (vec omega, vec beta) row-major."""
        V, D = self.leaves.losses(problem.Xa, problem.targets, beta, order=1)
        S = problem.split_probabilities(omega)
        _, G, P = kernels.subtree_loss(S, V, np.ones(len(V)), problem.mu, True, True)
        rows = []
        for w in self.W.T:
            d_omega = (w[:, None] * G).T @ problem.Z
            d_beta = self.leaves.gradient(problem.Xa, w[:, None] * P, D)
            rows.append(np.concatenate([d_omega.ravel(), d_beta.ravel()]))
        return np.array(rows)


class MeanPrediction(SoftMean):
    """Soft means of the predictions: v(yhat, y) = yhat (g is linear in beta)."""

    linear = True

    def leaf_values(self, yhat, y, ops):
        return yhat + 0.0 * y

    def leaf_derivative(self, yhat, y):
        return np.ones(np.broadcast_shapes(np.shape(yhat), np.shape(y)))

    def leaf_second_derivative(self, yhat, y):
        return np.zeros(np.broadcast_shapes(np.shape(yhat), np.shape(y)))


class HeldPredictions(MeanPrediction):
    """Some rows' predictions kept beyond the bounds they are clipped to: yhat_i <= lower bound of the
    range (a row clipped there) or >= its upper bound, one row each.  Used on hard predictions
    (:class:`Routing`) when the constraints must hold for clipped predictions
    (:func:`srtopt.training.feasibility.polish`).

    Parameters
    ----------
    rows : ndarray of int
        The training rows held.
    lower, upper : ndarray
        Their bounds (training units): (-inf, low] for a row clipped at the low end, [high, inf) at the high end.
    """

    name = "held_predictions"

    def __init__(self, rows, lower, upper):
        self.rows, self._lower, self._upper = np.asarray(rows), np.asarray(lower, float), np.asarray(upper, float)

    def get_params(self, deep=True) -> dict:
        return {"rows": self.rows}

    @property
    def key(self) -> tuple:
        return (self.name, len(self.rows))

    def bind(self, problem):
        out = copy.copy(self)
        out._W = np.zeros((len(problem.y), len(self.rows)))
        out._W[self.rows, np.arange(len(self.rows))] = 1.0
        out._leaves = self.leaf_function(problem)
        return out

    @property
    def lower(self):
        return self._lower

    @property
    def upper(self):
        return self._upper

    def row_names(self, labels):
        return [f"prediction of row {i}" for i in self.rows]



def _not_a_bound(value, out_of_range: str, in_range) -> str:
    """Why ``value`` (a number, or a string of one: a spec's "nan") is no bound of a soft mean ("" if
    it is one): not a number, not finite, or ``out_of_range`` (when ``in_range(value)`` fails)."""
    try:
        value = float(value) if isinstance(value, str) else value
    except ValueError:
        return "not a number"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return "not a number"
    if not np.isfinite(value):
        return "not a finite number"
    return "" if in_range(value) else out_of_range


def _group_masses(s, groups):
    """(weights of each group's rows, normalized to sum 1 within the group) as columns (n, G)."""
    n_groups = int(groups.max()) + 1
    M = np.zeros((len(s), n_groups))
    M[np.arange(len(s)), groups] = s
    mass = M.sum(axis=0)
    if np.any(mass <= 0):
        raise ValueError(f"group {int(np.flatnonzero(mass <= 0)[0])} has no row of positive weight")
    return M / mass


class Parity(MeanPrediction):
    """|mean soft prediction over group h - mean over group g| <= gap for every pair of groups
    g < h (one row for two groups: group 1's mean minus group 0's), the means weighted by the
    sample weights.  With two classes the prediction is the probability of the second class: the
    groups' rates of positive predictions of the soft model and of ``predict_proba``.

    Parameters
    ----------
    gap : float, default=0.0
        The largest difference between the groups' mean predictions, in y's units, >= 0.

    Raises
    ------
    ValueError
        If ``gap`` is negative or not finite.
    """

    name = "parity"
    needs_groups = True

    def __init__(self, gap=0.0):
        why = _not_a_bound(gap, "a negative gap cannot be met", lambda v: v >= 0)
        if why:
            raise ValueError(f"parity gap must be a number >= 0 in y's units (|mean prediction of group 1 - of "
                             f"group 0| <= gap), got {gap!r}: {why}")
        self.gap = float(gap)

    def in_training_units(self, units):
        return Parity(self.gap / units.y_std)

    def leaf_function(self, problem):
        """The predictions (regression), or the probability of the second class (two classes: parity of
        the positive rate)."""
        leaves = problem.leaf_model
        if leaves.task != "classification":
            return super().leaf_function(problem)
        if leaves.n_classes != 2:
            raise ValueError(f"parity compares the groups' rates of the positive class: it needs two classes, not "
                             f"{leaves.n_classes}")
        return ClassLeaves(ClassProbability(1), 2, leaves.kind)

    def predicted_values(self, problem, prediction):
        """The rows' values for ``predict()``: its prediction (regression), or its probability of the second
        class (``prediction``: the class probabilities of every row's HBP leaf, (n, 2))."""
        if problem.leaf_model.task == "classification":
            return np.asarray(prediction)[:, 1]
        return super().predicted_values(problem, prediction)

    def row_weights(self, s, groups):
        M = _group_masses(s, groups)
        pairs = [(g, h) for g in range(M.shape[1]) for h in range(g + 1, M.shape[1])]
        return np.column_stack([M[:, h] - M[:, g] for g, h in pairs])

    @property
    def lower(self):
        return np.full(self.n_rows, -self.gap)

    @property
    def upper(self):
        return np.full(self.n_rows, self.gap)

    def row_names(self, labels):
        return [f"mean({labels[h]}) - mean({labels[g]})" for g in range(len(labels)) for h in range(g + 1, len(labels))]


class GroupLoss(SoftMean):
    """Each group's mean loss of the soft model <= bound: sum_i W_ig sum_l P_il loss(yhat_il - y_i)
    with W_ig the group's normalized sample weights (bounded group loss).

    Parameters
    ----------
    bound : float
        The largest mean loss of a group, > 0: for the squared loss its mean squared error in
        y's units squared (for the absolute loss in y's units; for other losses in units of the
        standardized residual).

    Raises
    ------
    ValueError
        If ``bound`` is not a positive finite number.
    """

    name = "group_loss"
    needs_groups = True

    def __init__(self, bound=None):
        why = _not_a_bound(bound, "no model has a negative loss, and 0 needs an exact fit", lambda v: v > 0)
        if why:
            raise ValueError(f"group_loss bound must be a number > 0 (each group's mean loss <= bound), got "
                             f"{bound!r}: {why}")
        self.bound = float(bound)

    def in_training_units(self, units):
        degree = units.loss_degree
        return GroupLoss(self.bound / units.y_std**degree if degree else self.bound)

    def bind(self, problem):
        out = super().bind(problem)
        out._loss = problem.loss
        return out

    def row_weights(self, s, groups):
        return _group_masses(s, groups)

    def leaf_function(self, problem):
        """The training loss itself: R_il of the problem's leaf model."""
        return problem.leaf_model

    @property
    def lower(self):
        return np.full(self.n_rows, -np.inf)

    @property
    def upper(self):
        return np.full(self.n_rows, self.bound)

    def row_names(self, labels):
        return [f"loss({label})" for label in labels]

    def leaf_values(self, yhat, y, ops):
        return self._loss.expression(yhat - y, ops)

    def leaf_derivative(self, yhat, y):
        return self._loss.derivative(yhat - y)

    def leaf_second_derivative(self, yhat, y):
        return self._loss.second_derivative(yhat - y)
