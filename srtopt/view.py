"""A fitted tree as the readers see it: what the text, DOT, HTML and plot writers and the node
table need, whichever estimator fitted it.

Each estimator gives its :class:`FittedTree` with ``tree_view()``; a saved model file gives one
with :func:`srtopt.persistence.read_view` without loading the estimator (or scikit-learn).
The fields keep the names of the estimators' fitted attributes.  Oblique trees
(SoftRegressionTree, ORRTRegressor, SoftClassificationTree) fill ``omega_``, ``beta_`` and ``mu``;
the MILO tree (axis-aligned splits) fills ``split_feature_`` and the leaf models.  A classifier
also fills ``classes_`` and the per-leaf class statistics; its ``beta_`` row l holds leaf l's
K' class-score vectors of q coefficients one after the other (``leaf_model_``, :mod:`srtopt.leaf_model`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from .tree import Tree


class Scaling(NamedTuple):
    """The training statistics of the internal scaling: x_s = (x - x_min) / x_scale, y_s = (y -
    y_mean) / y_std."""

    x_min: np.ndarray
    x_scale: np.ndarray
    y_mean: float
    y_std: float

    def transform(self, X):
        """x_s of the rows X; a finite value far outside the training range may overflow to +-inf, silently
        (the predictions bound the scaled rows, :func:`srtopt.routing.bounded_rows`)."""
        with np.errstate(over="ignore"):
            return (X - self.x_min) / self.x_scale

    def transform_y(self, y):
        return (y - self.y_mean) / self.y_std

    def inverse_y(self, y_scaled):
        return y_scaled * self.y_std + self.y_mean


@dataclass(frozen=True, eq=False)
class FittedTree:
    """A fitted tree of depth D on p features (module docstring).

    Attributes
    ----------
    estimator : str
        The class that fitted it ("SoftRegressionTree", "ORRTRegressor", "MILOTreeRegressor",
        "SoftClassificationTree").
    depth : int
        D.
    n_features_in_ : int
        p, the tree's columns (for a fit on a table with text or missing cells, its encoded columns).
    scaler_ : Scaling
        The training statistics of the internal scaling.
    reach : ndarray of bool, shape (2^(D+1) - 1,)
        True at index t - 1 when some input reaches node t (:func:`oblique_reach`, :func:`axis_reach`).
    feature_names_in_ : ndarray of str or None
        The names of the tree's columns: the feature names seen at fit, or the encoded columns' ("Home = owner",
        "Age (missing)").
    classes_ : ndarray of shape (K,) or None
        A classifier's class labels, in the order of its probabilities; None for a regressor.
    leaf_class_counts_ : ndarray of shape (2^D, K) or None
        A classifier's (weighted) training rows of each class that each leaf receives by HBP.
    leaf_class_proba_ : ndarray of shape (2^D, K) or None
        A classifier's class probabilities of each leaf averaged over the (weighted) training
        rows it receives by HBP (for a constant leaf, its probability vector).
    leaf_model_ : LeafModel or None
        A soft tree's leaf model (:mod:`srtopt.leaf_model`): its basis and link (ORRT's linear leaves and
        ORCT's constant class leaves too); None for the MILO tree's.
    encoder_ : TableEncoder or None
        The encoding of a table with text or missing cells (:mod:`srtopt.encoding`): the tree's columns are
        its encoded ones, ``feature_names_in_`` their names; None for a fit on numbers.
    router : callable or None
        Raw X -> the leaf of each row (paper numbering); None for a tree read from a file.
    predictor : callable or None
        Raw X -> the estimator's prediction of each row; for a tree read from a file, set for a
        SoftRegressionTree and a SoftClassificationTree only.
    probabilities : callable or None
        Raw X -> a classifier's class probabilities (n_samples, K) (its ``predict_proba``).
    """

    estimator: str
    depth: int
    n_features_in_: int
    scaler_: Scaling
    reach: np.ndarray
    feature_names_in_: np.ndarray | None = None
    mu: float | None = None
    omega_: np.ndarray | None = None
    beta_: np.ndarray | None = None
    split_feature_: np.ndarray | None = None
    split_threshold_: np.ndarray | None = None
    split_threshold_scaled_: np.ndarray | None = None
    leaf_coef_: np.ndarray | None = None
    leaf_intercept_: np.ndarray | None = None
    leaf_coef_scaled_: np.ndarray | None = None
    leaf_intercept_scaled_: np.ndarray | None = None
    node_counts_: np.ndarray | None = None
    leaf_mse_: np.ndarray | None = None
    leaf_r2_: np.ndarray | None = None
    feature_importances_: np.ndarray | None = None
    constraint_report_: list | None = None
    classes_: np.ndarray | None = None
    leaf_class_counts_: np.ndarray | None = None
    leaf_class_proba_: np.ndarray | None = None
    leaf_model_: object = None
    encoder_: object = None
    router: Callable | None = None
    predictor: Callable | None = None
    probabilities: Callable | None = None

    @property
    def kind(self) -> str:
        """"milo" for axis-aligned splits, "oblique" for soft oblique ones."""
        return "milo" if self.split_feature_ is not None else "oblique"

    def apply(self, X) -> np.ndarray:
        """The leaf of each row of raw ``X`` (the HBP leaf of a soft tree)."""
        if self.router is None:
            raise ValueError("routing rows of X needs the fitted estimator: a tree read from a file shows its "
                             "training counts only (load it with srtopt.load to route new rows)")
        return np.asarray(self.router(X))

    def predict(self, X) -> np.ndarray:
        """The estimator's prediction of each row of raw ``X`` (finite numbers, the features in the
        order of the fit)."""
        if self.predictor is None:
            raise ValueError(f"predicting with a {self.estimator} read from a file needs the fitted estimator: "
                             "load it with srtopt.load")
        return np.asarray(self.predictor(X))

    def predict_proba(self, X) -> np.ndarray:
        """A classifier's class probabilities of each row of raw ``X``, shape (n_samples, K), the
        columns in the order of ``classes_``; a regressor has none (one-line ValueError)."""
        if self.classes_ is None:
            raise ValueError(f"predict_proba needs a classifier: this model is a {self.estimator}, which predicts "
                             f"numbers, not classes (fit a SoftClassificationTree)")
        if self.probabilities is None:
            raise ValueError(f"class probabilities of a {self.estimator} read from a file need the fitted "
                             "estimator: load it with srtopt.load")
        return np.asarray(self.probabilities(X))

    def decision_path(self, X):
        """:func:`path_indicator` of the leaves of ``X``."""
        return path_indicator(self.apply(X), self.depth)


def assignment_scores(C: np.ndarray) -> np.ndarray:
    """Constant-leaf scores (2^D, K') whose softmax is each row of the class assignments ``C``
    (2^D, K), as the leaf model's ``coefficients`` read them: log C (the logit of the second class
    for K = 2), a zero entry at the log of the smallest float, so that ORCT's leaves read as
    constant class-probability leaves."""
    logs = np.log(np.maximum(np.asarray(C, dtype=float), np.finfo(float).tiny))
    return logs[:, 1:] - logs[:, :1] if logs.shape[1] == 2 else logs - logs.mean(axis=1, keepdims=True)


def path_indicator(leaves, depth: int):
    """Sparse CSR indicator (n_samples, 2^(D+1) - 1) of the nodes on the path to each leaf in
    ``leaves`` (paper numbering); column j is node j + 1, every row has D + 1 ones."""
    from scipy.sparse import csr_matrix

    leaves = np.asarray(leaves)
    n = len(leaves)
    shifts = np.arange(depth, -1, -1)  # the root (leaf >> D) first: columns in increasing order
    indices = ((leaves[:, None] >> shifts[None, :]) - 1).ravel()
    indptr = np.arange(0, n * (depth + 1) + 1, depth + 1)
    return csr_matrix((np.ones(n * (depth + 1), dtype=np.int64), indices, indptr), shape=(n, 2 ** (depth + 1) - 1))


def oblique_reach(omega: np.ndarray, tree: Tree) -> np.ndarray:
    """Mask (index t - 1) of the nodes some input can reach by HBP.

    A split whose slopes are all zero is constant: it sends every row left if omega_0t >= 0,
    else right, so the other subtree is unreachable (a *closed* split,
    :func:`srtopt.kernels.close_unreached`)."""
    reach = np.ones(2 ** (tree.depth + 1) - 1, dtype=bool)
    for t in tree.branch_nodes:  # parents before children
        row = omega[tree.branch_index(t)]
        if not reach[t - 1]:
            reach[2 * t - 1] = reach[2 * t] = False
        elif not row[1:].any():
            reach[(2 * t + 1 if row[0] >= 0 else 2 * t) - 1] = False
    return reach


def axis_reach(split_feature: np.ndarray, tree: Tree) -> np.ndarray:
    """Mask (index t - 1) of the nodes some input reaches in an axis-aligned tree: a node
    without a split (feature -1) sends every row right, so its left subtree is not reached."""
    reach = np.ones(2 ** (tree.depth + 1) - 1, dtype=bool)
    for t in tree.branch_nodes:
        reach[2 * t - 1] = reach[t - 1] and split_feature[t - 1] >= 0
        reach[2 * t] = reach[t - 1]
    return reach
