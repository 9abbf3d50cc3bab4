"""The steps and pairs a spline basis gets (a spline leaf's ``steps`` and ``pairs`` options,
:mod:`srtopt.bases`), screened on one additive model of all rows, as the smoothness is chosen there
(:func:`.fitting.gcv_strength`).

The model of all rows on the basis so far (:class:`AdditiveFit`: the l2 term of eq. (obj) on every column but the
intercept) leaves residuals; a candidate block of columns S is fitted to them as a ridge regression, S with the
basis's columns partialled out, its strength chosen by generalized cross-validation (GCV) among
:data:`STRENGTHS`, and kept when its GCV score is below the score of the basis alone by more than
:data:`GAIN_MARGIN` / n of it: it explains about that many residual variances more than its degrees of freedom
cost (a block of noise, tried at every strength, often beats the basis alone by a few).  Each kind then gets one
strength, GCV's for all the kept columns of that kind together.

* Steps: a feature's candidate thresholds are :func:`step_thresholds`; its steps are one block.
* Pairs: every pair (j, k) of features is ranked by what its centred product (x_j - m_j)(x_k - m_k) alone explains
  of the residuals (m the medians; features whose columns differ only by sign or an offset, as the two columns
  of a yes/no text column, counted once); the best are tried in turn, each against the basis and the pairs kept
  before it, until ``pairs`` are kept.  A pair needs :data:`PAIR_ROWS` rows with both features off their medians.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

#: the strengths GCV tries, of the smoothness (summed squared error of standardized targets + strength ||D2 a||^2,
#: :func:`.fitting.gcv_strength`) and of the steps' and pairs' ridges
STRENGTHS = np.logspace(-8, 4, 49)
#: a step leaves at least this many training rows (of positive weight) on either side of its threshold
STEP_ROWS = 10
#: a pair's product is nonzero on at least this many training rows (both features off their medians)
PAIR_ROWS = 30
#: the pairs tried, per pair asked for, in the order of what each explains alone
PAIR_CANDIDATES = 5
#: a block is kept when n (1 - its GCV score / the basis's) exceeds this (module docstring); on 1500 rows, the
#: steps of pure noise features reached 5.4 (tests/models/test_screening.py)
GAIN_MARGIN = 10.0


def gcv_score(n: int, rss, df):
    """Generalized cross-validation's score n RSS / (n - df)^2 of a linear smoother of ``df`` degrees of freedom
    (the trace of its hat matrix), the denominator kept at 1 or more."""
    return n * rss / np.maximum(n - df, 1.0) ** 2


def seen_rows(Xa, T, weights):
    """(Xa, T (n, k), w) of the rows of positive weight, the weights of mean 1."""
    w = np.asarray(weights, float)
    seen = w > 0
    return Xa[seen], np.reshape(T, (len(T), -1))[seen], w[seen] / w[seen].mean()


class AdditiveFit:
    """The additive model of all rows (of positive weight, weights of mean 1) on a basis, its targets T (n, k)
    fitted alike: the ridge n lambda_b / 2 (eq. (obj)'s l2 term in these units) on every column but the
    intercept.  ``X``, ``residuals``, ``df`` (the trace of its hat matrix) and ``w`` are the rows'."""

    def __init__(self, basis, Xs, T, weights, lambda_b: float):
        self.Xa, self.T, self.w = seen_rows(basis.design(Xs), T, weights)
        self.X = Xs[np.asarray(weights) > 0]
        gram = (self.Xa.T * self.w) @ self.Xa
        ridge = np.full(len(gram), len(self.w) * lambda_b / 2.0)
        ridge[0] = 0.0
        ridge += 1e-10 * np.trace(gram) / len(gram)  # keeps collinear columns solvable
        self._factor = cho_factor(gram + np.diag(ridge))
        self.residuals = self.T - self.Xa @ cho_solve(self._factor, (self.Xa.T * self.w) @ self.T)
        self.df = len(gram) - float(np.sum(np.diag(cho_solve(self._factor, np.eye(len(gram)))) * ridge))

    def partialled(self, S) -> np.ndarray:
        """The columns S (n, m) less their fit on the basis."""
        S = np.asarray(S, float)
        return S - self.Xa @ cho_solve(self._factor, (self.Xa.T * self.w) @ S)

    def pays(self, S) -> bool:
        """Whether the block S is kept (module docstring)."""
        score, _, alone = self.gcv(S)
        return len(self.w) * (1.0 - score / alone) > GAIN_MARGIN

    def gcv(self, S) -> tuple[float, float, float]:
        """(the least GCV score n RSS / (n - df - tr H_S)^2 of the basis and the block S over the strengths, its
        strength, the score of the basis alone): the ridge regression of the residuals on S partialled, one
        eigendecomposition giving every strength's fit."""
        S, w, R, n = self.partialled(S), self.w, self.residuals, len(self.w)
        values, vectors = np.linalg.eigh((S.T * w) @ S)
        kept = values > 1e-10 * max(values.max(initial=0.0), np.finfo(float).tiny)
        values, Z = values[kept], vectors[:, kept].T @ ((S.T * w) @ R)
        rss0 = float(np.sum(w[:, None] * R ** 2))
        shrink = values / (values + STRENGTHS[:, None])  # (strengths, m)
        rss = rss0 - ((2.0 * shrink - shrink ** 2) / values) @ np.sum(Z ** 2, axis=1)
        scores = gcv_score(n, rss, self.df + shrink.sum(axis=1))
        best = int(np.argmin(scores))
        return float(scores[best]), float(STRENGTHS[best]), float(gcv_score(n, rss0, self.df))


def screened_steps(basis, Xs, T, weights, lambda_b: float, n_steps: int) -> tuple[dict, float | None]:
    """({j: thresholds} of the features whose steps pay, GCV's strength for them all; None without any)
    (module docstring)."""
    fit = AdditiveFit(basis, Xs, T, weights, lambda_b)
    kept = {}
    for j in range(fit.X.shape[1]):
        thresholds = step_thresholds(fit.X[:, j], n_steps)
        if len(thresholds) and fit.pays(fit.X[:, [j]] >= thresholds):
            kept[j] = thresholds
    if not kept:
        return {}, None
    return kept, fit.gcv(np.hstack([fit.X[:, [j]] >= t for j, t in kept.items()]))[1]


def step_thresholds(x: np.ndarray, n_steps: int) -> np.ndarray:
    """The candidate thresholds of a feature's steps, of its scaled training values x: every distinct value but
    the smallest when there are at most ``n_steps`` of them, else the values at the quantiles k / (n_steps + 1),
    k = 1..n_steps; those that leave fewer than :data:`STEP_ROWS` rows on a side dropped; none for a feature of
    fewer than 3 distinct values (its line is its step)."""
    values = np.unique(x)
    if len(values) < 3:
        return values[:0]
    candidates = values[1:] if len(values) - 1 <= n_steps else np.unique(
        np.quantile(x, np.arange(1, n_steps + 1) / (n_steps + 1), method="higher"))
    below = np.searchsorted(np.sort(x), candidates, side="left")
    return candidates[(below >= STEP_ROWS) & (len(x) - below >= STEP_ROWS) & (candidates > values[0])]


def screened_pairs(basis, Xs, T, weights, lambda_b: float, n_pairs: int) -> tuple[list, float | None]:
    """([(j, k)] of the pairs that pay, at most ``n_pairs``, GCV's strength for them all; None without any)
    (module docstring)."""
    fit = AdditiveFit(basis, Xs, T, weights, lambda_b)
    centred = fit.X - basis.medians()
    kept, columns = [], np.zeros((len(fit.w), 0))
    for j, k in ranked_pairs(centred, fit.residuals, fit.w)[:PAIR_CANDIDATES * n_pairs]:
        column = fit.partialled(centred[:, [j]] * centred[:, [k]])
        if kept:  # against the pairs kept before it too
            column = column - columns @ np.linalg.lstsq((columns.T * fit.w) @ columns,
                                                        (columns.T * fit.w) @ column, rcond=None)[0]
        if fit.pays(column):
            kept.append((j, k))
            columns = np.hstack([columns, column])
        if len(kept) == n_pairs:
            break
    if not kept:
        return [], None
    return kept, fit.gcv(np.column_stack([centred[:, j] * centred[:, k] for j, k in kept]))[1]


def ranked_pairs(centred, R, w) -> list:
    """The pairs (j, k), j < k, of the centred features' columns in the order of what their product explains of
    the residuals R (n, k) alone, (c' W R)^2 / (c' W c) summed over R's columns, the most first; those nonzero on
    fewer than :data:`PAIR_ROWS` rows left out, and of columns equal up to sign and offset the first kept."""
    distinct = _distinct_columns(centred)
    gains, pairs = [], []
    WR = w[:, None] * R
    for a, j in enumerate(distinct):
        others = np.array(distinct[a + 1:], dtype=int)
        if not len(others):
            break
        products = centred[:, [j]] * centred[:, others]
        norms = w @ products ** 2
        support = np.count_nonzero(products, axis=0)
        gain = np.sum((products.T @ WR) ** 2, axis=1) / np.maximum(norms, np.finfo(float).tiny)
        gain[(support < PAIR_ROWS) | (norms <= 0)] = -1.0
        gains.append(gain)
        pairs += [(j, int(k)) for k in others]
    if not pairs:
        return []
    gains = np.concatenate(gains)
    order = np.argsort(-gains, kind="stable")
    return [pairs[i] for i in order if gains[i] > 0]


def _distinct_columns(centred) -> list:
    """The columns of ``centred`` but those that repeat an earlier one up to sign and an offset (their
    standardized values equal or opposite) and the constant ones."""
    kept, seen = [], set()
    for j in range(centred.shape[1]):
        x = centred[:, j] - centred[:, j].mean()
        scale = np.abs(x).max()
        if scale == 0:
            continue
        x = np.round(x / scale, 12)
        key = (x if x[np.flatnonzero(x)[0]] > 0 else -x).tobytes()
        if key not in seen:
            seen.add(key)
            kept.append(j)
    return kept
