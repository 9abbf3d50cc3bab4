"""Loss terms: loss(r) of the residual r = yhat - y, written once over the math namespaces."""

from __future__ import annotations

import copy

import numpy as np

from ..._spec import Registry
from .base import Term
from .operations import CASADI, NUMPY, CasadiFormula, pyomo_ops


class Loss(Term):
    """loss(r) of the residual r = yhat - y, elementwise.

    Subclasses write :meth:`expression` (the formula, once) and the numpy
    :meth:`derivative` and :meth:`second_derivative`.  ``qp_form = (a, b)`` says that
    loss(r) = min_z a z^2 + b |r - z| (a QP-representable loss; None otherwise).
    ``nonnegative``: loss(r) >= 0 for every r (a sum of losses only grows as terms are added).
    """

    name = "loss"
    qp_form: tuple[float, float] | None = None
    nonnegative: bool = False

    def expression(self, r, ops):
        raise NotImplementedError

    def value(self, r):
        """loss(r), numpy, elementwise."""
        return self.expression(r, NUMPY)

    def derivative(self, r):
        raise NotImplementedError

    def second_derivative(self, r):
        raise NotImplementedError

    def casadi(self, r):
        """loss(r) for a CasADi symbol or expression r (elementwise)."""
        return self.expression(r, CASADI)

    def pyomo(self, r):
        """loss(r) for a Pyomo expression r (one point and leaf)."""
        return self.expression(r, pyomo_ops())


class Squared(Loss):
    """r^2: the squared error of eq. (obj)."""

    name = "squared"
    nonnegative = True
    qp_form = (1.0, np.inf)

    def expression(self, r, ops):
        return r * r

    def derivative(self, r):
        return 2.0 * r

    def second_derivative(self, r):
        return np.full_like(np.asarray(r, float), 2.0)


class Huber(Loss):
    """r^2 for |r| <= delta, delta (2|r| - delta) beyond: written
    r^2 - max(r - delta, 0)^2 - max(-r - delta, 0)^2 with max(a, 0) = (a + |a|) / 2, so every
    backend has it and |.| is differentiated only at r = +-delta (Pyomo's derivative of
    |a| fails at a = 0).

    Parameters
    ----------
    delta : float, default=0.3
        Half-width of the quadratic zone (in standard deviations of y), > 0.

    Raises
    ------
    ValueError
        If ``delta`` is not a positive finite number.
    """

    name = "huber"
    nonnegative = True

    def __init__(self, delta=0.3):
        if not np.isfinite(delta) or delta <= 0:
            raise ValueError(f"huber delta must be a positive number, got {delta!r}")
        self.delta = float(delta)

    @property
    def qp_form(self):
        return (1.0, 2.0 * self.delta)

    def expression(self, r, ops):
        above = 0.5 * (r - self.delta + ops.abs(r - self.delta))
        below = 0.5 * (-r - self.delta + ops.abs(r + self.delta))
        return r * r - above * above - below * below

    def derivative(self, r):
        return 2.0 * np.clip(r, -self.delta, self.delta)

    def second_derivative(self, r):
        return np.where(np.abs(r) <= self.delta, 2.0, 0.0)


class Absolute(Loss):
    """sqrt(r^2 + epsilon^2) - epsilon: |r| smoothed within epsilon of 0.

    Parameters
    ----------
    epsilon : float, default=1e-3
        Smoothing width, > 0.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a positive finite number.
    """

    name = "absolute"
    nonnegative = True

    def __init__(self, epsilon=1e-3):
        if not np.isfinite(epsilon) or epsilon <= 0:
            raise ValueError(f"absolute epsilon must be a positive number, got {epsilon!r}")
        self.epsilon = float(epsilon)

    def expression(self, r, ops):
        return ops.sqrt(r * r + self.epsilon**2) - self.epsilon

    def derivative(self, r):
        return r / np.sqrt(r * r + self.epsilon**2)

    def second_derivative(self, r):
        return self.epsilon**2 / (r * r + self.epsilon**2) ** 1.5


class CasadiLoss(Loss):
    """A user loss: ``function`` maps a CasADi symbol r (the residual, a scalar) to a CasADi
    expression, e.g. ``lambda r: ca.log(ca.cosh(r))``, a :class:`~.operations.CasadiFormula`:
    CasADi's AD gives the derivative and the second derivative; the numpy values (elementwise, on
    the hot path) and the Pyomo expression replay the expression graphs (:func:`replay`).

    Parameters
    ----------
    function : callable
        Maps a scalar CasADi symbol r to a CasADi expression loss(r); called once, at construction.
    name : str or None, default=None
        The loss's name; None: ``function.__name__`` (else "casadi-loss").
    """

    def __init__(self, function, name=None):
        self.function = function
        self.name = name or getattr(function, "__name__", "casadi-loss")
        self._formula = CasadiFormula(function)

    def get_params(self, deep=True) -> dict:
        return {"function": self.function, "name": self.name}

    @property
    def key(self) -> tuple:
        return ("casadi-loss", self.name, id(self.function))

    def expression(self, r, ops):
        return self._formula.expression(ops, r)

    def derivative(self, r):
        return self._formula.numpy(1, r)

    def second_derivative(self, r):
        return self._formula.numpy(2, r)

    def casadi(self, r):
        return self._formula.casadi(r)

    def __deepcopy__(self, memo):  # the CasADi functions are rebuilt from the user's callable
        return CasadiLoss(self.function, self.name)


LOSSES = Registry("loss", {"squared": Squared, "huber": Huber, "absolute": Absolute},
                  "a Loss object or a callable mapping a CasADi symbol r to an expression")


def register_loss(name: str, factory) -> None:
    """Make ``loss=name`` (and ``"name:key=value"``) build ``factory(**options)``.

    Parameters
    ----------
    name : str
        The loss's name (lower-cased; an existing entry is replaced).
    factory : callable
        ``factory(**options)`` returning a :class:`Loss`; a Loss subclass will do.
    """
    LOSSES.register(name, factory)




def make_loss(spec) -> Loss:
    """A :class:`Loss` from a name (``"huber"``), a spec with options (``"huber:delta=0.5"``),
    a Loss object (deep-copied) or a callable r -> CasADi expression (:class:`CasadiLoss`).

    Parameters
    ----------
    spec : str, Loss or callable
        The loss: a registered name ("squared", "huber", "absolute", or one of :func:`register_loss`),
        optionally with options, a Loss, or a callable.

    Returns
    -------
    Loss
        A new loss object.

    Raises
    ------
    ValueError
        If the name is unknown, an option is malformed or not accepted, or ``spec`` is of another type.
    """
    if isinstance(spec, Loss):
        return copy.deepcopy(spec)
    if isinstance(spec, str):
        return LOSSES.make(spec)
    if callable(spec):
        return CasadiLoss(spec)
    raise ValueError(f"loss must be a name, a Loss object or a callable, got {spec!r}")




SQUARED = Squared()
