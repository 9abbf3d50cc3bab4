"""Declarative formulations of the SRT training problem and its NODEC subproblems.

A formulation says *what* is minimised: its variables, its data, and its
objective, composed of a loss term and penalty terms (:mod:`.terms`).  It
evaluates itself with the numpy reference kernels (:meth:`evaluate`, value and
gradient), renders itself as a CasADi model (:meth:`render`, MX with exact
derivatives) and as a Pyomo model (:meth:`render_pyomo`); the three live in the
formulation's class.  It never calls a solver.

One formulation per module: :mod:`.problem` (the data and terms, :class:`SRTProblem`),
:mod:`.objective`, :mod:`.branch`, :mod:`.leaf`, :mod:`.wlr`; :mod:`.base` and :mod:`.working_set`
hold what they share.

Formulations (paper names):

* :class:`SRTObjective` -- E(omega, beta) of eq. (obj), all variables.
* :class:`BranchSubproblem` -- BN step: E restricted to the subtree rooted at t
  and the data I_t (the proxy of section 4.2), over omega_{W_B} (any branch nodes of
  that subtree).
* :class:`LeafSubproblem` -- LN step: the same proxy over beta_{W_L} (a weighted
  ridge least-squares problem for the squared loss and the l2 penalty).
* :class:`WLRProxy` -- the weighted logistic regression of eq. (reshuffle) over
  omega_t, used by the data-point reassignment heuristic.

With a nonsmooth penalty (``split_l1``, ``feature_l1``) a formulation is the sum of
a smooth part (``evaluate_smooth``) and a nonsmooth part (``nonsmooth_value``,
``prox``); its ``evaluate`` then returns the value and the *stationarity gradient*,
the proximal-gradient mapping (x - prox(x - t g, t)) / t for a small t, which is the
gradient where the penalty is differentiable and vanishes exactly at stationary
points.  ``nonsmooth`` lists the nonsmooth terms (empty: a smooth problem that every
NLP solver accepts).
"""

from __future__ import annotations

from .base import AllVariables, Composite, stationarity_gradient
from .branch import BranchSubproblem
from .leaf import LeafSubproblem
from .objective import SRTObjective
from .problem import SRTProblem
from .wlr import WLRProxy, omega_from_logistic
from .working_set import WorkingSetSubproblem

__all__ = ["AllVariables", "BranchSubproblem", "Composite", "LeafSubproblem", "SRTObjective", "SRTProblem", "WLRProxy",
           "WorkingSetSubproblem", "omega_from_logistic", "stationarity_gradient"]
