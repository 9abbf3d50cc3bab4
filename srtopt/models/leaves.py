"""The leaf models of a soft tree: what a leaf predicts from its coefficients beta_l and the loss of
each row at each leaf, R_il, the quantity NODEC's subproblems are written on.

E = sum_i s_i sum_l P_il R_il + the penalties: the BN subproblems see a leaf model only through
R_il (its weights fixed), so the splits' side of the soft tree -- the kernels, the working sets,
the reassignment heuristic, the solvers of the BN step -- is the same for every leaf model.  A
leaf model gives:

* the leaf design Xa (one row per training row) and the rows' targets;
* numpy values, derivatives and Hessians of R_il in the leaf's scores u_il = B_l Xa_i (K' scores:
  1 for regression and binary classification, K for K classes; ``beta`` holds one row per leaf,
  B_l = beta_l viewed as K' x q);
* the CasADi and Pyomo renderings of R_il.

Leaf models:

* :class:`LinearLeaves` -- the SRT's linear leaves (eq. obj): yhat_il = Xa_i . beta_l,
  R_il = loss(yhat_il - y_i) with a regression loss of :mod:`.terms.losses`;
* :class:`ClassLeaves` -- a soft classification tree's leaves: class probabilities softmax(u_il),
  constant (Xa = 1: a class-probability vector per leaf, the ORCT/MRCT model) or multinomial
  logistic on the features (Xa = [1, x]), R_il a classification loss of
  :mod:`.terms.class_losses`.

A constraint row that is a soft mean of a value v_il per row and leaf (:mod:`.constraints.soft_means`)
sees its values through the same interface: :class:`LinearValues` (v(yhat_il, y_i) of a regression
leaf) or a :class:`ClassLeaves` whose "loss" is the value (a class's probability).
"""

from __future__ import annotations

import casadi as ca
import numpy as np
from scipy.linalg import block_diag

from .. import kernels
from .terms.operations import CASADI, NUMPY, pyomo_ops


class LinearLeaves:
    """yhat_il = Xa_i . beta_l, R_il = loss(yhat_il - y_i) (eq. obj).

    Parameters
    ----------
    loss : Loss
        The regression loss of the residual (:mod:`.terms.losses`).
    """

    n_outputs = 1
    kind = "linear"
    task = "regression"

    def __init__(self, loss):
        self.loss = loss

    @property
    def key(self) -> tuple:
        return (self.kind, self.loss.key)

    def design(self, X: np.ndarray) -> np.ndarray:
        """Xa = [1, X]."""
        return kernels.leaf_design(X)

    def targets(self, y: np.ndarray) -> np.ndarray:
        """The rows' targets: y itself (standardized)."""
        return y

    def losses(self, Xa, T, beta, order: int = 0):
        """R (n, m) of the rows (Xa, T) at the leaves ``beta`` (m rows); with ``order`` 1 also
        dR/du (1, n, m), with 2 also d^2R/du^2 (1, 1, n, m) (the scores' axes first)."""
        residual = kernels.leaf_residuals(Xa, T, beta)
        R = self.loss.value(residual)
        if order == 0:
            return R
        D = self.loss.derivative(residual)[None]
        return (R, D) if order == 1 else (R, D, self.loss.second_derivative(residual)[None, None])

    def gradient(self, Xa, W, D) -> np.ndarray:
        """sum_i W_il dR_il/du_il Xa_i for every leaf l: the gradient of sum_il W_il R_il in beta, (m, q)."""
        return (W * D[0]).T @ Xa

    def casadi(self, Xa, T, B):
        """R (n x m MX) of the rows Xa (n x q), targets T (n x 1) at the leaves B (m x q)."""
        return self.loss.casadi(ca.mtimes(Xa, B.T) - ca.repmat(T, 1, B.shape[0]))

    def pyomo(self, xa, t, b):
        """R of one row (``xa`` numbers, target ``t``) at one leaf (``b`` Pyomo expressions of beta_l)."""
        from . import pyomo_backend as pb

        return self.loss.pyomo(pb.linear(xa, b) - float(t))

    def target_width(self) -> int:
        """Columns of the targets' rendered parameter."""
        return 1


class LinearValues(LinearLeaves):
    """v(yhat_il, y_i) of a regression leaf's prediction yhat_il = Xa_i . beta_l, the values of a soft
    mean (e.g. yhat itself for the groups' mean predictions); ``term`` gives v over the operations
    namespaces (``leaf_values``) and its numpy derivatives in yhat."""

    def __init__(self, term):
        self.term = term

    @property
    def key(self) -> tuple:
        return ("values", self.term.key)

    def losses(self, Xa, T, beta, order: int = 0):
        yhat, y = Xa @ beta.T, np.reshape(T, (-1, 1))
        V = self.term.leaf_values(yhat, y, NUMPY)
        if order == 0:
            return V
        D = self.term.leaf_derivative(yhat, y)[None]
        return (V, D) if order == 1 else (V, D, self.term.leaf_second_derivative(yhat, y)[None, None])

    def casadi(self, Xa, T, B):
        return self.term.leaf_values(ca.mtimes(Xa, B.T), ca.repmat(T, 1, B.shape[0]), CASADI)

    def pyomo(self, xa, t, b):
        from . import pyomo_backend as pb

        return self.term.leaf_values(pb.linear(xa, b), float(t), pyomo_ops())


KRONECKER_ENTRIES = 1 << 24  # largest n q (q + 1) / 2 for which leaf_hessian forms the rows' outer products at once


def row_outer_products(Xa) -> np.ndarray | None:
    """The upper triangles of the rows' Xa_i Xa_i^T (``np.triu_indices(q)`` order) as an n x q (q + 1) / 2
    matrix, or None above :data:`KRONECKER_ENTRIES` entries."""
    n, q = Xa.shape
    if n * q * (q + 1) // 2 > KRONECKER_ENTRIES:
        return None
    columns, products, start = np.ascontiguousarray(Xa.T), np.empty((q * (q + 1) // 2, n)), 0
    for c in range(q):  # row c of the triangle, entries (c, c..q-1), as contiguous products
        np.multiply(columns[c], columns[c:], out=products[start:start + q - c])
        start += q - c
    return products.T


def leaf_hessian(Xa, C, outer=None) -> np.ndarray:
    """The block-diagonal Hessian in beta_W of sum_il C-weighted second derivatives, its blocks
    :func:`leaf_hessian_blocks` on the diagonal."""
    return block_diag(*leaf_hessian_blocks(Xa, C, outer))


def leaf_hessian_blocks(Xa, C, outer=None) -> np.ndarray:
    """The diagonal blocks (m, K' q, K' q) of the Hessian in beta_W of sum_il C-weighted second derivatives:
    for each leaf l the block sum_i C_abil Xa_i Xa_i^T of its score pairs (a, b); ``C`` (K', K', n, m).
    With several scores all K'^2 pairs come from one matrix product with ``outer``, the rows' Xa_i Xa_i^T
    (:func:`row_outer_products`), when given."""
    k, _, n, m = C.shape
    q = Xa.shape[1]
    if k > 1 and outer is not None:
        return _pair_blocks(C, outer, q).transpose(0, 1, 3, 2, 4).reshape(m, k * q, k * q)
    blocks = np.empty((m, k * q, k * q))
    for l in range(m):
        for a in range(k):
            for b in range(k):
                blocks[l, a * q:(a + 1) * q, b * q:(b + 1) * q] = (Xa.T * C[a, b, :, l]) @ Xa
    return blocks


def _pair_blocks(C, outer, q: int) -> np.ndarray:
    """(m, K', K', q, q): every leaf's sum_i C_abil Xa_i Xa_i^T, from one product of the pairs a <= b of all
    leaves with the upper triangles of the rows' outer products (C and each Xa_i Xa_i^T are symmetric:
    block (b, a) = block (a, b), entry (d, c) = entry (c, d))."""
    k, _, n, m = C.shape
    a, b = np.triu_indices(k)
    c, d = np.triu_indices(q)
    upper = np.ascontiguousarray(C[a, b].transpose(2, 0, 1)).reshape(m * len(a), n) @ outer
    pairs = np.empty((m * len(a), q, q))
    pairs[:, c, d] = upper
    pairs[:, d, c] = upper
    pairs = pairs.reshape(m, len(a), q, q)
    blocks = np.empty((m, k, k, q, q))
    blocks[:, a, b] = pairs
    blocks[:, b, a] = pairs
    return blocks


class ClassLeaves:
    """Class probabilities softmax(u_il), u_il = B_l Xa_i (K' scores), R_il = loss(u_il, t_i).

    Parameters
    ----------
    loss : ClassLoss
        The classification loss (:mod:`.terms.class_losses`).
    n_classes : int
        K, at least 2.
    leaf : {"constant", "logistic"}
        Xa = 1 (a class-probability vector per leaf) or Xa = [1, x] (multinomial logistic leaves).
    """

    task = "classification"

    def __init__(self, loss, n_classes: int, leaf: str = "constant"):
        if leaf not in ("constant", "logistic"):
            raise ValueError(f"leaf must be 'constant' or 'logistic', got {leaf!r}")
        self.loss, self.n_classes, self.kind = loss, int(n_classes), leaf
        self.n_outputs = 1 if self.n_classes == 2 else self.n_classes

    @property
    def key(self) -> tuple:
        return (self.kind, self.n_classes, self.loss.key)

    def design(self, X: np.ndarray) -> np.ndarray:
        return kernels.class_design(X, self.kind == "constant")

    def targets(self, y: np.ndarray) -> np.ndarray:
        """t_i (n, K) of the class codes y."""
        return self.loss.targets(y, self.n_classes)

    def constant_start(self, codes, weights, q: int) -> np.ndarray:
        """A leaf's coefficients (K' q) whose probabilities are the rows' weighted class frequencies,
        smoothed by one row of each class (Laplace), the slopes 0."""
        counts = np.bincount(codes, weights=weights, minlength=self.n_classes)[:self.n_classes] + 1.0
        logits = np.log(counts[1:] / counts[0]) if self.n_classes == 2 else np.log(counts) - np.mean(np.log(counts))
        beta = np.zeros((self.n_outputs, q))
        beta[:, 0] = logits
        return beta.ravel()

    def scores(self, Xa, beta) -> np.ndarray:
        """u_ilk (K', n, m) of the rows Xa at the leaves ``beta`` (m rows of K' q), the scores first."""
        m = len(beta)
        U = Xa @ np.reshape(beta, (m * self.n_outputs, Xa.shape[1])).T  # (n, m K'), leaf-major
        return np.ascontiguousarray(U.reshape(len(Xa), m, self.n_outputs).transpose(2, 0, 1))  # classes-first rows

    def losses(self, Xa, T, beta, order: int = 0):
        """R (n, m), and with ``order`` 1 dR/du (K', n, m), with 2 also d^2R/du^2 (K', K', n, m)."""
        return self.loss.evaluate(self.scores(Xa, beta), T.T[:, :, None], order)

    def gradient(self, Xa, W, D) -> np.ndarray:
        """sum_i W_il D_kil Xa_i, (m, K' q)."""
        n, m = W.shape
        WD = (W[None] * D).transpose(2, 0, 1).reshape(m * self.n_outputs, n)  # (m K', n), leaf-major
        return (WD @ Xa).reshape(m, -1)

    def casadi(self, Xa, T, B):
        """R (n x m MX) of the rows Xa (n x q), targets T (n x K) at the leaves B (m x K' q)."""
        q, m = Xa.shape[1], B.shape[0]
        U = [ca.mtimes(Xa, B[:, k * q:(k + 1) * q].T) for k in range(self.n_outputs)]
        return self.loss.expression(U, [ca.repmat(T[:, k], 1, m) for k in range(self.n_classes)], CASADI)

    def pyomo(self, xa, t, b):
        from . import pyomo_backend as pb

        q = len(xa)
        U = [pb.linear(xa, b[k * q:(k + 1) * q]) for k in range(self.n_outputs)]
        return self.loss.expression(U, [float(v) for v in t], pyomo_ops())

    def target_width(self) -> int:
        return self.n_classes
