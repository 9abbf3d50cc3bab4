"""Objective terms written once: the losses and penalties that formulations compose.

Modules: :mod:`.operations` (the math namespaces, the replay of CasADi graphs), :mod:`.losses`,
:mod:`.penalties`, :mod:`.blocks` (a penalty as a block subproblem sees it).

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

from .base import Term
from .blocks import BlockPenalty
from .losses import LOSSES, SQUARED, Absolute, CasadiLoss, Huber, Loss, Squared, make_loss, register_loss
from .operations import CASADI, NUMPY, CasadiFormula, pyomo_ops, replay
from .penalties import (
                        L2,
                        PENALTIES,
                        CoefficientL1,
                        FeatureL1,
                        LeafL1,
                        LeafShrinkage,
                        Penalty,
                        SplitL1,
                        make_penalties,
                        register_penalty,
)

__all__ = ["Absolute", "BlockPenalty", "CASADI", "CasadiFormula", "CasadiLoss", "CoefficientL1", "FeatureL1", "Huber", "L2", "LOSSES",
           "LeafL1", "LeafShrinkage", "Loss", "NUMPY", "PENALTIES", "Penalty", "SQUARED", "SplitL1",
           "Squared", "Term", "make_loss", "make_penalties", "pyomo_ops", "register_loss",
           "register_penalty", "replay"]
