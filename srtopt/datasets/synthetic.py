"""The small synthetic data of the package's examples, and the tree its readers' examples show: no
file, no download."""

from __future__ import annotations

import numpy as np

__all__ = ["example_tree", "make_piecewise"]


def make_piecewise(n_samples: int = 200, random_state=0) -> tuple[np.ndarray, np.ndarray]:
    """(X, y): ``n_samples`` rows of 3 features uniform on [0, 1], and y = 2 x_1 where x_0 > 0.5, else
    -x_2: two linear regimes on either side of one split, which a depth-2 tree with linear leaves fits.

    Parameters
    ----------
    n_samples : int, default=200
        Rows.
    random_state : int, default=0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> X, y = make_piecewise()
    >>> X.shape, bool(y[X[:, 0] <= 0.5].max() <= 0)
    ((200, 3), True)
    """
    rng = np.random.default_rng(random_state)
    X = rng.random((n_samples, 3))
    return X, np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2])


def example_tree(**params):
    """(tree, X, y): a ``SoftRegressionTree(depth=2, random_state=0, **params)`` fitted on
    :func:`make_piecewise`'s data, the tree of the docstring examples of the readers (text, table, web
    page, plot), ``persistence`` and ``inspect``.

    Parameters
    ----------
    **params
        Parameters of the tree besides (or instead of) depth 2 and ``random_state=0``.

    Returns
    -------
    tree : SoftRegressionTree
        The fitted tree.
    X : ndarray of shape (200, 3)
    y : ndarray of shape (200,)

    Examples
    --------
    >>> tree, X, y = example_tree()
    >>> tree.get_depth(), bool(tree.score(X, y) > 0.9)
    (2, True)
    """
    from ..estimators import SoftRegressionTree

    X, y = make_piecewise()
    return SoftRegressionTree(**{"depth": 2, "random_state": 0, **params}).fit(X, y), X, y
