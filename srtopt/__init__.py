"""srtopt: Soft Regression Trees and the NODEC decomposition training algorithm.

Paper: Consolo, Amaldi, Manno, "Soft regression trees: a model variant and a
decomposition training algorithm".  Design notes: ``docs/design.md``.

>>> import srtopt
>>> from srtopt.datasets import make_piecewise
>>> X, y = make_piecewise()  # 200 rows, 3 features: y = 2 x1 where x0 > 0.5, else -x2
>>> tree = srtopt.SoftRegressionTree(depth=2, random_state=0).fit(X, y)
>>> tree.predict(X[:5]).shape, tree.get_n_leaves()
((5,), 4)
>>> bool(tree.score(X, y) > 0.9)
True
"""

from __future__ import annotations

import importlib

from ._version import __version__

# the public names, imported on first use: ``srtopt --help`` must not wait for scikit-learn
_LAZY = {"MILOTreeRegressor": ".estimators", "ORCTClassifier": ".estimators", "ORRTRegressor": ".estimators",
         "SoftRegressionTree": ".estimators", "SoftRegressionTreeCV": ".estimators",
         "SoftClassificationTree": ".estimators", "SoftClassificationTreeCV": ".estimators", "load": ".persistence",
         "Tree": ".tree"}


def srt_objective(X, y, omega, beta, mu=1.0, lambda_w=0.0, lambda_b=0.0):
    """E(omega, beta) of eq. (obj) on already-scaled data (X in [0,1], standardized y).

    ``omega`` has shape (2^D - 1, p + 1) and ``beta`` (2^D, p + 1); column 0 holds
    the intercepts.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Inputs, already scaled to [0, 1].
    y : array-like of shape (n,)
        Targets, already standardized.
    omega : array-like of shape (2^D - 1, p + 1)
        Split weights, row t - 1 holding omega_t of branch node t (intercept in column 0).
    beta : array-like of shape (2^D, p + 1)
        Leaf weights, row t - 2^D holding beta_t of leaf t (intercept in column 0); its row count sets D.
    mu : float, default=1.0
        Slope of the logistic CDF of the soft splits (eq. cdf).
    lambda_w : float, default=0.0
        Weight of the l2 term lambda_w/2 ||omega||^2 (intercepts included).
    lambda_b : float, default=0.0
        Weight of the l2 term lambda_b/2 ||beta||^2 (intercepts included).

    Returns
    -------
    float
        E(omega, beta) = (1/n) sum_i sum_t P_it (yhat_it - y_i)^2 plus the two l2 terms.

    Raises
    ------
    ValueError
        If X is not 2-D or y not of shape (n,), or if the number of rows of ``beta`` is not a power of 2 >= 2
        or the shapes of ``omega`` and ``beta`` do not match it and p.

    Examples
    --------
    >>> import numpy as np
    >>> X, y = np.array([[0.0], [1.0]]), np.array([1.0, -1.0])
    >>> # depth 1, a split at 0: each point gets probability 1/2 of leaf 2 (y = 1) and of leaf 3 (y = -1)
    >>> float(srt_objective(X, y, omega=np.zeros((1, 2)), beta=np.array([[1.0, 0.0], [-1.0, 0.0]])))
    2.0
    """
    import numpy as np

    from .models.srt import SRTProblem
    from .tree import Tree

    X, y = np.asarray(X, float), np.asarray(y, float)
    omega, beta = np.asarray(omega, float), np.asarray(beta, float)
    n_leaves = beta.shape[0]
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, p) and y (n,), got X {X.shape} and y {y.shape}")
    if n_leaves < 2 or n_leaves & (n_leaves - 1) or omega.shape != (n_leaves - 1, X.shape[1] + 1) \
            or beta.shape != (n_leaves, X.shape[1] + 1):
        raise ValueError(f"omega must be (2^D - 1, p + 1) and beta (2^D, p + 1) with p = {X.shape[1]}, "
                         f"got omega {omega.shape} and beta {beta.shape}")
    return SRTProblem(X, y, Tree(n_leaves.bit_length() - 1), mu, lambda_w, lambda_b).objective(omega, beta)


__all__ = ["MILOTreeRegressor", "ORCTClassifier", "ORRTRegressor", "SoftClassificationTree",
           "SoftClassificationTreeCV", "SoftRegressionTree", "SoftRegressionTreeCV", "Tree", "load", "srt_objective",
           "__version__"]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
