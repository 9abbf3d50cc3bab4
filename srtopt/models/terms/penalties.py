"""Penalty terms on (omega, beta): the l2 term of eq. (obj), the leaf shrinkage, and the l1 terms."""

from __future__ import annotations

import copy
import numbers

import casadi as ca
import numpy as np

from ..._spec import Registry, parse_spec
from ...bases import Basis
from . import layout
from .base import Term
from .blocks import BlockPenalty, FeatureL1Block, FeatureL1Majorizer, L2Block, LeafShrinkageBlock, _group_radius


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
    #: scores per leaf, K': the blocks of a row of beta (:mod:`.layout`; set by :meth:`bind`)
    _outputs = 1

    def bind(self, problem) -> "Penalty":
        """A copy that reads beta as the problem's leaf model lays it out (K' blocks of [intercept,
        features] per leaf, :mod:`.layout`)."""
        out = copy.copy(self)
        out._outputs = problem.leaf_model.n_outputs
        return out

    def _view(self, kind: str, array):
        """The numpy array of ``kind`` as rows of [intercept, features] (:func:`.layout.rows`)."""
        return layout.rows(array, self._outputs if kind == "beta" else 1)

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
        """The penalized array as rows of [intercept, features] (numpy)."""
        return self._view(self.array, omega if self.array == "omega" else beta)

    def value(self, omega, beta):
        return self.strength * float(np.sum(np.abs(self._own(omega, beta)[:, 1:])))

    def gradient(self, omega, beta):
        g = [np.zeros_like(omega), np.zeros_like(beta)]
        own, g_own = self._own(omega, beta), self._view(self.array, g[self.array == "beta"])
        g_own[:, 1:] = self.strength * np.sign(own[:, 1:])
        return tuple(g)

    def casadi(self, omega, beta):
        own = layout.casadi_rows(omega if self.array == "omega" else beta, self._outputs if self.array == "beta" else 1)
        return self.strength * ca.sum1(ca.sum2(ca.fabs(own[:, 1:]))) if own.shape[1] > 1 else ca.MX(0)

    def pyomo(self, omega, beta):
        own = layout.pyomo_rows(omega if self.array == "omega" else beta, self._outputs if self.array == "beta" else 1)
        return self.strength * sum(abs(v) for row in own for v in row[1:])

    def _soft_threshold(self, V, step):
        X = np.array(V, float)
        view = self._view(self.array, X)
        view[:, 1:] = np.sign(view[:, 1:]) * np.maximum(np.abs(view[:, 1:]) - step * self.strength, 0.0)
        return X

    def prox(self, omega, beta, step):
        if self.array == "omega":
            return self._soft_threshold(omega, step), np.array(beta, float)
        return np.array(omega, float), self._soft_threshold(beta, step)

    def block_prox(self, kind, rows, omega, beta, V, step):
        return self._soft_threshold(V, step) if kind == self.array else np.array(V, float)

    def block_l1_weights(self, kind, rows, omega, beta):
        w = np.full((len(rows), (omega if kind == "omega" else beta).shape[1]), self.strength)
        self._view(kind, w)[:, 0] = 0.0
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
    strength : float or None, default=None
        The weight of the term, >= 0.  None with ``relax`` (the default): the estimator keeps the features
        that predict on held-out rows (:func:`srtopt.estimators.selection.screen_features`) and no
        l1 fit runs; None without ``relax``: ``SCALE / sqrt(N)`` with N the sum of the training weights
        (the number of rows without weights; :meth:`bind`), the level at which the columns of pure noise
        leave the tree (docs/formulations.md, "Sparsity").
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
    #: strength=None gives SCALE / sqrt(N) (docs/formulations.md, "Sparsity")
    SCALE = 1.0

    def __init__(self, strength=None, split_weight=None, method="majorize", relax=True):
        strength = None if strength is None else _strength("feature_l1", strength)
        if split_weight is not None and not (np.isfinite(split_weight) and split_weight > 0):
            raise ValueError(f"feature_l1 split_weight must be None or a positive number, got {split_weight!r}")
        if method not in ("majorize", "prox"):
            raise ValueError(f"feature_l1 method must be 'majorize' or 'prox', got {method!r}")
        if not isinstance(relax, (bool, np.bool_)):
            raise ValueError(f"feature_l1 relax must be True or False, got {relax!r}")
        self.strength, self.split_weight, self.method, self.relax = strength, split_weight, method, bool(relax)

    def check_leaves(self, leaf_model) -> None:
        """Refuse a leaf model (fitted or not) whose basis has more columns per feature than one linear weight
        (spline leaves): the groups are each feature's split weights and linear leaf weights.  The estimators
        ask it when their fit starts, before a feature budget selects with the term."""
        basis = leaf_model.basis
        kind = basis.kind if isinstance(basis, Basis) else parse_spec(basis)[0]
        if kind not in ("constant", "linear"):
            raise ValueError(f"penalty feature_l1 groups each feature's split weights and linear leaf weights; "
                             f"{kind} leaves carry more columns per feature: use max_features to keep a few "
                             f"features, or linear leaves")

    def bind(self, problem) -> "FeatureL1":
        """A copy for ``problem`` (:meth:`Penalty.bind`) whose strength, if None, is ``SCALE / sqrt(N)``, N the
        sum of the problem's row weights; leaves it does not take are refused (:meth:`check_leaves`)."""
        self.check_leaves(problem.leaf_model)
        out = super().bind(problem)
        if out.strength is None:
            out.strength = self.SCALE / float(np.sqrt(problem.counts.sum()))
        return out

    def weight(self, n_columns: int) -> float:
        """w for arrays with ``n_columns`` = p + 1 columns."""
        return 1.0 / (n_columns - 1) if self.split_weight is None else float(self.split_weight)

    def _squares(self, omega, beta):
        """(w^2 sum_t omega_jt^2, sum_l beta_jl^2) per feature j >= 1 (beta_jl: every score's weight of
        feature j in leaf l, none for constant leaves)."""
        p = omega.shape[1] - 1
        return self.weight(omega.shape[1]) ** 2 * np.sum(omega[:, 1:] ** 2, axis=0), \
            layout.feature_squares(self._view("beta", beta), p)

    def value(self, omega, beta):
        return self.strength * float(np.sum(np.sqrt(sum(self._squares(omega, beta)))))

    def gradient(self, omega, beta):
        norms = np.sqrt(sum(self._squares(omega, beta)))
        scale = np.divide(self.strength, norms, out=np.zeros_like(norms), where=norms > 0)
        g_omega, g_beta = np.zeros_like(omega), np.zeros_like(beta)
        g_omega[:, 1:] = self.weight(omega.shape[1]) ** 2 * omega[:, 1:] * scale
        view = self._view("beta", beta)
        if view.shape[1] > 1:
            self._view("beta", g_beta)[:, 1:] = view[:, 1:] * scale
        return g_omega, g_beta

    def casadi(self, omega, beta):
        leaves = layout.casadi_rows(beta, self._outputs)
        both = ca.vertcat(self.weight(omega.shape[1]) * omega[:, 1:], *([leaves[:, 1:]] if leaves.shape[1] > 1 else []))
        return self.strength * sum(ca.norm_2(both[:, j]) for j in range(both.shape[1]))

    def pyomo(self, omega, beta):
        import pyomo.environ as pyo

        w = self.weight(len(omega[0]))
        leaves = [row[1:] for row in layout.pyomo_rows(beta, self._outputs) if len(row) > 1]
        columns = zip(*[[w * v for v in row[1:]] for row in omega] + leaves)
        return self.strength * sum(pyo.sqrt(sum(v * v for v in column)) for column in columns)

    def prox(self, omega, beta, step):
        """Per feature j: omega_j and beta_j scaled by r / (r + step strength d^2) (d = w for
        omega, 1 for beta), r the root of :func:`_group_radius`; zero when
        sum_t omega_jt^2 / w^2 + sum_l beta_jl^2 <= (step strength)^2."""
        t, w = step * self.strength, self.weight(omega.shape[1])
        A, B = np.sum(omega[:, 1:] ** 2, axis=0), layout.feature_squares(self._view("beta", beta), omega.shape[1] - 1)
        zero = A / w**2 + B <= t**2
        r = _group_radius([(w**2 * A, t * w**2), (B, t)], np.zeros_like(A), ~zero)
        omega, beta = np.array(omega, float), np.array(beta, float)
        omega[:, 1:] *= np.where(zero, 0.0, r / (r + t * w**2))
        view = self._view("beta", beta)
        if view.shape[1] > 1:
            view[:, 1:] *= np.where(zero, 0.0, r / (r + t))
        return omega, beta

    def block(self, kind, rows, omega, beta):
        """The block term: its smooth majorizer at the current weights (``method="majorize"``) or
        the nonsmooth term with its proximal operator (``method="prox"``)."""
        block = FeatureL1Majorizer if self.method == "majorize" else FeatureL1Block
        return block(self, kind, tuple(rows), omega, beta)

    def exact_block(self, kind, rows, omega, beta):
        return FeatureL1Block(self, kind, tuple(rows), omega, beta)




PENALTIES = Registry("penalty", {"split_l1": SplitL1, "leaf_l1": LeafL1, "feature_l1": FeatureL1},
                     "a Penalty object or a list of these")


def register_penalty(name: str, factory) -> None:
    """Make ``penalty=name`` (and ``"name:key=value"``) build ``factory(**options)``.

    Parameters
    ----------
    name : str
        The penalty's name (lower-cased; an existing entry is replaced).
    factory : callable
        ``factory(**options)`` returning a :class:`Penalty`; a Penalty subclass will do.
    """
    PENALTIES.register(name, factory)




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
        return (PENALTIES.make(spec),)
    raise ValueError(f"penalty must be None, a name, a Penalty object or a list of these, got {spec!r}")
