"""plot_tree: every node with its split/leaf text and counts, in a layout that sizes itself to the
depth and the labels (checked from the rendered extents on real fits with long feature names)."""

import itertools

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from srtopt import MILOTreeRegressor, SoftClassificationTree, SoftRegressionTree  # noqa: E402
from srtopt.plotting import plot_tree  # noqa: E402

from .conftest import load_frame  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.random((40, 3))
    return X, np.where(X[:, 0] > 0.5, X[:, 1], -X[:, 2])


@pytest.fixture(scope="module")
def srt(data):
    return SoftRegressionTree(depth=2, regularization=None, max_iter=1, n_init=1, random_state=0).fit(*data)


@pytest.fixture(scope="module")
def yacht_trees():
    """Depth-3 and depth-4 SRTs on yacht, whose feature names are long (length_displacement_ratio, ...)."""
    X, y = load_frame("yacht")
    return {depth: SoftRegressionTree(depth=depth, max_iter=1, n_init=1, random_state=0).fit(X, y)
            for depth in (3, 4)}


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def _rendered_boxes(ax):
    """{label: window extent of its drawn box} for the node boxes, and the extents of the other texts."""
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    nodes, others = {}, []
    for text in ax.texts:
        if text.get_text().startswith(("node ", "leaf ")):
            nodes[text.get_text()] = text.get_bbox_patch().get_window_extent(renderer)
        else:
            others.append(text.get_window_extent(renderer))
    return nodes, others


def _assert_readable_layout(ax, n_nodes, frame):
    nodes, others = _rendered_boxes(ax)
    assert len(nodes) == n_nodes
    boxes = list(nodes.values())
    for a, b in itertools.combinations(boxes + others, 2):
        assert not a.overlaps(b), (a, b)
    for box in boxes + others:
        assert frame.x0 - 0.5 <= box.x0 and box.x1 <= frame.x1 + 0.5, (box, frame)
        assert frame.y0 - 0.5 <= box.y0 and box.y1 <= frame.y1 + 0.5, (box, frame)


@pytest.mark.parametrize("depth", [3, 4])
@pytest.mark.parametrize("top, units", [(3, "original"), (None, "original"), (None, "scaled")])
def test_no_box_overlaps_another_or_leaves_the_figure(yacht_trees, depth, top, units):
    tree = yacht_trees[depth]
    ax = plot_tree(tree, top=top, units=units)
    _assert_readable_layout(ax, 2 * tree.get_n_leaves() - 1, ax.figure.bbox)  # the nodes some row reaches
    node_fonts = {t.get_fontsize() for t in ax.texts if t.get_text().startswith(("node ", "leaf "))}
    assert node_fonts == {8}  # a new figure grows to the layout: the font stays readable
    if top is None:  # every coefficient is shown: 6 features, no "... (k more)"
        assert not any("more)" in s for s in _texts(ax))
        first = min(t for t in range(2 ** depth, 2 ** (depth + 1)) if tree.node_counts_[t - 1] > 0)
        leaf = next(s for s in _texts(ax) if s.startswith(f"leaf {first} "))
        assert leaf.count("*") == np.count_nonzero(tree.beta_[first - 2 ** depth, 1:])
    plt.close(ax.figure)


def test_on_a_given_small_axes_the_font_shrinks_until_it_fits(yacht_trees):
    fig, ax = plt.subplots(figsize=(12, 4))
    assert plot_tree(yacht_trees[4], ax=ax) is ax
    _assert_readable_layout(ax, 2 * yacht_trees[4].get_n_leaves() - 1, ax.get_window_extent())
    assert max(t.get_fontsize() for t in ax.texts) < 8
    plt.close(fig)


def test_plot_tree_draws_every_node(srt, tmp_path):
    ax = plot_tree(srt, feature_names=["alpha", "beta", "gamma"], top=2)
    texts = _texts(ax)
    for t in range(1, 4):
        assert any(s.startswith(f"node {t}  n=") and "left if" in s and s.endswith(">= 0") for s in texts)
    for t in range(4, 8):
        assert any(s.startswith(f"leaf {t}  n=") and "y = " in s for s in texts)
    assert texts.count("yes") == 3 and texts.count("no") == 3
    assert any("alpha" in s or "beta" in s or "gamma" in s for s in texts)
    assert any("(original units)" in s and "terms in order of |raw coefficient| x training range" in s
               for s in texts)
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


def test_no_dead_branch_is_drawn(yacht_trees):
    """yacht's depth-4 tree routes no training row to some subtrees: they are pruned (the split
    above them is closed) and the plot draws every other node, each with its training rows."""
    tree = yacht_trees[4]
    dead = [t for t in range(2, 32) if tree.node_counts_[t - 1] == 0]
    assert dead and tree.get_n_leaves() == int((tree.node_counts_[15:] > 0).sum())
    ax = plot_tree(tree)
    drawn = [int(s.split()[1]) for s in _texts(ax) if s.startswith(("node ", "leaf "))]
    assert not set(drawn) & set(dead)
    assert sum(s.startswith("leaf ") for s in _texts(ax)) == tree.get_n_leaves()
    assert any("pruned: the subtree" in s for s in _texts(ax))
    plt.close(ax.figure)


def test_max_depth_draws_a_readable_overview_of_a_deep_tree(yacht_trees):
    tree = yacht_trees[4]
    ax = plot_tree(tree, max_depth=1)
    texts = _texts(ax)
    boxes = [s for s in texts if s.startswith(("node ", "leaf "))]
    assert 1 < len(boxes) <= 3 and any("folded" in s for s in boxes)
    _assert_readable_layout(ax, len(boxes), ax.figure.bbox)
    plt.close(ax.figure)


@pytest.mark.parametrize("leaf, depth", [("constant", 3), ("logistic", 2)])
def test_plot_a_classifier_each_leaf_with_its_classes(leaf, depth):
    """Wine (3 classes, 13 features): every reachable node drawn, none overlapping another; each leaf
    lists its classes by share and its training rows by class, a logistic leaf its class scores."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True, as_frame=True)
    model = SoftClassificationTree(depth=depth, leaf=leaf, random_state=0).fit(X, y)
    ax = plot_tree(model)
    n_leaves = model.get_n_leaves()
    _assert_readable_layout(ax, 2 * n_leaves - 1, ax.figure.bbox)
    leaves = [s.splitlines() for s in _texts(ax) if s.startswith("leaf ")]
    assert len(leaves) == n_leaves
    for lines in leaves:
        t = int(lines[0].split()[1])
        mix = model.leaf_class_proba_[t - 2**depth]
        assert lines[1] == f"{100 * mix.max():.1f}% class {model.classes_[np.argmax(mix)]}"
        assert lines[4].startswith("rows: ")
        assert sum(line.startswith("score(") for line in lines) == (0 if leaf == "constant" else 3)
    assert any("3 classes: 0, 1, 2 (original units)" in s for s in _texts(ax))
    plt.close(ax.figure)
