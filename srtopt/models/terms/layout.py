"""A leaf's coefficients as rows of [intercept, feature weights]: how the penalties on beta see them.

A linear leaf's row of beta is [beta_0, beta_1..beta_p]; a classification leaf's holds K' such blocks
(one per score, :mod:`srtopt.models.leaves`), and a constant leaf's blocks are its intercepts alone.
The penalties that treat intercepts and feature weights apart (the l1 terms, feature_l1) read beta
through these views, so that their formulas, written for rows [intercept, features], hold for every
leaf model.  ``outputs`` is K' (1 for omega and for linear leaves).
"""

from __future__ import annotations

import casadi as ca
import numpy as np


def rows(array: np.ndarray, outputs: int) -> np.ndarray:
    """``array`` (m, K' q) as (m K', q): one row per score block (a view when ``array`` is contiguous)."""
    return array if outputs == 1 else np.reshape(array, (array.shape[0] * outputs, array.shape[1] // outputs))


def casadi_rows(M, outputs: int):
    """The CasADi matrix M (m x K' q) as its K' column blocks stacked (the order of rows does not matter to
    the sums the penalties take)."""
    if outputs == 1:
        return M
    q = M.shape[1] // outputs
    return ca.vertcat(*[M[:, k * q:(k + 1) * q] for k in range(outputs)])


def pyomo_rows(rows_of: list, outputs: int) -> list:
    """Rows (lists of Pyomo expressions or numbers) of K' q entries as rows of q."""
    if outputs == 1:
        return rows_of
    q = len(rows_of[0]) // outputs
    return [row[k * q:(k + 1) * q] for row in rows_of for k in range(outputs)]


def feature_squares(view: np.ndarray, p: int) -> np.ndarray:
    """sum over the rows of each feature weight squared, (p,): 0 for rows without feature weights
    (constant leaves)."""
    return np.sum(view[:, 1:] ** 2, axis=0) if view.shape[1] > 1 else np.zeros(p)


def feature_columns(j: int, q: int, outputs: int) -> list[int]:
    """The columns of beta (K' blocks of q) that hold the weights of feature j (none for constant leaves)."""
    return [k * q + 1 + j for k in range(outputs)] if q > 1 else []


def leaf_features_used(beta: np.ndarray, outputs: int, p: int) -> np.ndarray:
    """Boolean (p,): the features with a nonzero weight in some leaf."""
    view = rows(beta, outputs)
    return np.any(view[:, 1:] != 0, axis=0) if view.shape[1] > 1 else np.zeros(p, dtype=bool)
