"""Soft means: constraint rows g_k = sum_i W_ik sum_l P_il A_kl (v(yhat_il, y_i) - c_k) on the soft model."""

from __future__ import annotations

import copy
import numbers

import numpy as np

from ... import kernels
from ..terms.operations import NUMPY
from .base import Constraint


class SoftMean(Constraint):
    """Rows g_k(omega, beta) = sum_i W_ik sum_l P_il A_kl (v_il - c_k), lower_k <= g_k <= upper_k.

    The values v_il of a row at a leaf come from the term's leaf function (:meth:`leaf_function`, a
    leaf model of :mod:`..leaves` whose "losses" are the values): by default
    :class:`~..leaves.LinearValues`, v(yhat_il, y_i) of a regression leaf, which subclasses write
    once (:meth:`leaf_values`, over an operations namespace of :mod:`.terms`) with its numpy
    derivatives in yhat; a classification term gives a class's probability.  Subclasses also
    give the row weights W (:meth:`row_weights`) and the bounds.  A row sums every leaf as it is
    (A = 1, c = 0) unless :meth:`leaf_weights` and :meth:`shifts` say otherwise: with A_k one leaf's
    indicator and c_k a bound b, row k says that the leaf's W-weighted mean of v is below (or
    above) b, whatever the leaf's share of the rows.  ``linear``: v is linear in the leaf
    coefficients (then g is linear in beta)."""

    linear = False
    #: whether a row holds only when it holds for the soft model as well as for ``predict()`` (False: the row
    #: bounds ``predict()``, and the soft model's value is what training carried for it)
    binds_soft_model = True

    def leaf_values(self, yhat, y, ops):
        raise NotImplementedError

    def leaf_derivative(self, yhat, y):
        raise NotImplementedError

    def leaf_second_derivative(self, yhat, y):
        raise NotImplementedError

    def row_weights(self, s, groups) -> np.ndarray:
        raise NotImplementedError

    def leaf_weights(self, n_leaves: int) -> np.ndarray:
        """A (n_rows, n_leaves): the weight of each leaf in each row (1: every leaf counts)."""
        return np.ones((self.n_rows, n_leaves))

    def shifts(self) -> np.ndarray:
        """c (n_rows,): what each row subtracts from every value (0)."""
        return np.zeros(self.n_rows)

    def user_scale(self, units) -> float:
        """The factor from the rows' training units to the user's (:class:`~.base.TrainingUnits`): the
        report shows g times it."""
        return 1.0

    def leaf_function(self, problem):
        """The leaf model that gives v_il and its derivatives (module docstring): the problem's leaf model's
        ``mean_values`` of this term."""
        return problem.leaf_model.mean_values(self)

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
        return self._bound(problem, self.row_weights(problem.s, problem.groups))

    def _bound(self, problem, W):
        """A copy bound to ``problem`` with the row weights W (n, n_rows)."""
        out = copy.copy(self)
        out._W = np.asarray(W, float)
        out._leaves = out.leaf_function(problem)
        A, c = out.leaf_weights(problem.tree.n_leaves), out.shifts()
        unique, inverse = np.unique(np.column_stack([A, c]), axis=0, return_inverse=True)
        out._groups = [(np.flatnonzero(np.ravel(inverse) == g), row[:-1], float(row[-1]))
                       for g, row in enumerate(unique)]
        return out

    @property
    def leaves(self):
        """The leaf function of the bound constraint (:meth:`leaf_function`)."""
        return self._bound_attribute("_leaves")

    @property
    def W(self) -> np.ndarray:
        """The row weights W (n, m) of the bound constraint."""
        return self._bound_attribute("_W")

    @property
    def row_groups(self) -> list:
        """[(rows, a, c)]: the rows that sum the same values a_l (v_il - c) (A_k = a, c_k = c), together
        (one group when every row sums every leaf as it is)."""
        return self._bound_attribute("_groups")

    def _bound_attribute(self, name):
        try:
            return getattr(self, name)
        except AttributeError:
            raise ValueError(f"the {self.name} constraint is not bound to training data (Constraint.bind)") from None

    @property
    def n_rows(self) -> int:
        return self.W.shape[1]

    def values(self, problem, omega, beta) -> np.ndarray:
        """g (m,) at (omega, beta) over every training row of ``problem``."""
        V = self.leaves.losses(problem.Xa, problem.targets, beta)
        P = problem.leaf_probabilities(omega)
        g = np.empty(self.n_rows)
        for rows, a, c in self.row_groups:
            g[rows] = self.W[:, rows].T @ np.sum(P * shaped(V, a, c), axis=1)
        return g

    def jacobian(self, problem, omega, beta) -> np.ndarray:
        """dg/dx (m, omega.size + beta.size), x = (vec omega, vec beta) row-major."""
        V, D = self.leaves.losses(problem.Xa, problem.targets, beta, order=1)
        S = problem.split_probabilities(omega)
        J = np.empty((self.n_rows, omega.size + beta.size))
        for rows, a, c in self.row_groups:
            _, G, P = kernels.subtree_loss(S, shaped(V, a, c), np.ones(len(V)), problem.mu, True, True)
            for k in rows:
                w = self.W[:, k, None]
                d_omega = (w * G).T @ problem.Z
                J[k] = np.concatenate([d_omega.ravel(), self.leaves.gradient(problem.Xa, w * P * a, D).ravel()])
        return J

    def predicted_rows(self, problem, prediction, leaves) -> np.ndarray:
        """g (m,) of ``predict()``: its values v_i (:meth:`predicted_values`) at each training row's HBP leaf
        (``leaves``: leaf indices 0..n_leaves-1)."""
        v = self.predicted_values(problem, prediction)
        g = np.empty(self.n_rows)
        for rows, a, c in self.row_groups:
            g[rows] = self.W[:, rows].T @ shaped(v, a[leaves], c)
        return g

    def report_values(self, problem, omega, beta, prediction, leaves) -> tuple:
        """(rows of the soft model, rows of ``predict()``, lower, upper) in training units, as the report
        compares them (:meth:`values`, :meth:`predicted_rows` and the bounds)."""
        return (self.values(problem, omega, beta), self.predicted_rows(problem, prediction, leaves), self.lower,
                self.upper)


def shaped(V, a, c):
    """a (V - c) over V's leaf columns (V itself when a = 1 and c = 0: a soft mean's common row)."""
    if c == 0 and np.all(a == 1):
        return V
    return a * (V - c)


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
        W = np.zeros((len(problem.y), len(self.rows)))
        W[self.rows, np.arange(len(self.rows))] = 1.0
        return self._bound(problem, W)

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


def group_weights(s, groups) -> np.ndarray:
    """The weights of each group's mean: column g holds the weights s_i of group g's rows, normalized
    to sum 1 within the group, so that ``group_weights(s, groups).T @ v`` are the groups' weighted means
    of v (the row weights W of the group constraints).

    Parameters
    ----------
    s : ndarray of shape (n,)
        The rows' weights, >= 0.
    groups : ndarray of int of shape (n,)
        Each row's group code, 0, 1, ...

    Returns
    -------
    ndarray of shape (n, number of groups)

    Raises
    ------
    ValueError
        If a group code has no row of positive weight.

    Examples
    --------
    >>> group_weights(np.array([1.0, 1.0, 2.0]), np.array([0, 1, 1]))
    array([[1.        , 0.        ],
           [0.        , 0.33333333],
           [0.        , 0.66666667]])
    """
    s, groups = np.asarray(s, float), np.asarray(groups, dtype=np.int64)
    n_groups = int(groups.max()) + 1
    M = np.zeros((len(s), n_groups))
    M[np.arange(len(s)), groups] = s
    mass = M.sum(axis=0)
    if np.any(mass <= 0):
        raise ValueError(f"group {int(np.flatnonzero(mass <= 0)[0])} has no row of positive weight")
    return M / mass


def group_pairs(n_groups: int) -> list[tuple[int, int]]:
    """The pairs (g, h), g < h, of the group differences, in their order (one pair for two groups)."""
    return [(g, h) for g in range(n_groups) for h in range(g + 1, n_groups)]


def group_differences(s, groups) -> np.ndarray:
    """The weights of the differences of the groups' means, one column per pair (g, h) of
    :func:`group_pairs`: group h's mean minus group g's (:func:`group_weights`).

    Examples
    --------
    >>> group_differences(np.ones(4), np.array([0, 0, 1, 1])).T @ np.array([1.0, 3.0, 4.0, 6.0])
    array([3.])
    """
    M = group_weights(s, groups)
    return np.column_stack([M[:, h] - M[:, g] for g, h in group_pairs(M.shape[1])])


class WithinGap:
    """Rows bounded on both sides by the constraint's ``gap``: -gap <= row <= gap (a gap between groups)."""

    @property
    def lower(self):
        return np.full(self.n_rows, -self.gap)

    @property
    def upper(self):
        return np.full(self.n_rows, self.gap)


class Parity(WithinGap, MeanPrediction):
    """|mean soft prediction over group h - mean over group g| <= gap for every pair of groups
    g < h (one row for two groups: group 1's mean minus group 0's), the means weighted by the
    sample weights.  On a classifier of two classes the prediction is the probability of the second class
    (:class:`~.class_means.ProbabilityParity`); a classifier's ``parity`` bounds the rates of its decisions
    instead (:class:`~.class_means.RateParity`).

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
        """The leaf model's output values (``output_values``): the predictions of a value leaf, the probability
        of the second class of a two-class leaf (the parity of the mean probability)."""
        return problem.leaf_model.output_values(self)

    def predicted_values(self, problem, prediction):
        """The rows' values for ``predict()``: the leaf model's ``mean_output`` of its prediction (the value
        itself, or the probability of the second class)."""
        return problem.leaf_model.mean_output(prediction)

    def row_weights(self, s, groups):
        return group_differences(s, groups)

    def row_names(self, labels):
        return [f"mean({labels[h]}) - mean({labels[g]})" for g, h in group_pairs(len(labels))]

    def user_scale(self, units):
        return units.y_std


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
    tasks = ("regression",)
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
        loss = problem.leaf_model.residual_loss
        if loss is None:
            raise ValueError(f"group_loss bounds each group's mean loss of the residual: the "
                             f"{type(problem.leaf_model).__name__} leaf model has no loss of a residual "
                             f"(residual_loss); bound a RowMean of its values instead")
        out = super().bind(problem)
        out._loss = loss
        return out

    def row_weights(self, s, groups):
        return group_weights(s, groups)

    def user_scale(self, units):
        return units.y_std ** (units.loss_degree or 0)

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
