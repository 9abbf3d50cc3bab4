"""The leaf models of a soft tree (the contract: :mod:`srtopt.leaf_model`): what a leaf predicts from its
coefficients beta_l and the loss of each row at each leaf, R_il, the quantity NODEC's subproblems are written
on.

* :class:`RegressionLeaves` -- yhat_il = Xa_i . beta_l, R_il = loss(yhat_il - y_i) (eq. obj): the SRT's linear
  leaves on the basis [1, x], additive spline leaves on a spline basis;
* :class:`ClassLeaves` -- class probabilities softmax(u_il): constant, multinomial logistic or additive
  logistic leaves;
* :class:`LinearValues` -- v(yhat_il, y_i) of a value leaf, the values a soft-mean constraint averages.

:mod:`.hessian` holds the block-diagonal Hessian in the leaf coefficients; :mod:`.fitting` fits a basis from its
spec (the spline knots and smoothness).
"""

from ...leaf_model import LeafModel, register_leaf_model
from .classification import ClassLeaves
from .fitting import fit_basis
from .hessian import block_diagonal, leaf_hessian, leaf_hessian_blocks, row_outer_products
from .regression import LinearValues, RegressionLeaves, linear_leaves

__all__ = ["ClassLeaves", "LeafModel", "block_diagonal", "LinearValues", "RegressionLeaves", "fit_basis", "leaf_hessian",
           "leaf_hessian_blocks", "linear_leaves", "register_leaf_model", "row_outer_products"]
