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


@pytest.fixture(scope="module")
def skewed_tree():
    """A spline tree on a lognormal feature (its 99th percentile under half its maximum) and a uniform one."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.lognormal(0.0, 1.2, 1500), rng.random(1500)])
    y = np.log1p(3 * X[:, 0]) + np.sin(5 * X[:, 1]) + 0.1 * rng.standard_normal(1500)
    return X, SoftRegressionTree(depth=1, leaf="spline", random_state=0).fit(X, y)


def _artists(ax, gid):
    return [a for a in ax.get_children() if a.get_gid() == gid]


def _x_extent(span) -> tuple[float, float]:
    """(left, right) of an axvspan (a Rectangle from matplotlib 3.9, a Polygon before)."""
    box = span.get_bbox() if hasattr(span, "get_bbox") else span.get_path().get_extents()
    return box.x0, box.x1


def test_leaf_curves_mark_where_the_training_rows_are(skewed_tree):
    from srtopt.plotting import plot_leaf_curves

    X, tree = skewed_tree
    axes = plot_leaf_curves(tree, top=2, feature_names=["skewed", "uniform"])
    axes[0, 0].figure.canvas.draw()  # a real render
    for ax in axes.ravel():
        j = 0 if ax.get_title().endswith("f(skewed)") else 1
        low, median, high = np.percentile(X[:, j], [1, 50, 99])
        (rug,) = _artists(ax, "deciles")
        assert rug.get_marker() == "|"
        np.testing.assert_allclose(rug.get_xdata(), np.percentile(X[:, j], np.arange(10, 100, 10)), rtol=1e-9)
        (line,) = _artists(ax, "median")
        np.testing.assert_allclose(line.get_xdata(), median, rtol=1e-9)
        left, right = ax.get_xlim()
        assert high < right <= high + 0.05 * (high - low) + 1e-9 and X[:, j].min() <= left < low
        tails = _artists(ax, "tail")
        assert len(tails) == 2  # shaded from the view's ends to the 1st and 99th percentiles
        np.testing.assert_allclose(sorted(_x_extent(t) for t in tails), [[left, low], [high, right]], rtol=1e-6)
    skewed = next(ax for ax in axes[0] if ax.get_title().endswith("f(skewed)"))
    assert skewed.get_xlim()[1] < X[:, 0].max() / 2  # the axis is not spent on the sparse tail
    plt.close("all")


def test_leaf_curves_of_a_basis_without_quantiles_span_the_training_range(skewed_tree):
    import copy

    from srtopt.bases import SplineBasis
    from srtopt.plotting import plot_leaf_curves

    X, tree = skewed_tree
    old, basis = copy.deepcopy(tree), tree.leaf_model_.basis
    old.leaf_model_ = tree.leaf_model_.with_basis(SplineBasis(2, basis.curves, basis.degree, basis.scale))
    axes = plot_leaf_curves(old, top=2)
    for ax in axes.ravel():
        assert not _artists(ax, "deciles") and not _artists(ax, "tail")
    for ax in axes[0]:
        j = 0 if ax.get_title().endswith("f(x0)") else 1
        np.testing.assert_allclose(ax.get_xlim(), [X[:, j].min(), X[:, j].max()], rtol=1e-9)
    plt.close("all")
