"""The paper's experimental protocol (section 5) and its classification twin: runner, results store, reports.

>>> from srtopt.experiments import run_benchmark, write_report
>>> run_benchmark(["yacht"], [2, 3], ["cart", "rf"], seeds=2, store="results.db")  # doctest: +SKIP
>>> write_report("results.db", "reports/")  # doctest: +SKIP
"""

from srtopt.experiments.methods import (
    PAPER_NAMES,
    available_methods,
    get_method,
    method_names,
    method_task,
    method_uses_depth,
    register_method,
    unregister_method,
)
from srtopt.experiments.protocol import RunSpec, canonical_params, execute_run, fold_indices, scale_fold
from srtopt.experiments.runner import BenchmarkResult, build_grid, grid_task, package_versions, run_benchmark
from srtopt.experiments.store import ResultStore

__all__ = [
    "PAPER_NAMES",
    "BenchmarkResult",
    "ResultStore",
    "RunSpec",
    "available_methods",
    "build_grid",
    "canonical_params",
    "execute_run",
    "fold_indices",
    "get_method",
    "grid_task",
    "method_names",
    "method_task",
    "method_uses_depth",
    "package_versions",
    "register_method",
    "run_benchmark",
    "scale_fold",
    "summarize",
    "summarize_classification",
    "unregister_method",
    "write_report",
]


def __getattr__(name):  # the report pulls in matplotlib: import it on demand
    if name in ("summarize", "summarize_classification", "write_report"):
        from srtopt.experiments import report

        return getattr(report, name)
    raise AttributeError(name)
