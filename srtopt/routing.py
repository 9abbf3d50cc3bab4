"""The HBP path and the SRT prediction (eq. prediction_model) in numpy alone: what predicting
with a saved tree needs, without the compiled kernels of :mod:`srtopt.kernels` (which
re-exports these names).  Notation: :mod:`srtopt.kernels`.
"""

from __future__ import annotations

import numpy as np

from .tree import Tree

CHUNK_ROWS = 1 << 16  # rows per block of the full-data kernels (bounds their temporaries)
#: the largest scaled feature value a prediction sees (the training rows span [0, 1]): a finite input however
#: far out, or a feature of a tiny training range, gives finite outputs
SCALED_BOUND = 1e100


def split_design(X: np.ndarray) -> np.ndarray:
    """Z = [1, X/p]: rows z_i such that z_i . omega_t = omega_0t + (1/p) sum_j omega_jt x_ij."""
    n, p = X.shape
    return np.hstack([np.ones((n, 1)), X / p])


def leaf_design(X: np.ndarray) -> np.ndarray:
    """Xa = [1, X]: rows such that Xa_i . beta_t = yhat_it."""
    return np.hstack([np.ones((X.shape[0], 1)), X])


def row_chunks(n: int):
    """Slices covering range(n) in blocks of CHUNK_ROWS rows."""
    return [slice(start, start + CHUNK_ROWS) for start in range(0, max(n, 1), CHUNK_ROWS)]


def hbp_leaves(Z: np.ndarray, omega: np.ndarray, tree: Tree) -> np.ndarray:
    """Leaf (paper numbering) of the HBP path of every row (eq. prediction_model).

    At each branch node go left iff p_it >= 0.5, i.e. u_it >= 0 (ties go left).
    """
    node = np.ones(Z.shape[0], dtype=np.int64)
    for rows in row_chunks(Z.shape[0]):
        U = Z[rows] @ omega.T
        index = np.arange(U.shape[0])
        for _ in range(tree.depth):
            node[rows] = 2 * node[rows] + (U[index, node[rows] - 1] < 0)
    return node


def hbp_predict(X: np.ndarray, omega: np.ndarray, beta: np.ndarray, tree: Tree) -> np.ndarray:
    """SRT prediction (eq. prediction_model): the linear model of the HBP leaf."""
    leaves = hbp_leaves(split_design(X), omega, tree)
    Xa = leaf_design(X)
    return np.einsum("ij,ij->i", Xa, beta[tree.leaf_rows(leaves)])


def bounded_rows(Xs: np.ndarray) -> np.ndarray:
    """Scaled rows as a prediction takes them: C-ordered (a row's sums do not depend on how the caller's array
    lies in memory) and within +-:data:`SCALED_BOUND`."""
    return np.clip(np.ascontiguousarray(Xs, dtype=float), -SCALED_BOUND, SCALED_BOUND)


def class_probabilities(U: np.ndarray, n_classes: int) -> np.ndarray:
    """softmax of the K class scores, (..., K), from the K' free scores U (..., K'): for two classes
    U holds the second class's score, the first class's being 0.  An infinite score counts as the
    largest float: the probabilities stay finite.

    >>> class_probabilities(np.array([[0.0], [np.log(3.0)]]), 2).round(3)
    array([[0.5 , 0.5 ],
           [0.25, 0.75]])
    """
    full = np.concatenate([np.zeros(U.shape[:-1] + (1,)), U], axis=-1) if n_classes == 2 and U.shape[-1] == 1 else U
    full = np.clip(full, -np.finfo(float).max, np.finfo(float).max)
    full = full - np.max(full, axis=-1, keepdims=True)
    e = np.exp(full)
    return e / np.sum(e, axis=-1, keepdims=True)


__all__ = ["CHUNK_ROWS", "SCALED_BOUND", "bounded_rows", "class_probabilities", "hbp_leaves", "hbp_predict",
           "leaf_design", "row_chunks", "split_design"]
