"""srtopt: Soft Regression Trees and the NODEC decomposition training algorithm.

Paper: Consolo, Amaldi, Manno, "Soft regression trees: a model variant and a
decomposition training algorithm".
"""

from __future__ import annotations

import numpy as np

from . import kernels
from .estimators import ORRTRegressor, SoftRegressionTree
from .persistence import load
from .tree import Tree

__version__ = "0.1.0"


def srt_objective(X, y, omega, beta, mu=1.0, lambda_w=0.0, lambda_b=0.0):
    """E(omega, beta) of eq. (obj) on already-scaled data (X in [0,1], standardized y).

    ``omega`` has shape (2^D - 1, p + 1) and ``beta`` (2^D, p + 1); column 0 holds
    the intercepts.
    """
    X, y = np.asarray(X, float), np.asarray(y, float)
    omega, beta = np.asarray(omega, float), np.asarray(beta, float)
    n_leaves = beta.shape[0]
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, p) and y (n,), got X {X.shape} and y {y.shape}")
    if n_leaves < 2 or n_leaves & (n_leaves - 1) or omega.shape != (n_leaves - 1, X.shape[1] + 1) \
            or beta.shape != (n_leaves, X.shape[1] + 1):
        raise ValueError(f"omega must be (2^D - 1, p + 1) and beta (2^D, p + 1) with p = {X.shape[1]}, "
                         f"got omega {omega.shape} and beta {beta.shape}")
    return kernels.objective(X, y, omega, beta, mu, lambda_w, lambda_b)


__all__ = ["MILOTreeRegressor", "ORRTRegressor", "SoftRegressionTree", "Tree", "srt_objective", "__version__"]


def __getattr__(name):
    if name == "MILOTreeRegressor":  # imports Pyomo: load on first use
        from .estimators import MILOTreeRegressor

        return MILOTreeRegressor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
