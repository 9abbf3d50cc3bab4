"""Classification loss terms: loss(u, t) of a leaf's class scores u and a row's target t.

A leaf l of a soft classification tree gives each row i K' scores u_ilk (K' = 1 for two classes:
the logit of the second class, the first class's score being 0; K' = K for K > 2 classes) and the
class probabilities p_il = softmax(u_il) over the K full scores.  A loss is written once, in
:meth:`ClassLoss.expression`, over the math namespaces of :mod:`.operations` (numpy, CasADi,
Pyomo); its numpy derivatives in u are written by hand (the hot path) and tested by finite
differences and against CasADi's AD.

* :class:`LogLoss` (``"log_loss"``, the default) -- -log p_il(y_i) = logsumexp(u_il) - u_il,y_i,
  the soft model's log loss sum_i s_i sum_l P_il (-log p_l(y_i | x_i));
* :class:`MisclassificationCost` (``"cost"``) -- sum_k p_ilk C[y_i, k]: the expected
  misclassification cost of ORCT (Blanquero et al. 2021) with a cost matrix C (rows: the true
  class, columns: the predicted class; default: 1 off the diagonal, the expected error rate).

The target t_i of a row is what its loss is written with: the one-hot row of its class
(:meth:`LogLoss.targets`) or its row of C (:meth:`MisclassificationCost.targets`).
"""

from __future__ import annotations

import copy

import numpy as np

from ..._spec import Registry
from ...routing import class_probabilities
from .base import Term
from .operations import NUMPY


def full_scores(U: list, n_classes: int) -> list:
    """The K class scores of the K' free ones: [0, u] for two classes, ``U`` itself otherwise."""
    return [0.0 * U[0], *U] if n_classes == 2 and len(U) == 1 else list(U)


def logsumexp(values: list, ops):
    """log sum_k exp(v_k), shifted by the largest v_k where the namespace has a maximum (numpy, CasADi)."""
    maximum = getattr(ops, "maximum", None)
    if maximum is None:
        return ops.log(sum(ops.exp(v) for v in values))
    top = values[0]
    for v in values[1:]:
        top = maximum(top, v)
    return top + ops.log(sum(ops.exp(v - top) for v in values))


class ClassLoss(Term):
    """loss(u, t) of the scores u (K' free scores) and the target t (K entries) of a row at a leaf.

    Subclasses write :meth:`expression` (the formula, once), :meth:`targets` and the numpy
    :meth:`derivatives` (gradient and Hessian in the free scores)."""

    name = "class-loss"
    nonnegative = True
    qp_form = None

    def targets(self, codes: np.ndarray, n_classes: int) -> np.ndarray:
        """t_i of every row (n, K) from the class codes 0..K-1."""
        raise NotImplementedError

    def expression(self, U: list, T: list, ops):
        """loss of the K' free scores ``U`` and the K targets ``T`` (arrays, CasADi or Pyomo expressions)."""
        raise NotImplementedError

    def value(self, U: np.ndarray, T: np.ndarray) -> np.ndarray:
        """loss, numpy, classes first: U (K', ...), T (K, ...) broadcastable -> (...) (from :meth:`expression`)."""
        return np.asarray(self.expression(list(U), list(T), NUMPY))

    def evaluate(self, U: np.ndarray, T: np.ndarray, order: int = 0):
        """The numpy hot path, classes first (U (K', ...), T (K, ...)): loss (...), and with ``order`` >= 1
        d loss / d u (K', ...), with 2 also d^2 loss / d u^2 (K', K', ...), the class probabilities
        computed once (the tests check it against :meth:`expression` and finite differences)."""
        raise NotImplementedError

    @staticmethod
    def probabilities(U: np.ndarray, n_classes: int) -> np.ndarray:
        """softmax of the full scores, (..., K) of U (..., K') (:func:`srtopt.routing.class_probabilities`)."""
        return class_probabilities(U, n_classes)


class LogLoss(ClassLoss):
    """-log p(y | u) = logsumexp(u) - u_y: the log loss (cross-entropy) of the leaf's class probabilities."""

    name = "log_loss"

    def targets(self, codes, n_classes):
        return np.eye(n_classes)[np.asarray(codes, dtype=int)]

    def expression(self, U, T, ops):
        full = full_scores(U, len(T))
        return logsumexp(full, ops) - sum(t * u for t, u in zip(T, full))

    def evaluate(self, U, T, order=0):
        full, lse, P = _softmax(U, len(T))
        R = lse - np.sum(T * full, axis=0)
        if order == 0:
            return R
        Pf = P[len(P) - len(U):]
        G = Pf - T[len(P) - len(U):]
        if order == 1:
            return R, G
        H = -Pf[:, None] * Pf[None, :]  # p_a (delta_ab - p_b)
        diagonal = np.arange(len(Pf))
        H[diagonal, diagonal] += Pf
        return R, G, H


class MisclassificationCost(ClassLoss):
    """sum_k p_k(u) C[y, k]: the expected cost of predicting a class drawn from the leaf's probabilities
    (ORCT's objective).

    Parameters
    ----------
    cost : array-like of shape (K, K) or None, default=None
        C[i, j], the cost of predicting class j (in ``classes_`` order) for a row of class i, >= 0;
        None: 1 off the diagonal, 0 on it (the expected misclassification rate).

    Raises
    ------
    ValueError
        If ``cost`` is not a square matrix of finite numbers >= 0.
    """

    name = "cost"
    nonnegative = True

    def __init__(self, cost=None):
        if cost is not None:
            matrix = np.asarray(cost, dtype=float)
            if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2 \
                    or not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
                raise ValueError(f"cost must be a square matrix (K x K, K >= 2) of finite numbers >= 0, rows the "
                                 f"true class and columns the predicted one, got {cost!r}")
            cost = tuple(tuple(float(v) for v in row) for row in matrix)
        self.cost = cost

    def matrix(self, n_classes: int) -> np.ndarray:
        """C for ``n_classes`` classes."""
        if self.cost is None:
            return 1.0 - np.eye(n_classes)
        if len(self.cost) != n_classes:
            raise ValueError(f"the cost matrix is {len(self.cost)} x {len(self.cost)}, but there are {n_classes} "
                             f"classes: give one row and one column per class of classes_")
        return np.array(self.cost)

    def targets(self, codes, n_classes):
        return self.matrix(n_classes)[np.asarray(codes, dtype=int)]

    def expression(self, U, T, ops):
        full = full_scores(U, len(T))
        lse = logsumexp(full, ops)
        return sum(ops.exp(u - lse) * t for u, t in zip(full, T))

    def evaluate(self, U, T, order=0):
        _, _, P = _softmax(U, len(T))
        cost = sum(p * t for p, t in zip(P, T))
        if order == 0:
            return cost
        Pf, Tf = P[len(P) - len(U):], T[len(P) - len(U):]
        G = np.array([p * (t - cost) for p, t in zip(Pf, Tf)])  # p_k (c_k minus the expected cost)
        if order == 1:
            return cost, G
        return cost, G, np.array([[(a == b) * g - p * h - g * q for b, (q, h) in enumerate(zip(Pf, G))]
                                  for a, (p, g) in enumerate(zip(Pf, G))])


class ClassProbability(ClassLoss):
    """p_c(u): the probability of the class of code ``code`` -- not a training loss but the value a
    classification constraint averages (:mod:`srtopt.models.constraints.class_means`).

    Parameters
    ----------
    code : int, default=1
        The class's code (its position in ``classes_``).
    """

    name = "class_probability"

    def __init__(self, code=1):
        self.code = int(code)

    def targets(self, codes, n_classes):
        return np.eye(n_classes)[np.asarray(codes, dtype=int)]

    def expression(self, U, T, ops):
        full = full_scores(U, len(T))
        return ops.exp(full[self.code] - logsumexp(full, ops))

    def evaluate(self, U, T, order=0):
        _, _, P = _softmax(U, len(T))
        v, c, offset = P[self.code], self.code, len(P) - len(U)
        if order == 0:
            return v
        Pf = P[offset:]
        G = np.array([v * ((c == a + offset) - p) for a, p in enumerate(Pf)])  # v (delta_ca - p_a)
        if order == 1:
            return v, G
        H = np.array([[v * (((c == b + offset) - q) * ((c == a + offset) - p) - (a == b) * p + p * q)
                       for b, q in enumerate(Pf)] for a, p in enumerate(Pf)])
        return v, G, H


def _softmax(U: np.ndarray, n_classes: int):
    """(the K full scores (K, ...), their logsumexp (...), the K class probabilities (K, ...)) of the free
    scores U (K', ...): reductions along the classes' axis, the first."""
    U = np.asarray(U, dtype=float)
    full = np.concatenate([np.zeros_like(U[:1]), U]) if n_classes == 2 and len(U) == 1 else U
    top = full.max(axis=0)
    e = np.exp(full - top)
    total = e.sum(axis=0)
    return full, top + np.log(total), e / total


CLASS_LOSSES = Registry("classification loss", {"log_loss": LogLoss, "cost": MisclassificationCost},
                        "a ClassLoss object")


def register_class_loss(name: str, factory) -> None:
    """Make ``loss=name`` (and ``"name:key=value"``) of a classifier build ``factory(**options)``.

    Parameters
    ----------
    name : str
        The loss's name (lower-cased; an existing entry is replaced).
    factory : callable
        ``factory(**options)`` returning a :class:`ClassLoss`; a ClassLoss subclass will do.
    """
    CLASS_LOSSES.register(name, factory)


def make_class_loss(spec) -> ClassLoss:
    """A :class:`ClassLoss` from a name (``"log_loss"``, ``"cost"``), a spec with options or a ClassLoss
    object (deep-copied).

    Raises
    ------
    ValueError
        If the name is unknown, an option is not accepted, or ``spec`` is of another type.
    """
    if isinstance(spec, ClassLoss):
        return copy.deepcopy(spec)
    if isinstance(spec, str):
        return CLASS_LOSSES.make(spec)
    raise ValueError(f"loss must be 'log_loss', 'cost' (with a cost matrix: MisclassificationCost(cost=...)), a "
                     f"registered name or a ClassLoss object, got {spec!r}")
