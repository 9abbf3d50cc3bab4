"""The figures of a report (matplotlib, imported when a figure is drawn): test R^2 per dataset and
against training time, beside the paper's values, for each depth of the regression runs; test
accuracy against fit time of the classification runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from srtopt.experiments.report.paper import _paper_entry

__all__ = ["accuracy_series", "plot_accuracy_vs_time", "plot_r2_by_dataset", "plot_r2_vs_time", "readable_label"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_r2_by_dataset(summary, depth: int, path) -> Path:
    """Grouped bars of mean test R^2 (error bar: sigma) per dataset and method;
    the paper's values as black markers.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize`.
    depth : int
        The tree depth whose rows are plotted.
    path : str or path-like
        The image file to write (format from its suffix, e.g. ".png").

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    from srtopt.datasets import dataset_label

    plt = _pyplot()
    part = summary[summary["depth"] == depth]
    labels = list(dict.fromkeys(part["label"]))
    datasets = list(dict.fromkeys(part["dataset"]))
    width = 0.8 / max(1, len(labels))
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(datasets) + 2), 4.5))
    for k, label in enumerate(labels):
        rows = part[part["label"] == label].set_index("dataset")
        xs = np.arange(len(datasets)) + (k - (len(labels) - 1) / 2) * width
        means = [rows.loc[d, "r2_mean"] if d in rows.index else np.nan for d in datasets]
        stds = [rows.loc[d, "r2_std"] if d in rows.index else np.nan for d in datasets]
        ax.bar(xs, means, width, yerr=stds, capsize=2, label=label)
        method = rows["method"].iloc[0]
        paper = [(_paper_entry(depth, method, d) or {}).get("r2", np.nan) for d in datasets]
        if not all(np.isnan(paper)):
            ax.scatter(xs, paper, marker="_", s=120, color="black", zorder=3,
                       label="paper" if k == 0 or "paper" not in ax.get_legend_handles_labels()[1] else None)
    ax.set_xticks(np.arange(len(datasets)))
    ax.set_xticklabels([dataset_label(d) for d in datasets], rotation=45, ha="right")
    ax.set_ylabel("test R²")
    ax.set_ylim(min(0.0, float(np.nanmin(part["r2_mean"])) - 0.05) if len(part) else 0, 1.05)
    ax.set_title(f"Mean test R² per dataset, depth {depth}")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def plot_r2_vs_time(summary, depth: int, path) -> Path:
    """Mean test R^2 against mean training seconds (log scale), one point per
    dataset and method; the paper's values as hollow markers.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize`.
    depth : int
        The tree depth whose rows are plotted (those with at least one successful run).
    path : str or path-like
        The image file to write (format from its suffix, e.g. ".png").

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    plt = _pyplot()
    part = summary[(summary["depth"] == depth) & (summary["runs"] > 0)]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for label in dict.fromkeys(part["label"]):
        rows = part[part["label"] == label]
        points = ax.scatter(rows["seconds_mean"], rows["r2_mean"], label=label, s=25)
        method = rows["method"].iloc[0]
        paper = [_paper_entry(depth, method, d) for d in rows["dataset"]]
        paper = [p for p in paper if p and "time" in p]
        if paper:
            ax.scatter([p["time"] for p in paper], [p["r2"] for p in paper], s=25,
                       facecolors="none", edgecolors=points.get_facecolor(), label=f"{label} (paper)")
    ax.set_xscale("log")
    ax.set_xlabel("mean training time [s]")
    ax.set_ylabel("mean test R²")
    ax.set_title(f"Test R² against training time, depth {depth}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


#: the names a person gives the classification methods (a method not listed keeps its own)
METHOD_NAMES = {"sct": "soft tree", "sct-cv": "soft tree, depth by CV", "cart-clf": "CART",
                "rf-clf": "random forest (100 trees)", "hgb-clf": "gradient boosting (HGB)",
                "logreg-clf": "logistic regression", "orct": "ORCT", "streed-clf": "STreeD"}
#: a method drawn in the colour of another (its family): the searches of a tree beside the tree
FAMILIES = {"sct-cv": "sct"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")


def readable_label(method: str, params: str, depth: int) -> str:
    """A series' name as a person writes it: 'soft tree, constant leaves, depth 3', 'random forest (100 trees)'."""
    import json

    words = [METHOD_NAMES.get(method, method)]
    options = json.loads(params) if params else {}
    for key, value in options.items():
        words.append(f"{value} leaves" if key == "leaf" else f"{key} {value}")
    if depth:
        words.append(f"depth {depth}")
    return ", ".join(words)


def accuracy_series(summary) -> list[tuple]:
    """(label of the summary, readable label, the colour's index: one per method family, the marker: one per
    variant of the family) of every series of :func:`plot_accuracy_vs_time`, in the summary's order."""
    part = summary[summary["runs"] > 0]
    keys = list(dict.fromkeys(zip(part["label"], part["method"], part["params"], part["depth"])))
    families = list(dict.fromkeys(FAMILIES.get(method, method) for _, method, _, _ in keys))
    seen: dict = {}
    series = []
    for label, method, params, depth in keys:
        family = FAMILIES.get(method, method)
        variant = seen.setdefault(family, [])
        variant.append(label)
        series.append((label, readable_label(method, params, int(depth)), families.index(family),
                       MARKERS[(len(variant) - 1) % len(MARKERS)]))
    return series


def plot_accuracy_vs_time(summary, path) -> Path:
    """Mean test accuracy against mean fit seconds (log scale), one point per dataset and series of a
    classification summary: one colour per method family, one marker per variant of it (depth, parameters), each
    series named as a person writes it (:func:`readable_label`).

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize_classification`.
    path : str or path-like
        The image file to write (format from its suffix, e.g. ".png").

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    plt = _pyplot()
    part = summary[summary["runs"] > 0]
    series = accuracy_series(summary)
    colours = plt.get_cmap("tab10" if max((c for _, _, c, _ in series), default=0) < 10 else "tab20")
    fig, ax = plt.subplots(figsize=(9, 5))
    for label, name, colour, marker in series:
        rows = part[part["label"] == label]
        ax.scatter(rows["seconds_mean"], rows["accuracy_mean"], label=name, s=24, marker=marker,
                   color=colours(colour), alpha=0.85)
    ax.set_xscale("log")
    ax.set_xlabel("mean fit time [s]")
    ax.set_ylabel("mean test accuracy")
    ax.set_title("Classification: test accuracy against fit time, one point per dataset")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
