"""plot_tree draws every node with its split/leaf text and counts."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from srtopt import MILOTreeRegressor, SoftRegressionTree  # noqa: E402
from srtopt.plotting import plot_tree  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.random((40, 3))
    return X, np.where(X[:, 0] > 0.5, X[:, 1], -X[:, 2])


@pytest.fixture(scope="module")
def srt(data):
    return SoftRegressionTree(depth=2, regularization=None, max_iter=1, n_init=1, random_state=0).fit(*data)


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_plot_tree_draws_every_node(srt, tmp_path):
    ax = plot_tree(srt, feature_names=["alpha", "beta", "gamma"], top=2)
    texts = _texts(ax)
    for t in range(1, 4):
        assert any(s.startswith(f"node {t}  n=") and "left if" in s and s.endswith(">= 0") for s in texts)
    for t in range(4, 8):
        assert any(s.startswith(f"leaf {t}  n=") and "y = " in s for s in texts)
    assert texts.count("yes") == 3 and texts.count("no") == 3
    assert any("alpha" in s or "beta" in s or "gamma" in s for s in texts)
    assert "original units" in ax.get_title()
    ax.figure.savefig(tmp_path / "tree.png", dpi=60)
    assert (tmp_path / "tree.png").stat().st_size > 1000
    plt.close(ax.figure)


def test_plot_tree_on_given_axes_scaled_units(srt, data):
    fig, ax = plt.subplots()
    assert plot_tree(srt, ax=ax, units="scaled", X=data[0][:10]) is ax
    texts = _texts(ax)
    assert any("y_s = " in s for s in texts) and any("(1/3)" in s for s in texts)
    assert any(s.startswith("node 1  n=10") for s in texts)
    plt.close(fig)
    with pytest.raises(ValueError, match="units must be"):
        plot_tree(srt, units="both")


def test_plot_milo_tree(data):
    milo = MILOTreeRegressor(depth=1, time_limit=2.0, random_state=0).fit(data[0][:10], data[1][:10])
    ax = plot_tree(milo)
    texts = _texts(ax)
    assert any(s.startswith("node 1") and ("<" in s or "no split" in s) for s in texts)
    assert sum(s.startswith("leaf") for s in texts) == 2
    plt.close(ax.figure)
