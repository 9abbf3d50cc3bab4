"""The weighted logistic regression proxy of eq. (reshuffle), used by the reassignment heuristic."""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from ... import kernels
from .. import casadi_backend as cb
from ..casadi_backend import pad as _pad
from ..casadi_backend import padded_rows
from .base import Composite


def omega_from_logistic(intercept, coef, mu: float) -> np.ndarray:
    """omega_t of the split whose left probability is the logistic model sigma(b + c.x).

    F(omega_0 + (1/p) omega.x) = sigma(mu omega_0 + (mu/p) omega.x), so
    omega_0 = b / mu and omega_j = p c_j / mu.
    """
    coef = np.ravel(coef)
    return np.r_[np.ravel(intercept)[:1] / mu, coef * len(coef) / mu]


@dataclass
class WLRProxy(Composite):
    """Weighted logistic regression of eq. (reshuffle) over omega_t:

        -(1/N_t) sum_{i in I_t} w_i [c_i ln p_it + (1 - c_i) ln(1 - p_it)]
        + alpha/2 ||omega_t[1:]||^2

    ``alpha`` (default 0, the paper's equation) adds the ridge term that a
    regularised logistic-regression solver uses on the non-intercept
    coefficients; it makes the minimiser finite on separable data.

    ``nonsmooth``: the nonsmooth penalty terms of E on the row omega_t
    (:class:`~.terms.BlockPenalty`), times ``nonsmooth_scale``; with them the
    heuristic's split is sparse like the rest of the tree (NODEC-DR passes N / N_t,
    the ratio of the WLR's 1/N_t to E's 1/N).
    """

    Z: np.ndarray
    c: np.ndarray
    w: np.ndarray
    mu: float
    omega_t: np.ndarray
    alpha: float = 0.0
    name: str = "wlr_proxy"
    nonsmooth: tuple = ()
    nonsmooth_scale: float = 1.0
    variable_bounds: tuple | None = None

    def start(self) -> np.ndarray:
        return np.asarray(self.omega_t, float).copy()

    def bounds(self):
        """(lower, upper) of omega_t from the constraints (e.g. a monotone feature's weight fixed to 0)."""
        return self.variable_bounds

    def evaluate_smooth(self, x):
        x = np.asarray(x, float)
        n = len(self.c)
        loss, g, _ = kernels.weighted_logistic(self.Z, self.c, self.w, self.mu, x)
        g /= n
        g[1:] += self.alpha * x[1:]
        return float(loss / n + 0.5 * self.alpha * x[1:] @ x[1:]), g

    def nonsmooth_value(self, x) -> float:
        X = np.reshape(x, (1, -1))
        return self.nonsmooth_scale * sum(term.value(X) for term in self.nonsmooth)

    def prox(self, x, step):
        X = np.reshape(np.asarray(x, float), (1, -1))
        for term in self.nonsmooth:
            X = term.prox(X, step * self.nonsmooth_scale)
        return X.ravel()

    def l1_weights(self):
        weights = [term.l1_weights() for term in self.nonsmooth]
        if any(w is None for w in weights):
            return None
        return self.nonsmooth_scale * sum(weights, np.zeros((1, len(self.omega_t)))).ravel()

    def hessian(self, x) -> np.ndarray:
        """Exact Hessian of the WLR objective: mu^2/N_t Z^T diag(w p (1 - p)) Z + alpha on omega_{1:}."""
        h = kernels.weighted_logistic(self.Z, self.c, self.w, self.mu, x, with_curvature=True)[2]
        H = (self.Z.T * h) @ self.Z * (self.mu**2 / len(self.c))
        H[1:, 1:] += self.alpha * np.eye(len(x) - 1)
        return H

    @property
    def structure_key(self) -> tuple:
        # nonsmooth terms embed the fixed weights of the tree: no model is shared then
        return (("wlr", padded_rows(len(self.c)), self.Z.shape[1]) + ((id(self),) if self.nonsmooth else ())
                + self.constraint_key())

    def render(self) -> cb.CasadiModel:
        n, q = padded_rows(len(self.c)), self.Z.shape[1]
        x = ca.MX.sym("omega_t", q)
        Zp, cp, wp = ca.MX.sym("Z", n, q), ca.MX.sym("c", n), ca.MX.sym("w", n)
        mu, alpha, inv_n = ca.MX.sym("mu"), ca.MX.sym("alpha"), ca.MX.sym("inv_Nt")
        u = mu * ca.mtimes(Zp, x)
        loss = wp * (cp * cb.softplus(-u) + (1 - cp) * cb.softplus(u))
        f = inv_n * ca.sum1(loss) + 0.5 * alpha * ca.sumsqr(x[1:])
        for term in self.nonsmooth:
            f += self.nonsmooth_scale * term.casadi(x.T, ca.DM(term.omega), ca.DM(term.beta))
        p = ca.vertcat(ca.vec(Zp), cp, wp, mu, alpha, inv_n)
        return self.casadi_model(x, p, f, [f"omega_t[{j}]" for j in range(q)])

    def render_parameters(self) -> np.ndarray:
        n = padded_rows(len(self.c))
        return np.concatenate([_pad(self.Z, n).ravel("F"), _pad(self.c, n), _pad(self.w, n),
                               [self.mu, self.alpha, 1.0 / len(self.c)]])

    def render_pyomo(self):
        """eq. (reshuffle) in Pyomo, one softplus pair per point (+ the nonsmooth terms)."""
        from .. import pyomo_backend as pb

        q = self.Z.shape[1]
        names = [f"omega_t[{j}]" for j in range(q)]
        m = pb.model(self.name, self.start(), names)
        x, n = [m.x[j] for j in range(q)], len(self.c)
        terms = []
        for i in range(n):
            if self.w[i] == 0:
                continue
            u = self.mu * pb.linear(self.Z[i], x)
            terms.append(float(self.w[i]) * (float(self.c[i]) * pb.softplus(-u)
                                             + float(1 - self.c[i]) * pb.softplus(u)))
        penalties = [0.5 * self.alpha * sum(x[j] ** 2 for j in range(1, q))]
        penalties += [self.nonsmooth_scale * term.pyomo([x]) for term in self.nonsmooth]
        self.pyomo_constraints(m, [])
        return pb.finish(m, [(1.0 / n) * t for t in terms], penalties, names)
