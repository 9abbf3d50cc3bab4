"""Tables and plots from a results store, in the layout of the paper's tables.

Per dataset, method and depth: mean test R^2 with its standard deviation
sigma (reported in units of 1e-2, as in the paper), mean training seconds and
the number of runs with test R^2 < 0.  Below the datasets, the arithmetic and
the geometric means over datasets of those per-dataset numbers, which is how
the paper's "Arithmetic avg" and "Geometric avg" rows are computed (checked
against its Table 3: e.g. the geometric mean of the SRT l2 column's R^2 values
is 0.853 and of its times 26.0).  A geometric mean over values of which one is
negative is undefined and shown as n/a.

The paper's published values (``srtopt/data/paper_tables.json``) are shown
beside ours with the difference (ours - paper).

Runs of classification datasets get tables of their own
(:func:`summarize_classification`, :func:`classification_tables`): per dataset
and per method and depth (a method that does not use the depth has none), the
mean test accuracy, test log loss, fit seconds and leaves over the folds and
seeds, and their arithmetic means over the datasets.

Runs written by different srtopt versions are not pooled unless asked
(``mixed_versions=True``, ``srtopt report --mixed-versions``); the report
lists the versions and counts the runs done, failed and claimed.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from srtopt._io import atomic_write
from srtopt.experiments.methods import PAPER_NAMES

__all__ = [
    "CLASSIFICATION_METRICS",
    "ReportOutput",
    "averages",
    "classification_averages",
    "classification_tables",
    "geometric_mean",
    "latex_tables",
    "markdown_tables",
    "paper_tables",
    "plot_accuracy_vs_time",
    "plot_r2_by_dataset",
    "plot_r2_vs_time",
    "srtopt_versions",
    "summarize",
    "summarize_classification",
    "write_report",
]

METRICS = ("r2_mean", "sigma_e2", "seconds_mean", "neg_r2")
#: summary column -> title of its classification table, and the format of its cells
CLASSIFICATION_METRICS = {"accuracy_mean": ("Test accuracy", ".3f"), "log_loss_mean": ("Test log loss", ".3f"),
                          "seconds_mean": ("Fit seconds", "time"), "leaves_mean": ("Leaves", ".1f")}


@lru_cache(maxsize=1)
def paper_tables() -> dict:
    text = resources.files("srtopt").joinpath("data/paper_tables.json").read_text("utf-8")
    return json.loads(text)


def geometric_mean(values) -> float:
    """exp(mean(log v)); 0 when a value is 0, NaN when one is negative or NaN.

    Parameters
    ----------
    values : iterable of float
        The values v.

    Returns
    -------
    float
        Their geometric mean (NaN also for no values).
    """
    values = np.asarray(list(values), dtype=float)
    if values.size == 0 or np.any(np.isnan(values)) or np.any(values < 0):
        return math.nan
    if np.any(values == 0):
        return 0.0
    return float(np.exp(np.mean(np.log(values))))


# --------------------------------------------------------------------------
# numbers
# --------------------------------------------------------------------------

def _rows_frame(source):
    import pandas as pd

    from srtopt.experiments.store import ResultStore

    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(source, ResultStore):
        return source.dataframe()
    with ResultStore(source, readonly=True) as store:
        return store.dataframe()


def srtopt_versions(frame) -> dict[str, int]:
    """Runs per srtopt version that wrote them (the ``srtopt`` entry of each row's versions).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a results store (:meth:`ResultStore.dataframe`), with their ``versions`` column of JSON text.

    Returns
    -------
    dict of str to int
        Number of rows per srtopt version ("unknown" where the versions are unreadable or lack it); empty
        when ``frame`` has no ``versions`` column.
    """
    def version(text):
        try:
            return str(json.loads(text).get("srtopt", "unknown"))
        except (TypeError, ValueError, AttributeError):
            return "unknown"

    return dict(Counter(version(v) for v in frame["versions"])) if "versions" in frame else {}


def _check_versions(frame, mixed_versions: bool) -> None:
    versions = srtopt_versions(frame)
    if len(versions) > 1 and not mixed_versions:
        listing = ", ".join(f"{v} ({n} runs)" for v, n in sorted(versions.items()))
        raise ValueError(f"the store holds runs of different srtopt versions: {listing}; their results may "
                         f"differ, so they are not pooled: pass --mixed-versions (mixed_versions=True) to "
                         f"pool them anyway")


def _is_classification(frame):
    """Which rows of ``frame`` are runs on classification datasets."""
    from srtopt.datasets import CLASSIFICATION_DATASETS

    if frame.empty:
        return np.zeros(len(frame), dtype=bool)
    return frame["dataset"].isin(list(CLASSIFICATION_DATASETS)).to_numpy()


def summarize(source, mixed_versions: bool = False):
    """One row per (dataset, depth, method, params) of the regression runs from a store, path or DataFrame.

    Raises ValueError when the rows were written by different srtopt versions,
    unless ``mixed_versions``.

    Columns: dataset, depth, method, params, label, runs (ok), errors,
    r2_mean, r2_std (population, ddof=0), sigma_e2 (= 100 r2_std), seconds_mean,
    neg_r2 (ok runs with test R^2 < 0), iterations_mean.

    Parameters
    ----------
    source : str, path-like, ResultStore or pandas.DataFrame
        A results store (a path is opened read-only) or its rows (:meth:`ResultStore.dataframe`).
    mixed_versions : bool, default=False
        Whether rows written by different srtopt versions may be pooled.

    Returns
    -------
    pandas.DataFrame
        The columns above; a method run with several parameter sets has them in its label.  Sorted by
        depth, then datasets in the registry's order.

    Raises
    ------
    ValueError
        If the rows come from different srtopt versions and ``mixed_versions`` is False, or the path
        cannot be opened as a results store.
    """
    import pandas as pd

    from srtopt.datasets import DATASETS

    frame = _rows_frame(source)
    _check_versions(frame, mixed_versions)
    frame = frame[~_is_classification(frame)]
    columns = ["dataset", "depth", "method", "params", "label", "runs", "errors", "r2_mean",
               "r2_std", "sigma_e2", "seconds_mean", "neg_r2", "iterations_mean"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    out = []
    keys = ["dataset", "depth", "method", "params"]
    for (dataset, depth, method, params), group in frame.groupby(keys, sort=False):
        ok = group[group["status"] == "ok"]
        r2 = ok["r2_test"].to_numpy(dtype=float)
        iterations = ok["iterations"].dropna().to_numpy(dtype=float) if "iterations" in ok else []
        out.append({
            "dataset": dataset, "depth": int(depth), "method": method, "params": params,
            "runs": len(ok), "errors": int((group["status"] != "ok").sum()),
            "r2_mean": float(np.mean(r2)) if len(r2) else math.nan,
            "r2_std": float(np.std(r2)) if len(r2) else math.nan,
            "seconds_mean": float(np.mean(ok["seconds"].to_numpy(dtype=float))) if len(r2) else math.nan,
            "neg_r2": int(np.sum(r2 < 0)),
            "iterations_mean": float(np.mean(iterations)) if len(iterations) else math.nan,
        })
    summary = pd.DataFrame(out)
    summary["sigma_e2"] = summary["r2_std"] * 100.0
    # a method run with several parameter sets gets them in its label
    n_params = summary.groupby("method")["params"].nunique()
    summary["label"] = [
        m if n_params[m] == 1 else f"{m} {p}" for m, p in zip(summary["method"], summary["params"])
    ]
    order = {slug: i for i, slug in enumerate(DATASETS)}
    summary["_order"] = summary["dataset"].map(lambda s: order.get(s, len(order)))
    summary = summary.sort_values(["depth", "_order", "dataset"], kind="stable").drop(columns="_order")
    return summary[columns].reset_index(drop=True)


def _mean(values) -> float:
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return float(np.mean(values)) if len(values) else math.nan


def summarize_classification(source, mixed_versions: bool = False):
    """One row per (dataset, depth, method, params) of the classification runs from a store, path or DataFrame.

    Raises ValueError when the rows were written by different srtopt versions, unless ``mixed_versions``.

    Parameters
    ----------
    source : str, path-like, ResultStore or pandas.DataFrame
        A results store (a path is opened read-only) or its rows (:meth:`ResultStore.dataframe`).
    mixed_versions : bool, default=False
        Whether rows written by different srtopt versions may be pooled.

    Returns
    -------
    pandas.DataFrame
        Columns dataset, depth, method, params, label (the method, its parameters when it was run with
        several sets, and "D=<depth>" unless the depth is 0), runs (ok), errors, accuracy_mean,
        accuracy_std (population), accuracy_train_mean, log_loss_mean, seconds_mean and leaves_mean (NaN for
        a model without leaves).  Sorted by method (first stored first), depth, then datasets in the
        registry's order.

    Raises
    ------
    ValueError
        If the rows come from different srtopt versions and ``mixed_versions`` is False, or the path
        cannot be opened as a results store.
    """
    import pandas as pd

    from srtopt.datasets import CLASSIFICATION_DATASETS

    frame = _rows_frame(source)
    _check_versions(frame, mixed_versions)
    frame = frame[_is_classification(frame)]
    columns = ["dataset", "depth", "method", "params", "label", "runs", "errors", "accuracy_mean",
               "accuracy_std", "accuracy_train_mean", "log_loss_mean", "seconds_mean", "leaves_mean"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    out = []
    for (dataset, depth, method, params), group in frame.groupby(["dataset", "depth", "method", "params"],
                                                                  sort=False):
        ok = group[group["status"] == "ok"]
        accuracy = ok["accuracy_test"].to_numpy(dtype=float)
        out.append({
            "dataset": dataset, "depth": int(depth), "method": method, "params": params,
            "runs": len(ok), "errors": int((group["status"] != "ok").sum()),
            "accuracy_mean": _mean(accuracy), "accuracy_std": float(np.std(accuracy)) if len(ok) else math.nan,
            "accuracy_train_mean": _mean(ok["accuracy_train"]), "log_loss_mean": _mean(ok["log_loss_test"]),
            "seconds_mean": _mean(ok["seconds"]), "leaves_mean": _mean(ok["leaves"]),
        })
    summary = pd.DataFrame(out)
    n_params = summary.groupby("method")["params"].nunique()
    summary["label"] = [
        (m if n_params[m] == 1 else f"{m} {p}") + (f" D={d}" if d else "")
        for m, p, d in zip(summary["method"], summary["params"], summary["depth"])
    ]
    method_order = {m: i for i, m in enumerate(dict.fromkeys(frame["method"]))}
    order = {slug: i for i, slug in enumerate(CLASSIFICATION_DATASETS)}
    summary["_method"] = summary["method"].map(method_order)
    summary["_order"] = summary["dataset"].map(order)
    summary = summary.sort_values(["_method", "params", "depth", "_order"], kind="stable")
    return summary[columns].reset_index(drop=True)


def classification_averages(summary):
    """Arithmetic means over datasets, per label, of the table of :func:`summarize_classification`.

    Only datasets where the label has at least one successful run count.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize_classification`.

    Returns
    -------
    pandas.DataFrame
        One row per label, in the summary's order: label, method, depth, datasets (how many counted),
        runs, errors, and the mean of each metric of :data:`CLASSIFICATION_METRICS` (NaN where no dataset
        has a value).
    """
    import pandas as pd

    out = []
    for label, group in summary.groupby("label", sort=False):
        counted = group[group["runs"] > 0]
        row = {"label": label, "method": group["method"].iloc[0], "depth": int(group["depth"].iloc[0]),
               "datasets": len(counted), "runs": int(group["runs"].sum()), "errors": int(group["errors"].sum())}
        row.update({metric: _mean(counted[metric]) for metric in CLASSIFICATION_METRICS})
        out.append(row)
    return pd.DataFrame(out)


def averages(summary):
    """Arithmetic and geometric means over datasets, per (depth, label).

    Only datasets where the method has at least one successful run count.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize`.

    Returns
    -------
    pandas.DataFrame
        One row per (depth, label): depth, label, method, datasets (how many counted), and
        ``arith_<metric>`` and ``geo_<metric>`` for each metric r2_mean, sigma_e2, seconds_mean, neg_r2.
    """
    import pandas as pd

    out = []
    for (depth, label), group in summary.groupby(["depth", "label"], sort=False):
        group = group[group["runs"] > 0]
        row = {"depth": depth, "label": label, "method": group["method"].iloc[0] if len(group) else None,
               "datasets": len(group)}
        for metric in METRICS:
            values = group[metric].to_numpy(dtype=float)
            row[f"arith_{metric}"] = float(np.mean(values)) if len(values) else math.nan
            row[f"geo_{metric}"] = geometric_mean(values) if len(values) else math.nan
        out.append(row)
    return pd.DataFrame(out)


def _paper_entry(depth: int, method: str, dataset: str) -> dict | None:
    name = PAPER_NAMES.get(method)
    if name is None:
        return None
    tables = paper_tables()
    if method == "rf":
        entry = tables["random_forest"].get(dataset, {}).get("RF")
    else:
        entry = tables.get(f"depth{depth}", {}).get(dataset, {}).get(name)
    return entry


def _paper_averages(depth: int, method: str, datasets: list[str]) -> dict | None:
    """The paper's averages over ``datasets``: its published rows when all 15
    datasets are there, else recomputed from its per-dataset values."""
    from srtopt.datasets import DATASETS

    entries = [_paper_entry(depth, method, d) for d in datasets]
    if not entries or any(e is None for e in entries):
        return None
    out = {}
    for key, metric in (("r2", "r2_mean"), ("sigma_e2", "sigma_e2"), ("time", "seconds_mean"),
                        ("neg_r2_runs", "neg_r2")):
        values = [e.get(key) for e in entries]
        if any(v is None for v in values):
            continue
        out[f"arith_{metric}"] = float(np.mean(values))
        out[f"geo_{metric}"] = geometric_mean(values)
    if set(datasets) == set(DATASETS):
        published = paper_tables()["averages"]
        pub = published["random_forest"] if method == "rf" else published.get(f"depth{depth}", {}).get(PAPER_NAMES[method])
        if pub:
            for src, dst in (("arith_r2", "arith_r2_mean"), ("geo_r2", "geo_r2_mean"),
                             ("arith_time", "arith_seconds_mean"), ("geo_time", "geo_seconds_mean")):
                if src in pub:
                    out[dst] = pub[src]
    return out


# --------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------

def _num(value, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return format(value, fmt)


def _r2_sigma(r2, sigma) -> str:
    if r2 is None or (isinstance(r2, float) and math.isnan(r2)):
        return "n/a"
    return f"{_num(r2, '.3f')} ({_num(sigma, '.2f')})"


def _diff(ours, paper, fmt=".3f") -> str:
    if ours is None or paper is None or math.isnan(ours) or math.isnan(paper):
        return ""
    return format(ours - paper, "+" + fmt)


def _time(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _table_cells(summary, depth: int):
    """Header and rows (lists of strings) of the table of one depth."""
    from srtopt.datasets import DATASETS

    part = summary[summary["depth"] == depth]
    labels = list(dict.fromkeys(part["label"]))
    datasets = list(dict.fromkeys(part["dataset"]))
    header = ["Dataset", "N", "p"]
    for label in labels:
        header += [f"{label} R² (σ 1e-2)", "paper", "Δ R²", f"{label} time s", "paper", "R²<0"]
    rows = []
    index = {(r.dataset, r.label): r for r in part.itertuples()}
    for dataset in datasets:
        info = DATASETS.get(dataset)
        row = [info.name.split(" (")[0] if info else dataset,
               str(info.n_rows) if info else "", str(info.n_features) if info else ""]
        for label in labels:
            r = index.get((dataset, label))
            if r is None:
                row += ["", "", "", "", "", ""]
                continue
            p = _paper_entry(depth, r.method, dataset)
            neg = str(r.neg_r2)
            if p and "neg_r2_runs" in p:
                neg += f" (paper {p['neg_r2_runs']})"
            if r.errors:
                neg += f", {r.errors} failed"
            row += [
                _r2_sigma(r.r2_mean, r.sigma_e2),
                _r2_sigma(p["r2"], p["sigma_e2"]) if p else "—",
                _diff(r.r2_mean, p["r2"]) if p else "",
                _time(r.seconds_mean),
                _time(p["time"]) if p and "time" in p else "—",
                neg,
            ]
        rows.append(row)
    avg = averages(part)
    for kind, title in (("arith", "Arithmetic avg"), ("geo", "Geometric avg")):
        row = [title, "", ""]
        for label in labels:
            a = avg[avg["label"] == label].iloc[0]
            method_datasets = list(part[(part["label"] == label) & (part["runs"] > 0)]["dataset"])
            p = _paper_averages(depth, a["method"], method_datasets) or {}
            pr2 = p.get(f"{kind}_r2_mean")
            row += [
                _r2_sigma(a[f"{kind}_r2_mean"], a[f"{kind}_sigma_e2"]),
                _r2_sigma(pr2, p.get(f"{kind}_sigma_e2")) if pr2 is not None else "—",
                _diff(a[f"{kind}_r2_mean"], pr2) if pr2 is not None else "",
                _time(a[f"{kind}_seconds_mean"]),
                _time(p[f"{kind}_seconds_mean"]) if f"{kind}_seconds_mean" in p else "—",
                _num(a[f"{kind}_neg_r2"], ".2f"),
            ]
        rows.append(row)
    return header, rows


def _rf_cells(summary):
    """The paper's Table of SRT l2 (D=2, D=3) against random forests."""
    from srtopt.datasets import DATASETS

    rf = summary[summary["method"] == "rf"]
    if rf.empty:
        return None
    rf = rf[rf["depth"] == rf["depth"].min()]  # the depth does not change a forest
    srt = summary[summary["method"] == "srt-l2"]
    header = ["Dataset", "SRT l2 D=2 R² (σ)", "paper", "Δ", "SRT l2 D=3 R² (σ)", "paper", "Δ",
              "RF R² (σ)", "paper", "Δ"]
    rows, ours_rf, paper_rf = [], [], []
    for dataset in dict.fromkeys(rf["dataset"]):
        paper = paper_tables()["random_forest"].get(dataset, {})
        row = [DATASETS[dataset].name.split(" (")[0] if dataset in DATASETS else dataset]
        for depth in (2, 3):
            r = srt[(srt["dataset"] == dataset) & (srt["depth"] == depth)]
            p = paper.get(f"SRT_l2_D{depth}")
            if r.empty:
                row += ["", _r2_sigma(p["r2"], p["sigma_e2"]) if p else "—", ""]
            else:
                r = r.iloc[0]
                row += [_r2_sigma(r.r2_mean, r.sigma_e2), _r2_sigma(p["r2"], p["sigma_e2"]) if p else "—",
                        _diff(r.r2_mean, p["r2"]) if p else ""]
        r = rf[rf["dataset"] == dataset].iloc[0]
        p = paper.get("RF")
        row += [_r2_sigma(r.r2_mean, r.sigma_e2), _r2_sigma(p["r2"], p["sigma_e2"]) if p else "—",
                _diff(r.r2_mean, p["r2"]) if p else ""]
        if r.runs:
            ours_rf.append(r.r2_mean)
            paper_rf.append(p["r2"] if p else math.nan)
        rows.append(row)
    for title, fn in (("Arithmetic avg", lambda v: float(np.mean(v))), ("Geometric avg", geometric_mean)):
        ours = fn(ours_rf) if ours_rf else math.nan
        paper = fn(paper_rf) if paper_rf else math.nan
        if len(ours_rf) == len(DATASETS) and set(rf["dataset"]) == set(DATASETS):
            pub = paper_tables()["averages"]["random_forest"]
            paper = pub["arith_r2"] if title.startswith("Arith") else pub["geo_r2"]
        rows.append([title, "", "", "", "", "", "", _num(ours, ".3f"), _num(paper, ".3f"),
                     _diff(ours, paper)])
    return header, rows


def _markdown(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(header))) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _latex_escape(text: str) -> str:
    return (text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("%", r"\%")
            .replace("&", r"\&").replace("#", r"\#").replace("R²", "$R^2$").replace("σ", r"$\sigma$")
            .replace("Δ", r"$\Delta$").replace("—", "--"))


def _latex(header, rows, caption: str, n_summary: int = 2) -> str:
    """A ``table`` environment; the last ``n_summary`` rows (the averages) in bold."""
    spec = "l" + "r" * (len(header) - 1)
    lines = [r"\begin{table}[ht]", r"\centering", r"\resizebox{\textwidth}{!}{%",
             rf"\begin{{tabular}}{{{spec}}}", r"\hline",
             " & ".join(_latex_escape(h) for h in header) + r" \\ \hline"]
    n_data = len(rows) - n_summary
    for i, row in enumerate(rows):
        cells = [_latex_escape(c) for c in row]
        if i >= n_data:
            cells = [rf"\textbf{{{c}}}" if c and j else c for j, c in enumerate(cells)]
        end = r" \\ \hline" if i == n_data - 1 or i >= n_data else r" \\"
        lines.append(" & ".join(cells) + end)
    lines += [r"\end{tabular}}", rf"\caption{{{_latex_escape(caption)}}}", r"\end{table}"]
    return "\n".join(lines)


def _captions(summary):
    for depth in sorted(summary["depth"].unique()):
        part = summary[summary["depth"] == depth]
        runs = int(part["runs"].max()) if len(part) else 0
        yield int(depth), (
            f"Depth D={depth}: mean test R² (σ in units of 1e-2) over {runs} runs per dataset "
            f"and method (folds x seeds), mean training seconds, runs with test R² < 0; "
            f"paper: published values; Δ = ours - paper."
        )


def markdown_tables(summary) -> str:
    """The Markdown tables of a summary, in the layout of the paper's tables, beside its values.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize`.

    Returns
    -------
    str
        A "## Depth D" section per depth (caption and table, the arithmetic and geometric averages last),
        then a random-forest table when the summary has "rf" rows.
    """
    parts = []
    for depth, caption in _captions(summary):
        parts.append(f"## Depth {depth}\n\n{caption}\n\n{_markdown(*_table_cells(summary, depth))}\n")
    rf = _rf_cells(summary)
    if rf:
        parts.append("## Random forest (paper appendix table)\n\nMean test R² (σ 1e-2); "
                     "ours beside the paper's published values.\n\n" + _markdown(*rf) + "\n")
    return "\n".join(parts)


def latex_tables(summary) -> str:
    """The LaTeX tables of a summary: the tables of :func:`markdown_tables` as ``table`` environments.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize`.

    Returns
    -------
    str
        One ``table`` environment per depth, then the random-forest one when the summary has "rf" rows.
    """
    parts = [_latex(*_table_cells(summary, depth), caption) for depth, caption in _captions(summary)]
    rf = _rf_cells(summary)
    if rf:
        parts.append(_latex(*rf, "SRT l2 against random forests: mean test R² (σ 1e-2), ours and the paper's."))
    return "\n\n".join(parts) + "\n"


def _cell(value, fmt: str) -> str:
    if fmt == "time":
        return _time(value)
    return _num(value, fmt)


def _classification_mean_cells(summary):
    """Header and rows of the table of the means over datasets, one row per label."""
    header = ["Method", "datasets", "runs", "accuracy", "log loss", "fit s", "leaves"]
    rows = []
    for r in classification_averages(summary).itertuples():
        failed = f" ({r.errors} failed)" if r.errors else ""
        rows.append([r.label, str(r.datasets), f"{r.runs}{failed}",
                     *(_cell(getattr(r, metric), fmt) for metric, (_, fmt) in CLASSIFICATION_METRICS.items())])
    return header, rows


def _classification_metric_cells(summary, metric: str):
    """Header and rows of one metric's table: a row per dataset, a column per label, the mean last."""
    from srtopt.datasets import CLASSIFICATION_DATASETS

    fmt = CLASSIFICATION_METRICS[metric][1]
    labels = list(dict.fromkeys(summary["label"]))
    header = ["Dataset", "N", "p", "K", *labels]
    index = {(r.dataset, r.label): r for r in summary.itertuples()}
    rows = []
    for dataset in sorted(dict.fromkeys(summary["dataset"]), key=list(CLASSIFICATION_DATASETS).index):
        info = CLASSIFICATION_DATASETS[dataset]
        row = [dataset, str(info.n_rows), str(info.n_features), str(info.n_classes)]
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


# --------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------

def plot_accuracy_vs_time(summary, path) -> Path:
    """Mean test accuracy against mean fit seconds (log scale), one point per dataset and label of a
    classification summary.

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
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label in dict.fromkeys(part["label"]):
        rows = part[part["label"] == label]
        ax.scatter(rows["seconds_mean"], rows["accuracy_mean"], label=label, s=22)
    ax.set_xscale("log")
    ax.set_xlabel("mean fit time [s]")
    ax.set_ylabel("mean test accuracy")
    ax.set_title("Classification: test accuracy against fit time, per dataset")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


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
    ax.set_xticklabels(datasets, rotation=45, ha="right")
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


# --------------------------------------------------------------------------

@dataclasses.dataclass
class ReportOutput:
    """What :func:`write_report` wrote.

    Parameters
    ----------
    markdown : str
        The text of report.md.
    files : list of pathlib.Path
        The files written: report.md, report.tex, summary.csv (regression runs),
        summary_classification.csv (classification runs), then the plots.
    summary : pandas.DataFrame
        The table of :func:`summarize` (regression runs).
    classification : pandas.DataFrame or None, default=None
        The table of :func:`summarize_classification` (classification runs).
    """

    markdown: str
    files: list[Path]
    summary: object  # pandas.DataFrame
    classification: object = None  # pandas.DataFrame


def write_report(source, out_dir, *, plots: bool = True, mixed_versions: bool = False) -> ReportOutput:
    """Write report.md, report.tex, summary.csv (summary_classification.csv) and the PNG plots into ``out_dir``.

    ``source`` is a store (path or :class:`ResultStore`, read only) or a DataFrame of rows.

    Parameters
    ----------
    source : str, path-like, ResultStore or pandas.DataFrame
        The results store, or its rows.
    out_dir : str or path-like
        The directory to write to (created if needed; files of the same names are replaced).
    plots : bool, default=True
        Whether to write the plots r2_by_dataset_depth<D>.png and r2_vs_time_depth<D>.png for each depth
        of the regression runs, and accuracy_vs_time.png of the classification runs.
    mixed_versions : bool, default=False
        Whether runs written by different srtopt versions may be pooled.

    Returns
    -------
    ReportOutput
        The report's Markdown, the files written and the summary.

    Raises
    ------
    FileNotFoundError
        If ``source`` is a path and no file is there.
    ValueError
        If the store has no runs, is not a results store, or holds runs of different srtopt versions and
        ``mixed_versions`` is False.
    """
    if isinstance(source, (str, Path)) and not Path(source).is_file():
        raise FileNotFoundError(f"no results store {source}")
    frame, claimed = _rows_and_claims(source)
    summary = summarize(frame, mixed_versions=mixed_versions)
    classification = summarize_classification(frame, mixed_versions=mixed_versions)
    if summary.empty and classification.empty:
        raise ValueError(f"the results store {source} has no runs" + (f" yet ({claimed} claimed)" if claimed else ""))
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file; the report is a folder of files (report.md, report.tex, "
                         f"summary.csv, plots): give a folder name")
    out.mkdir(parents=True, exist_ok=True)
    sections = [markdown_tables(summary) if not summary.empty else "", classification_tables(classification)]
    md = "# srtopt benchmark report\n\n" + _status(frame, claimed) + "\n\n" + "\n".join(t for t in sections if t)
    tex = "\n".join(t for t in (latex_tables(summary) if not summary.empty else "",
                                _classification_latex(classification) if not classification.empty else "") if t)
    texts = [("report.md", md), ("report.tex", tex)]
    if not summary.empty:
        texts.append(("summary.csv", summary.to_csv(index=False)))
    if not classification.empty:
        texts.append(("summary_classification.csv", classification.to_csv(index=False)))
    files = [atomic_write(out / name, text.encode("utf-8")) for name, text in texts]
    if plots:
        for depth in sorted(summary["depth"].unique()):
            files.append(plot_r2_by_dataset(summary, int(depth), out / f"r2_by_dataset_depth{depth}.png"))
            files.append(plot_r2_vs_time(summary, int(depth), out / f"r2_vs_time_depth{depth}.png"))
        if not classification.empty:
            files.append(plot_accuracy_vs_time(classification, out / "accuracy_vs_time.png"))
    return ReportOutput(md, files, summary, classification)


def _rows_and_claims(source):
    """(rows as a DataFrame, runs claimed now) of a store path, a ResultStore or a DataFrame."""
    import pandas as pd

    from srtopt.experiments.store import ResultStore

    if isinstance(source, pd.DataFrame):
        return source, 0
    if isinstance(source, ResultStore):
        return source.dataframe(), source.claimed()
    with ResultStore(source, readonly=True) as store:
        return store.dataframe(), store.claimed()


def _status(frame, claimed: int) -> str:
    """The runs done (ok, failed) and claimed, and the srtopt versions that wrote them."""
    failed = int((frame["status"] != "ok").sum())
    text = f"Runs: {len(frame)} done ({len(frame) - failed} ok, {failed} failed)"
    if claimed:
        text += f"; {claimed} claimed by running benchmarks, not in the tables yet"
    versions = ", ".join(f"{v} ({n} runs)" for v, n in sorted(srtopt_versions(frame).items()))
    return f"{text}.  \nsrtopt versions: {versions}."
