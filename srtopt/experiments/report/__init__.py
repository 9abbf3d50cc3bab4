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

Modules: :mod:`.summary` (the numbers: summaries and their means over the datasets),
:mod:`.paper` (the paper's published values), :mod:`.tables` (cells, Markdown and LaTeX),
:mod:`.regression` and :mod:`.classification` (the tables of each task), :mod:`.figures`,
:mod:`.write` (:func:`write_report`).
"""

from srtopt.experiments.report.classification import classification_tables
from srtopt.experiments.report.figures import plot_accuracy_vs_time, plot_r2_by_dataset, plot_r2_vs_time
from srtopt.experiments.report.paper import paper_tables
from srtopt.experiments.report.regression import latex_tables, markdown_tables
from srtopt.experiments.report.summary import (
    CLASSIFICATION_METRICS,
    averages,
    classification_averages,
    geometric_mean,
    srtopt_versions,
    summarize,
    summarize_classification,
)
from srtopt.experiments.report.write import ReportOutput, write_report

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
