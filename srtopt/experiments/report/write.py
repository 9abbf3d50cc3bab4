"""A report written into a folder: report.md, report.tex, the summaries as CSV and the figures; the
report states the runs done, failed and claimed, and the srtopt versions that wrote them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from srtopt._io import atomic_write
from srtopt.experiments.report.classification import _classification_latex, classification_tables
from srtopt.experiments.report.figures import plot_accuracy_vs_time, plot_r2_by_dataset, plot_r2_vs_time
from srtopt.experiments.report.regression import latex_tables, markdown_tables
from srtopt.experiments.report.summary import srtopt_versions, summarize, summarize_classification

__all__ = ["ReportOutput", "write_report"]


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
