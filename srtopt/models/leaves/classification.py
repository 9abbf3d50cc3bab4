"""Classification leaves: class probabilities softmax(u_il) of the leaf's K' scores u_il = B_l Xa_i and R_il a
classification loss of :mod:`..terms.class_losses`: on the constant basis a class-probability vector per leaf
(the ORCT/MRCT model), on [1, x] multinomial logistic leaves, on a spline basis additive logistic leaves."""

from __future__ import annotations

import numpy as np

from ...bases import Basis
from ...leaf_model import LeafModel, Softmax, readable_leaf_model
from ..terms.class_losses import ClassProbability, ClassValue, LogLoss
from ..terms.operations import CASADI, pyomo_ops
from .fitting import fit_basis

#: the LN solvers "auto" tries: three steps of Newton's method on the exact Hessian while the subproblem has at
#: most 800 coefficients, 30 iterations of L-BFGS-B beyond (the Hessian of K' q coefficients per leaf costs
#: N (K' q)^2); the LN subproblems are convex and warm-started, and inexact steps are measured as accurate
#: (docs/classification.md).  With constraint rows SQP on the exact Hessian of the Lagrangian (a handful of rows,
#: no variable bounds: docs/classification.md, "Constrained fits"), else IPOPT: its exact Hessian up to 1000
#: coefficients, L-BFGS beyond (an iteration on the dense Hessian of n coefficients costs n^3 / 3 and cannot be stopped: 0.6 s at
#: 1240, benchmarks/results/time_limits.md)
LN_AUTO = ("newton:max_variables=800,max_iter=3", "l-bfgs-b:max_iter=30", "sqp:max_variables=1000,needs_rows=True",
           "ipopt:max_variables=1000", "ipopt:hessian=limited-memory", "prox-gradient")
#: the BN solvers "auto" tries: SQP on the subproblems with constraint rows (it refuses the others), then the
#: defaults, srtopt.solvers.AUTO["bn"] (docs/classification.md, "Constrained fits")
BN_AUTO = ("sqp:max_variables=1000,needs_rows=True", "auto")


@readable_leaf_model
class ClassLeaves(LeafModel):
    """Class probabilities softmax(u_il), u_il = B_l Xa_i (K' scores), R_il = loss(u_il, t_i).

    Parameters
    ----------
    loss : ClassLoss
        The classification loss (:mod:`..terms.class_losses`).
    n_classes : int
        K, at least 2.
    basis : Basis or str, default="linear"
        The leaf design: a fitted :class:`~srtopt.bases.Basis`, or a spec that :meth:`fitted` fits ("constant":
        a class-probability vector per leaf; "linear": multinomial logistic leaves; "spline": additive ones).
    """

    kind = "classification"
    ln_specs, bn_specs = LN_AUTO, BN_AUTO

    def __init__(self, loss=None, n_classes: int = 2, basis="linear"):
        super().__init__(basis, Softmax(n_classes))
        self.loss = LogLoss() if loss is None else loss

    @property
    def key(self) -> tuple:
        return (*super().key, self.loss.key)

    def fitted(self, Xs, targets, weights, lambda_b) -> "ClassLeaves":
        if isinstance(self.basis, Basis):
            return self
        onehot = np.eye(self.n_classes)[np.asarray(targets, dtype=int)]
        return self.with_basis(fit_basis(self.basis, Xs, onehot, weights, lambda_b))

    @classmethod
    def from_json(cls, doc):
        from ...bases import basis_from_json

        return cls(LogLoss(), doc["link"]["n_classes"], basis_from_json(doc["basis"]))

    def targets(self, y: np.ndarray) -> np.ndarray:
        """t_i (n, K) of the class codes y."""
        return self.loss.targets(y, self.n_classes)

    def target_width(self) -> int:
        return self.n_classes

    def start(self, problem, rows) -> np.ndarray:
        """The rows' weighted class frequencies, smoothed by one row of each class (Laplace), as the leaf's
        probabilities, its slopes 0 (the first LN steps fit them); a row of weight k counts k times."""
        codes = np.asarray(problem.y, dtype=int)[rows]
        counts = np.bincount(codes, weights=problem.counts[rows], minlength=self.n_classes)[:self.n_classes] + 1.0
        logits = np.log(counts[1:] / counts[0]) if self.n_classes == 2 else np.log(counts) - np.mean(np.log(counts))
        beta = np.zeros((self.n_outputs, problem.Xa.shape[1]))
        beta[:, 0] = logits
        return beta.ravel()

    def leaf_scores(self, Xa, beta) -> np.ndarray:
        """u_ilk (K', n, m) of the rows Xa at the leaves ``beta`` (m rows of K' q), the scores first."""
        m = len(beta)
        U = Xa @ np.reshape(beta, (m * self.n_outputs, Xa.shape[1])).T  # (n, m K'), leaf-major
        return np.ascontiguousarray(U.reshape(len(Xa), m, self.n_outputs).transpose(2, 0, 1))  # classes-first rows

    def losses(self, Xa, T, beta, order: int = 0):
        """R (n, m), and with ``order`` 1 dR/du (K', n, m), with 2 also d^2R/du^2 (K', K', n, m)."""
        return self.loss.evaluate(self.leaf_scores(Xa, beta), T.T[:, :, None], order)

    def casadi(self, Xa, T, B):
        """R (n x m MX) of the rows Xa (n x q), targets T (n x K) at the leaves B (m x K' q)."""
        import casadi as ca

        q, m = Xa.shape[1], B.shape[0]
        U = [ca.mtimes(Xa, B[:, k * q:(k + 1) * q].T) for k in range(self.n_outputs)]
        return self.loss.expression(U, [ca.repmat(T[:, k], 1, m) for k in range(self.n_classes)], CASADI)

    def pyomo(self, xa, t, b):
        from .. import pyomo_backend as pb

        q = len(xa)
        U = [pb.linear(xa, b[k * q:(k + 1) * q]) for k in range(self.n_outputs)]
        return self.loss.expression(U, [float(v) for v in t], pyomo_ops())

    def partition_tree(self, **options):
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(**options)

    score_name = "accuracy"

    def score(self, outputs, y, s) -> float:
        """The s-weighted share of rows whose most probable class is theirs."""
        return float(s @ (np.argmax(outputs, axis=1) == y)) / s.sum()

    def class_values(self, code: int) -> "ClassLeaves":
        """The leaves whose "loss" is the probability of class ``code`` (class recall, parity)."""
        return ClassLeaves(ClassProbability(code), self.n_classes, self.basis)

    def mean_values(self, term) -> "ClassLeaves":
        """The leaves whose "loss" is a soft mean's value v(p_c, y_c) of the probability of the term's class c
        (``term.code``) and the row's indicator of it (:class:`~..terms.class_losses.ClassValue`)."""
        return ClassLeaves(ClassValue(term, term.code), self.n_classes, self.basis)

    def mean_inputs(self, prediction, y, term) -> tuple:
        """(p_c, y_c) of every row: the probability of the term's class c in ``prediction`` (the class
        probabilities, (n, K)) and whether the row is of class c."""
        return np.asarray(prediction)[:, term.code], (np.asarray(y) == term.code).astype(float)

    def output_values(self, term) -> "ClassLeaves":
        """The probability of the second class, whose groups' means parity compares (two classes)."""
        if self.n_classes != 2:
            raise ValueError(f"{term.name} compares the groups' rates of the positive class: it needs two classes, "
                             f"not {self.n_classes}")
        return self.class_values(1)

    def mean_output(self, prediction) -> np.ndarray:
        """The probability of the second class of every row (``prediction``: the class probabilities, (n, 2))."""
        return np.asarray(prediction)[:, 1]
