"""Variable bounds, the same on every split and every leaf: monotone features, leaf-slope bounds, a
subset of features."""

from __future__ import annotations

import copy

import numpy as np

from .base import Constraint


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
    slope on it has that sign (s_j beta_jl >= 0; a spline leaf's curve in x_j has every coefficient of its
    derivative of that sign, :meth:`srtopt.bases.SplineBasis.slope_rows`).  The HBP prediction is then
    monotone in x_j for every input: the leaf a row reaches does not depend on x_j.

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
    unit of x_j (a spline leaf's curve in x_j: its derivative within the bounds everywhere,
    :meth:`srtopt.bases.SplineBasis.slope_rows`).

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
