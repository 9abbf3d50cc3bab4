"""A soft mean written declaratively: a value v(yhat, y) given as a CasADi callable, in y's units,
averaged over the rows of each group, of every row or of a mask, over the whole tree or per leaf; on a
classifier v(p, y) of the probability p of one class and the row's indicator y of that class."""

from __future__ import annotations

import copy
import inspect

import numpy as np

from ..terms.operations import NUMPY, CasadiFormula
from .soft_means import SoftMean, group_differences, group_pairs, group_weights

#: the values a spec may name: v(yhat, y) in y's units, and its degree (v's units are y's to this power)
VALUES = {
    "prediction": (lambda yhat, y: yhat, 1),
    "residual": (lambda yhat, y: yhat - y, 1),
    "squared_error": (lambda yhat, y: (yhat - y) ** 2, 2),
}
OVER = ("all", "groups", "group_differences")


class RowMean(SoftMean):
    """lower <= sum_i w_ik sum_l P_il v(yhat_il, y_i) <= upper for every column k of row weights w: a
    weighted mean over the training rows of a value of the soft model's prediction, written once.

    ``v`` is given like a user's loss: a callable of two CasADi scalars (the prediction yhat and the
    target y, in y's units) returning a CasADi expression; CasADi's derivatives and the replay of
    its graph give the numpy values and derivatives and the Pyomo expression
    (:class:`~srtopt.models.terms.CasadiFormula`).  The mean is taken over every row (``over="all"``),
    each protected group (``"groups"``: one constraint row per group), the difference of two groups'
    means (``"group_differences"``: group h minus group g, one row per pair g < h) or the rows of a
    mask; with ``per_leaf`` each leaf's mean is bounded instead of the whole tree's (each leaf's
    rows weighted by their probability of reaching it; a leaf no row reaches bounds nothing).

    On a :class:`~srtopt.estimators.classification.SoftClassificationTree` the value is v(p, y): p the
    probability of the class ``pos_label`` (by default the second of two classes, ``classes_[1]``) at the
    leaf, y the row's indicator of that class (1 for a row of the class, else 0), so "prediction" is the
    class's mean probability, "residual" its calibration and "squared_error" its Brier score; ``predict()``'s
    value of a row is v of its HBP leaf's probability (``predict_proba``).

    Parity, a bounded group loss, a group bias and a cap on the mean prediction are instances::

        RowMean("prediction", over="group_differences", lower=-gap, upper=gap)  # Parity(gap)
        RowMean("squared_error", over="groups", upper=bound)       # GroupLoss(bound), squared loss
        RowMean("residual", over="groups", lower=-b, upper=b)      # each group's mean residual in +-b
        RowMean("prediction", upper=cap, per_leaf=True)            # each leaf's mean prediction <= cap

    A subclass that fixes some arguments (``GroupBias(bound)`` above) is a constraint of its own:
    registered (:func:`~srtopt.models.constraints.register_constraint`), its spec
    ``"group_bias:bound=1"`` works in Python, in a saved model and from the command line.  Its
    ``__init__`` stores its own arguments under their names, as a scikit-learn estimator does:
    they are its parameters (:meth:`get_params`, the spec).

    Parameters
    ----------
    value : {"prediction", "residual", "squared_error"} or callable, default="prediction"
        v(yhat, y): yhat, yhat - y, (yhat - y)^2, or a callable of two CasADi symbols.
    over : {"all", "groups", "group_differences"} or callable, default="all"
        Whose mean: every row, each group, each pair of groups (the groups of ``fit(...,
        sensitive_features=...)``), or a callable mapping the features X (n, p), in their units, to a
        mask or weights of the rows, (n,) or (n, m) (one constraint row per column).  The rows'
        sample weights multiply the mask.
    lower, upper : float or None, default=None
        The bounds, in v's units (y's for a prediction or a residual); None: no bound on that side.
        At least one is given.
    per_leaf : bool, default=False
        Bound each leaf's mean (one row per leaf and bound) instead of the tree's.
    degree : int or None, default=None
        v's units are y's units to this power (0 for a unitless value); the constraint holds to
        :data:`~.base.FEASIBILITY_TOL` times y's standard deviation to this power.  None: the named
        value's (1 for a prediction or a residual, 2 for a squared error), 1 for a callable.
    pos_label : label or None, default=None
        A classifier's class whose probability p is (None: ``classes_[1]``, two classes only); a
        regression tree takes none.

    Raises
    ------
    ValueError
        If ``value`` or ``over`` is not one of these, no bound is given, a bound is not a number, or
        ``lower`` exceeds ``upper``.
    """

    name = "row_mean"

    def __init__(self, value="prediction", over="all", lower=None, upper=None, per_leaf=False, degree=None,
                 pos_label=None):
        self.value, self.over, self.lower_bound, self.upper_bound = value, over, lower, upper
        self.per_leaf, self.degree, self.pos_label = per_leaf, degree, pos_label
        self._check()
        self._units = (0.0, 1.0, None, None)  # y's mean and standard deviation, x's minimum and span
        self.code = None  # a classifier's class of p, once in training units
        self._formula = self._training_formula()

    def _check(self):
        owner = self._owner()
        if not callable(self.value) and self.value not in VALUES:
            raise ValueError(f"{owner} value must be one of {', '.join(map(repr, VALUES))} or a callable (yhat, y) "
                             f"-> CasADi expression, got {self.value!r}")
        if not callable(self.over) and (not isinstance(self.over, str) or self.over not in OVER):
            raise ValueError(f"{owner} over must be one of {', '.join(map(repr, OVER))} or a callable X -> mask "
                             f"of the rows, got {self.over!r}")
        for side in ("lower", "upper"):
            bound = getattr(self, f"{side}_bound")
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float, np.number))
                                      or np.isnan(bound)):
                raise ValueError(f"{owner} {side} must be a number or None, got {bound!r}")
        lower, upper = self._bounds()
        if not (np.isfinite(lower) or np.isfinite(upper)):
            raise ValueError(f"{owner} needs a finite lower or upper bound (row_mean:...,upper=VALUE)")
        if lower > upper:
            raise ValueError(f"{owner}: lower bound {lower:g} above the upper bound {upper:g}; no model meets both")
        if self.per_leaf and self.over == "group_differences":
            raise ValueError(f"{owner}: per_leaf bounds each leaf's mean; give over='all', 'groups' or a mask")
        if self.degree is not None and (isinstance(self.degree, bool) or not isinstance(self.degree, int)):
            raise ValueError(f"{owner} degree must be an integer or None, got {self.degree!r}")

    def _owner(self) -> str:
        return self.name if type(self) is RowMean else f"{self.name} ({type(self).__name__}, a row_mean)"

    def _bounds(self) -> tuple[float, float]:
        """(lower, upper) in v's units, -inf/inf for None."""
        return (-np.inf if self.lower_bound is None else float(self.lower_bound),
                np.inf if self.upper_bound is None else float(self.upper_bound))

    def _function(self):
        return VALUES[self.value][0] if isinstance(self.value, str) else self.value

    @property
    def units_degree(self) -> int:
        """v's units are y's to this power (``degree``, else the named value's, else 1)."""
        if self.degree is not None:
            return int(self.degree)
        return VALUES[self.value][1] if isinstance(self.value, str) else 1

    @property
    def needs_groups(self) -> bool:
        return isinstance(self.over, str) and self.over != "all"

    def get_params(self, deep=True) -> dict:
        """The arguments of ``__init__`` (of the class: a subclass's own), by name."""
        names = [p.name for p in inspect.signature(type(self).__init__).parameters.values()
                 if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        stored = {"lower": "lower_bound", "upper": "upper_bound"} if type(self).__init__ is RowMean.__init__ else {}
        return {name: getattr(self, stored.get(name, name)) for name in names}

    @property
    def key(self) -> tuple:
        params = tuple((k, v if isinstance(v, (str, int, float, bool, type(None))) else id(v))
                       for k, v in sorted(self.get_params().items()))
        return (self.name, type(self).__name__, params, self._units[:2])

    def describe(self) -> str:
        """The spec: the name and the parameters but None and a flag or a name at its default (a callable by
        its name; numbers always)."""
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        options = []
        for key, value in self.get_params().items():
            if value is None or (isinstance(value, (bool, str)) and type(value) is type(defaults.get(key))
                                 and value == defaults.get(key)):
                continue
            text = getattr(value, "__name__", "callable") if callable(value) else value
            options.append(f"{key}={text!r}" if isinstance(value, str) else f"{key}={text}")
        return f"{self.name}:{','.join(options)}" if options else self.name

    # ---------------------------------------------------------------- units
    def in_training_units(self, units):
        out = copy.copy(self)
        out.code = units.positive_code(self.pos_label, self._owner())
        out._units = (float(units.y_mean), float(units.y_std), units.x_min, np.asarray(units.x_scale, float))
        out._formula = out._training_formula()
        return out

    def _training_formula(self) -> CasadiFormula:
        """v in training units: v(y_mean + y_std yhat, y_mean + y_std y) / y_std^degree."""
        mean, std = self._units[:2]
        user, scale = self._function(), std ** self.units_degree
        return CasadiFormula(lambda yhat, y: user(mean + std * yhat, mean + std * y) / scale, 2)

    def user_scale(self, units) -> float:
        return units.y_std ** self.units_degree

    def _scaled_bounds(self) -> tuple[float, float]:
        scale = self._units[1] ** self.units_degree
        lower, upper = self._bounds()
        return lower / scale, upper / scale

    def __getstate__(self):  # the CasADi functions are rebuilt from the user's callable (copies, pickles)
        return {k: v for k, v in self.__dict__.items() if k != "_formula"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._formula = self._training_formula()

    # ---------------------------------------------------------------- the value
    def leaf_values(self, yhat, y, ops):
        return self._formula.expression(ops, yhat, y)

    def leaf_derivative(self, yhat, y):
        return self._formula.numpy(1, yhat, y)

    def leaf_second_derivative(self, yhat, y):
        return self._formula.numpy(2, yhat, y)

    def predicted_values(self, problem, prediction) -> np.ndarray:
        """v_i of ``predict()``'s prediction of every training row: v(prediction, y), a classifier's of the class's
        probability and the row's indicator of the class (the leaf model's ``mean_inputs``)."""
        return self.leaf_values(*problem.leaf_model.mean_inputs(prediction, problem.y, self), NUMPY)

    # ---------------------------------------------------------------- the rows
    def _columns(self, s, groups, X) -> np.ndarray:
        """The weights of the means, one column each, before the leaves and the bounds."""
        if self.over == "all":
            return (s / s.sum())[:, None]
        if self.over == "groups":
            return group_weights(s, groups)
        if self.over == "group_differences":
            return group_differences(s, groups)
        x_min, x_scale = self._units[2:]
        raw = X if x_min is None else X * x_scale + x_min
        mask = np.asarray(self.over(raw), dtype=float)
        mask = mask[:, None] if mask.ndim == 1 else mask
        if mask.ndim != 2 or mask.shape[0] != len(s) or not np.all(np.isfinite(mask)) or np.any(mask < 0):
            raise ValueError(f"{self._owner()}: over(X) must give a mask or weights >= 0 of the {len(s)} rows, shape "
                             f"({len(s)},) or ({len(s)}, m), got shape {mask.shape}")
        weights = mask * s[:, None]
        mass = weights.sum(axis=0)
        if np.any(mass <= 0):
            raise ValueError(f"{self._owner()}: column {int(np.argmax(mass <= 0))} of over(X) selects no row of "
                             f"positive weight")
        return weights / mass

    def _sides(self) -> list[tuple[float, float]]:
        """(lower, upper) of each constraint row of one column and leaf, training units: per leaf one row per
        finite bound, as (the bound, its side)."""
        lower, upper = self._scaled_bounds()
        return [(lower, -1.0)] * bool(np.isfinite(lower)) + [(upper, 1.0)] * bool(np.isfinite(upper))

    def bind(self, problem):
        if self.needs_groups and problem.groups is None:
            raise ValueError(f"the {self.name} constraint averages over the protected groups: fit(X, y, "
                             f"sensitive_features=...)")
        columns = self._columns(problem.s, problem.groups, problem.X)
        out = copy.copy(self)
        out._n_columns, out._n_leaves = columns.shape[1], problem.tree.n_leaves
        if not self.per_leaf:
            return out._bound(problem, columns)
        repeats = problem.tree.n_leaves * len(self._sides())
        return out._bound(problem, np.repeat(columns, repeats, axis=1))

    def _layout(self):
        """(column, leaf index, bound, side) of every constraint row, per leaf (``per_leaf``)."""
        sides = self._sides()
        return [(j, leaf, bound, side) for j in range(self._n_columns) for leaf in range(self._n_leaves)
                for bound, side in sides]

    def leaf_weights(self, n_leaves):
        if not self.per_leaf:
            return super().leaf_weights(n_leaves)
        return np.array([np.eye(n_leaves)[leaf] for _, leaf, _, _ in self._layout()])

    def shifts(self):
        if not self.per_leaf:
            return super().shifts()
        return np.array([bound for _, _, bound, _ in self._layout()])

    @property
    def lower(self):
        if self.per_leaf:
            return np.array([0.0 if side < 0 else -np.inf for *_, side in self._layout()])
        return np.full(self.n_rows, self._scaled_bounds()[0])

    @property
    def upper(self):
        if self.per_leaf:
            return np.array([0.0 if side > 0 else np.inf for *_, side in self._layout()])
        return np.full(self.n_rows, self._scaled_bounds()[1])

    def report_values(self, problem, omega, beta, prediction, leaves):
        """Per leaf: each leaf's mean of v and the user's bounds (a leaf that no row reaches: NaN, which
        holds); otherwise the rows as :class:`SoftMean` reports them."""
        soft, hard, lower, upper = super().report_values(problem, omega, beta, prediction, leaves)
        if not self.per_leaf:
            return soft, hard, lower, upper
        layout = self._layout()
        P = problem.leaf_probabilities(omega)
        index = np.array([leaf for _, leaf, _, _ in layout])
        soft_mass = np.einsum("ik,ik->k", self.W, P[:, index])
        hard_mass = np.einsum("ik,ik->k", self.W, (leaves[:, None] == index[None]).astype(float))
        shift = self.shifts()
        with np.errstate(invalid="ignore", divide="ignore"):
            means = [np.where(mass > 0, g / mass + shift, np.nan) for g, mass in ((soft, soft_mass), (hard, hard_mass))]
        bounds = [(bound, np.inf) if side < 0 else (-np.inf, bound) for _, _, bound, side in layout]
        return (*means, *map(np.array, zip(*bounds)))

    def row_names(self, labels) -> list[str]:
        what = self.value if isinstance(self.value, str) else getattr(self.value, "__name__", "v")
        what = "v" if what == "<lambda>" else what
        what += "" if self.pos_label is None else f" of p({self.pos_label})"
        if self.over == "all":
            columns = ["all rows"]
        elif self.over == "groups":
            columns = [f"group {label}" for label in labels]
        elif self.over == "group_differences":
            columns = [f"group {labels[h]} - group {labels[g]}" for g, h in group_pairs(len(labels))]
        else:
            columns = ["the mask"] if self._n_columns == 1 else [f"mask column {j}" for j in range(self._n_columns)]
        if not self.per_leaf:
            return [f"mean {what} of {column}" for column in columns]
        leaves = list(range(self._n_leaves, 2 * self._n_leaves))  # the paper's leaf numbers
        return [f"mean {what} of {columns[j]} at leaf {leaves[leaf]}" for j, leaf, _, _ in self._layout()]
