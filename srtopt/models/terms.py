"""Objective terms written once: the losses and penalties that formulations compose.

E(omega, beta) of eq. (obj) is a *loss term* summed over the points and leaves,
sum_i s_i sum_l P_il loss(yhat_il - y_i), plus *penalty terms* on (omega, beta).
Every term keeps its three renderings together, in one class:

* numpy: the value and the derivatives the numpy reference evaluator and the NODEC
  steps use (fast, vectorised);
* CasADi: an expression of CasADi symbols (exact derivatives by AD);
* Pyomo: an expression of Pyomo variables (inspection, export, Pyomo solvers).

A loss writes its formula once, in :meth:`Loss.expression`, over a small namespace of
math functions (:data:`NUMPY`, :data:`CASADI`, :func:`pyomo_ops`), so the three
renderings cannot drift apart; its numpy derivatives are written by hand (they are
on the hot path) and the tests check them by finite differences and against CasADi's
AD for every term.  A user loss is a callable mapping a CasADi symbol r to a CasADi
expression (:class:`CasadiLoss`): its value, derivative and second derivative come
from CasADi's AD, its numpy values and Pyomo expression from replaying CasADi's expression
graphs (:func:`replay`).

Losses (r = yhat - y on standardized y):

* ``"squared"`` -- r^2, eq. (obj) (the default; the LN step is an exact weighted
  least-squares problem);
* ``"huber"`` -- r^2 for |r| <= delta, delta (2|r| - delta) beyond (continuous
  derivative; equal to r^2 near 0, linear tails); ``qp_form`` (1, 2 delta): it is
  min_z z^2 + 2 delta |r - z|, so the LN step is a QP;
* ``"absolute"`` -- smoothed: sqrt(r^2 + epsilon^2) - epsilon (|r| within epsilon,
  twice differentiable, so every NLP solver and the proximal-gradient LN step apply).

Penalties (columns j >= 1 of omega and beta hold the feature weights, column 0 the
intercepts):

* :class:`L2` -- lambda_w/2 ||omega||^2 + lambda_b/2 ||beta||^2 of eq. (obj)
  (intercepts included, as in the paper);
* :class:`SplitL1` -- strength * sum_t sum_{j>=1} |omega_jt|: sparse oblique splits;
* :class:`FeatureL1` -- strength * sum_{j>=1} ||(w omega_j1..w omega_j|tau_B|, beta_j1..beta_j|tau_L|)||_2:
  the group l1 of each feature's weights over all splits and leaves, which drops
  features from the whole tree (w = 1/p by default: the coefficients of x_j in u_it).

The last two are nonsmooth: they give exact zeros through their proximal operators
(:meth:`Penalty.block_prox`), used by the proximal-gradient solver and the
proximal Armijo step; ``SplitL1`` is also a weighted l1 norm
(:meth:`Penalty.block_l1_weights`), which lets a bound-constrained solver handle it by
the variable split omega = u - v, u, v >= 0 (docs/formulations.md, "Penalties and the method for the nonsmooth ones").

A NODEC subproblem sees a penalty through :class:`BlockPenalty`: the penalty as a
function of some rows of omega (BN, WLR) or of beta (LN), the other rows fixed.
"""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass
from functools import cached_property
from types import SimpleNamespace

import casadi as ca
import numpy as np

# ----------------------------------------------------------------------- math namespaces
NUMPY = SimpleNamespace(abs=np.abs, sqrt=np.sqrt, log=np.log, exp=np.exp, name="numpy")
CASADI = SimpleNamespace(abs=ca.fabs, sqrt=ca.sqrt, log=ca.log, exp=ca.exp, name="casadi")


def pyomo_ops() -> SimpleNamespace:
    """The Pyomo namespace (Pyomo is imported on first use: it takes a second)."""
    import pyomo.environ as pyo

    return SimpleNamespace(abs=abs, sqrt=pyo.sqrt, log=pyo.log, exp=pyo.exp, name="pyomo")


class Term:
    """What losses and penalties share: parameters as public attributes (``get_params``,
    as scikit-learn estimators), and a ``key`` from the name and parameters that identifies
    the term in the structure keys of rendered models and in equality."""

    name = "term"

    def get_params(self, deep=True) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    @property
    def key(self) -> tuple:
        return (self.name, *sorted(self.get_params().items()))

    def __eq__(self, other):
        return type(other) is type(self) and other.key == self.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


# ------------------------------------------------------------------------------- losses
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
    expression, e.g. ``lambda r: ca.log(ca.cosh(r))``.  CasADi's AD gives the derivative
    and the second derivative as expressions; the numpy values (elementwise, on the hot
    path) and the Pyomo expression come from replaying the three expression graphs with
    numpy or Pyomo operations (:func:`replay`).  An operation numpy has no counterpart
    for in :data:`NUMPY_OPERATIONS` is evaluated by CasADi instead.

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
        r = ca.SX.sym("r")
        e = self.function(r)
        self._graphs = [ca.Function(f"user_loss_{order}", [r], [expression])
                        for order, expression in enumerate((e, ca.gradient(e, r), ca.hessian(e, r)[0]))]

    def get_params(self, deep=True) -> dict:
        return {"function": self.function, "name": self.name}

    @property
    def key(self) -> tuple:
        return ("casadi-loss", self.name, id(self.function))

    def _eval(self, r, order):
        r = np.asarray(r, float)
        try:
            out = replay(self._graphs[order], r, NUMPY_OPERATIONS)
        except NotImplementedError:
            out = np.asarray(self._graphs[order](ca.DM(r.reshape(1, -1)))).reshape(r.shape)
        return np.broadcast_to(np.asarray(out, float), r.shape).copy()

    def expression(self, r, ops):
        if ops is NUMPY:
            return self._eval(r, 0)
        if ops is CASADI:
            return self.casadi(r)
        return replay(self._graphs[0], r, pyomo_operations())

    def derivative(self, r):
        return self._eval(r, 1)

    def second_derivative(self, r):
        return self._eval(r, 2)

    def casadi(self, r):
        shape = r.shape
        row = ca.reshape(r, 1, shape[0] * shape[1])
        return ca.reshape(self._graphs[0](row), shape[0], shape[1])

    def __deepcopy__(self, memo):  # the CasADi functions are rebuilt from the user's callable
        return CasadiLoss(self.function, self.name)


def _operations(names: dict, module) -> dict:
    """{CasADi operation code: function of ``module``} for the names ``module`` has."""
    return {getattr(ca, f"OP_{op}"): getattr(module, name) if isinstance(name, str) else name
            for op, name in names.items() if hasattr(ca, f"OP_{op}") and (not isinstance(name, str)
                                                                          or hasattr(module, name))}


_ARITHMETIC = {"ADD": lambda a, b: a + b, "SUB": lambda a, b: a - b, "MUL": lambda a, b: a * b,
               "DIV": lambda a, b: a / b, "POW": lambda a, b: a**b, "CONSTPOW": lambda a, b: a**b,
               "NEG": lambda a: -a, "SQ": lambda a: a * a, "TWICE": lambda a: 2 * a, "INV": lambda a: 1.0 / a}
_FUNCTIONS = {op: op.lower() for op in ("SQRT", "EXP", "LOG", "SIN", "COS", "TAN", "SINH", "COSH", "TANH")}
_INVERSE = {"ASIN": "arcsin", "ACOS": "arccos", "ATAN": "arctan", "ASINH": "arcsinh", "ACOSH": "arccosh",
            "ATANH": "arctanh"}

#: CasADi operations on numpy arrays, elementwise
NUMPY_OPERATIONS = {
    **_operations(_ARITHMETIC, np), **_operations(_FUNCTIONS, np), **_operations(_INVERSE, np),
    **_operations({"FABS": "abs", "SIGN": "sign", "FMIN": "fmin", "FMAX": "fmax", "LOG1P": "log1p",
                   "EXPM1": "expm1", "HYPOT": "hypot", "ATAN2": "arctan2", "COPYSIGN": "copysign",
                   "FLOOR": "floor", "CEIL": "ceil", "LT": "less", "LE": "less_equal", "EQ": "equal",
                   "NE": "not_equal", "NOT": "logical_not", "AND": "logical_and", "OR": "logical_or",
                   "IF_ELSE_ZERO": lambda c, a: np.where(c, a, 0.0)}, np),
}


def pyomo_operations() -> dict:
    """CasADi operations on Pyomo expressions (Pyomo is imported on first use)."""
    import pyomo.environ as pyo

    return {**_operations(_ARITHMETIC, pyo), **_operations(_FUNCTIONS, pyo),
            **_operations({op: op.lower() for op in _INVERSE}, pyo),
            **_operations({"FABS": abs, "LOG1P": lambda a: pyo.log(1 + a), "EXPM1": lambda a: pyo.exp(a) - 1}, pyo)}


def replay(function: ca.Function, x, operations: dict):
    """The (first) output of a scalar SX ``function`` of one scalar input at ``x``: CasADi's
    instruction list replayed with ``operations`` ({operation code: function}), e.g.
    :data:`NUMPY_OPERATIONS` (x an array: elementwise) or :func:`pyomo_operations` (x a
    Pyomo expression).  An operation missing from ``operations`` raises NotImplementedError."""
    work = {}
    for k in range(function.n_instructions()):
        op, out, args = function.instruction_id(k), function.instruction_output(k), function.instruction_input(k)
        if op == ca.OP_INPUT:
            work[out[0]] = x
        elif op == ca.OP_OUTPUT:
            if out[0] == 0:
                return work[args[0]]
        elif op == ca.OP_CONST:
            work[out[0]] = float(function.instruction_constant(k))
        elif op in operations:  # the arguments of a unary or binary operation
            work[out[0]] = operations[op](*(work[a] for a in args))
        else:
            raise NotImplementedError(f"CasADi operation {op} of the user loss has no counterpart here")
    raise ValueError("the CasADi function has no first output")


# ---------------------------------------------------------------------------- penalties
class Penalty(Term):
    """A penalty on (omega, beta) (arrays (|tau_B|, p+1) and (|tau_L|, p+1)).

    Smooth penalties give :meth:`value`, :meth:`gradient`, :meth:`casadi` (CasADi
    matrices in, scalar out) and :meth:`pyomo` (lists of rows of Pyomo variables or
    numbers in).  Nonsmooth ones (``smooth = False``) also give :meth:`block_prox`; their
    :meth:`gradient` is a subgradient.  ``blocks`` names the blocks the penalty depends
    on ("omega", "beta").
    """

    name = "penalty"
    smooth = True
    blocks = ("omega", "beta")

    def value(self, omega, beta) -> float:
        raise NotImplementedError

    def gradient(self, omega, beta):
        raise NotImplementedError

    def casadi(self, omega, beta):
        raise NotImplementedError

    def pyomo(self, omega, beta):
        raise NotImplementedError

    def block(self, kind, rows, omega, beta) -> "BlockPenalty":
        """The penalty as a NODEC block subproblem sees it: a function of the rows ``rows`` of
        omega (kind "omega") or beta, the other rows fixed."""
        return BlockPenalty(self, kind, tuple(rows), omega, beta)

    def exact_block(self, kind, rows, omega, beta) -> "BlockPenalty":
        """The penalty itself on the block (with its proximal operator, if nonsmooth), also when
        :meth:`block` gives a surrogate."""
        return self.block(kind, rows, omega, beta)

    #: nonsmooth penalties' proximal operators compose in increasing ``order`` (separable
    #: l1 terms 0, radial group terms 1: then the composition is the prox of the sum)
    order = 0

    def prox(self, omega, beta, step):
        """argmin over (omega, beta) of step * penalty + the squared distance to (omega, beta) / 2."""
        raise NotImplementedError(f"{self.name} has no proximal operator")

    def block_prox(self, kind, rows, omega, beta, V, step):
        """The same over the block ``V`` (rows ``rows`` of omega or beta), the rest fixed."""
        raise NotImplementedError(f"{self.name} has no proximal operator")

    def block_l1_weights(self, kind, rows, omega, beta):
        """Weights w >= 0 (shape of the block) if the penalty on the block is sum w |x|, else None."""
        return None


class L2(Penalty):
    """lambda_w/2 ||omega||^2 + lambda_b/2 ||beta||^2 of eq. (obj), intercepts included.

    Parameters
    ----------
    lambda_w : float, default=0.0
        Weight on the split weights omega.
    lambda_b : float, default=0.0
        Weight on the leaf weights beta.
    """

    name = "l2"

    def __init__(self, lambda_w=0.0, lambda_b=0.0):
        self.lambda_w, self.lambda_b = float(lambda_w), float(lambda_b)

    def value(self, omega, beta):
        return 0.5 * self.lambda_w * np.sum(omega**2) + 0.5 * self.lambda_b * np.sum(beta**2)

    def gradient(self, omega, beta):
        return self.lambda_w * omega, self.lambda_b * beta

    def casadi(self, omega, beta):
        return 0.5 * self.lambda_w * ca.sumsqr(omega) + 0.5 * self.lambda_b * ca.sumsqr(beta)

    def pyomo(self, omega, beta):
        return (0.5 * self.lambda_w * sum(v * v for row in omega for v in row)
                + 0.5 * self.lambda_b * sum(v * v for row in beta for v in row))

    def block(self, kind, rows, omega, beta):
        return L2Block(self, kind, tuple(rows), omega, beta)


class LeafShrinkage(Penalty):
    """strength/2 sum_l ||beta_l - c||^2: every leaf model pulled towards one linear model c (its
    intercept and slopes on the scaled features), e.g. the ridge regression of the whole training
    set; with a large strength the tree predicts as that linear model does.

    Parameters
    ----------
    strength : float, default=0.0
        The weight of the term, >= 0.
    center : sequence of float or None, default=None
        c, shape (p + 1,): intercept first (None: zero, the l2 term's own target).

    Raises
    ------
    ValueError
        If ``strength`` is negative or not finite, or ``center`` holds a non-finite value.
    """

    name = "leaf_shrinkage"
    blocks = ("beta",)

    def __init__(self, strength=0.0, center=None):
        strength = _strength("leaf_shrinkage", strength)
        if center is not None and not np.all(np.isfinite(center)):
            raise ValueError(f"leaf_shrinkage center must be finite, got {center!r}")
        self.strength = float(strength)
        self.center = None if center is None else tuple(float(v) for v in np.ravel(center))

    def _c(self, q):
        return np.zeros(q) if self.center is None else np.asarray(self.center)

    def value(self, omega, beta):
        d = beta - self._c(beta.shape[1])
        return 0.5 * self.strength * float(np.sum(d * d))

    def gradient(self, omega, beta):
        return np.zeros_like(omega), self.strength * (beta - self._c(beta.shape[1]))

    def casadi(self, omega, beta):
        return 0.5 * self.strength * ca.sumsqr(beta - ca.repmat(ca.DM(self._c(beta.shape[1])).T, beta.shape[0], 1))

    def pyomo(self, omega, beta):
        c = self._c(len(beta[0]))
        return 0.5 * self.strength * sum((v - c[j]) * (v - c[j]) for row in beta for j, v in enumerate(row))

    def block(self, kind, rows, omega, beta):
        return LeafShrinkageBlock(self, kind, tuple(rows), omega, beta)


def _strength(name, value) -> float:
    """``value`` as the strength of the term ``name`` (a number >= 0), else a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} strength must be a number >= 0, got {value!r}")
    return float(value)


class CoefficientL1(Penalty):
    """strength * sum over the rows of one array (``array``: "omega", the splits, or "beta", the
    leaves) and features j >= 1 of |w_jt|: exact zeros by soft-thresholding (the intercepts are free).
    :class:`SplitL1` and :class:`LeafL1` are its two arrays."""

    smooth = False
    array = "omega"

    def __init__(self, strength=1e-3):
        self.strength = _strength(self.name, strength)

    @property
    def blocks(self):
        return (self.array,)

    def _own(self, omega, beta):
        return omega if self.array == "omega" else beta

    def value(self, omega, beta):
        return self.strength * float(np.sum(np.abs(self._own(omega, beta)[:, 1:])))

    def gradient(self, omega, beta):
        g = [np.zeros_like(omega), np.zeros_like(beta)]
        own = self._own(omega, beta)
        g[self.array == "beta"][:, 1:] = self.strength * np.sign(own[:, 1:])
        return tuple(g)

    def casadi(self, omega, beta):
        return self.strength * ca.sum1(ca.sum2(ca.fabs(self._own(omega, beta)[:, 1:])))

    def pyomo(self, omega, beta):
        return self.strength * sum(abs(v) for row in self._own(omega, beta) for v in row[1:])

    def _soft_threshold(self, V, step):
        X = np.array(V, float)
        X[:, 1:] = np.sign(X[:, 1:]) * np.maximum(np.abs(X[:, 1:]) - step * self.strength, 0.0)
        return X

    def prox(self, omega, beta, step):
        if self.array == "omega":
            return self._soft_threshold(omega, step), np.array(beta, float)
        return np.array(omega, float), self._soft_threshold(beta, step)

    def block_prox(self, kind, rows, omega, beta, V, step):
        return self._soft_threshold(V, step) if kind == self.array else np.array(V, float)

    def block_l1_weights(self, kind, rows, omega, beta):
        w = np.full((len(rows), omega.shape[1]), self.strength)
        w[:, 0] = 0.0
        return w


class SplitL1(CoefficientL1):
    """strength * sum over branch nodes t and features j >= 1 of |omega_jt|: sparse oblique
    splits (the intercepts omega_0t are free).

    Parameters
    ----------
    strength : float, default=1e-3
        The weight of the term, >= 0.

    Raises
    ------
    ValueError
        If ``strength`` is negative or not finite.
    """

    name = "split_l1"
    array = "omega"


class LeafL1(CoefficientL1):
    """strength * sum over leaves l and features j >= 1 of |beta_jl|: sparse leaf models (lasso
    leaves, as the MILO tree's; the intercepts are free).  Every LN route that takes a weighted l1
    term solves it: HiGHS's QP (``ln_solver="qp"``, the "auto" choice), the proximal gradient,
    L-BFGS-B and IPOPT by the variable split.

    Parameters
    ----------
    strength : float, default=1e-3
        The weight of the term, >= 0.

    Raises
    ------
    ValueError
        If ``strength`` is negative or not finite.
    """

    name = "leaf_l1"
    array = "beta"


class FeatureL1(Penalty):
    """strength * sum_{j>=1} sqrt(sum_t (w omega_jt)^2 + sum_l beta_jl^2): the group l1 of each
    feature's weights over all splits and leaves; a zero group removes feature j from the
    tree (intercepts are free).

    ``split_weight`` w scales the split weights in the group; None (default) takes
    w = 1/p, so that the group holds the coefficients of x_j in u_it = omega_0t +
    (1/p) sum_j omega_jt x_ij and in yhat_it (sharp splits need large omega_jt: with
    w = 1 the group norm of a feature used in a split is dominated by it).

    The groups couple every block of NODEC (all splits and leaves), so a block step
    alone cannot set a group to zero while the feature's other weights are nonzero.
    ``method`` says how a block subproblem sees the term:

    * "majorize" (default): the smooth majorizer at the current weights,
      strength sum_j (||v_j||^2 / eta_j + eta_j) / 2 with eta_j the current group norm
      (equal to the term there, above it elsewhere: a weighted ridge, so the block
      subproblems stay smooth and their usual solvers apply; minimizing it decreases
      E); the groups it shrinks are set exactly to zero by
      :class:`~srtopt.training.nodec_dr.GroupZeroingStep` at the end of each macro
      iteration;
    * "prox": the nonsmooth term with its proximal operator (proximal-gradient
      block solves), and a proximal-gradient solve over all variables at the end of each
      macro iteration.

    docs/formulations.md, "Penalties and the method for the nonsmooth ones", has the measurements behind
    the default.

    Parameters
    ----------
    strength : float, default=1e-3
        The weight of the term, >= 0.
    split_weight : float or None, default=None
        w, the factor on the split weights in each group (> 0); None: 1/p.
    method : {"majorize", "prox"}, default="majorize"
        How a block subproblem sees the term (above).
    relax : bool, default=True
        For :class:`~srtopt.estimators.srt.SoftRegressionTree`: the term selects the features, and
        the tree is refitted without it on those features (a relaxed fit: the weights of the
        features kept are not shrunk).  False: the tree minimizing E with the term.

    Raises
    ------
    ValueError
        If ``strength`` is negative or not finite, ``split_weight`` is not None or a positive number, or
        ``method`` is unknown.
    """

    name = "feature_l1"
    smooth = False
    order = 1

    def __init__(self, strength=1e-3, split_weight=None, method="majorize", relax=True):
        strength = _strength("feature_l1", strength)
        if split_weight is not None and not (np.isfinite(split_weight) and split_weight > 0):
            raise ValueError(f"feature_l1 split_weight must be None or a positive number, got {split_weight!r}")
        if method not in ("majorize", "prox"):
            raise ValueError(f"feature_l1 method must be 'majorize' or 'prox', got {method!r}")
        if not isinstance(relax, (bool, np.bool_)):
            raise ValueError(f"feature_l1 relax must be True or False, got {relax!r}")
        self.strength, self.split_weight, self.method, self.relax = float(strength), split_weight, method, bool(relax)

    def weight(self, n_columns: int) -> float:
        """w for arrays with ``n_columns`` = p + 1 columns."""
        return 1.0 / (n_columns - 1) if self.split_weight is None else float(self.split_weight)

    def _squares(self, omega, beta):
        """(w^2 sum_t omega_jt^2, sum_l beta_jl^2) per feature j >= 1."""
        return self.weight(omega.shape[1]) ** 2 * np.sum(omega[:, 1:] ** 2, axis=0), np.sum(beta[:, 1:] ** 2, axis=0)

    def value(self, omega, beta):
        return self.strength * float(np.sum(np.sqrt(sum(self._squares(omega, beta)))))

    def gradient(self, omega, beta):
        norms = np.sqrt(sum(self._squares(omega, beta)))
        scale = np.divide(self.strength, norms, out=np.zeros_like(norms), where=norms > 0)
        g_omega, g_beta = np.zeros_like(omega), np.zeros_like(beta)
        g_omega[:, 1:] = self.weight(omega.shape[1]) ** 2 * omega[:, 1:] * scale
        g_beta[:, 1:] = beta[:, 1:] * scale
        return g_omega, g_beta

    def casadi(self, omega, beta):
        both = ca.vertcat(self.weight(omega.shape[1]) * omega[:, 1:], beta[:, 1:])
        return self.strength * sum(ca.norm_2(both[:, j]) for j in range(both.shape[1]))

    def pyomo(self, omega, beta):
        import pyomo.environ as pyo

        w = self.weight(len(omega[0]))
        columns = zip(*[[w * v for v in row[1:]] for row in omega] + [row[1:] for row in beta])
        return self.strength * sum(pyo.sqrt(sum(v * v for v in column)) for column in columns)

    def prox(self, omega, beta, step):
        """Per feature j: omega_j and beta_j scaled by r / (r + step strength d^2) (d = w for
        omega, 1 for beta), r the root of :func:`_group_radius`; zero when
        sum_t omega_jt^2 / w^2 + sum_l beta_jl^2 <= (step strength)^2."""
        t, w = step * self.strength, self.weight(omega.shape[1])
        A, B = np.sum(omega[:, 1:] ** 2, axis=0), np.sum(beta[:, 1:] ** 2, axis=0)
        zero = A / w**2 + B <= t**2
        r = _group_radius([(w**2 * A, t * w**2), (B, t)], np.zeros_like(A), ~zero)
        omega, beta = np.array(omega, float), np.array(beta, float)
        omega[:, 1:] *= np.where(zero, 0.0, r / (r + t * w**2))
        beta[:, 1:] *= np.where(zero, 0.0, r / (r + t))
        return omega, beta

    def block(self, kind, rows, omega, beta):
        """The block term: its smooth majorizer at the current weights (``method="majorize"``) or
        the nonsmooth term with its proximal operator (``method="prox"``)."""
        block = FeatureL1Majorizer if self.method == "majorize" else FeatureL1Block
        return block(self, kind, tuple(rows), omega, beta)

    def exact_block(self, kind, rows, omega, beta):
        return FeatureL1Block(self, kind, tuple(rows), omega, beta)


def _group_radius(parts, c2, active, iterations=100):
    """r > 0 solving sum_k a_k / (r + b_k)^2 + c2 / r^2 = 1 (``parts`` = [(a_k, b_k)], arrays per
    feature) where ``active``; the left side decreases and is convex in r, so Newton's
    method from r = sqrt(c2), where it is >= 1, increases monotonically to the root."""
    r = np.sqrt(c2)
    for _ in range(iterations):
        safe = np.where(r > 0, r, 1.0)
        h = sum(a / (r + b) ** 2 for a, b in parts) + np.where(c2 > 0, c2 / safe**2, 0.0) - 1.0
        dh = -2.0 * (sum(a / (r + b) ** 3 for a, b in parts) + np.where(c2 > 0, c2 / safe**3, 0.0))
        step = np.where(active & (dh < 0), h / np.where(dh < 0, dh, -1.0), 0.0)
        r = r - step
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


# ------------------------------------------------------------------------- penalty blocks
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
        return np.full((len(self.rows), self.omega.shape[1]), self.strength)

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
        V2, c2 = np.sum(X[:, 1:] ** 2, axis=0), self.fixed_squares
        zero = (c2 == 0) & (np.sqrt(V2) <= t * d)
        r = _group_radius([(d**2 * V2, t * d**2)], c2, ~zero)
        X[:, 1:] *= np.where(zero, 0.0, r / (r + t * d**2))
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
        current = (self.omega if self.kind == "omega" else self.beta)[list(self.rows)]
        c2 = _fixed_squares(self)
        eta = np.maximum(np.sqrt(d**2 * np.sum(current[:, 1:] ** 2, axis=0) + c2), self.ETA_FLOOR)
        return d**2, c2, eta

    def ridge(self) -> np.ndarray:
        """The diagonal curvature r of the block (value = sum r x^2 / 2 + constant)."""
        d2, _, eta = self._terms
        r = np.zeros((len(self.rows), self.omega.shape[1]))
        r[:, 1:] = self.penalty.strength * d2 / eta
        return r

    def value(self, X) -> float:
        d2, c2, eta = self._terms
        return self.penalty.strength * float(np.sum((d2 * np.sum(np.asarray(X)[:, 1:] ** 2, axis=0) + c2) / (2 * eta)
                                                    + eta / 2))

    def gradient(self, X):
        return self.ridge() * np.asarray(X)

    def casadi(self, X, omega, beta):
        d2, c2, eta = self._terms
        return self.penalty.strength * sum((d2 * ca.sumsqr(X[:, j + 1]) + c2[j]) / (2 * eta[j]) + eta[j] / 2
                                           for j in range(len(eta)))

    def pyomo(self, X):
        d2, c2, eta = self._terms
        return self.penalty.strength * sum((d2 * sum(row[j + 1] * row[j + 1] for row in X) + float(c2[j]))
                                           / (2 * float(eta[j])) + float(eta[j]) / 2 for j in range(len(eta)))


# -------------------------------------------------------------------------- specifications
LOSSES = {"squared": Squared, "huber": Huber, "absolute": Absolute}
PENALTIES = {"split_l1": SplitL1, "leaf_l1": LeafL1, "feature_l1": FeatureL1}


def register_loss(name: str, factory) -> None:
    """Make ``loss=name`` (and ``"name:key=value"``) build ``factory(**options)``.

    Parameters
    ----------
    name : str
        The loss's name (lower-cased; an existing entry is replaced).
    factory : callable
        ``factory(**options)`` returning a :class:`Loss`; a Loss subclass will do.
    """
    LOSSES[name.lower()] = factory


def register_penalty(name: str, factory) -> None:
    """Make ``penalty=name`` (and ``"name:key=value"``) build ``factory(**options)``.

    Parameters
    ----------
    name : str
        The penalty's name (lower-cased; an existing entry is replaced).
    factory : callable
        ``factory(**options)`` returning a :class:`Penalty`; a Penalty subclass will do.
    """
    PENALTIES[name.lower()] = factory


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
        return _from_spec("loss", LOSSES, spec,
                          "a Loss object or a callable mapping a CasADi symbol r to an expression")
    if callable(spec):
        return CasadiLoss(spec)
    raise ValueError(f"loss must be a name, a Loss object or a callable, got {spec!r}")


def _from_spec(kind: str, registry: dict, spec: str, alternatives: str):
    """The term a spec string names (``"name"`` or ``"name:option=value,..."``) in ``registry``."""
    from .._spec import parse_spec

    name, options = parse_spec(spec)
    if name not in registry:
        raise ValueError(f"unknown {kind} {spec!r}; use one of {', '.join(map(repr, registry))}, {alternatives}")
    try:
        return registry[name](**options)
    except TypeError as exc:
        raise ValueError(f"bad options for {kind} {name!r}: {exc}") from None


def make_penalties(spec) -> tuple[Penalty, ...]:
    """Penalty terms from None, a name or spec (``"split_l1:strength=0.01"``), a Penalty
    object (deep-copied), or a list or tuple of these.

    Parameters
    ----------
    spec : None, str, Penalty, or list or tuple of these
        The penalties: registered names ("split_l1", "feature_l1", or one of :func:`register_penalty`),
        optionally with options, or Penalty objects.

    Returns
    -------
    tuple of Penalty
        New penalty objects, in the order given (empty for None).

    Raises
    ------
    ValueError
        If a name is unknown, an option is malformed or not accepted, or an item is of another type.
    """
    if spec is None:
        return ()
    if isinstance(spec, (list, tuple)):
        return tuple(p for item in spec for p in make_penalties(item))
    if isinstance(spec, Penalty):
        return (copy.deepcopy(spec),)
    if isinstance(spec, str):
        return (_from_spec("penalty", PENALTIES, spec, "a Penalty object or a list of these"),)
    raise ValueError(f"penalty must be None, a name, a Penalty object or a list of these, got {spec!r}")


SQUARED = Squared()

__all__ = ["Absolute", "BlockPenalty", "CasadiLoss", "CoefficientL1", "FeatureL1", "Huber", "L2", "LeafL1",
           "LeafShrinkage", "Loss", "Penalty", "SQUARED", "SplitL1", "Squared", "make_loss", "make_penalties",
           "register_loss", "register_penalty"]
