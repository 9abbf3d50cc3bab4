"""What the benchmark scripts share: where they write, the smoke mode, the report writer.  The scripts
import it as ``benchmarks.common``: run them from the repository root with ``PYTHONPATH=.``
(benchmarks/README.md).  Beside it: :mod:`.store` (the resumable JSON-lines store), :mod:`.data` (the
datasets, and their tiny stand-ins in smoke mode), :mod:`.heldout` (datasets outside the paper's 15) and
:mod:`.protocol` (the folds, the probability floor, the scores the scripts share).

**Smoke mode.**  Every script takes ``--smoke``: it runs its own code end to end on tiny data (a few rows
made up with each dataset's columns, or scikit-learn's generators), one fold, one seed, tiny iteration
budgets, and writes its reports, stores and figures to a temporary folder, never over
``benchmarks/results/`` or ``docs/``.  :func:`start` turns it on; the mode is the environment variable
:data:`SMOKE_ENV` (the folder), so the processes a script starts run in it too.  ``python -m
benchmarks.smoke`` runs every script so."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

from srtopt._io import atomic_write

BENCHMARKS = Path(__file__).resolve().parents[1]
RESULTS = BENCHMARKS / "results"  # every script's reports and resumable stores
ROOT = BENCHMARKS.parent  # the repository
#: the environment variable that holds the smoke run's folder (set: smoke mode)
SMOKE_ENV = "SRTOPT_BENCHMARK_SMOKE"
SMOKE_HELP = ("run on tiny data (one fold, one seed, tiny budgets) and write to a temporary folder, not to "
              "benchmarks/results/: checks that the script runs")


def add_smoke(parser) -> None:
    """The ``--smoke`` flag of a script's parser."""
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)


def parse(parser, argv=None, smoke_argv=()):
    """``parser``'s arguments of ``argv`` (default: the command line's), ``--smoke`` among them; in smoke mode
    (started) those of ``smoke_argv`` (the tiny run's datasets, sizes, ...) follow them."""
    add_smoke(parser)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    return parser.parse_args([*argv, *smoke_argv]) if start(args) and smoke_argv else args


def start(args) -> bool:
    """Turn smoke mode on when ``args.smoke`` (a temporary folder for the outputs, unless the runner gave one);
    whether it is on."""
    if getattr(args, "smoke", False) and not smoke():
        os.environ[SMOKE_ENV] = tempfile.mkdtemp(prefix="srtopt-smoke-")
    if smoke():
        print(f"smoke mode: tiny data, outputs in {results()}", flush=True)
    return smoke()


def require(parser, args, *options) -> None:
    """Refuse, as argparse does, a run without ``options`` (``--stage``, ...) unless in smoke mode, which runs
    them all."""
    missing = [option for option in options if getattr(args, option.lstrip("-").replace("-", "_")) is None]
    if missing and not getattr(args, "smoke", False):
        parser.error(f"the following arguments are required: {', '.join(missing)}")


def smoke() -> bool:
    """Whether this process runs in smoke mode."""
    return bool(os.environ.get(SMOKE_ENV))


def pick(full, tiny):
    """``full``, or ``tiny`` in smoke mode."""
    return tiny if smoke() else full


def budget() -> dict:
    """The soft trees' iteration budget in smoke mode (``{"max_iter": 2}``; none otherwise)."""
    return pick({}, {"max_iter": 2})


def regression_tree(**params):
    """``SoftRegressionTree(**params)``, at the smoke budget in smoke mode (:func:`budget`)."""
    from srtopt import SoftRegressionTree

    return SoftRegressionTree(**params, **budget())


def results() -> Path:
    """The folder of the reports and stores: ``benchmarks/results/``, or the smoke run's folder."""
    return Path(os.environ[SMOKE_ENV]) if smoke() else RESULTS


def docs_figure(name: str) -> Path:
    """Where a figure of the documentation goes: ``docs/<name>``, or the smoke run's folder."""
    return results() / name if smoke() else ROOT / "docs" / name


def skip(what: str, why: str) -> None:
    """Say that a part is skipped, and why (an optional package missing)."""
    print(f"skipped: {what} ({why})", flush=True)


def write_report(path, lines) -> None:
    """Write the report ``lines`` to ``path`` (its folder made if missing; atomically, so an
    interrupted write leaves the former report) and print them."""
    text = "\n".join(lines) + "\n"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(Path(path), text.encode())
    print(text)


def timed(model, X, y):
    """(seconds, model) of ``model.fit(X, y)``."""
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model


@contextlib.contextmanager
def search_constants(values: dict):
    """The module constants of srtopt.estimators.cv (the searches' HELD_OUT_ROWS, REPEATS, INNER_ITER, ...) set to
    ``values`` for the block."""
    from srtopt.estimators import cv

    before = {name: getattr(cv, name) for name in values}
    for name, value in values.items():
        setattr(cv, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(cv, name, value)
