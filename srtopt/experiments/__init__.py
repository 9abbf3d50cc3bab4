"""The paper's experimental protocol (section 5): runner, results store, reports.

>>> from srtopt.experiments import run_benchmark, write_report
>>> run_benchmark(["yacht"], [2, 3], ["cart", "rf"], seeds=2, store="results.db")  # doctest: +SKIP
>>> write_report("results.db", "reports/")  # doctest: +SKIP
"""

from srtopt.experiments.methods import (
    PAPER_NAMES,
    available_methods,
    get_method,
    method_names,
    register_method,
    unregister_method,
)
from srtopt.experiments.protocol import RunSpec, canonical_params, execute_run, fold_indices, scale_fold
from srtopt.experiments.runner import BenchmarkResult, build_grid, package_versions, run_benchmark
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
    "method_names",
    "package_versions",
    "register_method",
    "run_benchmark",
    "scale_fold",
    "summarize",
    "unregister_method",
    "write_report",
]


def __getattr__(name):  # the report pulls in matplotlib: import it on demand
    if name in ("summarize", "write_report"):
        from srtopt.experiments import report

        return getattr(report, name)
    raise AttributeError(name)
