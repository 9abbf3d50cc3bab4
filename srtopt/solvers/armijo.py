"""Armijo steepest-descent reference step of the BN step (appendix "Armijo update").

Given the gradient g of E with respect to omega_{W_B}, the step along
d = -g (eq. steepest) has length alpha = a * delta^m with the smallest m >= 0
such that the sufficient-decrease condition (eq. armijo)

    E(omega_W + alpha d) <= E(omega) - gamma * alpha * ||g||^2

holds.  The paper's pseudocode writes the while-condition the other way round;
we backtrack while the condition does NOT hold (docs/departures.md).

With a nonsmooth penalty h (``prox`` given), the step is the proximal-gradient step
x(alpha) = prox_{alpha h}(x - alpha g) along the smooth part's gradient g, accepted when
F(x(alpha)) <= F(x) - (gamma / alpha) ||x(alpha) - x||^2 (the same condition when h = 0).
"""

from __future__ import annotations

import numpy as np


def armijo_step(f, x, fx, g, a=1.0, gamma=1e-4, delta=0.5, max_backtracks=60, prox=None):
    """Return (alpha, x_new, f_new) of the Armijo reference update from x.

    ``f`` evaluates E as a function of the working-set variables.  If no step
    length within ``max_backtracks`` halvings gives sufficient decrease (only
    possible when g is numerically zero), returns alpha = 0 and x unchanged.
    ``prox(v, alpha)``: the proximal operator of the nonsmooth terms (module docstring).
    """
    if not (0 < gamma < 1 and 0 < delta < 1 and a > 0):
        raise ValueError("Armijo needs a > 0 and gamma, delta in (0, 1)")
    gg = float(g @ g)
    alpha = a
    for _ in range(max_backtracks):
        if prox is None:
            x_new = x - alpha * g
            decrease = gamma * alpha * gg
        else:
            x_new = prox(x - alpha * g, alpha)
            decrease = gamma / alpha * float((x_new - x) @ (x_new - x))
        f_new = f(x_new)
        if f_new <= fx - decrease:
            return alpha, x_new, f_new
        alpha *= delta
    return 0.0, np.array(x, float), fx
