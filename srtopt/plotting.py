"""Drawing a fitted tree with matplotlib (no Graphviz needed)."""

from __future__ import annotations

from .export import UNITS, _kind, _node_labels, _tree


def plot_tree(model, ax=None, feature_names=None, top=3, X=None, units="original", fontsize=8):
    """Draw a fitted SRT, ORRT or MILO tree on ``ax`` (a new figure if None); return ``ax``.

    Each branch node shows its split hyperplane as its ``top`` largest-weight
    features ("go left iff ... >= 0", left edge "yes"), each leaf its linear
    model, every node the training rows routed there by HBP (or the rows of
    ``X``).  ``units``: "original" (raw feature units, y's units) or "scaled".
    """
    import matplotlib.pyplot as plt

    if units not in UNITS:
        raise ValueError(f"units must be 'original' or 'scaled', got {units!r}")
    _kind(model)
    tree = _tree(model)
    labels = _node_labels(model, feature_names, top, X, units)
    if ax is None:
        width = max(6.0, 2.6 * tree.n_leaves)
        _, ax = plt.subplots(figsize=(width, 1.9 * (tree.depth + 1) + 0.6))

    def position(t):
        d = tree.node_depth(t)
        return (t - 2**d + 0.5) / 2**d, -float(d)

    for t in tree.branch_nodes:
        x0, y0 = position(t)
        for child, text in ((2 * t, "yes"), (2 * t + 1, "no")):
            x1, y1 = position(child)
            ax.plot([x0, x1], [y0, y1], color="0.55", lw=1, zorder=1)
            ax.text((x0 + x1) / 2, (y0 + y1) / 2, text, ha="center", va="center", fontsize=fontsize - 1,
                    color="0.3", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"}, zorder=2)
    for t, lines in labels.items():
        x, y = position(t)
        color = "#e8f4e8" if tree.is_leaf(t) else "#e8eef8"
        ax.text(x, y, "\n".join(lines), ha="center", va="center", fontsize=fontsize, family="monospace",
                bbox={"boxstyle": "round,pad=0.4", "fc": color, "ec": "0.4"}, zorder=3)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-tree.depth - 0.6, 0.6)
    ax.set_axis_off()
    ax.set_title(f"{type(model).__name__}, depth {tree.depth} ({units} units)", fontsize=fontsize + 2)
    return ax


__all__ = ["plot_tree"]
