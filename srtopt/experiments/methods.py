"""The registry of methods a benchmark can run.

A method is a name, a task and a factory ``factory(depth, seed, **params)``
returning an unfitted scikit-learn style estimator: for a "regression" method a
regressor (``fit(X, y)`` and ``predict(X)``), for a "classification" method a
classifier that also has ``predict_proba(X)`` and ``classes_``.  A method that
does not use the depth (a forest, a linear model) is registered with
``uses_depth=False``: it runs once per fold and seed, stored at depth 0.  The
runner treats every method of a task the same way; a factory that raises (an
estimator not importable yet, say) gives runs stored with status ``error``.
"""

from __future__ import annotations

import importlib
from typing import Callable

__all__ = [
    "PAPER_NAMES",
    "TASKS",
    "available_methods",
    "get_method",
    "method_names",
    "method_task",
    "method_uses_depth",
    "register_method",
    "unregister_method",
]

Factory = Callable[..., object]

_REGISTRY: dict[str, Factory] = {}
_REQUIRES: dict[str, tuple[str, str]] = {}  # name -> (module, attribute) needed
_TASK: dict[str, str] = {}  # name -> "regression" or "classification"
_DEPTH_FREE: set[str] = set()  # names registered with uses_depth=False
TASKS = ("regression", "classification")

#: our method name -> the key of the paper's tables (srtopt/data/paper_tables.json)
PAPER_NAMES = {"srt": "SRT", "srt-l2": "SRT_l2", "milo": "ORT_L", "orrt": "ORRT", "rf": "RF"}


def register_method(name: str, factory: Factory, *, task: str = "regression", uses_depth: bool = True,
                    overwrite: bool = True) -> Factory:
    """Register ``factory(depth, seed, **params) -> estimator`` under ``name``.

    The factory is sent to the worker processes with the run (loky pickles
    closures and lambdas too), so a method registered in the parent is
    available to every backend.

    Parameters
    ----------
    name : str
        The method's name (non-empty).
    factory : callable
        ``factory(depth, seed, **params)`` returning an unfitted regressor, or for ``task="classification"``
        an unfitted classifier with ``fit``, ``predict``, ``predict_proba`` and ``classes_``.
    task : {"regression", "classification"}, default="regression"
        The datasets the method runs on.
    uses_depth : bool, default=True
        Whether the estimator depends on the depth; False: one run per fold and seed, stored at depth 0
        (the factory is called with depth 0).
    overwrite : bool, default=True
        Whether a method already registered under ``name`` is replaced.

    Returns
    -------
    callable
        ``factory``, unchanged.

    Raises
    ------
    ValueError
        If ``name`` is not a non-empty string, ``factory`` is not callable, ``task`` is unknown, or ``name``
        is taken and ``overwrite`` is False.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> _ = register_method("ridge", lambda depth, seed, **params: Ridge(**params))
    >>> "ridge" in method_names(), get_method("ridge")(2, 0, alpha=0.5)
    (True, Ridge(alpha=0.5))
    >>> unregister_method("ridge")
    >>> from sklearn.linear_model import LogisticRegression
    >>> _ = register_method("lr", lambda depth, seed, **params: LogisticRegression(**params),
    ...                     task="classification", uses_depth=False)
    >>> method_task("lr"), method_uses_depth("lr")
    ('classification', False)
    >>> unregister_method("lr")
    """
    if not isinstance(name, str) or not name:
        raise ValueError("a method name must be a non-empty string")
    if not callable(factory):
        raise ValueError(f"the factory of method {name!r} is not callable")
    if task not in TASKS:
        raise ValueError(f"method {name!r}: unknown task {task!r}; use one of {', '.join(TASKS)}")
    if name in _REGISTRY and not overwrite:
        raise ValueError(f"method {name!r} is already registered")
    _REGISTRY[name] = factory
    _REQUIRES.pop(name, None)
    _TASK[name] = task
    (_DEPTH_FREE.discard if uses_depth else _DEPTH_FREE.add)(name)
    return factory


def unregister_method(name: str) -> None:
    """Remove method ``name`` from the registry (nothing happens if it is not registered).

    Parameters
    ----------
    name : str
        The method's name.
    """
    _REGISTRY.pop(name, None)
    _REQUIRES.pop(name, None)
    _TASK.pop(name, None)
    _DEPTH_FREE.discard(name)


def method_names(task: str | None = None) -> list[str]:
    """Every registered method (of ``task`` when given: "regression" or "classification"), importable
    or not."""
    return [name for name in _REGISTRY if task is None or _TASK[name] == task]


def method_task(name: str) -> str:
    """The task ("regression" or "classification") of method ``name``; ValueError if it is unknown."""
    get_method(name)
    return _TASK[name]


def method_uses_depth(name: str) -> bool:
    """Whether method ``name`` depends on the depth (False: it runs at depth 0 only)."""
    get_method(name)
    return name not in _DEPTH_FREE


def get_method(name: str) -> Factory:
    """The factory registered under ``name``.

    Parameters
    ----------
    name : str
        A registered method's name (:func:`method_names`).

    Returns
    -------
    callable
        ``factory(depth, seed, **params)`` returning an unfitted estimator.

    Raises
    ------
    ValueError
        If no method is registered under ``name``.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown method {name!r}; registered methods: {', '.join(_REGISTRY)}"
        ) from None


def available_methods() -> list[str]:
    """The registered methods whose estimator can be imported now."""
    out = []
    for name in _REGISTRY:
        module, attribute = _REQUIRES.get(name, (None, None))
        if module is not None:
            try:
                getattr(importlib.import_module(module), attribute)
            except Exception:
                continue
        out.append(name)
    return out


# ---- built-in methods ------------------------------------------------------
# Module-level functions, so that they pickle by reference.

def cart(depth, seed, **params):
    from sklearn.tree import DecisionTreeRegressor

    return DecisionTreeRegressor(max_depth=depth, random_state=seed, **params)


def random_forest(depth, seed, **params):
    """sklearn's defaults with 100 trees, as in the paper (the depth is not used)."""
    from sklearn.ensemble import RandomForestRegressor

    params = {"n_estimators": 100, "n_jobs": 1, **params}
    return RandomForestRegressor(random_state=seed, **params)


def _srt(regularization, **fixed):
    def factory(depth, seed, **params):
        from srtopt import SoftRegressionTree

        return SoftRegressionTree(depth=depth, random_state=seed,
                                  **{"regularization": regularization, **fixed, **params})

    return factory


srt = _srt(None)
srt_l2 = _srt("l2")  # the paper's "SRT l2" (the "l2" reading of its lambdas, see regularization_lambdas)
# SRT l2 from the paper's clustering initialization, with the BN tolerance it was measured with (srtopt 0.2)
srt_l2_cluster = _srt("l2", init="cluster", bn_solver="l-bfgs-b:tol=1e-9")
srt_l2_literal = _srt("l2-mean")  # the paper's lambdas taken literally under eq. (obj)
srt_l2_calibrated = _srt("l2-calibrated")  # the first release's default: a vanishing l2 weight


def srt_l2_cv(depth, seed, **params):
    """SRT l2 at its depth with the weight on its splits chosen by 4-fold CV among 0.3, 1 and 10 times the
    reading's, by the best mean held-out loss (SoftRegressionTreeCV, not in the paper); ``params`` go to the tree."""
    from srtopt import SoftRegressionTree, SoftRegressionTreeCV

    return SoftRegressionTreeCV(SoftRegressionTree(depth=depth, random_state=seed, **params), depths=None,
                                leaves=None, split_weights=(0.3, 1.0, 10.0), leaf_ridges=None, rule="best",
                                random_state=seed)


def srt_cv(depth, seed, **params):
    """``SoftRegressionTreeCV`` with its defaults (the depth and the leaves chosen by 4-fold cross-validation; the
    depth is not used), ``params`` to the search."""
    from srtopt import SoftRegressionTreeCV

    return SoftRegressionTreeCV(random_state=seed, **params)


def orrt(depth, seed, **params):
    from srtopt import ORRTRegressor

    return ORRTRegressor(depth=depth, random_state=seed, **params)


def milo(depth, seed, **params):
    from srtopt import MILOTreeRegressor

    return MILOTreeRegressor(depth=depth, random_state=seed, **params)


def streed(depth, seed, **params):
    """STreeD's optimal axis-aligned tree with linear leaves (``pip install pystreed``, the
    ``streed`` extra): dynamic programming over binarized thresholds, the open anchor of the
    MILO tree; the settings of its comparison (min leaf 10, ridge 1e-3, no complexity cost,
    60 s), overridable through ``params``."""
    from pystreed import STreeDPiecewiseLinearRegressor

    params = {"min_leaf_node_size": 10, "ridge_penalty": 1e-3, "cost_complexity": 0.0, "time_limit": 60,
              "random_seed": seed, **params}
    return STreeDPiecewiseLinearRegressor(max_depth=depth, **params)


# ---- classification baselines --------------------------------------------------

def cart_classifier(depth, seed, **params):
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(max_depth=depth, random_state=seed, **params)


def random_forest_classifier(depth, seed, **params):
    """sklearn's defaults with 100 trees (the depth is not used)."""
    from sklearn.ensemble import RandomForestClassifier

    params = {"n_estimators": 100, "n_jobs": 1, **params}
    return RandomForestClassifier(random_state=seed, **params)


def hist_gradient_boosting_classifier(depth, seed, **params):
    """sklearn's HistGradientBoostingClassifier with its defaults (the depth is not used)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(random_state=seed, **params)


def logistic_regression(depth, seed, **params):
    """Standardized features, then sklearn's (multinomial, l2, C=1) LogisticRegression with up to 1000
    lbfgs iterations (its default 100 stop short of convergence on some of the 20 datasets); the depth is
    not used, ``params`` go to LogisticRegression."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    params = {"max_iter": 1000, **params}
    return make_pipeline(StandardScaler(), LogisticRegression(random_state=seed, **params))


def ridge_regression(depth, seed, **params):
    """Standardized features, then sklearn's RidgeCV (alphas 1e-3 .. 1e3, 13 on a log grid, chosen by leave-one-out);
    the depth is not used, ``params`` go to RidgeCV."""
    import numpy as np
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    params = {"alphas": np.logspace(-3, 3, 13), **params}
    return make_pipeline(StandardScaler(), RidgeCV(**params))


def hist_gradient_boosting(depth, seed, **params):
    """sklearn's HistGradientBoostingRegressor with its defaults (the depth is not used)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(random_state=seed, **params)


def orct_classifier(depth, seed, **params):
    """ORCT (Blanquero et al. 2021), the soft-tree baseline of classification: IPOPT from
    ``n_starts`` random starts (its defaults; ``params`` go to ORCTClassifier)."""
    from srtopt import ORCTClassifier

    return ORCTClassifier(depth=depth, random_state=seed, **params)


def streed_classifier(depth, seed, **params):
    """STreeD's optimal axis-aligned classification tree (``pip install pystreed``, the ``streed``
    extra): accuracy, no complexity cost, 60 s, its default binarization (5 quantile thresholds per
    feature); overridable through ``params``."""
    from pystreed import STreeDClassifier

    params = {"cost_complexity": 0.0, "time_limit": 60, "random_seed": seed, **params}
    return STreeDClassifier(max_depth=depth, **params)


def soft_classification_tree(depth, seed, **params):
    """srtopt's soft classification tree (``SoftClassificationTree``, its defaults; ``leaf="constant"``
    through ``params``)."""
    from srtopt import SoftClassificationTree

    return SoftClassificationTree(depth=depth, random_state=seed, **params)


def soft_classification_tree_cv(depth, seed, **params):
    """``SoftClassificationTreeCV`` with its defaults (the depth and the leaves chosen by 4-fold cross-validation on
    the held-out log loss; the depth is not used), ``params`` to the search."""
    from srtopt import SoftClassificationTreeCV

    return SoftClassificationTreeCV(random_state=seed, **params)


for _name, _factory, _requires in (
    ("srt", srt, ("srtopt", "SoftRegressionTree")),
    ("srt-l2", srt_l2, ("srtopt", "SoftRegressionTree")),
    ("srt-l2-cluster", srt_l2_cluster, ("srtopt", "SoftRegressionTree")),
    ("srt-l2-literal", srt_l2_literal, ("srtopt", "SoftRegressionTree")),
    ("srt-l2-calibrated", srt_l2_calibrated, ("srtopt", "SoftRegressionTree")),
    ("srt-l2-cv", srt_l2_cv, ("srtopt", "SoftRegressionTreeCV")),
    ("srt-cv", srt_cv, ("srtopt", "SoftRegressionTreeCV")),
    ("orrt", orrt, ("srtopt", "ORRTRegressor")),
    ("milo", milo, ("srtopt", "MILOTreeRegressor")),
    ("streed", streed, ("pystreed", "STreeDPiecewiseLinearRegressor")),
    ("cart", cart, None),
    ("rf", random_forest, None),
    ("ridge", ridge_regression, None),
    ("hgb", hist_gradient_boosting, None),
):
    register_method(_name, _factory, uses_depth=_name not in ("ridge", "hgb", "srt-cv"))
    if _requires:
        _REQUIRES[_name] = _requires

for _name, _factory, _uses_depth, _requires in (
    ("sct", soft_classification_tree, True, ("srtopt", "SoftClassificationTree")),
    ("sct-cv", soft_classification_tree_cv, False, ("srtopt", "SoftClassificationTreeCV")),
    ("cart-clf", cart_classifier, True, None),
    ("orct", orct_classifier, True, ("srtopt", "ORCTClassifier")),
    ("streed-clf", streed_classifier, True, ("pystreed", "STreeDClassifier")),
    ("rf-clf", random_forest_classifier, False, None),
    ("hgb-clf", hist_gradient_boosting_classifier, False, None),
    ("logreg-clf", logistic_regression, False, None),
):
    register_method(_name, _factory, task="classification", uses_depth=_uses_depth)
    if _requires:
        _REQUIRES[_name] = _requires
