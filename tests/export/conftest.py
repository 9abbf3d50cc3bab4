"""The fitted trees the writers of srtopt.export are tested on: three features in very different
units (dose is ~1000x age)."""

import numpy as np
import pandas as pd
import pytest

from srtopt import MILOTreeRegressor, ORRTRegressor, SoftClassificationTree, SoftRegressionTree


@pytest.fixture(scope="package")
def frame():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"age": 20 + 50 * rng.random(60), "dose": 1000 * rng.random(60), "z": rng.random(60) - 3})
    # two regimes on each side of age 45, so that every leaf of a depth-2 tree keeps rows
    older = np.where(X["dose"] > 500, 0.1 * X["dose"], 20 + 10 * X["z"])
    younger = -5 * X["z"] + 0.3 * (X["z"] > -2.5) * X["age"]
    y = np.where(X["age"] > 45, older, younger) + rng.standard_normal(60)
    return X, np.asarray(y, dtype=float)


@pytest.fixture(scope="package")
def srt(frame):
    # unclipped, so that predict is eq. (prediction_model), what the exported leaf models reproduce
    return SoftRegressionTree(depth=2, regularization=None, max_iter=2, n_init=1, random_state=0,
                              clip_predictions=False).fit(*frame)


@pytest.fixture(scope="package")
def orrt(frame):
    return ORRTRegressor(depth=2, mu=1.0, solver="slsqp", max_iter=15, random_state=0).fit(*frame)


@pytest.fixture(scope="package")
def milo(frame):
    X, y = frame
    return MILOTreeRegressor(depth=2, time_limit=2.0, random_state=0).fit(X.iloc[:12], y[:12])


@pytest.fixture(scope="package")
def iris():
    """scikit-learn's iris (150 x 4) with the species names as labels (strings)."""
    from sklearn.datasets import load_iris

    data = load_iris(as_frame=True)
    return data.data, data.target_names[data.target]


@pytest.fixture(scope="package")
def classifiers(iris):
    """Depth-2 SoftClassificationTrees on iris, one per leaf kind."""
    return {leaf: SoftClassificationTree(depth=2, leaf=leaf, random_state=0).fit(*iris)
            for leaf in ("constant", "logistic")}


@pytest.fixture(scope="package")
def cancer():
    """scikit-learn's breast cancer data (569 x 30), labels 0 (malignant) and 1 (benign)."""
    from sklearn.datasets import load_breast_cancer

    return load_breast_cancer(return_X_y=True, as_frame=True)


@pytest.fixture(scope="package")
def binary(cancer):
    """A depth-2 SoftClassificationTree with logistic leaves on breast cancer: one logit per leaf."""
    return SoftClassificationTree(depth=2, leaf="logistic", random_state=0).fit(*cancer)
