"""A penalty as a NODEC block subproblem sees it: a function of some rows of omega or beta, the rest fixed."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import casadi as ca
import numpy as np

from .layout import casadi_rows, feature_squares, pyomo_rows

if TYPE_CHECKING:
    from .penalties import Penalty


def _group_radius(parts, c2, active, iterations=100):
    """r > 0 solving S(r) = sum_k a_k / (r + b_k)^2 + c2 / r^2 = 1 (``parts`` = [(a_k, b_k)], arrays per
    feature) where ``active``.  Newton's method on psi(r) = S(r)^(-1/2) - 1, as Moré and Sorensen solve
    the secular equation of a trust region: psi is increasing and concave, and nearly linear (linear
    for one term), so from r = sqrt(c2), where S >= 1, the iterates increase monotonically to the
    root in a few steps (Newton on S itself grows a small r only by half per step)."""
    r = np.sqrt(c2)
    for _ in range(iterations):
        safe = np.where(r > 0, r, 1.0)
        S = sum(a / (r + b) ** 2 for a, b in parts) + np.where(c2 > 0, c2 / safe**2, 0.0)
        T = sum(a / (r + b) ** 3 for a, b in parts) + np.where(c2 > 0, c2 / safe**3, 0.0)  # -S'/2
        step = np.where(active & (T > 0) & (S > 1.0), (S * np.sqrt(S) - S) / np.where(T > 0, T, 1.0), 0.0)
        r = r + step
        if np.all(np.abs(step) <= 1e-13 * np.maximum(1.0, r)):
            break
    return np.where(r > 0, r, 1.0)


def _fixed_squares(block) -> np.ndarray:
    """c_j^2 of a feature_l1 block: the weighted squares of feature j's weights outside it."""
    omega_fixed, beta_fixed = _fixed_rows(block.kind, block.rows, block.omega, block.beta)
    if block.kind == "beta":
        beta_fixed, omega_fixed = omega_fixed, beta_fixed
    return sum(block.penalty._squares(omega_fixed, beta_fixed))


def _fixed_rows(kind, rows, omega, beta):
    """The arrays of the fixed rows: the other rows of the block's array and the whole other array."""
    own, other = (omega, beta) if kind == "omega" else (beta, omega)
    keep = np.setdiff1d(np.arange(own.shape[0]), rows)
    return own[keep], other




@dataclass
class BlockPenalty:
    """``penalty`` as a function of the rows ``rows`` of omega (``kind`` "omega") or of beta,
    the other rows fixed at their values in ``omega`` and ``beta``.  ``X`` is the block,
    shape (len(rows), p+1).

    Parameters
    ----------
    penalty : Penalty
        The penalty term.
    kind : {"omega", "beta"}
        The array the block's rows belong to.
    rows : tuple of int
        The block's rows of that array (0-based: ``Tree.branch_index`` / ``Tree.leaf_index``).
    omega : ndarray of shape (2^D - 1, p + 1)
        Split weights, giving the values of the fixed rows.
    beta : ndarray of shape (2^D, p + 1)
        Leaf weights, giving the values of the fixed rows.
    """

    penalty: Penalty
    kind: str
    rows: tuple
    omega: np.ndarray
    beta: np.ndarray

    @property
    def smooth(self) -> bool:
        return self.penalty.smooth

    def full(self, X):
        """(omega, beta) with the block's rows replaced by X."""
        omega, beta = self.omega.copy(), self.beta.copy()
        (omega if self.kind == "omega" else beta)[list(self.rows)] = X
        return omega, beta

    def value(self, X) -> float:
        return self.penalty.value(*self.full(X))

    def gradient(self, X):
        g = self.penalty.gradient(*self.full(X))[0 if self.kind == "omega" else 1]
        return g[list(self.rows)]

    def value_and_gradient(self, x):
        """(value, gradient) at the block given flat (``x``, the subproblem's variables), the
        gradient flat: what a subproblem's ``evaluate`` adds."""
        X = np.reshape(x, (len(self.rows), -1))
        return self.value(X), self.gradient(X).ravel()

    def prox(self, V, step):
        return self.penalty.block_prox(self.kind, self.rows, self.omega, self.beta, V, step)

    def l1_weights(self):
        return self.penalty.block_l1_weights(self.kind, self.rows, self.omega, self.beta)

    def ridge(self):
        """The diagonal curvature r when the term is sum r x^2 / 2 - s . x + constant on the block
        (s: :meth:`shift`), else None."""
        return None

    def shift(self):
        """s of :meth:`ridge`'s quadratic form: 0 unless the term pulls towards a nonzero point."""
        return 0.0

    def casadi(self, X, omega, beta):
        """CasADi expression of the block X (matrix) with the fixed values ``omega``, ``beta``
        (CasADi matrices, e.g. parameters)."""
        full = [X[list(self.rows).index(i), :] if i in self.rows else (omega if self.kind == "omega" else beta)[i, :]
                for i in range((omega if self.kind == "omega" else beta).shape[0])]
        if self.kind == "omega":
            return self.penalty.casadi(ca.vertcat(*full), beta)
        return self.penalty.casadi(omega, ca.vertcat(*full))

    def pyomo(self, X):
        """Pyomo expression of the block X (rows of Pyomo variables), the fixed rows as numbers."""
        own = self.omega if self.kind == "omega" else self.beta
        rows = [X[self.rows.index(i)] if i in self.rows else [float(v) for v in own[i]] for i in range(len(own))]
        if self.kind == "omega":
            return self.penalty.pyomo(rows, [[float(v) for v in r] for r in self.beta])
        return self.penalty.pyomo([[float(v) for v in r] for r in self.omega], rows)


class L2Block(BlockPenalty):
    """The l2 term of a block: lambda/2 ||X||^2 (the fixed rows only add a constant, left out)."""

    @cached_property
    def strength(self) -> float:
        return self.penalty.lambda_w if self.kind == "omega" else self.penalty.lambda_b

    def value(self, X):
        x = np.ravel(X)
        return 0.5 * self.strength * x @ x

    def gradient(self, X):
        return self.strength * X

    def value_and_gradient(self, x):
        return 0.5 * self.strength * x @ x, self.strength * x

    def ridge(self) -> np.ndarray:
        """The diagonal curvature of the block: lambda everywhere."""
        return np.full((len(self.rows), (self.omega if self.kind == "omega" else self.beta).shape[1]), self.strength)

    def casadi(self, X, omega, beta):
        return 0.5 * self.strength * ca.sumsqr(X)

    def pyomo(self, X):
        return 0.5 * self.strength * sum(v * v for row in X for v in row)


class LeafShrinkageBlock(BlockPenalty):
    """The leaf_shrinkage term of a block of leaves: strength/2 ||X - c||^2 = strength x^2 / 2 -
    (strength c) . x + constant."""

    @cached_property
    def _center(self) -> np.ndarray:
        return np.broadcast_to(self.penalty._c(self.beta.shape[1]), (len(self.rows), self.beta.shape[1]))

    def value(self, X):
        d = np.reshape(X, self._center.shape) - self._center
        return 0.5 * self.penalty.strength * float(np.sum(d * d))

    def gradient(self, X):
        return self.penalty.strength * (np.reshape(X, self._center.shape) - self._center)

    def ridge(self) -> np.ndarray:
        return np.full(self._center.shape, self.penalty.strength)

    def shift(self) -> np.ndarray:
        return self.penalty.strength * self._center


class FeatureL1Block(BlockPenalty):
    """The feature_l1 term of a block, with the weighted norms c_j of each feature's fixed
    weights computed once."""

    @cached_property
    def fixed_squares(self) -> np.ndarray:
        """c_j^2: the weighted squares of feature j's weights outside the block."""
        return _fixed_squares(self)

    def prox(self, V, step):
        """Per feature j, with c_j^2 the weighted squares of its fixed weights and d the weight of
        the block (w for omega, 1 for beta): argmin_x step strength sqrt(d^2 ||x||^2 + c_j^2)
        + ||x - v||^2 / 2 = v r / (r + step strength d^2), r the root of
        d^2 ||v||^2 / (r + step strength d^2)^2 + c_j^2 / r^2 = 1 (block soft-thresholding
        when c_j = 0: zero when ||v|| <= step strength d)."""
        X = np.array(V, float)
        t = step * self.penalty.strength
        d = self.penalty.weight(self.omega.shape[1]) if self.kind == "omega" else 1.0
        view, c2 = self.penalty._view(self.kind, X), self.fixed_squares
        if view.shape[1] == 1:  # constant leaves: no feature weight in the block
            return X
        V2 = np.sum(view[:, 1:] ** 2, axis=0)
        zero = (c2 == 0) & (np.sqrt(V2) <= t * d)
        r = _group_radius([(d**2 * V2, t * d**2)], c2, ~zero)
        view[:, 1:] *= np.where(zero, 0.0, r / (r + t * d**2))
        return X


class FeatureL1Majorizer(BlockPenalty):
    """strength sum_j (d^2 ||X_j||^2 + c_j^2) / (2 eta_j) + eta_j / 2 over the block X (d = w for
    omega rows, 1 for beta rows; c_j^2 the weighted squares of feature j's fixed weights),
    eta_j the group norm at the block's current values: a smooth majorizer of the
    feature_l1 term, equal to it at the current values.  A group that is zero stays zero
    (its weight 1 / eta_j is capped at 1 / ``ETA_FLOOR``)."""

    ETA_FLOOR = 1e-12

    @property
    def smooth(self) -> bool:
        return True

    @cached_property
    def _terms(self):
        """(d^2, c_j^2, eta_j)."""
        d = self.penalty.weight(self.omega.shape[1]) if self.kind == "omega" else 1.0
        current = self.penalty._view(self.kind, (self.omega if self.kind == "omega" else self.beta)[list(self.rows)])
        c2 = _fixed_squares(self)
        eta = np.maximum(np.sqrt(d**2 * feature_squares(current, len(c2)) + c2), self.ETA_FLOOR)
        return d**2, c2, eta

    def ridge(self) -> np.ndarray:
        """The diagonal curvature r of the block (value = sum r x^2 / 2 + constant)."""
        d2, _, eta = self._terms
        r = np.zeros((len(self.rows), (self.omega if self.kind == "omega" else self.beta).shape[1]))
        view = self.penalty._view(self.kind, r)
        if view.shape[1] > 1:
            view[:, 1:] = self.penalty.strength * d2 / eta
        return r

    def value(self, X) -> float:
        d2, c2, eta = self._terms
        squares = feature_squares(self.penalty._view(self.kind, np.asarray(X)), len(eta))
        return self.penalty.strength * float(np.sum((d2 * squares + c2) / (2 * eta) + eta / 2))

    def gradient(self, X):
        return self.ridge() * np.asarray(X)

    def casadi(self, X, omega, beta):
        d2, c2, eta = self._terms
        view = casadi_rows(X, self.penalty._outputs if self.kind == "beta" else 1)
        squares = [ca.sumsqr(view[:, j + 1]) if view.shape[1] > 1 else 0.0 for j in range(len(eta))]
        return self.penalty.strength * sum((d2 * squares[j] + c2[j]) / (2 * eta[j]) + eta[j] / 2
                                           for j in range(len(eta)))

    def pyomo(self, X):
        d2, c2, eta = self._terms
        view = [row for row in pyomo_rows(X, self.penalty._outputs if self.kind == "beta" else 1) if len(row) > 1]
        return self.penalty.strength * sum((d2 * sum(row[j + 1] * row[j + 1] for row in view) + float(c2[j]))
                                           / (2 * float(eta[j])) + float(eta[j]) / 2 for j in range(len(eta)))
