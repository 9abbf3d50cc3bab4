"""The ORRT training problem: randomized (soft) regression trees of Blanquero,
Carrizosa, Molero-Rio and Romero Morales (2022), eq. (formulation) of the paper's
section 3.

Same soft oblique splits and linear leaves as SRT (eq. cdf, ``Z = [1, X/p]``,
``Xa = [1, X]``), but the prediction of x_i is the probability-weighted sum of all
leaf outputs and the loss is the squared error of that prediction:

    E_ORRT(omega, beta) = sum_i s_i (sum_{t in tau_L} P_it yhat_it - y_i)^2
                          + lambda_w/2 ||omega||^2 + lambda_b/2 ||beta||^2

with s_i = 1/N in the paper (no l2 terms there; they are optional here, intercepts
included, as in eq. obj).  The numpy evaluator is built from the kernels of
:mod:`srtopt.kernels` and the CasADi rendering from :mod:`.casadi_backend`; neither
restates the leaf probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from .. import kernels
from ..tree import Tree
from . import casadi_backend as cb
from .srt import SRTProblem


def soft_prediction(Z: np.ndarray, Xa: np.ndarray, omega: np.ndarray, beta: np.ndarray, mu: float,
                    tree: Tree) -> np.ndarray:
    """ORRT prediction sum_{t in tau_L} P_it yhat_it (eq. formulation), shape (n,).

    ``Z`` and ``Xa`` are the split and leaf designs of :mod:`srtopt.kernels`.
    """
    S = kernels.split_probabilities(Z, omega, mu)
    return np.einsum("it,it->i", kernels.leaf_probabilities(S, tree), Xa @ beta.T)


@dataclass
class ORRTObjective:
    """E_ORRT(omega, beta) of eq. (formulation) (+ optional l2 terms) over all
    variables x = (vec omega, vec beta), both row-major like ``ndarray.ravel``.

    ``problem`` supplies the data only (X in [0,1]^p, standardized y, weights s_i
    summing to 1, ``mu``, ``lambda_w``, ``lambda_b``); its own ``objective`` is the
    SRT error and is not used here.  ``omega`` and ``beta`` fix the shapes and the
    start.
    """

    problem: SRTProblem
    omega: np.ndarray
    beta: np.ndarray
    name: str = "orrt_objective"

    @classmethod
    def from_data(cls, X, y, tree: Tree, omega, beta, mu=1.0, lambda_w=0.0, lambda_b=0.0,
                  weights=None) -> "ORRTObjective":
        return cls(SRTProblem(np.asarray(X, float), np.asarray(y, float), tree, mu, lambda_w, lambda_b,
                              weights), np.asarray(omega, float), np.asarray(beta, float))

    @property
    def tree(self) -> Tree:
        return self.problem.tree

    @property
    def n_variables(self) -> int:
        return self.omega.size + self.beta.size

    def split(self, x):
        """(omega, beta) from a flat x."""
        k = self.omega.size
        x = np.asarray(x, float)
        return np.reshape(x[:k], self.omega.shape), np.reshape(x[k:], self.beta.shape)

    def start(self) -> np.ndarray:
        return np.concatenate([self.omega.ravel(), self.beta.ravel()])

    def predict(self, x) -> np.ndarray:
        """sum_t P_it yhat_it on the problem's rows at x."""
        pr = self.problem
        return soft_prediction(pr.Z, pr.Xa, *self.split(x), pr.mu, pr.tree)

    def evaluate(self, x):
        """(E_ORRT, gradient) at x with the numpy kernels, vectorised over the rows.

        With r_i = yhat_i - y_i and Yhat = Xa beta^T:
        dE/dbeta_t = 2 sum_i s_i r_i P_it Xa_i (+ lambda_b beta_t) and, because
        yhat_i is the upward sweep of :func:`kernels.soft_loss` with leaf values
        Yhat, dE/domega_a = Z^T G[:, a] where G is that sweep's derivative with row
        weights 2 s_i r_i (+ lambda_w omega_a).
        """
        pr, tree = self.problem, self.problem.tree
        omega, beta = self.split(x)
        S = kernels.split_probabilities(pr.Z, omega, pr.mu)
        P = kernels.leaf_probabilities(S, tree)
        Yhat = pr.Xa @ beta.T
        r = np.einsum("it,it->i", P, Yhat) - pr.y
        f = (float(pr.s @ r**2) + 0.5 * pr.lambda_w * np.sum(omega**2)
             + 0.5 * pr.lambda_b * np.sum(beta**2))
        w = 2.0 * pr.s * r
        _, G = kernels.soft_loss(S, Yhat, w, tree, 1, pr.mu)
        g_omega = G.T @ pr.Z + pr.lambda_w * omega
        g_beta = (w[:, None] * P).T @ pr.Xa + pr.lambda_b * beta
        return f, np.concatenate([g_omega.ravel(), g_beta.ravel()])

    @property
    def structure_key(self) -> tuple:
        """Problems with the same key share one symbolic model (and one compiled solver):
        data, mu and the lambdas are parameters of the rendering."""
        return ("orrt", self.tree.depth, self.problem.Z.shape[0], self.problem.Z.shape[1])

    def render(self) -> cb.CasadiModel:
        """Vectorised CasADi MX model of E_ORRT with the data, mu and lambdas as parameters.

        The prediction sum_t P_it yhat_it is the upward sweep of
        :func:`casadi_backend.soft_loss` with leaf values Yhat; that function returns
        the s-weighted sum of the sweep, which is linear in s, so the per-row sweep is
        its gradient with respect to a placeholder s (an expression free of it).
        """
        tree = self.tree
        n, q = self.problem.Z.shape
        x = ca.MX.sym("x", self.n_variables)
        Zp, Xp, yp, sp = ca.MX.sym("Z", n, q), ca.MX.sym("Xa", n, q), ca.MX.sym("y", n), ca.MX.sym("s", n)
        mu, lam_w, lam_b = ca.MX.sym("mu"), ca.MX.sym("lambda_w"), ca.MX.sym("lambda_b")
        omega = cb.matrix(x[: self.omega.size], tree.n_branch, q)
        beta = cb.matrix(x[self.omega.size:], tree.n_leaves, q)
        S = cb.sigmoid(ca.mtimes(Zp, omega.T), mu)
        Yhat = ca.mtimes(Xp, beta.T)
        placeholder = ca.MX.sym("row_weights", n)
        columns = {t: tree.branch_index(t) for t in tree.branch_nodes}
        prediction = ca.gradient(cb.soft_loss(S, Yhat, placeholder, tree, 1, columns), placeholder)
        residual = prediction - yp
        f = (ca.dot(sp, residual**2) + 0.5 * lam_w * ca.sumsqr(omega) + 0.5 * lam_b * ca.sumsqr(beta))
        p = ca.vertcat(ca.vec(Zp), ca.vec(Xp), yp, sp, mu, lam_w, lam_b)
        names = ([f"omega[{t}][{j}]" for t in tree.branch_nodes for j in range(q)]
                 + [f"beta[{t}][{j}]" for t in tree.leaves for j in range(q)])
        return cb.CasadiModel(self.name, x, p, f, self.render_parameters(), names)

    def render_parameters(self) -> np.ndarray:
        """Values of the rendered model's parameters, in the order of ``render().p``."""
        pr = self.problem
        return np.concatenate([pr.Z.ravel("F"), pr.Xa.ravel("F"), pr.y, pr.s,
                               [pr.mu, pr.lambda_w, pr.lambda_b]])
