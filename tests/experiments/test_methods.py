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
