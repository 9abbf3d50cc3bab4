"""The experiment registry's built-in methods: each builds a regressor that fits and predicts."""

import numpy as np
import pytest

from srtopt.experiments.methods import available_methods, get_method, method_names


def test_streed_is_registered_and_runs_where_installed():
    assert "streed" in method_names()
    if "streed" not in available_methods():
        pytest.skip("pystreed is not installed (the streed extra)")
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = np.where(X[:, 0] < 0.5, 2 * X[:, 1], -X[:, 2])
    model = get_method("streed")(2, 0, time_limit=30).fit(X, y)
    assert model.predict(X).shape == (200,) and np.corrcoef(model.predict(X), y)[0, 1] > 0.9


CLASSIFIERS = ("sct", "sct-cv", "cart-clf", "orct", "streed-clf", "rf-clf", "hgb-clf", "logreg-clf")


def test_classification_baselines_are_registered_with_their_task():
    from srtopt.experiments.methods import method_task, method_uses_depth

    assert method_names("classification") == list(CLASSIFIERS)
    assert not set(CLASSIFIERS) & set(method_names("regression"))
    assert {name: method_uses_depth(name) for name in CLASSIFIERS} == {
        "sct": True, "sct-cv": False, "cart-clf": True, "orct": True, "streed-clf": True, "rf-clf": False, "hgb-clf": False,
        "logreg-clf": False}
    assert all(method_task(name) == "regression" for name in ("srt", "cart", "rf", "streed", "milo"))
    with pytest.raises(ValueError, match="unknown method 'svm'"):
        method_task("svm")


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_each_classification_baseline_fits_class_codes_and_gives_probabilities(name):
    """On iris as the protocol hands it over: X in [0, 1], classes coded 0..K-1."""
    from sklearn.datasets import load_iris

    if name not in available_methods():
        pytest.skip(f"{name}: its package is not installed")
    X, y = load_iris(return_X_y=True)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    model = get_method(name)(2, 0).fit(X, y)
    proba = model.predict_proba(X)
    assert list(model.classes_) == [0, 1, 2] and proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(model.predict(X) == y) > 0.9
    if name in ("cart-clf", "orct", "streed-clf"):
        assert model.get_n_leaves() <= 4  # depth 2


def test_baseline_settings():
    cart, streed_factory = get_method("cart-clf")(3, 7), get_method("streed-clf")
    assert (cart.max_depth, cart.random_state) == (3, 7)
    assert (get_method("rf-clf")(0, 5).n_estimators, get_method("rf-clf")(0, 5).n_jobs) == (100, 1)
    lr = get_method("logreg-clf")(0, 0, C=0.5)[-1]
    assert (lr.max_iter, lr.C) == (1000, 0.5)
    if "streed-clf" in available_methods():
        model = streed_factory(2, 0)
        assert (model.max_depth, model.cost_complexity, model.time_limit) == (2, 0.0, 60)
        assert (model.continuous_binarize_strategy, model.n_thresholds) == ("quantile", 5)


def test_register_method_checks_the_task(isolated_methods):
    from srtopt.experiments import register_method

    with pytest.raises(ValueError, match="method 'x': unknown task 'ranking'; use one of regression, classification"):
        register_method("x", lambda depth, seed: None, task="ranking")
    register_method("x", lambda depth, seed: None, task="classification", uses_depth=False)
    assert "x" in method_names("classification") and "x" not in method_names("regression")
