"""Constraints written once: bounds on the coefficients, and constraints on the soft model's
group means and group losses, which every formulation of the SRT problem carries beside its
objective.

Two kinds of constraint terms:

* **variable bounds** (:class:`VariableBounds`), the same on every split and on every leaf:

  - :class:`Monotone` -- scikit-learn's ``monotonic_cst``: a feature with sign s_j = +1 (-1)
    is used by no split (omega_jt = 0) and every leaf slope on it has the sign (s_j beta_jl >= 0),
    so the HBP prediction is monotone in x_j exactly (the routing does not depend on x_j, and
    within a leaf the prediction is linear with the right sign);
  - :class:`LeafBounds` -- lower_j <= beta_jl <= upper_j on the leaf slopes of feature j.

* **soft means** (:class:`SoftMean`): rows g_k(omega, beta) = sum_i W_ik sum_l P_il v(yhat_il, y_i)
  with lower_k <= g_k <= upper_k, on the soft model the training objective E of eq. (obj) is
  written on (P_il the leaf probabilities, yhat_il = Xa_i . beta_l):

  - :class:`Parity` -- |mean soft prediction over group h - over group g| <= gap, for every pair
    of groups (v = yhat, W the differences of the groups' weighted means);
  - :class:`GroupLoss` -- each group's mean loss <= bound (v = loss(yhat - y), the training loss;
    the bounded group loss of Agarwal, Dudik and Wu 2019).

Each renders itself three ways from one definition: numpy values and Jacobians (the reference,
checked by finite differences), CasADi expressions and Pyomo expressions.  The value function v
of a soft mean is written once, over the operations namespaces of :mod:`.terms`.

A constraint is made in the user's units (y's units, features by name) and mapped to the
training problem's (x scaled to [0, 1], y standardized) by :meth:`Constraint.in_training_units`;
:meth:`Constraint.bind` attaches what it needs of the training data (the groups' weights).

A NODEC subproblem sees a soft mean as a block (:class:`SplitBlock` over omega_W,
:class:`LeafBlock` over beta_W): the constraint of the whole model over every training row,
with the other variables fixed, so that every step keeps a feasible iterate feasible.
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from .. import kernels
from .._spec import parse_spec
from ..tree import Tree
from . import casadi_backend as cb
from .terms import CASADI, NUMPY, Term

#: a row of a split block whose probability of reaching the subproblem's root is below this keeps
#: its current contribution (a change of at most REACH_FLOOR times |v|)
REACH_FLOOR = 1e-10
#: a constraint holds when its violation is at most this (training units: standardized y)
FEASIBILITY_TOL = 1e-6


@dataclass(frozen=True)
class TrainingUnits:
    """How the user's units map to the training problem's: feature j is x_j / x_scale[j] (plus a
    shift), y is y / y_std (plus a shift), the loss is homogeneous of degree ``loss_degree``
    (None: not homogeneous, bounds on it are taken in standardized units).

    Parameters
    ----------
    feature_names : tuple of str
        The names of the features, in the order of X's columns.
    x_scale : ndarray of shape (p,)
        The span of each feature (scaled x_j = (x_j - min_j) / x_scale_j).
    y_std : float
        The standard deviation of y (standardized y = (y - mean) / y_std).
    loss_degree : int or None, default=2
        Degree of homogeneity of the training loss (2 for squared, 1 for absolute).
    """

    feature_names: tuple
    x_scale: np.ndarray
    y_std: float = 1.0
    loss_degree: int | None = 2

    @classmethod
    def identity(cls, n_features: int) -> "TrainingUnits":
        """The units of a problem built by hand: features x0, x1, ..., nothing scaled."""
        return cls(tuple(f"x{j}" for j in range(n_features)), np.ones(n_features), 1.0, None)

    def feature(self, reference, owner: str) -> int:
        """The column index of a feature given by name or by index."""
        if isinstance(reference, str):
            if reference in self.feature_names:
                return self.feature_names.index(reference)
            listed = ", ".join(self.feature_names[:12]) + (", ..." if len(self.feature_names) > 12 else "")
            raise ValueError(f"{owner}: feature {reference!r} is not a column of X (columns: {listed})")
        if isinstance(reference, numbers.Integral) and not isinstance(reference, bool) \
                and 0 <= reference < len(self.feature_names):
            return int(reference)
        raise ValueError(f"{owner}: feature {reference!r} is neither a column name of X nor an index in "
                         f"0..{len(self.feature_names) - 1}")


class Constraint(Term):
    """A constraint on (omega, beta) of the SRT problem (module docstring)."""

    name = "constraint"

    def __sklearn_clone__(self) -> "Constraint":
        """A copy, for scikit-learn's ``clone`` of an estimator that holds the constraint (its
        ``__init__`` normalizes the arguments, which ``clone``'s parameter check refuses)."""
        return copy.deepcopy(self)

    def in_training_units(self, units: TrainingUnits) -> "Constraint":
        """A copy in the training problem's units, features as indices."""
        return copy.deepcopy(self)

    def bind(self, problem) -> "Constraint":
        """A copy with what it needs of the training data of ``problem`` (an SRTProblem)."""
        return copy.copy(self)

    def describe(self) -> str:
        """The constraint as a spec string."""
        options = ",".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in self.get_params().items()
                           if v is not None)
        return f"{self.name}:{options}" if options else self.name


# ------------------------------------------------------------------------------ bounds
class VariableBounds(Constraint):
    """Bounds on single coefficients, the same for every split (omega_t) and every leaf (beta_l)."""

    def split_bounds(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of one split's weights omega_t, shape (q,)."""
        return np.full(q, -np.inf), np.full(q, np.inf)

    def leaf_bounds(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of one leaf's coefficients beta_l, shape (q,)."""
        return np.full(q, -np.inf), np.full(q, np.inf)


def _check_sign(value, owner, feature):
    if isinstance(value, bool) or value not in (-1, 0, 1):
        raise ValueError(f"{owner}: the sign of feature {feature!r} must be -1, 0 or 1, got {value!r}")
    return int(value)


class Monotone(VariableBounds):
    """Prediction monotone in some features (scikit-learn's ``monotonic_cst``): for sign +1
    (increasing) or -1 (decreasing) on feature j, no split uses x_j (omega_jt = 0) and every leaf
    slope on it has that sign (s_j beta_jl >= 0).  The HBP prediction is then monotone in x_j
    for every input: the leaf a row reaches does not depend on x_j.

    Parameters
    ----------
    signs : sequence of {-1, 0, 1} or dict, default=None
        One sign per feature, or {feature name or index: sign}.
    **features
        More {feature name: sign} (the spec form, ``"monotone:weight=-1,horsepower=-1"``).

    Raises
    ------
    ValueError
        If a sign is not -1, 0 or 1, or a feature is given twice with different signs.
    """

    name = "monotone"

    def __init__(self, signs=None, **features):
        if isinstance(signs, dict) or signs is None:
            merged = dict(signs or {})
            for key, value in features.items():
                if key in merged and merged[key] != value:
                    raise ValueError(f"monotone: feature {key!r} given the contradictory signs {merged[key]} "
                                     f"and {value}")
                merged[key] = value
            for key, value in merged.items():
                _check_sign(value, "monotone", key)
            self.signs = merged
        else:
            if features:
                raise ValueError("monotone: give the signs as one sequence or by feature name, not both")
            self.signs = [_check_sign(v, "monotonic_cst", j) for j, v in enumerate(np.ravel(signs).tolist())]

    def get_params(self, deep=True) -> dict:
        return {"signs": self.signs}

    @property
    def key(self) -> tuple:
        signs = self.signs
        return (self.name, tuple(sorted(signs.items(), key=str)) if isinstance(signs, dict) else tuple(signs))

    def describe(self) -> str:
        signs = self.signs.items() if isinstance(self.signs, dict) else enumerate(self.signs)
        return "monotone:" + ",".join(f"{k}={v}" for k, v in signs if v)

    def in_training_units(self, units):
        p = len(units.feature_names)
        vector = np.zeros(p, dtype=int)
        if isinstance(self.signs, dict):
            for reference, sign in self.signs.items():
                j = units.feature(reference, "monotonic_cst")
                if vector[j] not in (0, sign):
                    raise ValueError(f"monotonic_cst: feature {units.feature_names[j]!r} given the contradictory "
                                     f"signs {vector[j]} and {sign}")
                vector[j] = sign
        else:
            if len(self.signs) != p:
                raise ValueError(f"monotonic_cst has {len(self.signs)} entries, but X has {p} features: give one "
                                 f"sign (-1, 0 or 1) per feature, or a dict by feature name")
            vector[:] = self.signs
        out = copy.copy(self)
        out.signs = vector.tolist()
        return out

    def split_bounds(self, q):
        lower, upper = super().split_bounds(q)
        fixed = np.r_[False, np.asarray(self.signs) != 0]
        lower[fixed] = upper[fixed] = 0.0
        return lower, upper

    def leaf_bounds(self, q):
        lower, upper = super().leaf_bounds(q)
        signs = np.r_[0, np.asarray(self.signs)]
        lower[signs > 0] = 0.0
        upper[signs < 0] = 0.0
        return lower, upper


class LeafBounds(VariableBounds):
    """lower_j <= beta_jl <= upper_j on the slope of feature j in every leaf, in y's units per
    unit of x_j.

    Parameters
    ----------
    bounds : dict, default=None
        {feature name or index: (lower, upper)}; None for a side without a bound.
    feature : str or int, default=None
        One feature (the spec form, ``"leaf_bounds:feature=weight,lower=-1,upper=0"``).
    lower, upper : float or None, default=None
        Its bounds.

    Raises
    ------
    ValueError
        If a bound is NaN or a lower bound exceeds its upper bound.
    """

    name = "leaf_bounds"

    def __init__(self, bounds=None, feature=None, lower=None, upper=None):
        merged = dict(bounds or {})
        if feature is not None:
            merged[feature] = (lower, upper)
        elif lower is not None or upper is not None:
            raise ValueError("leaf_bounds: lower and upper need a feature (leaf_bounds:feature=NAME,lower=..)")
        checked = {}
        for reference, pair in merged.items():
            try:
                lo, hi = (-np.inf if pair[0] is None else float(pair[0]), np.inf if pair[1] is None else float(pair[1]))
            except (TypeError, ValueError, IndexError):
                raise ValueError(f"leaf_bounds: the bounds of feature {reference!r} must be a pair (lower, upper) "
                                 f"of numbers or None, got {pair!r}") from None
            if np.isnan(lo) or np.isnan(hi) or lo > hi:
                raise ValueError(f"leaf_bounds: feature {reference!r} has lower bound {lo} above its upper bound "
                                 f"{hi} (or a NaN): no slope satisfies both")
            checked[reference] = (lo, hi)
        self.bounds = checked

    def get_params(self, deep=True) -> dict:
        return {"bounds": self.bounds}

    @property
    def key(self) -> tuple:
        return (self.name, tuple(sorted(self.bounds.items(), key=str)))

    def describe(self) -> str:
        return " ".join(f"leaf_bounds:feature={k},lower={lo:g},upper={hi:g}" for k, (lo, hi) in self.bounds.items())

    def in_training_units(self, units):
        out = copy.copy(self)
        out.bounds = {}
        for reference, (lo, hi) in self.bounds.items():
            j = units.feature(reference, "leaf_bounds")
            factor = units.x_scale[j] / units.y_std  # beta in training units = beta * x_scale_j / y_std
            out.bounds[j] = (lo * factor, hi * factor)
        return out

    def leaf_bounds(self, q):
        lower, upper = super().leaf_bounds(q)
        for j, (lo, hi) in self.bounds.items():
            lower[1 + j], upper[1 + j] = lo, hi
        return lower, upper


class FeatureSubset(VariableBounds):
    """Only some features in the tree: the split weights and leaf slopes of every other feature
    fixed to 0 (a hard budget of features, :class:`~srtopt.estimators.srt.SoftRegressionTree`'s
    ``max_features``).

    Parameters
    ----------
    keep : sequence of str or int
        The features the tree may use (names or indices).
    """

    name = "features"

    def __init__(self, keep=()):
        self.keep = list(keep)

    def get_params(self, deep=True) -> dict:
        return {"keep": self.keep}

    @property
    def key(self) -> tuple:
        return (self.name, tuple(self.keep))

    def describe(self) -> str:
        return f"features:keep={self.keep}"

    def in_training_units(self, units):
        out = copy.copy(self)
        out.keep = sorted({units.feature(reference, "features") for reference in self.keep})
        return out

    def _excluded(self, q):
        excluded = np.ones(q, dtype=bool)
        excluded[0] = False
        excluded[1 + np.asarray(self.keep, dtype=int)] = False
        return excluded

    def split_bounds(self, q):
        lower, upper = super().split_bounds(q)
        lower[self._excluded(q)] = upper[self._excluded(q)] = 0.0
        return lower, upper

    def leaf_bounds(self, q):
        return self.split_bounds(q)


# --------------------------------------------------------------------------- soft means
class SoftMean(Constraint):
    """Rows g_k(omega, beta) = sum_i W_ik sum_l P_il v(yhat_il, y_i), lower_k <= g_k <= upper_k.

    Subclasses write the value function v once (:meth:`leaf_values`, over an operations namespace
    of :mod:`.terms`), its numpy derivatives in yhat, the row weights W (:meth:`row_weights`) and
    the bounds.  ``linear``: v is linear in yhat (then g is linear in beta)."""

    linear = False

    def leaf_values(self, yhat, y, ops):
        raise NotImplementedError

    def leaf_derivative(self, yhat, y):
        raise NotImplementedError

    def leaf_second_derivative(self, yhat, y):
        raise NotImplementedError

    def row_weights(self, s, groups) -> np.ndarray:
        raise NotImplementedError

    @property
    def lower(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def upper(self) -> np.ndarray:
        raise NotImplementedError

    def row_names(self, labels) -> list[str]:
        raise NotImplementedError

    def bind(self, problem):
        if problem.groups is None:
            raise ValueError(f"the {self.name} constraint needs the protected groups: fit(X, y, "
                             f"sensitive_features=...)")
        out = copy.copy(self)
        out._W = self.row_weights(problem.s, problem.groups)
        return out

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
        V = self.leaf_values(problem.Xa @ beta.T, problem.y[:, None], NUMPY)
        return self.W.T @ np.sum(problem.leaf_probabilities(omega) * V, axis=1)

    def jacobian(self, problem, omega, beta) -> np.ndarray:
        """dg/dx (m, omega.size + beta.size), x = (vec omega, vec beta) row-major."""
        yhat, y = problem.Xa @ beta.T, problem.y[:, None]
        V, dV = self.leaf_values(yhat, y, NUMPY), self.leaf_derivative(yhat, y)
        S = problem.split_probabilities(omega)
        _, G, P = kernels.subtree_loss(S, V, np.ones(len(y)), problem.mu, True, True)
        rows = []
        for w in self.W.T:
            d_omega = (w[:, None] * G).T @ problem.Z
            d_beta = (w[:, None] * P * dV).T @ problem.Xa
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
        return out

    @property
    def lower(self):
        return self._lower

    @property
    def upper(self):
        return self._upper

    def row_names(self, labels):
        return [f"prediction of row {i}" for i in self.rows]



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
    sample weights.

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

    def __init__(self, gap=0.0):
        if isinstance(gap, bool) or not isinstance(gap, numbers.Real) or not np.isfinite(gap) or gap < 0:
            raise ValueError(f"parity gap must be a number >= 0 in y's units (|mean prediction of group 1 - of "
                             f"group 0| <= gap), got {gap!r}: a negative gap cannot be met")
        self.gap = float(gap)

    def in_training_units(self, units):
        return Parity(self.gap / units.y_std)

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

    def __init__(self, bound=None):
        if isinstance(bound, bool) or not isinstance(bound, numbers.Real) or not np.isfinite(bound) or bound <= 0:
            raise ValueError(f"group_loss bound must be a number > 0 (each group's mean loss <= bound), got "
                             f"{bound!r}: no model has a negative loss, and 0 needs an exact fit")
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


# ------------------------------------------------------------------------------ blocks
class SplitBlock:
    """A soft mean as the BN subproblem over omega_W (rooted at ``root``) sees it: g over every
    training row, the rest of the tree fixed.  With P_i(r) the probability of reaching the root r
    (fixed), g(x) = c + sum_i W_ik P_i(r) sum_{l below r} P_il|r(x) v_il, the sum the BN proxy's
    data term also has (:func:`srtopt.kernels.subtree_loss`); c holds the leaves outside the
    subtree and the rows with P_i(r) < REACH_FLOOR (at their current values)."""

    has_hessian = True

    def __init__(self, term: SoftMean, sub):
        pr, tree, root = sub.problem, sub.problem.tree, sub.root
        S = pr.split_probabilities(sub.omega)
        reach = kernels.reach_probabilities(S, tree, root)
        V = term.leaf_values(pr.Xa @ sub.beta.T, pr.y[:, None], NUMPY)
        PV = pr.leaf_probabilities(sub.omega) * V
        under = np.zeros(tree.n_leaves, dtype=bool)
        under[[tree.leaf_index(leaf) for leaf in tree.descendants_leaves(root)]] = True
        keep = reach >= REACH_FLOOR
        self.term, self.mu = term, pr.mu
        self.c = term.W.T @ (PV[:, ~under].sum(axis=1) + np.where(keep, 0.0, PV[:, under].sum(axis=1)))
        columns, self.positions = sub._subtree
        self.rows = np.flatnonzero(keep)
        self.Z, self.V = pr.Z[keep], V[keep][:, under]
        self.weights = term.W[keep] * reach[keep, None]
        self.fixed = S[keep][:, columns]
        self.local, self.n_working = sub._local_working, len(sub.working)
        self._last = (None, None)
        # the subproblem of E itself has these rows: its probabilities serve both
        self._shared = sub if np.array_equal(sub.rows, self.rows) else None
        if self._shared is not None:
            self.rows = sub.rows

    @property
    def linear(self) -> bool:
        return False

    def probabilities(self, x) -> np.ndarray:
        """p of the subtree's splits (rows ``rows``, local heap order) at x, for the last x."""
        if self._shared is not None:
            return self._shared._split_probabilities(x)
        key = np.asarray(x, float).tobytes()
        if self._last[0] != key:
            S = self.fixed.copy()
            S[:, self.positions] = kernels.split_probabilities(self.Z, np.reshape(x, (self.n_working, -1)), self.mu)
            self._last = (key, S)
        return self._last[1]

    def value(self, x) -> np.ndarray:
        S = self.probabilities(x)
        return self.c + np.array([kernels.subtree_loss(S, self.V, w, self.mu, False)[0] for w in self.weights.T])

    def jacobian(self, x) -> np.ndarray:
        _, G = kernels.subtree_loss(self.probabilities(x), self.V, np.ones(len(self.V)), self.mu)
        G = G[:, self.positions]
        return np.array([((w[:, None] * G).T @ self.Z).ravel() for w in self.weights.T])

    def hessian(self, x, lam) -> np.ndarray:
        C = kernels.branch_curvatures(self.probabilities(x), self.V, self.weights @ np.asarray(lam, float), self.mu,
                                      self.local)
        return kernels.branch_hessian(self.Z, C, self.local)

    def render(self, X, mu):
        """(g, parameter symbols) in CasADi: X (|W| x q MX) the working splits' weights; the data are
        parameters (values: :meth:`parameter_values`), padded to :func:`~.casadi_backend.padded_rows` rows."""
        n, q, m = cb.padded_rows(len(self.Z)), self.Z.shape[1], self.weights.shape[1]
        Zp, Vp, Wp = ca.MX.sym("Z_all", n, q), ca.MX.sym("V_all", n, self.V.shape[1]), ca.MX.sym("W_all", n, m)
        Fp, cp = ca.MX.sym("S_fixed", n, self.fixed.shape[1]), ca.MX.sym("c", m)
        columns = [Fp[:, a] for a in range(self.fixed.shape[1])]
        for i, position in enumerate(self.positions):
            columns[position] = cb.sigmoid(ca.mtimes(Zp, X[i, :].T), mu)
        local = Tree(self.fixed.shape[1].bit_length())
        V_root = cb.sweep(ca.horzcat(*columns), Vp, local, 1, {a: a - 1 for a in local.branch_nodes})
        return cp + ca.mtimes(Wp.T, V_root), [Zp, Vp, Wp, Fp, cp]

    def parameter_values(self) -> list:
        n = cb.padded_rows(len(self.Z))
        return [cb.pad(a, n) for a in (self.Z, self.V, self.weights, self.fixed)] + [self.c]

    def pyomo(self, X) -> list:
        """The rows of g in Pyomo: X the rows of Pyomo variables of the working splits."""
        from . import pyomo_backend as pb

        local = Tree(self.fixed.shape[1].bit_length())
        sweeps = []
        for i in range(len(self.Z)):
            split = {a: float(self.fixed[i, a - 1]) for a in local.branch_nodes}
            split.update({p + 1: pb.sigmoid(pb.linear(self.Z[i], X[k]), self.mu) for k, p in enumerate(self.positions)})
            sweeps.append(pb.point_sweep(split, [float(v) for v in self.V[i]], local, 1))
        return [float(c) + sum(float(w[i]) * s for i, s in enumerate(sweeps) if w[i] != 0)
                for c, w in zip(self.c, self.weights.T)]


@dataclass(frozen=True)
class Routing:
    """Hard predictions: the leaf of every training row (HBP, as ``predict()`` routes it), and the
    rows whose prediction is held at a value (``held`` mask, ``values`` in training units: a
    prediction clipped to the training range does not move with beta)."""

    leaves: np.ndarray
    held: np.ndarray | None = None
    values: np.ndarray | None = None

    def matrix(self, tree) -> np.ndarray:
        """The leaf indicator (n, |tau_L|), zero in the held rows."""
        P = np.zeros((len(self.leaves), tree.n_leaves))
        P[np.arange(len(self.leaves)), tree.leaf_rows(self.leaves)] = 1.0
        if self.held is not None:
            P[self.held] = 0.0
        return P


class LeafBlock:
    """A soft mean as the LN subproblem over beta_W sees it: g(x) = c + sum_k-row sum_i sum_{l in W}
    Q_kil v(Xa_i x_l, y_i) with Q_kil = W_ik P_il over every training row, omega and the other
    leaves fixed (c: their part).  With a :class:`Routing`, the same constraint on hard predictions:
    P the indicator of its leaves (``predict()``'s routing), its held rows in c at their values."""

    has_hessian = True

    def __init__(self, term: SoftMean, sub, routing: Routing | None = None):
        pr = sub.problem
        P = pr.leaf_probabilities(sub.omega) if routing is None else routing.matrix(pr.tree)
        working = np.zeros(pr.tree.n_leaves, dtype=bool)
        working[sub._working_rows] = True
        V = term.leaf_values(pr.Xa @ sub.beta[~working].T, pr.y[:, None], NUMPY)
        self.term = term
        self.c = term.W.T @ np.sum(P[:, ~working] * V, axis=1)
        if routing is not None and routing.held is not None:
            held = routing.held
            self.c = self.c + term.W[held].T @ term.leaf_values(routing.values[held], pr.y[held], NUMPY)
        P = P[:, sub._working_rows]
        keep = np.any(term.W != 0, axis=1) & np.any(P != 0, axis=1)
        self.Xa, self.y = pr.Xa[keep], pr.y[keep]
        self.Q = term.W[keep].T[:, :, None] * P[keep][None]  # Q_kil = W_ik P_il

    @property
    def linear(self) -> bool:
        return self.term.linear

    def _yhat(self, x):
        return self.Xa @ np.reshape(x, (self.Q.shape[2], -1)).T

    def value(self, x) -> np.ndarray:
        V = self.term.leaf_values(self._yhat(x), self.y[:, None], NUMPY)
        return self.c + np.einsum("kil,il->k", self.Q, V)

    def jacobian(self, x) -> np.ndarray:
        dV = self.term.leaf_derivative(self._yhat(x), self.y[:, None])
        return np.einsum("kil,ij->klj", self.Q * dV, self.Xa).reshape(len(self.Q), -1)

    def hessian(self, x, lam) -> np.ndarray:
        curvature = np.einsum("k,kil->il", np.asarray(lam, float), self.Q)
        curvature = curvature * self.term.leaf_second_derivative(self._yhat(x), self.y[:, None])
        q, m = self.Xa.shape[1], self.Q.shape[2]
        H = np.zeros((m * q, m * q))
        for l in range(m):
            H[l * q:(l + 1) * q, l * q:(l + 1) * q] = (self.Xa.T * curvature[:, l]) @ self.Xa
        return H

    def render(self, B):
        """(g, parameter symbols) in CasADi: B (|W| x q MX) the working leaves' coefficients; the data
        are parameters (values: :meth:`parameter_values`), padded to :func:`~.casadi_backend.padded_rows`
        rows."""
        n, q = cb.padded_rows(len(self.y)), self.Xa.shape[1]
        k, _, m = self.Q.shape
        Xp, yp, cp = ca.MX.sym("Xa_all", n, q), ca.MX.sym("y_all", n), ca.MX.sym("c", k)
        Qp = [ca.MX.sym(f"Q_{row}", n, m) for row in range(k)]
        V = self.term.leaf_values(ca.mtimes(Xp, B.T), ca.repmat(yp, 1, m), CASADI)
        return cp + ca.vertcat(*[ca.sum1(ca.sum2(Q * V)) for Q in Qp]), [Xp, yp, cp, *Qp]

    def parameter_values(self) -> list:
        n = cb.padded_rows(len(self.y))
        return [cb.pad(self.Xa, n), cb.pad(self.y, n), self.c, *(cb.pad(Q, n) for Q in self.Q)]

    def pyomo(self, B) -> list:
        """The rows of g in Pyomo: B the rows of Pyomo variables of the working leaves."""
        from . import pyomo_backend as pb
        from .terms import pyomo_ops

        ops = pyomo_ops()
        V = [[self.term.leaf_values(pb.linear(self.Xa[i], b), float(self.y[i]), ops) for b in B]
             for i in range(len(self.y))]
        return [float(c) + sum(float(Q[i, l]) * V[i][l] for i in range(len(self.y)) for l in range(len(B))
                               if Q[i, l] != 0) for c, Q in zip(self.c, self.Q)]


class FullBlock:
    """A soft mean over all variables x = (vec omega, vec beta) (the SRT problem of eq. obj)."""

    has_hessian = False

    def __init__(self, term: SoftMean, formulation):
        self.term, self.formulation = term, formulation

    @property
    def linear(self) -> bool:
        return False

    def value(self, x) -> np.ndarray:
        return self.term.values(self.formulation.problem, *self.formulation.split(x))

    def jacobian(self, x) -> np.ndarray:
        return self.term.jacobian(self.formulation.problem, *self.formulation.split(x))

    def render(self, S, R_of, tree):
        """(g, parameter symbols) in CasADi: ``S`` the split probabilities (n x |tau_B| MX),
        ``R_of(v)`` the leaf values v(yhat, y) as an n x |tau_L| MX; the weights W are a parameter."""
        Wp = ca.MX.sym("W", *self.term.W.shape)
        V = R_of(lambda yhat, y: self.term.leaf_values(yhat, y, CASADI))
        V_root = cb.sweep(S, V, tree, 1, {t: tree.branch_index(t) for t in tree.branch_nodes})
        return ca.mtimes(Wp.T, V_root), [Wp]

    def parameter_values(self) -> list:
        return [self.term.W]

    def pyomo(self, W, B) -> list:
        """The rows of g in Pyomo: W and B the rows of Pyomo variables of omega and beta."""
        from . import pyomo_backend as pb
        from .terms import pyomo_ops

        pr, ops = self.formulation.problem, pyomo_ops()
        splits = dict(zip(pr.tree.branch_nodes, W))
        sweeps = [pb.point_sweep(pb.split_exprs(pr.Z[i], splits, pr.mu),
                                 [self.term.leaf_values(pb.linear(pr.Xa[i], b), float(pr.y[i]), ops) for b in B],
                                 pr.tree, 1) for i in range(len(pr.y))]
        return [sum(float(w[i]) * s for i, s in enumerate(sweeps) if w[i] != 0) for w in self.term.W.T]


# ----------------------------------------------------------------------------- the mixin
class Constrained:
    """What a formulation gives its solvers about its constraints (a mixin): the subclass sets
    ``constraint_blocks`` (blocks with ``value``, ``jacobian``, ``hessian``, ``linear``,
    ``parameter_values`` and a ``term`` with ``lower``, ``upper``) and :meth:`bounds`; none by default."""

    constraint_blocks: tuple = ()

    def constraint_key(self) -> tuple:
        """What the constraints add to a structure key: their terms and parameter shapes (empty
        without constraints, so that the key of an unconstrained formulation is unchanged)."""
        bounds = self.bounds()
        blocks = tuple((block.term.key, tuple(np.shape(v) for v in block.parameter_values()))
                       for block in self.constraint_blocks)
        return () if bounds is None and not blocks else (("constraints", bounds is not None, blocks),)

    def constraint_parameters(self) -> np.ndarray:
        """The values of the constraint rows' parameters, vectorized as CasADi's ``vec``."""
        return np.concatenate([np.ravel(v, order="F") for block in self.constraint_blocks
                               for v in block.parameter_values()] or [np.zeros(0)])

    def casadi_model(self, x, p, f, names, rows=()):
        """A :class:`~.casadi_backend.CasadiModel` of f over x with parameters ``p`` (an MX vector, its
        values :meth:`render_parameters`), the constraint rows ``rows`` = [(g, parameter symbols)]
        of the blocks (their symbols appended to p) and the formulation's bounds."""
        bounds = self.bounds()
        g = ca.vertcat(*[row for row, _ in rows]) if rows else None
        p = ca.vertcat(p, *[ca.vec(symbol) for _, symbols in rows for symbol in symbols])
        lbg, ubg = self.constraint_bounds() if rows else (None, None)
        lbx, ubx = bounds if bounds is not None else (None, None)
        return cb.CasadiModel(self.name, x, p, f, self.render_parameters(), names, g, lbg, ubg, lbx, ubx)

    def pyomo_constraints(self, model, rows) -> None:
        """Add the rows (Pyomo expressions, in block order) as ``model.constraints`` with their bounds,
        and the formulation's bounds to ``model.x``."""
        import pyomo.environ as pyo

        bounds = self.bounds()
        if bounds is not None:
            for j, (lo, hi) in enumerate(zip(*bounds)):
                model.x[j].setlb(None if lo == -np.inf else float(lo))
                model.x[j].setub(None if hi == np.inf else float(hi))
        if rows:
            lower, upper = self.constraint_bounds()
            model.constraints = pyo.ConstraintList()
            for expr, lo, hi in zip(rows, lower, upper):
                model.constraints.add((None if lo == -np.inf else float(lo), expr, None if hi == np.inf else float(hi)))

    def bounds(self):
        """(lower, upper) of the variables (flat), or None when no variable is bounded."""
        return None

    def constraint_kinds(self) -> frozenset:
        """The kinds of constraints carried: "fixed" (variables fixed to a value), "bounds" (other
        bounds), "linear" and "nonlinear" (constraint rows)."""
        kinds = set()
        bounds = self.bounds()
        if bounds is not None:
            lower, upper = bounds
            fixed = lower == upper
            if fixed.any():
                kinds.add("fixed")
            if np.any(~fixed & (np.isfinite(lower) | np.isfinite(upper))):
                kinds.add("bounds")
        kinds.update("linear" if block.linear else "nonlinear" for block in self.constraint_blocks)
        return frozenset(kinds)

    @property
    def n_constraints(self) -> int:
        return int(sum(len(block.term.lower) for block in self.constraint_blocks))

    def constraint_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of the constraint rows, concatenated over the blocks."""
        blocks = self.constraint_blocks
        return (np.concatenate([b.term.lower for b in blocks]) if blocks else np.zeros(0),
                np.concatenate([b.term.upper for b in blocks]) if blocks else np.zeros(0))

    def constraint_values(self, x) -> np.ndarray:
        return np.concatenate([b.value(x) for b in self.constraint_blocks]) if self.constraint_blocks else np.zeros(0)

    def constraint_jacobian(self, x) -> np.ndarray:
        if not self.constraint_blocks:
            return np.zeros((0, np.size(x)))
        return np.vstack([b.jacobian(x) for b in self.constraint_blocks])

    def constraint_hessian(self, x, lam):
        """sum_k lam_k times the Hessian of row k (every block must have ``has_hessian``)."""
        total = np.zeros((np.size(x), np.size(x)))
        for block, multipliers in zip(self.constraint_blocks, self._per_block(lam)):
            total = total + block.hessian(x, multipliers)
        return total

    def _per_block(self, lam) -> list:
        """``lam`` (one entry per constraint row) cut into the blocks' parts."""
        ends = np.cumsum([len(block.term.lower) for block in self.constraint_blocks])
        return np.split(np.asarray(lam, float), ends[:-1]) if len(ends) else []

    def lagrangian_hessian(self, x, lam_f, lam):
        """lam_f times the objective's exact Hessian (``hessian(x)``) plus the rows' (``lam``: one
        multiplier per row), the Hessian of the Lagrangian an NLP solver asks for."""
        H = lam_f * self.hessian(x)
        return H + self.constraint_hessian(x, lam) if self.constraint_blocks else H

    def violation(self, x) -> float:
        """The largest violation of a bound or a constraint row at x (0 when all hold)."""
        worst = 0.0
        bounds = self.bounds()
        if bounds is not None:
            worst = max(worst, _excess(np.asarray(x, float), *bounds))
        if self.constraint_blocks:
            worst = max(worst, _excess(self.constraint_values(x), *self.constraint_bounds()))
        return worst


def _excess(values, lower, upper) -> float:
    """max over entries of max(lower - value, value - upper, 0)."""
    if values.size == 0:
        return 0.0
    return float(max(np.max(lower - values, initial=0.0), np.max(values - upper, initial=0.0), 0.0))


# ------------------------------------------------------------------------- problem level
@dataclass
class ConstraintSet:
    """The constraints of an SRT problem, bound to its data: the variable bounds of every split
    and leaf, and the soft means."""

    terms: tuple = ()
    q: int = 0
    n_branch: int = 0
    n_leaves: int = 0
    bounds: tuple | None = field(init=False, default=None)

    def __post_init__(self):
        signs = [np.asarray(t.signs) for t in self.terms if isinstance(t, Monotone)]
        if len(signs) > 1 and np.any((np.max(signs, axis=0) > 0) & (np.min(signs, axis=0) < 0)):
            j = int(np.flatnonzero((np.max(signs, axis=0) > 0) & (np.min(signs, axis=0) < 0))[0])
            raise ValueError(f"contradictory monotone signs: feature {j} is constrained increasing and decreasing")
        bounding = [t for t in self.terms if isinstance(t, VariableBounds)]
        self.soft = tuple(t for t in self.terms if isinstance(t, SoftMean))
        if bounding:
            split = [t.split_bounds(self.q) for t in bounding]
            leaf = [t.leaf_bounds(self.q) for t in bounding]
            lo_w, hi_w = np.max([s[0] for s in split], axis=0), np.min([s[1] for s in split], axis=0)
            lo_b, hi_b = np.max([b[0] for b in leaf], axis=0), np.min([b[1] for b in leaf], axis=0)
            for lo, hi, where in ((lo_w, hi_w, "split weights"), (lo_b, hi_b, "leaf coefficients")):
                if np.any(lo > hi):
                    j = int(np.flatnonzero(lo > hi)[0]) - 1
                    raise ValueError(f"contradictory constraints: the {where} of feature {j} must lie in "
                                     f"[{lo[j + 1]:g}, {hi[j + 1]:g}] (monotonic_cst and leaf_bounds disagree)")
            self.bounds = (np.tile(lo_w, (self.n_branch, 1)), np.tile(hi_w, (self.n_branch, 1)),
                           np.tile(lo_b, (self.n_leaves, 1)), np.tile(hi_b, (self.n_leaves, 1)))

    def __bool__(self) -> bool:
        return bool(self.terms)

    def split_features(self) -> np.ndarray:
        """Boolean (p,): the features a split may use (not fixed to 0 in every split)."""
        if self.bounds is None:
            return np.ones(self.q - 1, dtype=bool)
        lo, hi = self.bounds[0][0, 1:], self.bounds[1][0, 1:]
        return ~((lo == 0) & (hi == 0))

    def project(self, omega, beta):
        """(omega, beta) clipped to the variable bounds."""
        if self.bounds is None:
            return omega, beta
        lo_w, hi_w, lo_b, hi_b = self.bounds
        return np.clip(omega, lo_w, hi_w), np.clip(beta, lo_b, hi_b)


# --------------------------------------------------------------------- specifications
CONSTRAINTS = {"monotone": Monotone, "leaf_bounds": LeafBounds, "features": FeatureSubset, "parity": Parity,
               "group_loss": GroupLoss}


def register_constraint(name: str, factory) -> None:
    """Make ``constraints=name`` (and ``"name:key=value"``) build ``factory(**options)``.

    Parameters
    ----------
    name : str
        The constraint's name (lower-cased; an existing entry is replaced).
    factory : callable
        ``factory(**options)`` returning a :class:`Constraint`; a Constraint subclass will do.
    """
    CONSTRAINTS[name.lower()] = factory


def make_constraints(spec) -> tuple[Constraint, ...]:
    """Constraint terms from None, a spec (``"parity:gap=0.02"``), a Constraint object
    (deep-copied), or a list or tuple of these.

    Parameters
    ----------
    spec : None, str, Constraint, or list or tuple of these
        Registered names ("monotone", "leaf_bounds", "parity", "group_loss", or one of
        :func:`register_constraint`) with their options, or Constraint objects.

    Returns
    -------
    tuple of Constraint
        New constraint objects, in the order given (empty for None).

    Raises
    ------
    ValueError
        If a name is unknown, an option is malformed or not accepted, or an item is of another type.

    Examples
    --------
    >>> make_constraints(["parity:gap=0.02", "monotone:weight=-1"])
    (Parity(gap=0.02), Monotone(signs={'weight': -1}))
    """
    if spec is None:
        return ()
    if isinstance(spec, (list, tuple)):
        return tuple(c for item in spec for c in make_constraints(item))
    if isinstance(spec, Constraint):
        return (copy.deepcopy(spec),)
    if isinstance(spec, str):
        name, options = parse_spec(spec)
        if name not in CONSTRAINTS:
            raise ValueError(f"unknown constraint {spec!r}; use one of {', '.join(map(repr, CONSTRAINTS))}, a "
                             f"Constraint object or a list of these")
        if name == "monotone":  # feature names keep their case
            options = {key: value for key, value in parse_spec(spec)[1].items()}
        try:
            return (CONSTRAINTS[name](**options),)
        except TypeError as exc:
            raise ValueError(f"bad options for constraint {name!r}: {exc}") from None
    raise ValueError(f"constraints must be None, a spec string, a Constraint object or a list of these, got {spec!r}")


__all__ = ["CONSTRAINTS", "Constrained", "Constraint", "ConstraintSet", "FEASIBILITY_TOL", "FeatureSubset", "GroupLoss",
           "LeafBlock", "LeafBounds", "Monotone", "Parity", "Routing", "SoftMean", "SplitBlock", "TrainingUnits",
           "VariableBounds", "make_constraints", "register_constraint"]
