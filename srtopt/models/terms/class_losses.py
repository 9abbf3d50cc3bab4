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
from .operations import NUMPY, CasadiFormula


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


class OfProbability(ClassLoss):
    """f(p, y) of one probability p of a row at a leaf, p = sum_k w_k p_k(u) with weights w of the row's target
    (:meth:`selected`), and of a second argument y: the class probabilities are written once here, with the
    chain rule of their derivatives in the free scores, and a subclass gives the outer function f.

    With q_a = dp/du_a = p_a (w_a - p) and d^2p/du_a du_b = p_a (delta_ab - p_b)(w_a - p) - p_a p_b (w_b - p)
    (a, b over the K' free scores), dR/du = f'(p) q and d^2R/du^2 = f''(p) q q^T + f'(p) d^2p/du^2."""

    def selected(self, T, ops):
        """(w: the weights of the K class probabilities in p, y: the second argument of f) of the targets T
        (a list of K entries)."""
        raise NotImplementedError

    def outer(self, p, y, ops):
        """f(p, y) over the namespace ``ops``."""
        raise NotImplementedError

    def outer_derivatives(self, p, y) -> tuple:
        """(f, df/dp, d^2f/dp^2), numpy, elementwise."""
        raise NotImplementedError

    def expression(self, U, T, ops):
        full = full_scores(U, len(T))
        lse = logsumexp(full, ops)
        w, y = self.selected(T, ops)
        p = sum(ops.exp(u - lse) * weight for u, weight in zip(full, w) if not _zero(weight))
        return self.outer(p, y, ops)

    def evaluate(self, U, T, order=0):
        _, _, P = _softmax(U, len(T))
        w, y = self.selected(list(T), NUMPY)
        w = np.broadcast_to(np.asarray(w, dtype=float).reshape((len(P),) + (1,) * (P.ndim - 1)) if np.ndim(w[0]) == 0
                            else np.asarray(w, dtype=float), P.shape)
        p = np.sum(w * P, axis=0)
        f = self.outer_derivatives(p, y)
        if order == 0:
            return f[0]
        offset = len(P) - len(U)
        Pf, wf = P[offset:], w[offset:]
        q = Pf * (wf - p)
        if order == 1:
            return f[0], f[1] * q
        H = (Pf[:, None] * (np.eye(len(Pf)).reshape((len(Pf), len(Pf)) + (1,) * (P.ndim - 1)) - Pf[None])
             * (wf - p)[:, None] - Pf[:, None] * Pf[None] * (wf - p)[None])
        return f[0], f[1] * q, f[2] * q[:, None] * q[None] + f[1] * H


def _zero(weight) -> bool:
    """Whether a weight is the number 0 (a term of p to leave out)."""
    return isinstance(weight, (int, float)) and weight == 0


class ProbabilityLoss(OfProbability):
    """loss(p) of the probability p of a row's true class at a leaf, or loss(p, c) with c the class's code
    (0..K-1, its position in ``classes_``: a class-weighted loss), given as a callable of CasADi symbols:
    ``lambda p: -casadi.log(p)`` is the log loss, ``lambda p: -(1 - p) ** 2 * casadi.log(p)`` the focal loss
    (Lin et al. 2017), ``lambda p, c: -(0.25 * c + 0.75 * (1 - c)) * casadi.log(p)`` a class-weighted log loss.
    CasADi's AD gives the derivatives in p, whose numpy values replay its graphs, and the same replay gives the
    Pyomo expression (:class:`~.operations.CasadiFormula`, the path of a regression loss's
    :class:`~.losses.CasadiLoss`); the derivatives in the leaf's scores follow by the chain rule
    (:class:`OfProbability`).  In numpy p is taken at least the smallest positive float, so that -log(p) stays
    finite when a leaf gives a row's class no probability at all.

    Parameters
    ----------
    function : callable
        Maps the scalar CasADi symbol p (and, taking two arguments, the class code c) to a CasADi expression;
        called once, here.
    name : str or None, default=None
        The loss's name; None: ``function.__name__`` (else "probability-loss").

    Raises
    ------
    ValueError
        If ``function`` takes neither one nor two arguments, or does not give a CasADi expression.
    """

    def __init__(self, function, name=None):
        self.function = function
        self.name = name or _function_name(function, "probability-loss")
        self._formula = CasadiFormula(function, _arity(function))

    @property
    def key(self) -> tuple:
        return ("probability-loss", self.name, id(self.function))

    def targets(self, codes, n_classes):
        return np.eye(n_classes)[np.asarray(codes, dtype=int)]

    def selected(self, T, ops):
        return T, sum(k * t for k, t in enumerate(T) if k)

    def outer(self, p, y, ops):
        return self._formula.expression(ops, *self._arguments(p, y))

    def outer_derivatives(self, p, y):
        args = self._arguments(np.maximum(p, np.finfo(float).tiny), y)
        return tuple(self._formula.numpy(order, *args) for order in range(3))

    def _arguments(self, p, c) -> tuple:
        return (p, c) if self._formula.n_inputs == 2 else (p,)

    def __getstate__(self):  # the CasADi functions are rebuilt from the user's callable (copies, pickles)
        return {k: v for k, v in self.__dict__.items() if k != "_formula"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._formula = CasadiFormula(self.function, _arity(self.function))


def _arity(function) -> int:
    """The number of arguments a user's loss takes (1 or 2), checked."""
    import inspect

    try:
        parameters = [p for p in inspect.signature(function).parameters.values()
                      if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return 1
    if len(parameters) not in (1, 2):
        raise ValueError(f"a classification loss callable takes p (the probability of the row's class) or (p, c) "
                         f"(c its class code), got one of {len(parameters)} arguments")
    return len(parameters)


def _function_name(function, default: str) -> str:
    name = getattr(function, "__name__", default)
    return default if name == "<lambda>" else name


class ClassProbability(OfProbability):
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

    def selected(self, T, ops):
        return [float(k == self.code) for k in range(len(T))], T[self.code]

    def outer(self, p, y, ops):
        return p

    def outer_derivatives(self, p, y):
        return p, np.ones_like(p), np.zeros_like(p)


class ClassValue(ClassProbability):
    """v(p_c(u), y_c) of a soft mean of a classifier (a :class:`~srtopt.models.constraints.RowMean`): ``term``'s
    value of the probability p_c of the class of code ``code`` and the row's indicator y_c of that class (1 for
    a row of the class, else 0), its derivatives in p_c the term's (``leaf_values``, ``leaf_derivative``,
    ``leaf_second_derivative``)."""

    name = "class_value"

    def __init__(self, term, code=1):
        super().__init__(code)
        self.term = term

    @property
    def key(self) -> tuple:
        return (self.name, self.code, self.term.key)

    def outer(self, p, y, ops):
        return self.term.leaf_values(p, y, ops)

    def outer_derivatives(self, p, y):
        return (self.term.leaf_values(p, y, NUMPY), self.term.leaf_derivative(p, y),
                self.term.leaf_second_derivative(p, y))


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
                        "a ClassLoss object or a callable of the probability p of the row's class")


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
    """A :class:`ClassLoss` from a name (``"log_loss"``, ``"cost"``, one of :func:`register_class_loss`), a spec
    with options, a ClassLoss object (deep-copied) or a callable of the probability p of a row's class (and its
    class code: :class:`ProbabilityLoss`).

    Raises
    ------
    ValueError
        If the name is unknown, an option is not accepted, or ``spec`` is of another type.
    """
    if isinstance(spec, ClassLoss):
        return copy.deepcopy(spec)
    if isinstance(spec, str):
        return CLASS_LOSSES.make(spec)
    if callable(spec):
        return ProbabilityLoss(spec)
    raise ValueError(f"loss must be 'log_loss', 'cost' (with a cost matrix: MisclassificationCost(cost=...)), a "
                     f"registered name, a ClassLoss object or a callable p -> CasADi expression (p the probability "
                     f"of the row's class), got {spec!r}")
