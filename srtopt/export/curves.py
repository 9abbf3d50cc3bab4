"""How the views read a leaf's curves (spline leaves): at a typical row, over where the data are.

A leaf with curves reads u = u_0 + sum_j f_j(x_j), each f_j shifted to 0 at the feature's *center*, so that u_0
is the leaf's score at the row of every feature at its center.  The center is the training median of the
feature, and a curve's effect is read over the *bulk* of its training rows, from the 1st to the 99th
percentile: a skewed feature's sparse tail (where a few rows let a curve swing) then neither moves the stated
value nor widens the stated effect.  Both come from the quantiles the fitted spline basis keeps
(:data:`srtopt.bases.QUANTILE_LEVELS`); a basis saved before it kept them (and a linear or constant basis) is
read at the middle of each feature's training range, over the whole range, as before.

The text (:func:`curve_notes`, :func:`~.nodes.score_terms`), the DOT labels, the web page and the plot
(:func:`srtopt.plotting.plot_leaf_curves`, which adds the deciles as a rug and shades the tails) read it here.
A pair's bilinear term (:mod:`srtopt.bases`) is 0 wherever either of its features is at its median, so the curves
read at the median row stay the leaf's own slices there; the text and the web page give each pair's term beside
the curves (:func:`pair_effects`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bases import QUANTILE_LEVELS

#: points on which a curve's effect is read over a feature's bulk
CURVE_POINTS = 65


@dataclass(frozen=True)
class CurveFrame:
    """Where each of the p features' curves is read, in scaled units (module docstring).

    Attributes
    ----------
    center : ndarray of shape (p,)
        Where every f_j is 0: the training median (the middle of the range, 0.5, without quantiles).
    bulk : ndarray of shape (p, 2)
        The 1st and 99th percentiles ((0, 1), the training range, without quantiles).
    deciles : ndarray of shape (p, 9) or (p, 0)
        The deciles of the training rows (none without quantiles).
    baseline : str
        What u_0 is the score at: "median row" or "mid-range".
    """

    center: np.ndarray
    bulk: np.ndarray
    deciles: np.ndarray
    baseline: str

    def grid(self, j: int) -> np.ndarray:
        """Scaled points over feature j's bulk, its center among them (so that an effect's range holds its 0)."""
        return np.sort(np.r_[np.linspace(*self.bulk[j], CURVE_POINTS), self.center[j]])


def curve_frame(basis, p: int) -> CurveFrame:
    """The :class:`CurveFrame` of a fitted leaf basis of p features (its quantiles, if it keeps them)."""
    quantiles = basis.quantiles
    if quantiles is None:
        return CurveFrame(np.full(p, 0.5), np.tile([0.0, 1.0], (p, 1)), np.zeros((p, 0)), "mid-range")
    levels = np.asarray(QUANTILE_LEVELS)
    deciles = quantiles[:, (levels > 0.05) & (levels < 0.95)]
    return CurveFrame(basis.medians(), quantiles[:, [0, -1]], deciles, "median row")


def curve_effects(basis, coef, frame: CurveFrame) -> tuple[float, np.ndarray, np.ndarray]:
    """A score vector ``coef`` (q,) read as u = u_0 + sum_j f_j(x_j), every f_j 0 at its center: (u_0, the lowest
    and the highest f_j over each feature's bulk (p,)), in scaled units."""
    p = len(frame.center)
    low, high, base = np.zeros(p), np.zeros(p), float(coef[0])
    for j in range(p):
        at_center = float(basis.curve(j, coef, frame.center[j:j + 1])[0])
        values = basis.curve(j, coef, frame.grid(j)) - at_center
        base += at_center
        low[j], high[j] = values.min(), values.max()
    return base, low, high


def pair_effects(basis, coef, frame: CurveFrame) -> list[tuple[int, int, float, float]]:
    """Each pair's term s_P c (x_j - m_j)(x_k - m_k) of a score vector ``coef`` (q,) read as the curves are: (j, k,
    its lowest and highest value over the box of both features' bulk), in scaled units; it is 0 wherever either
    feature is at its median (a bilinear term's extremes over a box are at its corners)."""
    m, effects = basis.medians(), []
    for column, (j, k) in zip(basis.pair_columns(), basis.pairs):
        corners = np.outer(frame.bulk[j] - m[j], frame.bulk[k] - m[k]).ravel()
        values = np.r_[0.0, basis.pair_scale * coef[column] * corners]
        effects.append((j, k, float(values.min()), float(values.max())))
    return effects


def curve_notes(frame: CurveFrame, curved, names, x_min, span, units, pairs=False) -> list[str]:
    """The text lines saying how a leaf with curves reads, and where the curved features' bulk and center lie
    (in original units unless ``units`` is "scaled"; none for a frame without quantiles), and how a pair's term
    reads when the basis has ``pairs``."""
    if frame.baseline == "mid-range":
        return ["curves: a leaf reads u = u(mid-range) + sum of f(x) over its features, each f 0 at the middle of "
                "the feature's training range; f(x)[a, b] gives the lowest and highest effect over that range (in "
                "the score's units), the largest range first"]
    scale = (lambda j, v: v) if units == "scaled" else (lambda j, v: x_min[j] + span[j] * v)
    ranges = ", ".join(f"{names[j]} {scale(j, frame.bulk[j, 0]):.4g}..{scale(j, frame.bulk[j, 1]):.4g} "
                       f"({scale(j, frame.center[j]):.4g})" for j in curved)
    return ["curves: a leaf reads u = u(median row) + sum of f(x) over its features, each f 0 at the feature's "
            "training median; f(x)[a, b] gives the lowest and highest effect over the feature's 1-99% range (the "
            "1st to 99th percentile of its training rows; in the score's units), the largest range first",
            f"curve ranges, 1-99% of the training rows (median): {ranges}"] + (
        ["f(a & b): a pair's term c (a - median)(b - median), 0 wherever a or b is at its median; [lowest, highest] "
         "over both features' 1-99% ranges"] if pairs else [])


__all__ = ["CURVE_POINTS", "CurveFrame", "curve_effects", "curve_frame", "curve_notes", "pair_effects"]
