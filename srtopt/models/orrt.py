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
restates the leaf probabilities.  Like eq. (obj), the objective composes a loss term
(squared by default: eq. formulation) and penalty terms (:mod:`.terms`).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from .. import kernels
from ..tree import Tree
from . import casadi_backend as cb
from .srt import AllVariables, SRTProblem
from .terms import SQUARED


def soft_prediction(Z: np.ndarray, Xa: np.ndarray, omega: np.ndarray, beta: np.ndarray, mu: float,
                    tree: Tree) -> np.ndarray:
    """ORRT prediction sum_{t in tau_L} P_it yhat_it (eq. formulation), shape (n,).

    ``Z`` and ``Xa`` are the split and leaf designs of :mod:`srtopt.kernels`.
    """
    S = kernels.split_probabilities(Z, omega, mu)
    return np.einsum("it,it->i", kernels.leaf_probabilities(S, tree), Xa @ beta.T)


@dataclass
class ORRTObjective(AllVariables):
    """E_ORRT(omega, beta) of eq. (formulation) over all variables x = (vec omega, vec beta),
    both row-major like ``ndarray.ravel``, with the loss and penalty terms of ``problem``:
    sum_i s_i loss(sum_t P_it yhat_it - y_i) + the penalties (squared loss and the l2
    term: eq. formulation with optional l2 terms).

    ``problem`` supplies the data and the terms (X in [0,1]^p, standardized y, weights
    s_i summing to 1, ``mu``, ``lambda_w``, ``lambda_b``, ``loss``, ``penalties``); its
    own ``objective`` is the SRT error and is not used here.  ``omega`` and ``beta`` fix
    the shapes and the start.
    """

    problem: SRTProblem
    omega: np.ndarray
    beta: np.ndarray
    name: str = "orrt_objective"

    @classmethod
    def from_data(cls, X, y, tree: Tree, omega, beta, mu=1.0, lambda_w=0.0, lambda_b=0.0,
                  weights=None, loss=SQUARED, penalties=()) -> "ORRTObjective":
        return cls(SRTProblem(np.asarray(X, float), np.asarray(y, float), tree, mu, lambda_w, lambda_b,
                              weights, loss, penalties), np.asarray(omega, float), np.asarray(beta, float))

    @property
    def tree(self) -> Tree:
        return self.problem.tree

    def predict(self, x) -> np.ndarray:
        """sum_t P_it yhat_it on the problem's rows at x."""
        pr = self.problem
        return soft_prediction(pr.Z, pr.Xa, *self.split(x), pr.mu, pr.tree)

    def evaluate_smooth(self, x):
        """(smooth part of E_ORRT, its gradient) at x with the numpy kernels, vectorised over the rows.

        With r_i = yhat_i - y_i and Yhat = Xa beta^T:
        dE/dbeta_t = sum_i s_i loss'(r_i) P_it Xa_i (+ the penalties' gradient) and,
        because yhat_i is the upward sweep of :func:`kernels.soft_loss` with leaf values
        Yhat, dE/domega_a = Z^T G[:, a] where G is that sweep's derivative with row
        weights s_i loss'(r_i).
        """
        pr, tree = self.problem, self.problem.tree
        omega, beta = self.split(x)
        S = kernels.split_probabilities(pr.Z, omega, pr.mu)
        P = kernels.leaf_probabilities(S, tree)
        Yhat = pr.Xa @ beta.T
        r = np.einsum("it,it->i", P, Yhat) - pr.y
        w = pr.s * pr.loss.derivative(r)
        _, G = kernels.soft_loss(S, Yhat, w, tree, 1, pr.mu)
        f, g_omega, g_beta = float(pr.s @ pr.loss.value(r)), G.T @ pr.Z, (w[:, None] * P).T @ pr.Xa
        for term in pr.terms:
            if term.smooth:
                d_omega, d_beta = term.gradient(omega, beta)
                f, g_omega, g_beta = f + term.value(omega, beta), g_omega + d_omega, g_beta + d_beta
        return f, np.concatenate([g_omega.ravel(), g_beta.ravel()])

    @property
    def structure_key(self) -> tuple:
        """Problems with the same key share one symbolic model (and one compiled solver):
        data and mu are parameters of the rendering, the terms are part of it."""
        pr = self.problem
        return ("orrt", self.tree.depth, *pr.Z.shape, pr.loss.key, self._penalty_key())

    def render(self) -> cb.CasadiModel:
        """Vectorised CasADi MX model of E_ORRT with the data and mu as parameters.

        The prediction sum_t P_it yhat_it is the upward sweep of
        :func:`casadi_backend.soft_loss` with leaf values Yhat; that function returns
        the s-weighted sum of the sweep, which is linear in s, so the per-row sweep is
        its gradient with respect to a placeholder s (an expression free of it).
        """
        pr, tree = self.problem, self.tree
        n, q = pr.Z.shape
        x = ca.MX.sym("x", self.n_variables)
        Zp, Xp, yp, sp = ca.MX.sym("Z", n, q), ca.MX.sym("Xa", n, q), ca.MX.sym("y", n), ca.MX.sym("s", n)
        mu = ca.MX.sym("mu")
        omega = cb.matrix(x[: self.omega.size], tree.n_branch, q)
        beta = cb.matrix(x[self.omega.size:], tree.n_leaves, q)
        S = cb.sigmoid(ca.mtimes(Zp, omega.T), mu)
        Yhat = ca.mtimes(Xp, beta.T)
        placeholder = ca.MX.sym("row_weights", n)
        columns = {t: tree.branch_index(t) for t in tree.branch_nodes}
        prediction = ca.gradient(cb.soft_loss(S, Yhat, placeholder, tree, 1, columns), placeholder)
        f = ca.dot(sp, pr.loss.casadi(prediction - yp)) + sum(term.casadi(omega, beta) for term in pr.terms)
        p = ca.vertcat(ca.vec(Zp), ca.vec(Xp), yp, sp, mu)
        names = ([f"omega[{t}][{j}]" for t in tree.branch_nodes for j in range(q)]
                 + [f"beta[{t}][{j}]" for t in tree.leaves for j in range(q)])
        return cb.CasadiModel(self.name, x, p, f, self.render_parameters(), names)

    def render_parameters(self) -> np.ndarray:
        """Values of the rendered model's parameters, in the order of ``render().p``."""
        pr = self.problem
        return np.concatenate([pr.Z.ravel("F"), pr.Xa.ravel("F"), pr.y, pr.s, [pr.mu]])

    def render_pyomo(self):
        """eq. (formulation) in Pyomo: loss(sum_l P_il yhat_il - y_i) per point + the penalties."""
        from . import pyomo_backend as pb

        pr, tree = self.problem, self.tree
        q = pr.Z.shape[1]
        names = ([f"omega[{t}][{j}]" for t in tree.branch_nodes for j in range(q)]
                 + [f"beta[{t}][{j}]" for t in tree.leaves for j in range(q)])
        m = pb.model(self.name, self.start(), names)
        W = pb.rows_of(m.x, tree.n_branch, q)
        B = pb.rows_of(m.x, tree.n_leaves, q, self.omega.size)
        splits = dict(zip(tree.branch_nodes, W))
        data = [float(pr.s[i]) * pr.loss.pyomo(pb.point_sweep(pb.split_exprs(pr.Z[i], splits, pr.mu),
                                                              [pb.linear(pr.Xa[i], b) for b in B], tree, 1)
                                               - float(pr.y[i]))
                for i in range(pr.Z.shape[0]) if pr.s[i] != 0]
        return pb.finish(m, data, [term.pyomo(W, B) for term in pr.terms], names)
