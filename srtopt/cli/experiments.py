"""``srtopt bench`` and ``srtopt report``: the paper's experiments from the shell."""

from __future__ import annotations

import argparse
import importlib
import json
import sys


#: the methods a bench runs when --methods is not given, per task
DEFAULT_METHODS = {"regression": ["srt-l2", "cart", "rf"],
                   "classification": ["sct", "cart-clf", "rf-clf", "hgb-clf", "logreg-clf"]}


def register(subparsers) -> None:
    from srtopt.datasets import CLASSIFICATION_DATASETS, DATASETS
    from srtopt.experiments.methods import method_names
    from srtopt.experiments.runner import BACKENDS

    bench = subparsers.add_parser(
        "bench",
        help="run the paper's cross-validation protocol and store every run in SQLite",
        description=(
            "Run every (dataset, depth, method, fold, seed) of the grid with the paper's protocol "
            "(section 5): K-fold CV with a fixed split, X min-max scaled to [0,1] and y "
            "standardized on the training fold, one run per initialization seed.  Classification "
            "datasets (--task classification) have stratified K-fold CV and are scored by accuracy, "
            "log loss and leaves; a method that does not use the depth runs once, at depth 0.  Each run is "
            "written to the SQLite store as it completes; runs already stored are skipped, so "
            "re-running the same command after an interruption finishes the grid.  Runs are "
            "claimed in the store before they start, so several 'srtopt bench' on one store "
            "(on one machine or several sharing the file) split the grid."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    bench.add_argument("--task", choices=list(DEFAULT_METHODS), default=None,
                       help="regression or classification; default: the task of --datasets, else regression")
    bench.add_argument("--datasets", nargs="+", default=None, metavar="SLUG",
                       help=f"datasets to run, all of one task; default: all of the task (regression, the "
                            f"paper's 15: {', '.join(DATASETS)}; classification, 20: "
                            f"{', '.join(CLASSIFICATION_DATASETS)}); or a CSV file of your own (a path: it "
                            "contains '/' or ends in .csv; or NAME with NAME.csv in --data-home; the target column "
                            "is --target, every other column a numeric feature; the store names it by its path, "
                            "target and sha256)")
    bench.add_argument("--target", default=None, metavar="COLUMN",
                       help="the column to predict in the CSV files of --datasets (default: 'target')")
    bench.add_argument("--depths", nargs="+", type=int, default=[2, 3], metavar="D",
                       help="tree depths")
    bench.add_argument("--methods", nargs="+", default=None, metavar="NAME",
                       help=f"methods of the task (default: regression {' '.join(DEFAULT_METHODS['regression'])}; "
                            f"classification {' '.join(DEFAULT_METHODS['classification'])}); regression: "
                            f"{', '.join(method_names('regression'))}; classification: "
                            f"{', '.join(method_names('classification'))}; or any registered with "
                            "srtopt.experiments.register_method (see --plugin)")
    bench.add_argument("--params", action="append", default=[], metavar="METHOD=JSON",
                       help='keyword arguments of a method\'s factory, e.g. rf=\'{"n_estimators": 50}\'; '
                            "repeatable")
    bench.add_argument("--folds", type=int, default=4, help="number of cross-validation folds")
    bench.add_argument("--seeds", type=int, default=20,
                       help="initialization seeds per fold (seeds 0..SEEDS-1)")
    bench.add_argument("--split-seed", type=int, default=0,
                       help="random_state of the KFold split (the same for every method)")
    bench.add_argument("--jobs", type=int, default=1,
                       help="parallel worker processes (BLAS is pinned to 1 thread per run)")
    bench.add_argument("--backend", default="loky",
                       help="where the runs execute: " + ", ".join(
                           f"{name} ({need})" if need else name for name, need in BACKENDS.items())
                       + ", or a joblib backend registered by a --plugin")
    bench.add_argument("--store", default="results.db", help="SQLite results file")
    bench.add_argument("--data-home", default=None, metavar="DIR",
                       help="directory holding <slug>.csv (default: $SRTOPT_DATA, for classification "
                            "$SRTOPT_CLASSIFICATION_DATA, else the download cache $SRTOPT_CACHE or "
                            "~/.cache/srtopt)")
    bench.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                       help="import this Python module first (it may register methods); repeatable")
    bench.add_argument("--retry-failed", action="store_true",
                       help="run again the runs stored as failed")
    bench.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    bench.set_defaults(func=_bench, on_interrupt="the runs stored so far are kept: the same command "
                                                "finishes the grid")

    report = subparsers.add_parser(
        "report",
        help="tables (Markdown, LaTeX) and plots from a results store, beside the paper's values",
        description=(
            "Summarize a results store per dataset, depth and method: mean test R^2 with sigma "
            "(in units of 1e-2), mean training seconds, runs with R^2 < 0, and the arithmetic and "
            "geometric means over datasets, next to the paper's published values; for classification "
            "runs, mean test accuracy, test log loss, fit seconds and leaves, and their means over "
            "datasets.  Writes report.md, report.tex, summary.csv (summary_classification.csv) and PNG "
            "plots, and prints the Markdown, which starts with the runs done, failed and claimed and "
            "the srtopt versions that wrote them."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    report.add_argument("store", help="SQLite results file written by 'srtopt bench'")
    report.add_argument("--out", default="reports", help="output directory")
    report.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    report.add_argument("--mixed-versions", action="store_true",
                        help="pool runs written by different srtopt versions (refused otherwise)")
    report.set_defaults(func=_report)


def _parse_params(items) -> dict:
    out = {}
    for item in items:
        method, sep, text = item.partition("=")
        if not sep or not method:
            raise ValueError(f"--params expects METHOD=JSON, got {item!r}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--params {method}: invalid JSON ({exc})") from None
        if not isinstance(value, dict):
            raise ValueError(f"--params {method}: expected a JSON object")
        out[method] = value
    return out


def _named_datasets(datasets, target, data_home=None) -> list[str] | None:
    """--datasets with each CSV file replaced by its file dataset's name (path, target, task, sha256): a
    path, or a name that is not the registry's with a file <name>.csv in --data-home."""
    from pathlib import Path

    from srtopt.datasets import CLASSIFICATION_DATASETS, DATASETS, file_dataset, get_info

    if not datasets:
        if target is not None:
            raise ValueError("--target names the column to predict in the CSV files of --datasets; give them")
        return datasets
    files = {}
    for name in datasets:
        if name in DATASETS or name in CLASSIFICATION_DATASETS:
            continue
        beside = Path(data_home) / f"{name}.csv" if data_home is not None else None
        if "/" in name or name.lower().endswith(".csv"):
            files[name] = name
        elif beside is not None and beside.is_file():
            files[name] = beside
        else:
            get_info(name)  # an unknown name: one line listing the datasets
    if target is not None and not files:
        raise ValueError("--target applies to CSV files in --datasets (a path: with '/' or ending in .csv, or "
                         "<name>.csv in --data-home); the registry's datasets have their own target")
    return [file_dataset(files[name], target or "target") if name in files else name for name in datasets]


def _task_datasets(task, datasets) -> tuple[str, list[str]]:
    """The task and datasets of a bench: --task, else the task of --datasets, else regression; without
    --datasets, every dataset of the task."""
    from srtopt.datasets import dataset_names, get_info
    from srtopt.experiments.runner import grid_task

    if not datasets:
        task = task or "regression"
        return task, dataset_names(task)
    if task is not None:
        others = [name for name in datasets if get_info(name).task != task]
        if others:
            raise ValueError(f"--task {task}: {', '.join(others)} {'is not a' if len(others) == 1 else 'are not'} "
                             f"{task} dataset{'s' if len(others) > 1 else ''}")
    return grid_task(datasets), list(datasets)


def _bench(args) -> int:
    from srtopt.experiments import run_benchmark

    for module in args.plugin:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ValueError(f"--plugin {module}: {exc}") from None
    task, datasets = _task_datasets(args.task, _named_datasets(args.datasets, args.target, args.data_home))
    methods = args.methods or DEFAULT_METHODS[task]
    params = _parse_params(args.params)
    _check_params(params, methods, args.depths)
    result = run_benchmark(
        datasets, args.depths, methods,
        folds=args.folds, seeds=args.seeds, split_seed=args.split_seed,
        params=params, store=args.store, jobs=args.jobs,
        backend=args.backend, data_home=args.data_home, quiet=args.quiet,
        retry_failed=args.retry_failed,
    )
    if not args.quiet:
        others = f", {result.elsewhere} taken by other runners" if result.elsewhere else ""
        print(
            f"{result.total} runs in the grid: {result.skipped} already stored, {result.ran} run "
            f"now ({result.failed} failed){others} in {result.seconds:.1f} s; store {result.store}",
            file=sys.stderr,
        )
    if result.ran and result.failed == result.ran:
        print(f"srtopt bench: error: every run failed; the first: {result.first_error}", file=sys.stderr)
        return 1
    return 0


def _check_params(params, methods, depths) -> None:
    """--params checked before any run: each names a method of --methods whose factory accepts it,
    and an estimator of ours validates its values (``_check_params``)."""
    from srtopt.experiments.methods import get_method

    for method, kwargs in params.items():
        if method not in methods:
            raise ValueError(f"--params {method}: {method!r} is not among --methods ({', '.join(methods)})")
        try:
            estimator = get_method(method)(depths[0], 0, **kwargs)
            check = getattr(estimator, "_check_params", None)
            if check is not None:
                check()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"--params {method}: {exc}") from None


def _report(args) -> int:
    from srtopt.experiments.report import write_report

    output = write_report(args.store, args.out, plots=not args.no_plots, mixed_versions=args.mixed_versions)
    print(output.markdown)
    print(f"wrote {', '.join(str(p) for p in output.files)}", file=sys.stderr)
    return 0
