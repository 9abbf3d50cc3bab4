"""Reformulations an adapter applies to a formulation before handing it to its solver.

:class:`VariableSplit` -- the variable split of a weighted l1 term: a nonsmooth
formulation f(x) + sum_c w_c |x_c| (``l1_weights()`` gives w) becomes the smooth,
bound-constrained problem

    min over (x_free, u, v)  f(x) + sum_c w_c (u_c + v_c),   x_c = u_c - v_c,  u, v >= 0,

over the coordinates c with w_c > 0.  A bound-constrained solver then sees a smooth
problem; at its solution u_c v_c = 0 (a positive pair would waste w_c), and x_c is
exactly 0 when both sit on their bound (L-BFGS-B's projection puts them there exactly;
an interior-point method only approaches it).  Bounds lo <= x_c <= hi of the formulation
(``bounds()``, from its constraints) become u_c in [max(lo, 0), max(hi, 0)] and v_c in
[max(-hi, 0), max(-lo, 0)]: every x_c of [lo, hi] has such a pair with u_c v_c = 0, and no other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class VariableSplit:
    """The bound-constrained smooth problem of ``problem`` (module docstring), variables
    y = (x at the unweighted coordinates, u, v)."""

    problem: object

    def __post_init__(self):
        self.weights = np.asarray(self.problem.l1_weights(), float)
        self.split = self.weights > 0
        self.w = self.weights[self.split]
        self.name = f"{self.problem.name}_split"
        bounds = getattr(self.problem, "bounds", lambda: None)()
        n = len(self.weights)
        self.x_bounds = bounds if bounds is not None else (np.full(n, -np.inf), np.full(n, np.inf))

    @property
    def n_free(self) -> int:
        return int(np.sum(~self.split))

    def y_of(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        c = x[self.split]
        return np.concatenate([x[~self.split], np.maximum(c, 0.0), np.maximum(-c, 0.0)])

    def x_of(self, y) -> np.ndarray:
        y = np.asarray(y, float)
        k, m = self.n_free, len(self.w)
        x = np.empty(len(self.weights))
        x[~self.split] = y[:k]
        x[self.split] = y[k:k + m] - y[k + m:]
        return x

    def start(self) -> np.ndarray:
        return self.y_of(self.problem.start())

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of y: the free coordinates' own bounds, u and v >= 0 within those of x
        (module docstring)."""
        lo, hi = (np.asarray(b, float) for b in self.x_bounds)
        c_lo, c_hi = lo[self.split], hi[self.split]
        lower = np.concatenate([lo[~self.split], np.maximum(c_lo, 0.0), np.maximum(-c_hi, 0.0)])
        upper = np.concatenate([hi[~self.split], np.maximum(c_hi, 0.0), np.maximum(-c_lo, 0.0)])
        return lower, upper

    def evaluate(self, y):
        y = np.asarray(y, float)
        f, g = self.problem.evaluate_smooth(self.x_of(y))
        k, m = self.n_free, len(self.w)
        uv = y[k:]
        gc = g[self.split]
        return f + self.w @ (uv[:m] + uv[m:]), np.concatenate([g[~self.split], gc + self.w, -gc + self.w])
