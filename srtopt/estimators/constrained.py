"""The constraints of :class:`~srtopt.estimators.srt.SoftRegressionTree` as a user gives them, and
what holds after the fit.

* :func:`constraint_terms` -- the terms of ``constraints=`` and ``monotonic_cst=``;
* :func:`protected_groups` -- ``fit(..., sensitive_features=...)``: an array, or the name of a
  column of a DataFrame X (then not a feature), checked and coded 0, 1, ...;
* :func:`training_units` -- how the estimator's scaling maps the user's units to training's;
* :func:`in_training_units` -- the terms in those units, once their bounds are seen to agree;
* :func:`constraint_report` -- one row per constraint row: its bound, its value for the soft model
  the training objective is written on and for ``predict()`` on the training data, whether it holds.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..models.constraints import (
    FEASIBILITY_TOL,
    FeatureSubset,
    LeafBounds,
    Monotone,
    Parity,
    RateParity,
    SoftMean,
    TrainingUnits,
    VariableBounds,
    make_constraints,
)
from .tabular import tree_columns


#: what each kind of tree takes, for the line refusing a constraint of the other kind
TAKES = {"classification": "a SoftClassificationTree takes class_recall, group_recall, parity, equalized_odds and "
                           "probability_parity (two classes), row_mean, monotonic_cst and max_features",
         "regression": "a SoftRegressionTree takes parity, group_loss, row_mean, monotonic_cst and leaf_bounds"}


def constraint_terms(estimator) -> tuple:
    """The constraint terms of ``estimator.constraints`` and ``estimator.monotonic_cst`` (user units); a term
    that does not apply to the estimator's kind of tree (its ``tasks``) is refused in one line."""
    from sklearn.base import is_classifier

    terms = make_constraints(estimator.constraints)
    if estimator.monotonic_cst is not None:
        terms += (Monotone(estimator.monotonic_cst),)
    task = "classification" if is_classifier(estimator) else "regression"
    if task == "classification":  # a classifier's parity is that of its decisions
        terms = tuple(RateParity(term.gap) if type(term) is Parity else term for term in terms)
    for term in terms:
        if task not in term.tasks:
            raise ValueError(f"constraints: {term.name} constrains a {term.tasks[0]} tree, not a "
                             f"{type(estimator).__name__}; {TAKES[task]}")
    return terms


def used_groups(values, terms):
    """The group of each row (``values``, from ``sensitive_features``) when a constraint of ``terms`` compares
    groups; None otherwise, with a warning that they are not used."""
    if values is None or any(term.needs_groups for term in terms):
        return values
    warnings.warn("sensitive_features gives the protected groups, but no constraint compares groups (parity, "
                  "group_loss, a row_mean over groups): they are not used", UserWarning, stacklevel=4)
    return None


def code_groups(values, weights) -> tuple[np.ndarray, list]:
    """(group codes 0, 1, ... per row, the group labels in code order); no group may be missing
    (NaN, None), each group needs two rows of positive weight, and there must be two groups."""
    import pandas as pd

    missing = np.asarray(pd.isna(values))
    if missing.any():
        raise ValueError(f"sensitive_features has {int(missing.sum())} missing value(s) (NaN or None), the first in "
                         f"row {int(np.argmax(missing))}: give every row a group, or drop those rows")
    try:
        unique, codes = np.unique(values, return_inverse=True)
    except TypeError:
        raise ValueError("sensitive_features must hold comparable values (numbers or strings)") from None
    labels = [v.item() if hasattr(v, "item") else v for v in unique]
    if len(labels) < 2:
        raise ValueError(f"sensitive_features has a single group ({labels[0]!r}): the group constraints compare "
                         f"two groups or more")
    counts = np.bincount(codes, weights=(np.asarray(weights) > 0).astype(float), minlength=len(labels))
    if np.any(counts < 2):
        k = int(np.argmin(counts))
        raise ValueError(f"group {labels[k]!r} of sensitive_features has {int(counts[k])} row(s) of positive weight; "
                         f"each group needs at least 2")
    return codes.astype(np.int64), labels


def training_units(estimator, loss) -> TrainingUnits:
    """The TrainingUnits of a fitted scaler and the features' names (x0, x1, ... without names); ``loss`` the leaf
    model's ``residual_loss`` (None: a loss of no residual, no degree)."""
    names = tuple(tree_columns(estimator))
    degree = None if loss is None else {"squared": 2, "absolute": 1}.get(loss.name)
    classes = tuple(getattr(estimator, "classes_", ()))
    scaler = estimator.scaler_
    return TrainingUnits(names, scaler.x_scale, scaler.y_std, degree, classes, scaler.y_mean, scaler.x_min)


def in_training_units(terms, units: TrainingUnits) -> tuple:
    """``terms`` (user units) in the training problem's units (:meth:`Constraint.in_training_units`);
    first, constraints that contradict each other on a feature are refused in the user's terms: the
    feature's name, the two constraints, the bounds in y's units per unit of the feature."""
    named = TrainingUnits(units.feature_names, np.ones(len(units.feature_names)), 1.0, units.loss_degree, units.classes,
                          0.0)
    bounding = [(term, term.in_training_units(named)) for term in terms if isinstance(term, VariableBounds)]
    _check_signs(bounding, units.feature_names)
    _check_slopes(bounding, units.feature_names)
    return tuple(term.in_training_units(units) for term in terms)


def _check_signs(bounding, names):
    """Refuse a feature that one term makes increasing and another decreasing."""
    first, direction = {}, {1: "increasing", -1: "decreasing"}
    for user, term in bounding:
        for j in np.flatnonzero(term.signs) if isinstance(term, Monotone) else ():
            sign, by = first.setdefault(j, (term.signs[j], user))
            if sign != term.signs[j]:
                raise ValueError(f"contradictory monotone signs: {by.describe()} makes the prediction {direction[sign]} "
                                 f"in feature {names[j]!r} and {user.describe()} {direction[-sign]}; keep one")


def _check_slopes(bounding, names):
    """Refuse a feature whose leaf slopes must lie above one term's lower bound and below another's
    smaller upper bound (in y's units per unit of the feature: ``bounding`` holds the terms in
    unscaled units)."""
    if not bounding:
        return
    q = len(names) + 1
    lower, upper = (np.array(side) for side in zip(*(term.leaf_bounds(q) for _, term in bounding)))
    by_lower, by_upper, columns = lower.argmax(axis=0), upper.argmin(axis=0), np.arange(q)
    low, high = lower[by_lower, columns], upper[by_upper, columns]
    for j in np.flatnonzero(low[1:] > high[1:]) + 1:
        name = names[j - 1]
        raise ValueError(f"contradictory constraints on feature {name!r}: {bounding[by_lower[j]][0].describe()} needs "
                         f"its leaf slopes >= {low[j]:g} and {bounding[by_upper[j]][0].describe()} needs them <= "
                         f"{high[j]:g} (y's units per unit of {name!r}); no slope meets both: drop or change one")


def _row(constraint, row, bound, soft, predict, holds_soft, holds_predict) -> dict:
    return {"constraint": constraint, "row": row, "bound": bound, "soft": float(soft), "predict": float(predict),
            "holds": bool(holds_soft and holds_predict), "holds_soft": bool(holds_soft),
            "holds_predict": bool(holds_predict)}


def constraint_report(estimator, user_terms, problem, labels) -> list[dict]:
    """One row per constraint row (module docstring), in the user's units; a row holds within
    :data:`~srtopt.models.constraints.FEASIBILITY_TOL` (training units).  ``labels``: the groups'
    labels in code order.  ``problem``: the training problem, or any data bound as one
    (:func:`report_on`)."""
    omega, beta, units = estimator.omega_, estimator.beta_, training_units(estimator, problem.leaf_model.residual_loss)
    rows = []
    for user, term in zip(user_terms, problem.constraints):
        name = user.describe()
        if isinstance(term, Monotone):
            rows += _monotone_rows(name, term, omega, beta, units, problem.leaf_model.basis)
        elif isinstance(term, LeafBounds):
            rows += _bound_rows(name, term, beta, units, problem.leaf_model.basis)
        elif isinstance(term, SoftMean):
            rows += _soft_rows(name, term, estimator, problem, labels, units)
        elif isinstance(term, VariableBounds) and not isinstance(term, FeatureSubset):
            rows += _variable_rows(name, term, omega, beta, problem.leaf_model)
    return rows


def report_on(estimator, X, y, sensitive_features=None, sample_weight=None) -> list[dict]:
    """The constraint report of a fitted tree on other data (X, y), e.g. held-out rows: each constraint
    row's value for the soft model and for ``predict()`` on those rows, in the format of
    ``constraint_report_`` (the fit's groups, ``groups_``, code the rows' groups; a classifier's rows
    are weighted as in its fit, by ``class_weight`` too)."""
    from ..models.srt import SRTProblem
    from ..tree import Tree
    from ..inputs import take_group
    from .targets import check_sample_weight

    user_terms = constraint_terms(estimator)
    X, group_values, _ = take_group(X, sensitive_features)
    Xs = estimator._scaled(X)
    groups, labels = None, list(getattr(estimator, "groups_", []))
    if group_values is not None:
        unknown = [v for v in dict.fromkeys(np.asarray(group_values).tolist()) if v not in labels]
        if unknown:
            raise ValueError(f"sensitive_features holds the group {unknown[0]!r}, which the fit did not see "
                             f"(its groups: {labels})")
        groups = np.array([labels.index(v) for v in np.asarray(group_values).tolist()], dtype=np.int64)
    tree, leaves = Tree(int(estimator.depth)), estimator.leaf_model_
    units = training_units(estimator, leaves.residual_loss)
    if hasattr(estimator, "classes_"):
        y = np.asarray(y)
        codes = np.minimum(np.searchsorted(estimator.classes_, y), len(estimator.classes_) - 1)
        unknown = y[estimator.classes_[codes] != y]
        if len(unknown):
            raise ValueError(f"y holds the label {unknown[0].tolist()!r}, not a class of the fit "
                             f"({', '.join(map(repr, estimator.classes_.tolist()))})")
        targets, weights = codes, estimator._weights(codes, sample_weight)
    else:
        targets = estimator.scaler_.transform_y(np.asarray(y, float))
        weights = check_sample_weight(sample_weight, len(Xs), 1)
    problem = SRTProblem(Xs, targets, tree, float(estimator.mu), weights=weights,
                         constraints=in_training_units(user_terms, units), groups=groups, leaves=leaves)
    return constraint_report(estimator, user_terms, problem, labels)


def _slopes(beta, j, units, basis):
    """The numbers that bound the slope of feature j's term in every leaf (its linear weight, or the coefficients
    of a curve's derivative: :meth:`srtopt.bases.Basis.slopes`), in the user's units (y per unit of x_j)."""
    blocks = np.reshape(beta, (len(beta), -1, basis.n_columns))
    return np.ravel(basis.slopes(j, blocks)) * units.y_std / units.x_scale[j]


def _monotone_rows(name, term, omega, beta, units, basis):
    rows = []
    for j in np.flatnonzero(term.signs):
        sign, feature = term.signs[j], units.feature_names[j]
        used = int(np.count_nonzero(omega[:, 1 + j]))
        rows.append(_row(name, f"{feature}: splits using it", "= 0", used, used, used == 0, used == 0))
        if beta.shape[1] < len(units.feature_names) + 1:  # constant leaves: the splits alone decide
            continue
        slopes = _slopes(beta, j, units, basis)
        worst = slopes.min() if sign > 0 else slopes.max()
        ok = sign * worst >= -FEASIBILITY_TOL * units.y_std / units.x_scale[j]  # a curve's: up to rounding
        rows.append(_row(name, f"{feature}: leaf slopes", ">= 0" if sign > 0 else "<= 0", worst, worst, ok, ok))
    return rows


def _bound_rows(name, term, beta, units, basis):
    rows = []
    for j, (lo, hi) in term.bounds.items():
        feature, slopes, scale = units.feature_names[j], _slopes(beta, j, units, basis), units.y_std / units.x_scale[j]
        tol = FEASIBILITY_TOL * scale
        if np.isfinite(lo):
            low = slopes.min()
            rows.append(_row(name, f"{feature}: smallest leaf slope", f">= {lo * scale:.6g}", low, low,
                             low >= lo * scale - tol, low >= lo * scale - tol))
        if np.isfinite(hi):
            high = slopes.max()
            rows.append(_row(name, f"{feature}: largest leaf slope", f"<= {hi * scale:.6g}", high, high,
                             high <= hi * scale + tol, high <= hi * scale + tol))
    return rows


def _soft_rows(name, term, estimator, problem, labels, units):
    """Rows of a soft mean: g of the soft model (the training objective's) and of ``predict()``."""
    prediction = estimator._training_prediction(problem)
    leaves = problem.tree.leaf_rows(problem.hbp_leaves(estimator.omega_))
    scale = term.user_scale(units)
    soft, hard, lower, upper = (np.asarray(v, float) * scale for v in term.report_values(
        problem, estimator.omega_, estimator.beta_, prediction, leaves))
    tol = FEASIBILITY_TOL * scale
    rows = []
    for k, row in enumerate(term.row_names(labels)):
        holds = [np.isnan(v[k]) or lower[k] - tol <= v[k] <= upper[k] + tol for v in (soft, hard)]
        row = _row(name, row, _bound_text(lower[k], upper[k]), soft[k], hard[k], *holds)
        rows.append(row if term.binds_soft_model else {**row, "holds": row["holds_predict"]})
    return rows


def _variable_rows(name, term, omega, beta, leaf_model):
    """The row of other variable bounds: the coefficients' largest excess over them (0 once clipped)."""
    q = omega.shape[1]
    (lo_w, hi_w), (lo_b, hi_b) = term.split_bounds(q), leaf_model.basis.column_bounds(*term.leaf_bounds(q))
    lo_b, hi_b = np.tile(lo_b, leaf_model.n_outputs), np.tile(hi_b, leaf_model.n_outputs)
    excess = max(float(np.max(np.maximum(lo - x, x - hi), initial=0.0)) for x, lo, hi in
                 ((omega, lo_w, hi_w), (beta, lo_b, hi_b)))
    return [_row(name, "coefficients beyond their bounds", "= 0", excess, excess, excess <= FEASIBILITY_TOL,
                 excess <= FEASIBILITY_TOL)]


def _bound_text(lower: float, upper: float) -> str:
    if np.isfinite(lower) and lower == -upper:
        return f"within +-{upper:.6g}"
    if np.isfinite(upper):
        return f"<= {upper:.6g}" if not np.isfinite(lower) else f"in [{lower:.6g}, {upper:.6g}]"
    return f">= {lower:.6g}"
