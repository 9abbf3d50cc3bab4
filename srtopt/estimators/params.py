"""One way to check an estimator's parameters.

Each estimator declares ``_parameter_constraints``: for each of its parameters, the list of
the rules a valid value follows (any one suffices), as in scikit-learn.  :func:`check_parameters`
checks them all and raises :class:`InvalidParameterError` (a ValueError and a TypeError)
``"<name> must be <rule> or <rule>, got <value>"``.  A value of a spec language (a loss,
penalty, constraint or solver spec, a list of them) is checked by the function that reads it
(:class:`Parses`), and its message is that function's.  Rules that tie a parameter to another
or to the data (``l2`` with ``loss="absolute"``, ``max_features`` at most the number of
features, a solver that must accept the subproblems) stay in ``_check_params`` or ``fit``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..leaf_model import LEAF_NAMES, OWN_LEAVES, LeafModel


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter breaks its declared rules (a ValueError and a TypeError, as
    scikit-learn's error of the same name)."""


@dataclass(frozen=True)
class Integer:
    """An integer (not a bool) >= ``low`` and, unless ``high`` is None, <= ``high``."""

    low: int
    high: int | None = None

    def __call__(self, value) -> bool:
        return (isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and value >= self.low
                and (self.high is None or value <= self.high))

    def __str__(self) -> str:
        return f"an integer >= {self.low}" if self.high is None else f"an integer in {self.low}..{self.high}"


@dataclass(frozen=True)
class Real:
    """A finite real number (not a bool) in the interval from ``low`` to ``high`` (None: unbounded);
    ``closed`` says which ends belong to it: "both", "left", "right" or "neither"; ``text``
    replaces the generated description."""

    low: float | None = None
    high: float | None = None
    closed: str = "both"
    text: str | None = None

    def __call__(self, value) -> bool:
        if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) or not math.isfinite(value):
            return False
        left, right = self.closed in ("both", "left"), self.closed in ("both", "right")
        above = self.low is None or (value >= self.low if left else value > self.low)
        below = self.high is None or (value <= self.high if right else value < self.high)
        return above and below

    def __str__(self) -> str:
        if self.text is not None:
            return self.text
        if self.high is None and self.low == 0:
            return "a finite number >= 0" if self.closed in ("both", "left") else "a positive finite number"
        if self.high is None:
            return f"a finite number {'>=' if self.closed in ('both', 'left') else '>'} {self.low}"
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        return f"a number in {left}{self.low}, {self.high}{right}"


class Options:
    """One of the given values (compared with ==, and None by identity)."""

    def __init__(self, *values):
        self.values = values

    def __call__(self, value) -> bool:
        return any(value is v if v is None or isinstance(v, bool) else _equal(value, v) for v in self.values)

    def __str__(self) -> str:
        return " or ".join(map(repr, self.values))

    def __repr__(self) -> str:
        return f"Options{self.values!r}"


class OneOf(Options):
    """A member of a named collection, described as "one of (...)" (long lists)."""

    def __str__(self) -> str:
        return f"one of {self.values!r}"


class Kind:
    """An instance of one of ``types`` (``text`` describes it)."""

    def __init__(self, text: str, *types):
        self.text, self.types = text, types

    def __call__(self, value) -> bool:
        return isinstance(value, self.types)

    def __str__(self) -> str:
        return self.text


class HasMethod:
    """An object (not a string) with the method ``name`` (``text`` describes it)."""

    def __init__(self, text: str, name: str):
        self.text, self.name = text, name

    def __call__(self, value) -> bool:
        return not isinstance(value, str) and callable(getattr(value, self.name, None))

    def __str__(self) -> str:
        return self.text


class Items:
    """A non-empty sequence (not a string) of distinct values that each follow ``rule``
    (``plural`` names them: "integers >= 1")."""

    def __init__(self, rule, plural: str):
        self.rule, self.plural = rule, plural

    def __call__(self, value) -> bool:
        if isinstance(value, str) or not hasattr(value, "__iter__"):
            return False
        values = list(value)
        return bool(values) and all(map(self.rule, values)) and len(set(values)) == len(values)

    def __str__(self) -> str:
        return f"a non-empty sequence of distinct {self.plural}"


class Pair:
    """A list, tuple or array of two values that each follow ``rule`` (``plural`` names them)."""

    def __init__(self, rule, plural: str):
        self.rule, self.plural = rule, plural

    def __call__(self, value) -> bool:
        return isinstance(value, (list, tuple, np.ndarray)) and len(value) == 2 and all(map(self.rule, value))

    def __str__(self) -> str:
        return f"a pair of {self.plural}"


class Parses:
    """A value of ``types`` that ``parse`` reads without a ValueError (``text`` describes them).

    For the values of a spec language, checked by the function that reads them at fit: when
    ``parse`` refuses a value of ``types``, its message is the one :func:`check_parameters` gives.
    """

    def __init__(self, text: str, parse, types=object):
        self.text, self.parse, self.types = text, parse, types

    def __call__(self, value) -> bool:
        return isinstance(value, self.types) and self.reason(value) is None

    def reason(self, value) -> str | None:
        """What ``parse`` says is wrong with ``value`` (None if it reads it or ``value`` is not of ``types``)."""
        if not isinstance(value, self.types):
            return None
        try:
            self.parse(value)
        except ValueError as exc:
            return str(exc)
        return None

    def __str__(self) -> str:
        return self.text


NONE = Options(None)
BOOLEAN = Kind("True or False", bool, np.bool_)
POSITIVE = Real(0, None, "neither")
NONNEGATIVE = Real(0)
FRACTION = Real(0, 1, "left")  # [0, 1)
INTEGER = Kind("an integer", numbers.Integral)
VERBOSE = [Integer(0), BOOLEAN]
RANDOM_STATE = [NONE, Integer(0, 2**32 - 1), Kind("a numpy RandomState", np.random.RandomState)]


def check_parameters(estimator) -> None:
    """Check every parameter declared in ``estimator._parameter_constraints``.

    Raises
    ------
    InvalidParameterError
        Naming the first parameter that follows none of its rules: what it must be and what it
        got, or what the function that reads it said (:class:`Parses`).
    """
    for name, rules in type(estimator)._parameter_constraints.items():
        value = getattr(estimator, name)
        if any(rule(value) for rule in rules):
            continue
        reasons = [reason for rule in rules if isinstance(rule, Parses) and (reason := rule.reason(value))]
        if reasons:
            message = reasons[0] if reasons[0].startswith(name) else f"{name}: {reasons[0]}"
        else:
            message = f"{name} must be {' or '.join(map(str, rules))}, got {value!r}"
        raise InvalidParameterError(message)


def _equal(value, option) -> bool:
    return isinstance(value, type(option)) and value == option


def leaf_parameter(value, own: tuple, text: str):
    """An estimator's ``leaf`` checked: a LeafModel, a spec of one of the estimator's ``own`` leaves (``text``
    describes them), or the name of a registered leaf model (:func:`~srtopt.leaf_model.register_leaf_model`, an
    installed package's entry point).

    Raises
    ------
    ValueError
        If ``value`` is none of these, naming the registered leaf models.
    """
    if isinstance(value, LeafModel):
        return value
    name = value.split(":")[0].strip().lower() if isinstance(value, str) else None
    if name in own or (name is not None and name not in OWN_LEAVES and name in LEAF_NAMES.names()):
        return value
    names = LEAF_NAMES.names()
    registered = f" ({', '.join(map(repr, names))})" if names else " (none yet: register_leaf_model)"
    raise ValueError(f"leaf must be {text}, a registered leaf model's name{registered} or a LeafModel, got {value!r}")
