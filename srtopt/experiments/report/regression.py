"""The regression tables of a report, in the layout of the paper's tables: per depth, a row per
dataset and the arithmetic and geometric averages last, each label's numbers beside the paper's
published values with the difference (ours - paper); and SRT l2 against random forests."""

from __future__ import annotations

import math

import numpy as np

from srtopt.experiments.report.paper import _paper_averages, _paper_entry, paper_tables
from srtopt.experiments.report.summary import averages, geometric_mean
from srtopt.experiments.report.tables import _diff, _latex, _markdown, _num, _r2_sigma, _time

__all__ = ["latex_tables", "markdown_tables"]


def _table_cells(summary, depth: int):
    """Header and rows (lists of strings) of the table of one depth."""
    from srtopt.datasets import DATASETS, dataset_label

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
        row = [info.name.split(" (")[0] if info else dataset_label(dataset),
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
    from srtopt.datasets import DATASETS, dataset_label

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
        row = [DATASETS[dataset].name.split(" (")[0] if dataset in DATASETS else dataset_label(dataset)]
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
