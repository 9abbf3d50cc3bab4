"""Drawing a fitted tree with matplotlib (no Graphviz needed).

The layout is computed from the rendered size of every label, in inches: each
subtree gets a horizontal band as wide as its widest level, siblings' bands do
not overlap, and a parent sits between its children inside its own band; each
depth gets a row as tall as its tallest box.  So no box overlaps another,
whatever the depth, the number of terms shown or the length of the feature
names.  On a new figure the figure is sized to the layout; on a given ``ax`` the
font shrinks until the layout fits the axes.
"""

from __future__ import annotations

import textwrap

from .export.dot import node_labels
from .export.leaf_readers import title_note
from .export.curves import CURVE_POINTS, curve_effects, curve_frame
from .export.nodes import (RANKING, UNITS, as_view, drawn_nodes, drawn_tree, feature_names_of, pruned_note, scaling_of,
                           tree_of)

GAP_X, GAP_Y, MARGIN, PAD = 2.5, 4.0, 1.5, 0.4  # between boxes, between rows, around, in the box: x font size


def plot_tree(model, ax=None, feature_names=None, top=3, X=None, units="original", fontsize=8, max_depth=None):
    """Draw a fitted SRT, ORRT, MILO tree or soft classification tree on ``ax`` (a new figure
    if None); return ``ax``.

    Each branch node shows its split hyperplane ("go left iff ... >= 0", left edge
    "yes") with its ``top`` terms, one per line (None: every coefficient), each leaf
    its linear model (a classifier's leaf: its ``top`` classes by probability, one per line,
    its training rows by class and, for logistic leaves, the class scores), every node the
    training rows routed there by HBP (or the rows of ``X``).  Terms are ranked by their scale-free weight (:data:`srtopt.export.nodes.RANKING`).
    ``units``: "original" (raw feature units, y's units) or "scaled".  The layout
    sizes itself to the depth and the labels (see the module docstring).  ``max_depth``
    (None: every level) draws that many levels below the root and each split further down
    as one grey box for its folded subtree: a readable overview of a deep tree.

    >>> import os
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from srtopt.datasets import example_tree
    >>> tree, X, y = example_tree()  # depth 2, on 200 rows: y = 2 x1 where x0 > 0.5, else -x2
    >>> ax = plot_tree(tree, top=None)  # every coefficient
    >>> sum(text.get_text().startswith(("node", "leaf")) for text in ax.texts)
    7
    >>> ax.figure.savefig(os.devnull, format="png")
    """
    import matplotlib.pyplot as plt

    if units not in UNITS:
        raise ValueError(f"units must be 'original' or 'scaled', got {units!r}")
    model = as_view(model)
    tree, (root, children, folded) = tree_of(model), drawn_tree(model, max_depth)
    structure, drawn = (root, children), drawn_nodes(root, children)
    labels = {t: "\n".join(lines) for t, lines in node_labels(model, feature_names, top, X, units, folded).items()
              if t in drawn}
    title = textwrap.fill(f"{model.estimator}, depth {tree.depth}{title_note(model)} ({units} units)", 90)
    title += f"\n{RANKING}"
    if note := pruned_note(model):
        title += "\n" + textwrap.fill(note, 90)
    if ax is None:
        _, ax = plt.subplots()
        ax.set_position([0, 0, 1, 1])
        boxes, width, height = _layout(ax, labels, tree, structure, fontsize, title)
        ax.figure.set_size_inches(width, height)
    else:
        boxes, width, height, fontsize = _fit_to_axes(ax, labels, tree, structure, fontsize, title)
    _draw(ax, boxes, tree, structure[1], labels, title, (width, height), fontsize, folded)
    return ax


def _text_size(ax, text, fontsize, **style):
    """(width, height) in inches of ``text`` as rendered at ``fontsize``."""
    artist = ax.text(0, 0, text, fontsize=fontsize, **style)
    extent = artist.get_window_extent(ax.figure.canvas.get_renderer())
    artist.remove()
    return extent.width / ax.figure.dpi, extent.height / ax.figure.dpi


def _layout(ax, labels, tree, structure, fontsize, title):
    """({node: (x_center, y_top, width, height)}, total width, total height) in inches, of the
    drawn nodes (``structure``: root and children, :func:`srtopt.export.nodes.drawn_tree`); a node
    sits in the row of its depth.

    Every length is proportional to the font size, so the layout scales with it."""
    root, children = structure
    em = fontsize / 72  # inches
    pad, gap_x, gap_y, margin = 2 * PAD * em, GAP_X * em, GAP_Y * em, MARGIN * em
    sizes = {t: tuple(v + pad for v in _text_size(ax, label, fontsize, family="monospace"))
             for t, label in labels.items()}
    band = {}  # width of the band of each subtree

    def measure(t):
        band[t] = sizes[t][0] if t not in children else max(
            sizes[t][0], measure(children[t][0]) + gap_x + measure(children[t][1]))
        return band[t]

    measure(root)
    row_height = [max([sizes[t][1] for t in sizes if tree.node_depth(t) == d], default=0.0)
                  for d in range(tree.depth + 1)]
    title_width, title_height = _text_size(ax, title, fontsize + 1)
    row_top = [margin + title_height + gap_y / 2 + sum(row_height[:d]) + gap_y * d for d in range(tree.depth + 1)]
    width, height = max(band[root], title_width) + 2 * margin, row_top[-1] + row_height[-1] + margin
    boxes = {}

    def place(t, left):
        box_width = sizes[t][0]
        if t not in children:
            center = left + box_width / 2
        else:
            left_child, right_child = children[t]
            start = left + (band[t] - band[left_child] - gap_x - band[right_child]) / 2
            center_left = place(left_child, start)
            center_right = place(right_child, start + band[left_child] + gap_x)
            center = min(max((center_left + center_right) / 2, left + box_width / 2), left + band[t] - box_width / 2)
        boxes[t] = (center, height - row_top[tree.node_depth(t)], box_width, sizes[t][1])
        return center

    place(root, (width - band[root]) / 2)
    return boxes, width, height


def _fit_to_axes(ax, labels, tree, structure, fontsize, title):
    """Layout on a given axes: the font shrinks until the layout fits the axes' size."""
    bbox = ax.get_window_extent()
    available = (bbox.width / ax.figure.dpi, bbox.height / ax.figure.dpi)
    for _ in range(5):  # the layout scales about linearly with the font size: 1 or 2 rounds
        boxes, width, height = _layout(ax, labels, tree, structure, fontsize, title)
        scale = min(available[0] / width, available[1] / height)
        if scale >= 1:
            break
        fontsize *= 0.97 * scale
    else:
        raise ValueError(f"plot_tree: the tree does not fit on an axes of {available[0]:.2g} x "
                         f"{available[1]:.2g} inches; give a larger axes or ax=None")
    return boxes, width, height, fontsize


def _draw(ax, boxes, tree, children, labels, title, size, fontsize, folded):
    """Edges with their "yes"/"no" labels in the gap between rows, the node boxes, the title."""
    for t, pair in children.items():
        x0, top0, _, h0 = boxes[t]
        for child, text in zip(pair, ("yes", "no")):
            x1, top1, _, _ = boxes[child]
            ax.plot([x0, x1], [top0 - h0, top1], color="0.55", lw=1, zorder=1)
            ax.text((x0 + x1) / 2, (top0 - h0 + top1) / 2, text, ha="center", va="center", fontsize=0.9 * fontsize,
                    color="0.3", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"}, zorder=2)
    pad = PAD * fontsize / 72
    for t, (x, top, _, _) in boxes.items():
        color = "#e8f4e8" if tree.is_leaf(t) else "#f0f0f0" if t in folded else "#e8eef8"
        ax.text(x, top - pad, labels[t], ha="center", va="top", multialignment="left", fontsize=fontsize,
                family="monospace", bbox={"boxstyle": f"round,pad={PAD}", "fc": color, "ec": "0.4"}, zorder=3)
    ax.text(size[0] / 2, size[1] - MARGIN * fontsize / 72, title, ha="center", va="top", fontsize=fontsize + 1)
    ax.set_xlim(0, size[0])
    ax.set_ylim(0, size[1])
    ax.set_axis_off()


def plot_leaf_curves(model, leaves=None, top=4, score=0, feature_names=None, units="original", axes=None):
    """Small multiples of the leaves' curves: one row per leaf, one panel per feature, each the feature's effect
    f_j(x) on the leaf's score, 0 at the feature's training median (a leaf's score is its value at the median row
    plus the sum of these: :mod:`srtopt.export.curves`), for the ``top`` features of largest effect over the
    leaves drawn; return the axes (an array of shape (leaves, features)).

    Each panel spends its axis on where the training rows are: the 1st to 99th percentile of the feature, a
    little beyond shaded grey as the tails, the deciles as a rug of ticks at the bottom and the median as a
    dotted line.  (A tree saved before its basis kept the quantiles is drawn over the whole training range, 0 at
    its middle.)  A feature's steps are part of its curve; a pair's term (``leaf="spline:pairs=..."``, 0 wherever
    either of its features is at its median) is not drawn: ``export_text`` and the web page give it.

    Parameters
    ----------
    model : SoftRegressionTree, SoftClassificationTree or FittedTree
        A fitted soft tree; spline leaves draw curves, linear ones lines.
    leaves : sequence of int or None, default=None
        The leaves drawn (paper numbering); None: every leaf some input reaches.
    top : int, default=4
        Features per leaf row.
    score : int, default=0
        Which of a classifier's K' scores (its logit for two classes).
    feature_names : sequence of str or None, default=None
        Names of the p features; None: the model's ``feature_names_in_``, else x0, x1, ...
    units : {"original", "scaled"}, default="original"
        The units of x and of the effect (y's units for a regressor).
    axes : ndarray of Axes or None, default=None
        Axes of shape (leaves, top) to draw on; None: a new figure.

    Raises
    ------
    ValueError
        If ``model`` is not a fitted soft tree, a leaf is not one of the tree's reachable leaves, ``score`` or
        ``top`` is out of range, or ``units`` is unknown.

    >>> import os
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from srtopt import SoftRegressionTree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((300, 2))
    >>> tree = SoftRegressionTree(depth=1, leaf="spline", random_state=0).fit(X, np.sin(6 * X[:, 0]) + X[:, 1])
    >>> axes = plot_leaf_curves(tree, top=2)
    >>> axes.shape[1]
    2
    >>> axes[0, 0].figure.savefig(os.devnull, format="png")
    """
    import matplotlib.pyplot as plt
    import numpy as np

    model = as_view(model)
    if model.kind != "oblique" or model.leaf_model_ is None:
        raise ValueError("plot_leaf_curves draws a soft tree's leaves (SoftRegressionTree, SoftClassificationTree)")
    if units not in UNITS:
        raise ValueError(f"units must be 'original' or 'scaled', got {units!r}")
    tree, leaf_model = tree_of(model), model.leaf_model_
    reachable = [t for t in tree.leaves if model.reach[t - 1]]
    leaves = reachable if leaves is None else list(leaves)
    if not leaves or any(t not in reachable for t in leaves):
        raise ValueError(f"leaves must be reachable leaves of the tree ({reachable}), got {leaves!r}")
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score < leaf_model.n_outputs:
        raise ValueError(f"score must be an int in 0..{leaf_model.n_outputs - 1}, got {score!r}")
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be an int >= 1, got {top!r}")
    names, basis = feature_names_of(model, feature_names), leaf_model.basis
    frame = curve_frame(basis, model.n_features_in_)
    coefs = leaf_model.coefficients(model.beta_)[[tree.leaf_index(t) for t in leaves], score]
    spread = np.max([high - low for _, low, high in (curve_effects(basis, coef, frame) for coef in coefs)], axis=0)
    features = [int(j) for j in np.argsort(-spread, kind="stable")[:min(top, len(names))]]
    x_min, span, _, _ = scaling_of(model)
    mean, std = leaf_model.link.score_units(model.scaler_) if units == "original" else (0.0, 1.0)
    to_x = (lambda j, v: x_min[j] + span[j] * np.asarray(v)) if units == "original" else (lambda j, v: np.asarray(v))
    if axes is None:
        _, axes = plt.subplots(len(leaves), len(features), figsize=(2.6 * len(features), 1.9 * len(leaves)),
                               squeeze=False, sharey="row", constrained_layout=True)
        if frame.deciles.size:  # wrapped to the figure's width (about 14 characters an inch at this size)
            figure = axes[0, 0].figure
            figure.suptitle(textwrap.fill(CURVE_LEGEND, int(14 * figure.get_figwidth())), fontsize=7)
    name = leaf_model.link.score_names(model.classes_, scaled=units == "scaled")[score]
    for r, t in enumerate(leaves):
        for c, j in enumerate(features):
            ax, view = axes[r, c], _view(frame, j)
            x = np.linspace(*view, CURVE_POINTS)
            effect = basis.curve(j, coefs[r], x) - basis.curve(j, coefs[r], frame.center[j:j + 1])
            ax.plot(to_x(j, x), std * effect, color="C0")
            ax.axhline(0.0, color="0.7", lw=0.8, zorder=0)
            _mark_the_data(ax, frame, j, view, lambda v, j=j: to_x(j, v))
            ax.set_title(f"leaf {t}: f({names[j]})", fontsize=8)
            ax.tick_params(labelsize=7)
        axes[r, 0].set_ylabel(f"effect on {name}", fontsize=7)
    return axes


#: the title of a figure of curves read at the median row (:func:`plot_leaf_curves`)
CURVE_LEGEND = ("f = 0 at the feature's training median; ticks: deciles of the training rows; grey: the tails "
                "beyond the 1st and 99th percentiles")
#: how far beyond a feature's 1-99% range a panel shows, as a share of that range
TAIL_SHOWN = 0.05


def _view(frame, j) -> tuple[float, float]:
    """The scaled range a panel shows of feature j: its bulk and a share :data:`TAIL_SHOWN` of it beyond each
    end, within the training range [0, 1]."""
    low, high = frame.bulk[j]
    margin = TAIL_SHOWN * (high - low)
    return max(0.0, low - margin), min(1.0, high + margin)


def _mark_the_data(ax, frame, j, view, to_x) -> None:
    """Where feature j's training rows are, on a panel showing the scaled range ``view``: the tails beyond its
    1st and 99th percentiles shaded ("tail"), its deciles as a rug ("deciles"), its median dotted ("median");
    nothing for a frame without quantiles.  The x limits are the view's."""
    ax.set_xlim(to_x(view[0]), to_x(view[1]))
    if not frame.deciles.size:
        return
    (low, high), (start, end) = frame.bulk[j], view
    for a, b in ((start, low), (high, end)):
        if b > a:
            ax.axvspan(to_x(a), to_x(b), color="0.88", lw=0, zorder=0, gid="tail")
    ax.plot(to_x(frame.deciles[j]), [0.04] * len(frame.deciles[j]), linestyle="none", marker="|", markersize=7,
            color="0.35", transform=ax.get_xaxis_transform(), clip_on=False, gid="deciles")
    ax.axvline(to_x(frame.center[j]), color="0.5", lw=0.8, ls=":", zorder=0, gid="median")
