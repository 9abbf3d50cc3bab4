"""The classification tables of a report: the means over the datasets per method and depth, then one
table per metric of :data:`~.summary.CLASSIFICATION_METRICS` with a row per dataset."""

from __future__ import annotations

from srtopt.experiments.report.summary import CLASSIFICATION_METRICS, classification_averages
from srtopt.experiments.report.tables import _cell, _latex, _markdown

__all__ = ["classification_tables"]


def _classification_mean_cells(summary):
    """Header and rows of the table of the means over datasets, one row per label."""
    header = ["Method", "datasets", "runs", "accuracy", "log loss", "fit s", "leaves"]
    rows = []
    for r in classification_averages(summary).itertuples():
        failed = f" ({r.errors} failed)" if r.errors else ""
        rows.append([r.label, str(r.datasets), f"{r.runs}{failed}",
                     *(_cell(getattr(r, metric), fmt) for metric, (_, fmt) in CLASSIFICATION_METRICS.items())])
    return header, rows


def _shape_cells(dataset) -> tuple:
    """(N, p, K) of a dataset as text: the registry's, or a file dataset's read from its file (blank when the
    file is gone or no longer the data its runs were on)."""
    from srtopt.datasets import CLASSIFICATION_DATASETS, get_info

    info = CLASSIFICATION_DATASETS.get(dataset)
    if info is None:
        try:
            info = get_info(dataset)
        except (OSError, ValueError):
            return "", "", ""
    return str(info.n_rows), str(info.n_features), str(info.n_classes)


def _classification_metric_cells(summary, metric: str):
    """Header and rows of one metric's table: a row per dataset, a column per label, the mean last."""
    from srtopt.datasets import CLASSIFICATION_DATASETS, dataset_label

    fmt = CLASSIFICATION_METRICS[metric][1]
    labels = list(dict.fromkeys(summary["label"]))
    header = ["Dataset", "N", "p", "K", *labels]
    index = {(r.dataset, r.label): r for r in summary.itertuples()}
    rows = []
    order = {slug: i for i, slug in enumerate(CLASSIFICATION_DATASETS)}  # the registry's, then files
    for dataset in sorted(dict.fromkeys(summary["dataset"]), key=lambda name: order.get(name, len(order))):
        row = [dataset_label(dataset), *_shape_cells(dataset)]
        for label in labels:
            r = index.get((dataset, label))
            cell = "" if r is None else _cell(getattr(r, metric), fmt)
            if r is not None and r.errors:
                cell += f" ({r.errors} failed)"
            row.append(cell)
        rows.append(row)
    means = classification_averages(summary).set_index("label")
    rows.append(["Mean", "", "", "", *(_cell(means.loc[label, metric], fmt) for label in labels)])
    return header, rows


def _classification_caption(summary) -> str:
    runs = int(summary["runs"].max()) if len(summary) else 0
    return (f"Classification: means over up to {runs} runs per dataset and method (folds x seeds) of the test "
            f"accuracy, the test log loss, the fit seconds and the leaves (n/a: not a tree); the means over the "
            f"datasets count those where the method has a successful run.")


def classification_tables(summary) -> str:
    """The Markdown tables of a classification summary: the means over datasets per method and depth, then
    one table per metric (accuracy, log loss, fit seconds, leaves) with a row per dataset.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize_classification`.

    Returns
    -------
    str
        A "## Classification" section; empty when the summary is.
    """
    if summary.empty:
        return ""
    parts = [f"## Classification\n\n{_classification_caption(summary)}\n\n"
             f"### Mean over datasets\n\n{_markdown(*_classification_mean_cells(summary))}\n"]
    for metric, (title, _) in CLASSIFICATION_METRICS.items():
        parts.append(f"### {title}\n\n{_markdown(*_classification_metric_cells(summary, metric))}\n")
    return "\n".join(parts)


def _classification_latex(summary) -> str:
    caption = _classification_caption(summary)
    parts = [_latex(*_classification_mean_cells(summary), caption, n_summary=0)]
    for metric, (title, _) in CLASSIFICATION_METRICS.items():
        parts.append(_latex(*_classification_metric_cells(summary, metric), f"Classification: {title.lower()} "
                            f"per dataset; last row, the mean over the datasets.", n_summary=1))
    return "\n\n".join(parts) + "\n"
