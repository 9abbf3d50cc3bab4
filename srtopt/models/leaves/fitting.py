"""A leaf basis fitted on the training rows from its spec: "linear", "constant", or "spline" with its knots at
the training quantiles and its smoothness chosen by generalized cross-validation (GCV) on one additive model
of all rows, and, when asked, the steps and pairs that pay (:mod:`.screening`)."""

from __future__ import annotations

import numpy as np

from ..._spec import parse_spec
from ...bases import Basis, ConstantBasis, LinearBasis, SplineBasis
from .screening import STRENGTHS, gcv_score, screened_pairs, screened_steps, seen_rows

SPLINE_OPTIONS = {"n_knots": 5, "smoothing": "gcv", "smoothing_factor": 1.0, "steps": 0, "pairs": 0}


def fit_basis(spec, Xs: np.ndarray, T: np.ndarray, weights: np.ndarray, lambda_b: float) -> Basis:
    """The basis of ``spec`` on the scaled training rows Xs with targets T (n, k) and row weights.

    "linear" and "constant" need no fit.  "spline" (options ``n_knots`` = 5, the knots per feature, >= 3;
    ``smoothing``, "gcv" or the strength of the smoothness penalty, a number > 0; ``smoothing_factor`` = 1, a
    factor on the strength GCV chooses; ``steps`` = 0, the most steps per feature; ``pairs`` = 0, the most pairs):
    the knots of
    :meth:`SplineBasis.fit` and the wiggle scale s that makes eq. (obj)'s l2 term lambda_b / 2 ||beta||^2
    (on the rows' weights summing to W) the penalty strength ||D2 a||^2 of every curve, s = sqrt(W lambda_b /
    (2 strength)) (:func:`penalty_scale`); without an l2 term (lambda_b = 0) the wiggles are not penalized
    (s = 1).  Then the steps, and after them the pairs, that :mod:`.screening` keeps, each kind at the scale of
    the strength GCV chooses for it (:func:`penalty_scale`; without an l2 term, not penalized either)."""
    if isinstance(spec, Basis):
        return spec
    name, options = basis_options(spec)
    p = Xs.shape[1]
    if name != "spline":
        return LinearBasis(p) if name == "linear" else ConstantBasis(p)
    basis = SplineBasis.fit(Xs, weights, options["n_knots"])
    if lambda_b > 0 and basis.curves:
        smoothing = options["smoothing"]
        strength = (options["smoothing_factor"] * gcv_strength(basis, Xs, T, weights) if smoothing == "gcv"
                    else smoothing)
        basis = basis.with_scale(penalty_scale(weights, lambda_b, strength))
    if options["steps"]:
        steps, strength = screened_steps(basis, Xs, T, weights, lambda_b, options["steps"])
        basis = basis.replaced(steps=steps, step_scale=penalty_scale(weights, lambda_b, strength))
    if options["pairs"]:
        pairs, strength = screened_pairs(basis, Xs, T, weights, lambda_b, options["pairs"])
        basis = basis.replaced(pairs=pairs, pair_scale=penalty_scale(weights, lambda_b, strength))
    return basis


def penalty_scale(weights, lambda_b: float, strength: float) -> float:
    """The scale s of penalized columns that makes eq. (obj)'s l2 term lambda_b / 2 ||beta||^2 (on the rows'
    weights summing to W) the penalty ``strength`` ||a||^2 on the columns' own coefficients a = s beta:
    s = sqrt(W lambda_b / (2 strength)); 1 without an l2 term (lambda_b = 0: not penalized)."""
    return float(np.sqrt(np.sum(weights) * lambda_b / (2.0 * strength))) if lambda_b > 0 and strength else 1.0


def basis_options(spec: str) -> tuple[str, dict]:
    """(name, options) of a basis spec, checked without data, so that an estimator refuses a bad ``leaf`` before
    its fit: "linear" and "constant" take no option; "spline" the options of :func:`fit_basis`, the defaults of
    those not given filled in."""
    name, options = parse_spec(spec)
    if name in ("linear", "constant") and not options:
        return name, options
    if name != "spline":
        raise ValueError(f"unknown leaf basis {spec!r}: use 'linear', 'constant' or 'spline' (options n_knots, "
                         f"smoothing, steps, pairs)")
    unknown = set(options) - set(SPLINE_OPTIONS)
    if unknown:
        raise ValueError(f"leaf spec {spec!r}: unknown option {sorted(unknown)[0]!r}; a spline takes "
                         f"{', '.join(SPLINE_OPTIONS)}")
    options = {**SPLINE_OPTIONS, **options}
    n_knots, smoothing, factor = options["n_knots"], options["smoothing"], options["smoothing_factor"]
    if isinstance(n_knots, bool) or not isinstance(n_knots, int) or n_knots < 3:
        raise ValueError(f"leaf spec {spec!r}: n_knots must be an integer >= 3, got {n_knots!r}")
    if smoothing != "gcv" and (isinstance(smoothing, bool) or not isinstance(smoothing, (int, float))
                               or not np.isfinite(smoothing) or smoothing <= 0):
        raise ValueError(f"leaf spec {spec!r}: smoothing must be 'gcv' or a number > 0, got {smoothing!r}")
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not np.isfinite(factor) or factor <= 0:
        raise ValueError(f"leaf spec {spec!r}: smoothing_factor must be a number > 0, got {factor!r}")
    for option, meaning in (("steps", "the most steps per feature"), ("pairs", "the most pairs")):
        value = options[option]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"leaf spec {spec!r}: {option} must be an integer >= 0 ({meaning}), got {value!r}")
    return name, {**options, "smoothing_factor": float(factor)}


def gcv_strength(basis: SplineBasis, Xs, T, weights) -> float:
    """The strength of :data:`STRENGTHS` of least GCV score n RSS / (n - tr H)^2 for the additive model of all
    rows on ``basis`` (scale 1): the linear terms free, the wiggles penalized, the k columns of T fitted
    alike (RSS summed over them), the rows weighted (weights of mean 1 on the rows of positive weight)."""
    Xa, T, w = seen_rows(basis.with_scale(1.0).design(Xs), T, weights)
    G, H = (Xa.T * w) @ Xa, (Xa.T * w) @ T
    penalty = np.zeros(Xa.shape[1])
    penalty[basis.smooth_columns()] = 1.0
    floor = 1e-10 * np.trace(G) / len(G)  # keeps collinear linear terms solvable
    n, best = len(w), (np.inf, STRENGTHS[-1])
    for strength in STRENGTHS:
        A = G + np.diag(strength * penalty + floor)
        coef = np.linalg.solve(A, np.column_stack([H, G]))
        fitted = Xa @ coef[:, :T.shape[1]]
        trace = np.trace(coef[:, T.shape[1]:])
        rss = float(np.sum(w[:, None] * (T - fitted) ** 2))
        score = float(gcv_score(n, rss, trace))
        if score < best[0]:
            best = (score, strength)
    return float(best[1])
