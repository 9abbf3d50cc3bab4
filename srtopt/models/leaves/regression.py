"""Value leaves: a leaf predicts yhat_il = Xa_i . beta_l (standardized y) and R_il = loss(yhat_il - y_i) with a
regression loss of :mod:`..terms.losses` (eq. obj): on the basis [1, x] the SRT's linear leaves, on a spline
basis an additive model per leaf (:mod:`srtopt.bases`)."""

from __future__ import annotations

import numpy as np

from ...bases import Basis, LinearBasis
from ...leaf_model import Identity, LeafModel, readable_leaf_model
from ...linalg import ridge_loo, weighted_ridge
from ..terms.losses import SQUARED
from ..terms.operations import CASADI, NUMPY, pyomo_ops
from .fitting import fit_basis


@readable_leaf_model
class RegressionLeaves(LeafModel):
    """yhat_il = Xa_i . beta_l, R_il = loss(yhat_il - y_i) (eq. obj).

    Parameters
    ----------
    loss : Loss, default=SQUARED
        The regression loss of the residual (:mod:`..terms.losses`).
    basis : Basis or str, default="linear"
        The leaf design: a fitted :class:`~srtopt.bases.Basis`, or a spec that :meth:`fitted` fits on the
        training rows ("linear"; "spline", "spline:n_knots=7,smoothing=10": :func:`.fitting.fit_basis`).
    """

    kind = "regression"
    standardizes = True

    def __init__(self, loss=SQUARED, basis="linear"):
        super().__init__(basis, Identity())
        self.loss = loss

    @property
    def key(self) -> tuple:
        return (*super().key, self.loss.key)

    @property
    def residual_loss(self):
        """R_il = loss(Xa_i . beta_l - y_i): the closed-form LN routes take the squared loss and the losses with a
        QP form."""
        return self.loss

    def fitted(self, Xs, targets, weights, lambda_b) -> "RegressionLeaves":
        if isinstance(self.basis, Basis):
            return self
        return self.with_basis(fit_basis(self.basis, Xs, targets[:, None], weights, lambda_b))

    @classmethod
    def from_json(cls, doc):
        from ...bases import basis_from_json

        return cls(SQUARED, basis_from_json(doc["basis"]))

    def start(self, problem, rows) -> np.ndarray:
        """The (weighted) least-squares fit on the rows ``rows`` (the paper's linear regression per leaf), the
        smoothness penalty of eq. (obj) on a spline's wiggle columns; without rows of positive weight the
        mean of y."""
        w, Xa = problem.counts, problem.Xa
        if len(rows) == 0 or not np.any(w[rows] > 0):
            return np.r_[np.average(problem.y, weights=w), np.zeros(Xa.shape[1] - 1)]
        ridge = np.zeros(Xa.shape[1])
        ridge[self.basis.smooth_columns()] = w.sum() * problem.lambda_b
        return weighted_ridge(Xa[rows], problem.y[rows], w[rows], ridge)

    def losses(self, Xa, T, beta, order: int = 0):
        """R (n, m) of the rows (Xa, T) at the leaves ``beta`` (m rows); with ``order`` 1 also dR/du (1, n, m),
        with 2 also d^2R/du^2 (1, 1, n, m) (the scores' axes first)."""
        residual = Xa @ beta.T - T[:, None]
        R = self.loss.value(residual)
        if order == 0:
            return R
        D = self.loss.derivative(residual)[None]
        return (R, D) if order == 1 else (R, D, self.loss.second_derivative(residual)[None, None])

    def gradient(self, Xa, W, D) -> np.ndarray:
        """sum_i W_il dR_il/du_il Xa_i for every leaf l, (m, q)."""
        return (W * D[0]).T @ Xa

    def casadi(self, Xa, T, B):
        """R (n x m MX) of the rows Xa (n x q), targets T (n x 1) at the leaves B (m x q)."""
        import casadi as ca

        return self.loss.casadi(ca.mtimes(Xa, B.T) - ca.repmat(T, 1, B.shape[0]))

    def pyomo(self, xa, t, b):
        from .. import pyomo_backend as pb

        return self.loss.pyomo(pb.linear(xa, b) - float(t))

    def partition_tree(self, **options):
        from sklearn.tree import DecisionTreeRegressor

        return DecisionTreeRegressor(**options)

    score_name = "R^2"

    def score(self, outputs, y, s) -> float:
        """The s-weighted R^2 of the predictions ``outputs`` (same on y's scale and the standardized one)."""
        spread = y - (s @ y) / s.sum()
        return 1.0 - (s @ (y - outputs) ** 2) / max(s @ spread**2, np.finfo(float).tiny)

    def center(self, problem) -> np.ndarray:
        """The ridge regression of the (standardized) y on the leaf columns of every training row, its ridge
        chosen by leave-one-out (:func:`~srtopt.linalg.ridge_loo`), on the columns the constraints leave free (a
        FeatureSubset fixes the others at 0: a center on them would pull the kept coefficients towards those of
        a regression that had them); the intercept is column 0."""
        bounds = problem.constraint_set.bounds
        q = problem.Xa.shape[1]
        free = np.ones(q, dtype=bool)
        if bounds is not None:
            free = ~((bounds[2][0] == 0) & (bounds[3][0] == 0))
        free[0] = True
        center = np.zeros(q)
        center[free] = ridge_loo(problem.Xa[:, free][:, 1:], problem.y, problem.counts)[0]
        return center

    def mean_values(self, term) -> "LinearValues":
        return LinearValues(term, self.basis)

    def output_values(self, term) -> "LinearValues":
        return LinearValues(term, self.basis)

    def mean_output(self, prediction) -> np.ndarray:
        return np.asarray(prediction)

    def mean_inputs(self, prediction, y, term) -> tuple:
        """(yhat, y) of every row: ``predict()``'s value and the target, as a soft mean's v takes them."""
        return np.asarray(prediction), np.asarray(y)


class LinearValues(RegressionLeaves):
    """v(yhat_il, y_i) of a value leaf's prediction yhat_il = Xa_i . beta_l, the values of a soft mean (e.g. yhat
    itself for the groups' mean predictions); ``term`` gives v over the operations namespaces (``leaf_values``)
    and its numpy derivatives in yhat."""

    kind = "values"

    def __init__(self, term, basis: Basis):
        super().__init__(SQUARED, basis)
        self.term = term

    @property
    def key(self) -> tuple:
        return ("values", self.term.key, self.basis.key)

    def losses(self, Xa, T, beta, order: int = 0):
        yhat, y = Xa @ beta.T, np.reshape(T, (-1, 1))
        V = self.term.leaf_values(yhat, y, NUMPY)
        if order == 0:
            return V
        D = self.term.leaf_derivative(yhat, y)[None]
        return (V, D) if order == 1 else (V, D, self.term.leaf_second_derivative(yhat, y)[None, None])

    def casadi(self, Xa, T, B):
        import casadi as ca

        return self.term.leaf_values(ca.mtimes(Xa, B.T), ca.repmat(T, 1, B.shape[0]), CASADI)

    def pyomo(self, xa, t, b):
        from .. import pyomo_backend as pb

        return self.term.leaf_values(pb.linear(xa, b), float(t), pyomo_ops())


def linear_leaves(loss, n_features: int) -> RegressionLeaves:
    """The SRT's linear leaves (eq. obj) of ``loss`` on p features."""
    return RegressionLeaves(loss, LinearBasis(n_features))
