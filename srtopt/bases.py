"""The leaf bases of a soft tree: the columns a leaf model reads from a scaled row, in numpy alone (a saved
tree predicts without numba or scikit-learn).

A basis maps the scaled rows Xs (n, p) to the leaf design Xa (n, q), column 0 the intercept, and says which
columns carry each feature (the penalties, the constraints and the readers group a feature's columns):

* :class:`ConstantBasis`: Xa = [1] (q = 1: constant leaves);
* :class:`LinearBasis`: Xa = [1, x_s] (q = p + 1: the SRT's linear leaves, eq. obj);
* :class:`SplineBasis`: Xa = [1, x_s, W_1(x_s1), ..., W_p(x_sp), S_1(x_s1), ..., S_p(x_sp), pairs], the linear
  leaf, each curved feature's wiggle columns, each stepped feature's steps and the pairs' products: f_j(x) =
  b_j x + W_j(x) . c_j + S_j(x) . h_j is a cubic spline in x plus steps at thresholds (an additive model per
  leaf, with a few pairwise terms when asked).

The spline of feature j lives on knots at its training quantiles (unique values; scikit-learn's
``SplineTransformer`` conventions: ``degree`` extra knots beyond each end at the end intervals' spacing, and
linear extrapolation beyond the boundary knots, the value and slope of the boundary carried on).  Its B-spline
coefficients a (K of them) split into the null space of the P-spline penalty, the second divided differences of
a on the Greville abscissae g (the coefficients a = 1 and a = g give the functions 1 and x), which the linear
leaf holds, and the rest, the wiggle: W_j(x) = B_j(x) U_j Lambda_j^(-1/2) s, with P = U Lambda U^T the
penalty's eigendecomposition on its range.  So ||D2 a||^2 = ||c_j||^2 / s^2: the l2 term of eq. (obj) on the
wiggle coefficients is the P-spline smoothness penalty, of strength lambda_b / s^2, and s (``scale``) sets it.

A feature may also have steps, S_j(x) = s_S [x >= t_1, ..., x >= t_m] at thresholds t_1 < ... < t_m: f_j then
jumps by s_S h_jk at t_k, and the l2 term of eq. (obj) on h_j is a ridge of strength lambda_b / s_S^2 on the
jumps (the piecewise-constant part of a feature whose effect changes at values a curve smooths over, as a
count, a date or a skewed amount does); a step up is a slope of +inf, a step down of -inf.  A pair (j, k) adds
the column s_P (x_j - m_j)(x_k - m_k), m the training medians: a bilinear interaction, 0 wherever either
feature is at its median (so each f_j read at the median row is the leaf's own slice there), the l2 term on
its weight a ridge of strength lambda_b / s_P^2.
"""

from __future__ import annotations

import types

import numpy as np

#: a feature gets a curve when it has at least this many distinct training values (a binary or few-valued
#: column keeps its linear term alone)
MIN_DISTINCT = 8
#: the levels of the training quantiles a spline basis keeps of every feature for its readers: the 1st and 99th
#: percentiles (the bulk of the rows), the deciles, and among them the median (a typical row)
QUANTILE_LEVELS = (0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99)


class Basis:
    """The leaf design of a basis (module docstring): ``design(Xs)``, its ``n_columns`` and the columns of
    each feature (``feature_columns``); ``to_json`` and :func:`basis_from_json` its file form."""

    kind = ""
    #: what a :class:`SplineBasis` holds, none here: the curves {j: (knots, M)}, the steps {j: thresholds}, the
    #: pairs (j, k) of a column each, the scales of the three, and the features' training quantiles
    curves = steps = types.MappingProxyType({})
    pairs: tuple = ()
    scale = step_scale = pair_scale = 1.0
    quantiles = None

    def __init__(self, n_features: int):
        self.n_features = int(n_features)

    def design(self, Xs: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__}.design(Xs) must give the leaf design (n, q), column 0 "
                                  f"the intercept")

    @property
    def n_columns(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}.n_columns must give q, the columns of the design")

    def feature_columns(self, j: int) -> np.ndarray:
        """The columns of the design that carry feature j (none for a constant leaf)."""
        raise NotImplementedError(f"{type(self).__name__}.feature_columns(j) must give feature j's columns")

    def linear_columns(self) -> np.ndarray:
        """The column of each feature's linear term, -1 where the basis has none: (p,)."""
        return np.full(self.n_features, -1)

    def smooth_columns(self) -> np.ndarray:
        """The columns whose l2 weight is a smoothness penalty (a spline's wiggles; none here)."""
        return np.zeros(0, dtype=int)

    def pair_columns(self) -> np.ndarray:
        """The columns of the pairs (j, k) of ``pairs``, one each (none here)."""
        return np.zeros(0, dtype=int)

    def medians(self) -> np.ndarray | None:
        """Every feature's scaled training median (p,), of the quantiles (None without them)."""
        return None if self.quantiles is None else self.quantiles[:, QUANTILE_LEVELS.index(0.5)]

    def pair_columns_of(self, j: int) -> np.ndarray:
        """The columns of the pairs that hold feature j."""
        return np.array([c for c, pair in zip(self.pair_columns(), self.pairs) if j in pair], dtype=int)

    def linear_part(self, coef: np.ndarray) -> np.ndarray:
        """The intercept and each feature's linear weight (..., 1 + p) of coefficient vectors (..., q) on this
        basis (0 where a feature has no linear term); (..., 1) when no feature has one (a constant leaf)."""
        columns = self.linear_columns()
        if np.all(columns < 0):
            return coef[..., :1]
        return np.concatenate([coef[..., :1], np.where(columns >= 0, coef[..., np.maximum(columns, 0)], 0.0)], axis=-1)

    def column_bounds(self, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bounds (q,) of a leaf's columns from bounds (p + 1,) on [intercept, each feature's slope]
        (the form of :mod:`srtopt.models.constraints.bounds`)."""
        raise NotImplementedError(f"{type(self).__name__}.column_bounds(lower, upper) must map bounds on "
                                  f"[intercept, features] to the design's columns")

    def curve(self, j: int, coef: np.ndarray, x: np.ndarray) -> np.ndarray:
        """f_j(x), feature j's term in a leaf of coefficients ``coef`` (q,) at scaled values x: its linear weight
        times x (0 for a constant leaf)."""
        columns = self.feature_columns(j)
        return (coef[columns[0]] if len(columns) else 0.0) * np.asarray(x, float)

    def slopes(self, j: int, coef: np.ndarray) -> np.ndarray:
        """The numbers (..., r) whose range is the range of the slope of feature j's term in a leaf of
        coefficients ``coef`` (..., q), over every input: the linear weight (r = 1); none for a constant leaf."""
        return coef[..., self.feature_columns(j)[:1]]

    def slope_rows(self, lower: np.ndarray, upper: np.ndarray):
        """The linear rows (A (r, q), lower (r,), upper (r,)) on a leaf's coefficients that bound the slopes of
        the features :meth:`column_bounds` leaves free, from bounds (p + 1,) on [intercept, slopes]; None: the
        column bounds say it all (every basis but a spline's)."""
        return None

    def within_slopes(self, coef: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """``coef`` (..., q) moved onto :meth:`slope_rows` (the column bounds apart): unchanged here."""
        return coef

    def to_json(self) -> dict:
        return {"kind": self.kind, "n_features": self.n_features}

    @classmethod
    def from_json(cls, doc: dict) -> "Basis":
        return cls(int(doc["n_features"]))

    def column_features(self) -> np.ndarray:
        """The feature of each column (q,), -1 for the intercept and the pairs' columns (two features each)."""
        owner = np.full(self.n_columns, -1)
        for j in range(self.n_features):
            owner[self.feature_columns(j)] = j
        return owner

    def __eq__(self, other):
        return isinstance(other, Basis) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    @property
    def key(self) -> tuple:
        """What identifies the design: formulations and remembered starts of equal keys share it."""
        return (self.kind, self.n_features)


class ConstantBasis(Basis):
    """Xa = [1]: a constant leaf."""

    kind = "constant"

    def design(self, Xs):
        return np.ones((np.shape(Xs)[0], 1))

    @property
    def n_columns(self) -> int:
        return 1

    def feature_columns(self, j):
        return np.zeros(0, dtype=int)

    def column_bounds(self, lower, upper):
        return np.asarray(lower[:1], float), np.asarray(upper[:1], float)


class LinearBasis(Basis):
    """Xa = [1, x_s]: a linear leaf (eq. obj)."""

    kind = "linear"

    def design(self, Xs):
        return np.hstack([np.ones((Xs.shape[0], 1)), Xs])

    @property
    def n_columns(self) -> int:
        return self.n_features + 1

    def feature_columns(self, j):
        return np.array([1 + j])

    def linear_columns(self):
        return np.arange(1, self.n_features + 1)

    def column_bounds(self, lower, upper):
        return np.asarray(lower, float), np.asarray(upper, float)


class SplineBasis(LinearBasis):
    """Xa = [1, x_s, W_1(x_s1), ..., W_p(x_sp)] (module docstring): the linear leaf and a cubic spline's
    wiggle per curved feature.

    Parameters
    ----------
    n_features : int
        p.
    curves : dict
        {feature j: (knots, M)}: the boundary and interior knots of feature j (increasing, at least 3) and the
        map M (K, K - 2) from the wiggle coefficients to the B-spline coefficients (``U Lambda^(-1/2)``).
    degree : int, default=3
        The splines' degree.
    scale : float, default=1.0
        s: the wiggle columns are B_j M_j s, so the l2 weight lambda_b on their coefficients is a smoothness
        penalty of strength lambda_b / s^2.
    quantiles : ndarray of shape (p, len(QUANTILE_LEVELS)) or None, default=None
        Every feature's scaled training quantiles at :data:`QUANTILE_LEVELS`, for the readers (where the rows
        are: the median row a leaf's value is read at, the bulk and the deciles a curve is drawn over); None
        for a basis saved before they were kept (its readers read the middle of the range instead).
    steps : dict or None, default=None
        {feature j: thresholds}: the increasing scaled thresholds of feature j's steps (module docstring); None:
        no steps.
    step_scale : float, default=1.0
        s_S: the step columns' scale.
    pairs : sequence of (int, int), default=()
        The pairs (j, k), j < k, of a bilinear column each (module docstring; the medians are the quantiles',
        so a basis with pairs keeps its quantiles).
    pair_scale : float, default=1.0
        s_P: the pair columns' scale.
    """

    kind = "spline"

    def __init__(self, n_features: int, curves: dict, degree: int = 3, scale: float = 1.0, quantiles=None,
                 steps=None, step_scale: float = 1.0, pairs=(), pair_scale: float = 1.0):
        super().__init__(n_features)
        self.curves = {int(j): (np.asarray(knots, float), np.asarray(M, float)) for j, (knots, M) in curves.items()}
        self.steps = {int(j): np.asarray(t, float) for j, t in (steps or {}).items()}
        self.pairs = [(int(j), int(k)) for j, k in pairs]
        self.degree, self.scale = int(degree), float(scale)
        self.step_scale, self.pair_scale = float(step_scale), float(pair_scale)
        self.quantiles = None if quantiles is None else np.asarray(quantiles, float)
        if self.pairs and self.quantiles is None:
            raise ValueError("a spline basis with pairs needs the features' quantiles (their medians center the pairs)")
        self._wiggles, self._steps = {}, {}
        start = 1 + n_features
        for j in sorted(self.curves):
            self._wiggles[j] = np.arange(start, start + self.curves[j][1].shape[1])
            start += self.curves[j][1].shape[1]
        for j in sorted(self.steps):
            self._steps[j] = np.arange(start, start + len(self.steps[j]))
            start += len(self.steps[j])
        self._q = start + len(self.pairs)

    @classmethod
    def fit(cls, Xs: np.ndarray, weights=None, n_knots: int = 5, degree: int = 3) -> "SplineBasis":
        """The basis of the scaled training rows Xs: knots at the ``n_knots`` quantiles of each feature with
        at least :data:`MIN_DISTINCT` distinct values (rows of weight 0 left out; tied quantiles merged; a
        feature of fewer than 3 knots keeps its linear term alone); scale 1; every feature's quantiles at
        :data:`QUANTILE_LEVELS`."""
        seen = Xs if weights is None else Xs[np.asarray(weights) > 0]
        curves = {}
        for j in range(Xs.shape[1]):
            if len(np.unique(seen[:, j])) < MIN_DISTINCT:
                continue
            knots = np.unique(np.quantile(seen[:, j], np.linspace(0.0, 1.0, n_knots)))
            if len(knots) >= 3:
                curves[j] = (knots, wiggle_map(knot_vector(knots, degree), degree))
        return cls(Xs.shape[1], curves, degree, quantiles=np.quantile(seen, QUANTILE_LEVELS, axis=0).T)

    def with_scale(self, scale: float) -> "SplineBasis":
        """This basis with the wiggle columns scaled by ``scale`` (see the class docstring)."""
        return self.replaced(scale=scale)

    def replaced(self, **parts) -> "SplineBasis":
        """This basis with the constructor's ``parts`` (curves, degree, scale, quantiles, steps, step_scale, pairs,
        pair_scale) in place of its own."""
        own = {"curves": self.curves, "degree": self.degree, "scale": self.scale, "quantiles": self.quantiles,
               "steps": self.steps, "step_scale": self.step_scale, "pairs": self.pairs, "pair_scale": self.pair_scale}
        return SplineBasis(self.n_features, **{**own, **parts})

    def design(self, Xs):
        linear = super().design(Xs)
        if not (self.curves or self.steps or self.pairs):
            return linear
        return np.hstack([linear] + [self.wiggle(j, Xs[:, j]) for j in sorted(self.curves)]
                         + [self.step(j, Xs[:, j]) for j in sorted(self.steps)] + [self.pair_design(Xs)])

    def wiggle(self, j: int, x: np.ndarray) -> np.ndarray:
        """The wiggle columns W_j(x) (n, K - 2) of curved feature j at its scaled values x."""
        knots, M = self.curves[j]
        return bspline_design(x, knot_vector(knots, self.degree), self.degree) @ M * self.scale

    def step(self, j: int, x: np.ndarray) -> np.ndarray:
        """The step columns S_j(x) (n, m) of stepped feature j at its scaled values x."""
        return (np.asarray(x, float)[:, None] >= self.steps[j]) * self.step_scale

    def pair_design(self, Xs: np.ndarray) -> np.ndarray:
        """The pair columns s_P (x_j - m_j)(x_k - m_k) (n, pairs) of the scaled rows Xs."""
        if not self.pairs:
            return np.zeros((len(Xs), 0))
        j, k = np.array(self.pairs).T
        m = self.medians()
        return (Xs[:, j] - m[j]) * (Xs[:, k] - m[k]) * self.pair_scale

    def pair_columns(self) -> np.ndarray:
        """The pairs' columns, in the order of ``pairs``."""
        return np.arange(self._q - len(self.pairs), self._q)

    @property
    def n_columns(self) -> int:
        return self._q

    def feature_columns(self, j):
        return np.r_[1 + j, self.wiggle_columns(j), self.step_columns(j)].astype(int)

    def wiggle_columns(self, j: int) -> np.ndarray:
        """The wiggle columns of feature j (none for a feature without a curve)."""
        return self._wiggles.get(j, np.zeros(0, dtype=int))

    def step_columns(self, j: int) -> np.ndarray:
        """The step columns of feature j (none for a feature without steps)."""
        return self._steps.get(j, np.zeros(0, dtype=int))

    def smooth_columns(self) -> np.ndarray:
        return np.arange(1 + self.n_features, self._q)

    def column_bounds(self, lower, upper):
        """The columns of a feature without a curve bounded as its slope; a curved feature's columns free where
        its slope is bounded on one side or within an interval (:meth:`slope_rows` bound it), and a line of
        the one slope where lower = upper (0: a feature left out has no curve).  A step is a slope of +-inf:
        no step up under a finite upper bound, no step down under a finite lower one (so none within an
        interval, and none for a feature left out).  A pair is 0 where either of its features is bounded."""
        lo, hi = np.full(self._q, -np.inf), np.full(self._q, np.inf)
        lo[:self.n_features + 1], hi[:self.n_features + 1] = lower, upper
        for j in self.curves:
            if lower[1 + j] == upper[1 + j]:
                lo[self.wiggle_columns(j)] = hi[self.wiggle_columns(j)] = 0.0
            elif self._curve_bounded(j, lower, upper):
                lo[1 + j], hi[1 + j] = -np.inf, np.inf
        for j in self.steps:
            lo[self.step_columns(j)] = 0.0 if np.isfinite(lower[1 + j]) else -np.inf
            hi[self.step_columns(j)] = 0.0 if np.isfinite(upper[1 + j]) else np.inf
        for column, (j, k) in zip(self.pair_columns(), self.pairs):
            if np.isfinite([lower[1 + j], upper[1 + j], lower[1 + k], upper[1 + k]]).any():
                lo[column] = hi[column] = 0.0  # a pair's slope in x_j is unbounded in x_k
        return lo, hi

    def _curve_bounded(self, j: int, lower, upper) -> bool:
        """Whether curved feature j's slope is bounded by rows (bounded, and not to a single value)."""
        return j in self.curves and lower[1 + j] != upper[1 + j] and \
            bool(np.isfinite(lower[1 + j]) or np.isfinite(upper[1 + j]))

    def slopes(self, j, coef):
        """The numbers (..., r) whose range holds the slope in x_j of the leaf's terms of feature j everywhere:
        those of its curve (:meth:`curve_slopes`), then each step's, +inf for a step up, -inf for a step down, 0
        for none, then each of its pairs' (unbounded in the other feature: +-inf where its weight is not 0)."""
        coef = np.asarray(coef, float)
        jumps = coef[..., self.step_columns(j)]
        pairs = np.abs(coef[..., self.pair_columns_of(j)])
        unbounded = np.concatenate([np.where(jumps > 0, np.inf, np.where(jumps < 0, -np.inf, 0.0)),
                                    np.where(pairs > 0, np.inf, 0.0), np.where(pairs > 0, -np.inf, 0.0)], axis=-1)
        return np.concatenate([self.curve_slopes(j, coef), unbounded], axis=-1)

    def curve_slopes(self, j, coef):
        """The B-spline coefficients (..., K - 1) of the derivative of curve f_j (a quadratic spline on the knot
        vector less its end knots, d_i = (a_(i+1) - a_i) / (g_(i+1) - g_i), a its coefficients, g the Greville
        abscissae), whose range holds f_j' everywhere: its B-splines are nonnegative and sum to 1 between the
        boundary knots, and beyond them f_j' is its value at the boundary.  The linear weight for a feature
        without a curve."""
        if j not in self.curves:
            return super().slopes(j, coef)
        g = greville(knot_vector(self.curves[j][0], self.degree), self.degree)
        return np.diff(self.bspline_coefficients(j, coef), axis=-1) / np.diff(g)

    def slope_rows(self, lower, upper):
        """lower_j <= d_i <= upper_j for every derivative coefficient d_i of each curve whose slope is bounded
        (:meth:`curve_slopes`, linear in the coefficients): then lower_j <= f_j'(x) <= upper_j for every x,
        extrapolation included (sufficient, and exact for lines: a line's d_i are its slope; a monotone
        P-spline, as in SCAM or pyGAM).  None when no curve is bounded."""
        rows, lo, hi = [], [], []
        for j in sorted(self.curves):
            if self._curve_bounded(j, lower, upper):
                A = self.curve_slopes(j, np.eye(self._q)).T  # (K - 1, q): d is linear in the coefficients
                rows.append(A)
                lo.append(np.full(len(A), lower[1 + j]))
                hi.append(np.full(len(A), upper[1 + j]))
        if not rows:
            return None
        return np.vstack(rows), np.concatenate(lo), np.concatenate(hi)

    def within_slopes(self, coef, lower, upper):
        """``coef`` (..., q) with every bounded curve's derivative coefficients clipped into its bounds where
        they are not (the curve rebuilt from its left end, the constant it gains moved to the intercept): an iterate
        a solver left within its tolerance of :meth:`slope_rows` meets them up to rounding."""
        coef = np.array(coef, dtype=float)
        for j in sorted(self.curves):
            if not self._curve_bounded(j, lower, upper):
                continue
            d = self.curve_slopes(j, coef)
            clipped = np.clip(d, lower[1 + j], upper[1 + j])
            moved = np.any(clipped != d, axis=-1)
            if not moved.any():
                continue
            knots, M = self.curves[j]
            g = greville(knot_vector(knots, self.degree), self.degree)
            a = self.bspline_coefficients(j, coef[moved])
            rebuilt = a[:, :1] + np.concatenate([np.zeros((len(a), 1)), np.cumsum(clipped[moved] * np.diff(g), axis=-1)],
                                                axis=-1)
            parts = np.linalg.solve(np.column_stack([np.ones_like(g), g, M * self.scale]), rebuilt.T).T
            rows = coef[moved]
            rows[:, 0] += parts[:, 0]
            rows[:, np.r_[1 + j, self.wiggle_columns(j)]] = parts[:, 1:]
            coef[moved] = rows
        return coef

    def curve(self, j: int, coef: np.ndarray, x: np.ndarray) -> np.ndarray:
        """f_j(x) = b_j x + W_j(x) . c_j + S_j(x) . h_j of a leaf's coefficients ``coef`` (q,) at scaled values x."""
        x = np.asarray(x, float)
        f = super().curve(j, coef, x)
        if j in self.curves:
            f = f + self.wiggle(j, x) @ coef[self.wiggle_columns(j)]
        return f + self.step(j, x) @ coef[self.step_columns(j)] if j in self.steps else f

    def bspline_coefficients(self, j: int, coef: np.ndarray) -> np.ndarray:
        """The B-spline coefficients a (..., K) of f_j for a leaf's coefficients ``coef`` (..., q): the linear
        term's b_j g (g the Greville abscissae) plus the wiggle's M c s."""
        knots, M = self.curves[j]
        coef = np.asarray(coef, float)
        g = greville(knot_vector(knots, self.degree), self.degree)
        return coef[..., [1 + j]] * g + coef[..., self.wiggle_columns(j)] @ M.T * self.scale

    def pieces(self, j: int) -> dict:
        """Feature j's wiggle columns as piecewise polynomials on its knots, for a reader that evaluates them
        without a B-spline routine (the web page of :func:`srtopt.export.export_html`): {"breaks": the knots,
        "columns": [{"coef": per interval i the coefficients (highest power first) of the polynomial in
        x - knots[i], "left"/"right": (value, slope) at the first/last knot, continued linearly beyond}]},
        unscaled (times ``scale`` they are the design's columns)."""
        from scipy.interpolate import BSpline, PPoly

        knots, M = self.curves[j]
        t = knot_vector(knots, self.degree)
        columns = []
        for column in M.T:
            spline = BSpline(t, column, self.degree)
            poly = PPoly.from_spline(spline)
            inside = [int(np.searchsorted(poly.x, k, side="right")) - 1 for k in knots[:-1]]
            ends = np.array([knots[0], knots[-1]])
            values, slopes = spline(ends), spline.derivative()(ends)
            columns.append({"coef": poly.c[:, inside].T.tolist(), "left": [float(values[0]), float(slopes[0])],
                            "right": [float(values[1]), float(slopes[1])]})
        return {"feature": j, "breaks": knots.tolist(), "columns": columns}

    def to_json(self) -> dict:
        return {**super().to_json(), "degree": self.degree, "scale": self.scale,
                "curves": [{"feature": j, "knots": knots.tolist(), "map": M.tolist()}
                           for j, (knots, M) in sorted(self.curves.items())],
                **({} if self.quantiles is None else {"quantiles": self.quantiles.tolist()}),
                **({"steps": [{"feature": j, "thresholds": t.tolist()} for j, t in sorted(self.steps.items())],
                    "step_scale": self.step_scale} if self.steps else {}),
                **({"pairs": [list(pair) for pair in self.pairs], "pair_scale": self.pair_scale} if self.pairs else {})}

    @classmethod
    def from_json(cls, doc: dict) -> "SplineBasis":
        """The basis of its file form, every part checked (ValueError naming the first that is wrong)."""
        p, degree, scale = doc["n_features"], doc["degree"], doc["scale"]
        if not (_count(p, 1) and _count(degree, 1) and degree <= 5 and np.isfinite(scale) and scale > 0):
            raise ValueError(f"n_features {p!r}, degree {degree!r} or scale {scale!r} out of range")
        curves = {}
        for curve in doc["curves"]:
            j, knots, M = curve["feature"], np.asarray(curve["knots"], float), np.asarray(curve["map"], float)
            K = len(knots) + degree - 1
            if not (_count(j, 0) and j < p and j not in curves and knots.ndim == 1 and len(knots) >= 3
                    and np.all(np.diff(knots) > 0) and M.shape == (K, K - 2) and np.isfinite(M).all()):
                raise ValueError(f"the curve of feature {j!r} has knots {knots.shape} or a map {M.shape} that do "
                                 f"not make a spline of degree {degree}")
            curves[j] = (knots, M)
        steps, pairs = _steps(doc.get("steps", []), p), _pairs(doc.get("pairs", []), p)
        step_scale, pair_scale = doc.get("step_scale", 1.0), doc.get("pair_scale", 1.0)
        if not all(_positive(v) for v in (step_scale, pair_scale)):
            raise ValueError(f"step_scale {step_scale!r} or pair_scale {pair_scale!r} is not a number > 0")
        return cls(p, curves, degree, scale, _quantiles(doc.get("quantiles"), p), steps, step_scale, pairs, pair_scale)

    @property
    def key(self) -> tuple:
        """The knots, steps and pairs, their scales, and the medians that center the pairs (the other quantiles
        are the readers' alone)."""
        return (self.kind, self.n_features, self.degree, self.scale,
                tuple((j, knots.tobytes()) for j, (knots, _) in sorted(self.curves.items())),
                tuple((j, t.tobytes()) for j, t in sorted(self.steps.items())), self.step_scale,
                tuple(self.pairs), self.pair_scale, self.medians().tobytes() if self.pairs else None)


def _steps(value, p: int) -> dict:
    """The steps of a spline basis's file form, checked: {j: thresholds} of a list of {"feature", "thresholds"
    (increasing finite numbers)}; none in a file without them."""
    steps = {}
    for entry in value:
        j, thresholds = entry["feature"], np.asarray(entry["thresholds"], float)
        if not (_count(j, 0) and j < p and j not in steps and thresholds.ndim == 1 and len(thresholds) >= 1
                and np.all(np.isfinite(thresholds)) and np.all(np.diff(thresholds) > 0)):
            raise ValueError(f"the steps of feature {j!r} have thresholds {thresholds.shape} that are not "
                             f"increasing finite numbers")
        steps[j] = thresholds
    return steps


def _pairs(value, p: int) -> list:
    """The pairs of a spline basis's file form, checked: [j, k] with 0 <= j < k < p, none twice."""
    pairs = [tuple(pair) if isinstance(pair, list) and len(pair) == 2 else pair for pair in value]
    if not all(isinstance(pair, tuple) and _count(pair[0], 0) and _count(pair[1], 0) and pair[0] < pair[1] < p
               for pair in pairs) or len(set(pairs)) < len(pairs):
        raise ValueError(f"the pairs {value!r} are not distinct [j, k] with 0 <= j < k < {p}")
    return pairs


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and bool(np.isfinite(value)) and value > 0


def _quantiles(value, p: int):
    """The quantiles of a spline basis's file form, checked: None where the file has none (one saved before
    they were kept), else (p, len(QUANTILE_LEVELS)) finite numbers that do not decrease along a feature's row."""
    if value is None:
        return None
    quantiles = np.asarray(value, float)
    if quantiles.shape != (p, len(QUANTILE_LEVELS)) or not np.isfinite(quantiles).all() or \
            np.any(np.diff(quantiles, axis=1) < 0):
        raise ValueError(f"the quantiles {quantiles.shape} are not {len(QUANTILE_LEVELS)} nondecreasing numbers per "
                         f"feature ({p})")
    return quantiles


def _count(value, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def knot_vector(knots: np.ndarray, degree: int) -> np.ndarray:
    """The full knot vector of the boundary and interior ``knots``: ``degree`` more beyond each end, spaced as
    the end interval (scikit-learn's ``SplineTransformer``)."""
    knots = np.asarray(knots, float)
    steps = np.arange(1, degree + 1)
    return np.r_[knots[0] - (knots[1] - knots[0]) * steps[::-1], knots, knots[-1] + (knots[-1] - knots[-2]) * steps]


def greville(t: np.ndarray, degree: int) -> np.ndarray:
    """The Greville abscissae of the knot vector t: the B-spline coefficients of the function x."""
    K = len(t) - degree - 1
    return np.array([t[i + 1:i + degree + 1].mean() for i in range(K)])


def wiggle_map(t: np.ndarray, degree: int) -> np.ndarray:
    """M = U Lambda^(-1/2) (K, K - 2): the P-spline penalty ||D2 a||^2 (second divided differences of the
    coefficients a on the Greville abscissae, whose null space is the functions 1 and x) is ||c||^2 for
    a = M c, over the penalty's range."""
    g = greville(t, degree)
    K = len(g)
    first = np.diff(np.eye(K), axis=0) / np.diff(g)[:, None]
    second = np.diff(first, axis=0) / ((g[2:] - g[:-2]) / 2)[:, None]
    values, vectors = np.linalg.eigh(second.T @ second)
    kept = np.argsort(values)[2:]  # the two null directions (1 and x) are the linear leaf's
    return vectors[:, kept] / np.sqrt(values[kept])


def bspline_design(x: np.ndarray, t: np.ndarray, degree: int) -> np.ndarray:
    """The B-spline basis (n, K) of the knot vector t at x, extrapolated linearly beyond the boundary knots
    t[degree] and t[-degree-1] (each function continued with its value and slope there)."""
    from scipy.interpolate import BSpline  # only a spline leaf needs it: a quick import for the others

    x = np.asarray(x, float)
    low, high = t[degree], t[-degree - 1]
    inside = np.clip(x, low, high)
    B = BSpline.design_matrix(inside, t, degree, extrapolate=False).toarray()
    outside = x != inside
    if outside.any():
        K = len(t) - degree - 1
        slopes = BSpline(t, np.eye(K), degree).derivative()(np.array([low, high]))
        beyond = np.where(x < low, x - low, 0.0)[:, None] * slopes[0] + np.where(x > high, x - high, 0.0)[:, None] * slopes[1]
        B = B + np.where(outside[:, None], beyond, 0.0)
    return B


BASES = {"constant": ConstantBasis, "linear": LinearBasis, "spline": SplineBasis}


def basis_from_json(doc) -> Basis | str:
    """The basis of its file form (``Basis.to_json``), or a spec string as it is (a basis not yet fitted);
    ValueError for an unknown kind or a malformed one."""
    if isinstance(doc, str):
        return doc
    if not isinstance(doc, dict) or doc.get("kind") not in BASES:
        raise ValueError(f"unknown leaf basis {doc!r}: expected one of {', '.join(BASES)}")
    try:
        return BASES[doc["kind"]].from_json(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed {doc['kind']} leaf basis: {exc}") from None
