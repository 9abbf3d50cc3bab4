"""Constraints written once: bounds on the coefficients, and constraints on the soft model's
group means and group losses, which every formulation of the SRT problem carries beside its
objective.

Two kinds of constraint terms:

* **variable bounds** (:class:`VariableBounds`), the same on every split and on every leaf:

  - :class:`Monotone` -- scikit-learn's ``monotonic_cst``: a feature with sign s_j = +1 (-1)
    is used by no split (omega_jt = 0) and every leaf slope on it has the sign (s_j beta_jl >= 0),
    so the HBP prediction is monotone in x_j exactly (the routing does not depend on x_j, and
    within a leaf the prediction's term in x_j has the right sign of slope);
  - :class:`LeafBounds` -- lower_j <= beta_jl <= upper_j on the leaf slopes of feature j.

  Where a leaf's term in feature j is a curve (a spline leaf), its slope is bounded by linear rows on the
  leaf's coefficients instead (:meth:`srtopt.bases.Basis.slope_rows`; :class:`CoefficientRows` in every
  formulation over beta).

* **soft means** (:class:`SoftMean`): rows g_k(omega, beta) = sum_i W_ik sum_l P_il v(yhat_il, y_i)
  with lower_k <= g_k <= upper_k, on the soft model the training objective E of eq. (obj) is
  written on (P_il the leaf probabilities, yhat_il = Xa_i . beta_l):

  - :class:`Parity` -- |mean soft prediction over group h - over group g| <= gap, for every pair
    of groups (v = yhat, W the differences of the groups' weighted means);
  - :class:`GroupLoss` -- each group's mean loss <= bound (v = loss(yhat - y), the training loss;
    the bounded group loss of Agarwal, Dudik and Wu 2019);
  - :class:`RowMean` -- any of these written declaratively: v(yhat, y) a CasADi callable in y's
    units (or "prediction", "residual", "squared_error"), the mean over every row, each group, each
    pair of groups or a mask of the rows, over the tree or per leaf (a user's constraint in a few
    lines; :func:`group_weights` gives the groups' weights of any data).

Modules: :mod:`.base` (the tolerances, the user's units), :mod:`.bounds`, :mod:`.soft_means`,
:mod:`.row_means`, :mod:`.blocks` (a soft mean as each formulation sees it), :mod:`.constrained` (what a formulation
gives its solvers), :mod:`.sets` (a problem's constraints together; specs).

Each renders itself three ways from one definition: numpy values and Jacobians (the reference,
checked by finite differences), CasADi expressions and Pyomo expressions.  The value function v
of a soft mean is written once, over the operations namespaces of :mod:`.terms`.

A constraint is made in the user's units (y's units, features by name) and mapped to the
training problem's (x scaled to [0, 1], y standardized) by :meth:`Constraint.in_training_units`;
:meth:`Constraint.bind` attaches what it needs of the training data (the groups' weights).

A NODEC subproblem sees a soft mean as a block (:class:`SplitBlock` over omega_W,
:class:`LeafBlock` over beta_W): the constraint of the whole model over every training row,
with the other variables fixed, so that every step keeps a feasible iterate feasible.
"""

from __future__ import annotations

from .base import FEASIBILITY_TOL, REACH_FLOOR, Constraint, TrainingUnits
from .blocks import CoefficientRows, FullBlock, LeafBlock, Routing, SplitBlock
from .bounds import FeatureSubset, LeafBounds, Monotone, VariableBounds
from .class_means import ClassRates, ClassRecall, EqualizedOdds, GroupRecall, ProbabilityParity, RateParity
from .constrained import Constrained
from .policy import ConstraintPolicy, rank
from .row_means import RowMean
from .sets import CONSTRAINTS, PLUGINS, ConstraintSet, make_constraints, register_constraint
from .soft_means import (GroupLoss, HeldPredictions, MeanPrediction, Parity, SoftMean, group_differences, group_pairs,
                         group_weights)

__all__ = ["CONSTRAINTS", "PLUGINS", "ClassRates", "CoefficientRows", "ClassRecall", "EqualizedOdds", "GroupRecall",
           "ProbabilityParity", "RateParity", "Constrained", "Constraint", "ConstraintPolicy", "ConstraintSet",
           "FEASIBILITY_TOL", "FeatureSubset", "FullBlock", "GroupLoss", "HeldPredictions", "LeafBlock", "LeafBounds",
           "MeanPrediction", "Monotone", "Parity", "REACH_FLOOR", "Routing", "RowMean", "SoftMean", "SplitBlock",
           "TrainingUnits", "VariableBounds", "group_differences", "group_pairs", "group_weights", "make_constraints",
           "rank", "register_constraint"]
