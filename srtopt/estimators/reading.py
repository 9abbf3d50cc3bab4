"""The scikit-learn API shared by the estimators: ``score``, and for trees depth, leaves and the soft routing."""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .. import kernels
from ..tree import Tree
from ..view import FittedTree, oblique_reach, path_indicator


def r2_score(y, prediction, sample_weight=None) -> float:
    """scikit-learn's ``r2_score`` of ``prediction`` against ``y``, both divided by the power of two
    just above max |y|: the same value (the division is exact), but finite for any finite y, where
    scikit-learn's squares overflow (|y| near 1e300: nan) or underflow (|y| near 1e-200: 1.0)."""
    from sklearn.metrics import r2_score as sklearn_r2_score

    y, prediction = np.asarray(y, dtype=float), np.asarray(prediction, dtype=float)
    top = np.max(np.abs(y), initial=0.0)
    if np.isfinite(top) and top > 0:
        exponent = np.frexp(top)[1]
        y, prediction = np.ldexp(y, -exponent), np.ldexp(prediction, -exponent)
    return float(sklearn_r2_score(y, prediction, sample_weight=sample_weight))


class RegressorScoreMixin(RegressorMixin):
    """scikit-learn's ``RegressorMixin`` with a scale-safe ``score`` (:func:`r2_score`)."""

    def score(self, X, y, sample_weight=None) -> float:
        """The coefficient of determination R^2 of :meth:`predict` on (X, y).

        R^2 = 1 - sum_i w_i (y_i - yhat_i)^2 / sum_i w_i (y_i - ybar)^2, with ybar the weighted
        mean of y: 1 for a perfect prediction, 0 for predicting ybar, negative for worse; computed on y
        and the predictions scaled by a power of two near max |y| (:func:`r2_score`), so that it is
        finite for any finite y.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, p)
            Inputs, with the features of ``fit``.
        y : array-like of shape (n_samples,)
            True targets.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights w_i of the rows; None: equal weights.

        Returns
        -------
        float
            R^2 of ``predict(X)`` against y.
        """
        return r2_score(y, self.predict(X), sample_weight)


class TreeMixin:
    """``get_depth``, ``get_n_leaves``, ``decision_path`` and ``save`` of a fitted binary tree of depth D."""

    def save(self, path):
        """Write the fitted tree to ``path`` (versioned JSON, see :mod:`srtopt.persistence`)."""
        from ..persistence import save

        save(self, path)

    def get_depth(self) -> int:
        """Depth D of the fitted tree (every tree here is the maximal tree of depth D)."""
        check_is_fitted(self)
        return int(self.depth)

    def get_n_leaves(self) -> int:
        """Number of leaves some input reaches: 2^D less those below a split that sends every
        row one way (:meth:`reachable_nodes`)."""
        tree = Tree(self.get_depth())
        return int(self.reachable_nodes()[np.asarray(tree.leaves) - 1].sum())

    def decision_path(self, X):
        """Sparse CSR indicator (n_samples, 2^(D+1) - 1) of the nodes on each row's path (the
        HBP path of a soft tree); column j is node j + 1 in the paper's numbering, as in
        scikit-learn: every row has D + 1 ones and the leaf columns reproduce :meth:`apply`."""
        return path_indicator(self.apply(X), self.get_depth())

    def tree_view(self) -> FittedTree:
        """The fitted tree as the readers see it (:class:`srtopt.view.FittedTree`): the text, DOT,
        HTML and plot writers and the node table work on it."""
        check_is_fitted(self)
        fields = {f.name: getattr(self, f.name, None) for f in dataclasses.fields(FittedTree) if f.name.endswith("_")}
        if getattr(self, "encoder_", None) is not None:  # the readers name and count the tree's columns
            fields["feature_names_in_"] = np.array(self.encoder_.names, dtype=object)
            fields["n_features_in_"] = len(self.encoder_.names)
        return FittedTree(estimator=type(self).__name__, depth=self.get_depth(), reach=self.reachable_nodes(),
                          mu=getattr(self, "mu", None), router=self.apply, predictor=self.predict,
                          probabilities=getattr(self, "predict_proba", None), **fields)

    def reachable_nodes(self) -> np.ndarray:
        """Mask of shape (2^(D+1) - 1,), True at index t - 1 when some input reaches node t
        (the views draw these nodes only)."""
        raise NotImplementedError


class SoftTreeMixin(TreeMixin):
    """The soft routing of an oblique tree with ``omega_`` and slope ``mu``."""

    def reachable_nodes(self) -> np.ndarray:
        """Mask (index t - 1) of the nodes some input reaches: below a split whose slopes are
        all zero, the side it never sends a row to is not (:func:`srtopt.view.oblique_reach`)."""
        check_is_fitted(self)
        return oblique_reach(self.omega_, Tree(int(self.depth)))

    def apply(self, X):
        """Leaf of each row's HBP path, in the paper's node numbering (2^D .. 2^(D+1)-1)."""
        Xs = self._scaled(X)
        return kernels.hbp_leaves(kernels.split_design(Xs), self.omega_, Tree(int(self.depth)))

    def leaf_probabilities(self, X):
        """The probability P_it that row i of X reaches leaf t of the soft tree.

        P_it is the product of p_it' over the ancestors t' whose left branch leads to t and of
        1 - p_it' over the others (paper, section 3.1), with the split probabilities
        p_it' = F(omega_0t' + (1/p) sum_j omega_jt' x_ij) of eq. (cdf); each row sums to 1.  The
        HBP leaf of :meth:`apply` follows the larger branch probability at every node, which
        need not be the leaf of largest P_it.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, p)
            Inputs, finite, with the features of ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, 2^D)
            P_it, column l for leaf t = 2^D + l (the paper's numbering, in order).
        """
        Xs = self._scaled(X)
        S = kernels.split_probabilities(kernels.split_design(Xs), self.omega_, float(self.mu))
        return kernels.leaf_probabilities(S, Tree(int(self.depth)))

    def _store_feature_importances(self, Xs, weights):
        """feature_importances_ of the scaled training data Xs (:func:`srtopt.kernels.feature_importances`)."""
        tree = Tree(int(self.depth))
        S = kernels.split_probabilities(kernels.split_design(Xs), self.omega_, float(self.mu))
        self.feature_importances_ = kernels.feature_importances(self.omega_, kernels.node_shares(S, tree, weights),
                                                                tree)
