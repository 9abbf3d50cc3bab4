"""Deeper trees: fit time and time per macro iteration at depths 3, 4 and 5 against a forest.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/perf/depth_speed.py
        [--datasets a,b] [--depths 3,4,5]

Each of the paper's 15 datasets, first training fold of the paper's 4-fold split (seed 0):
``RandomForestRegressor(100, n_jobs=1)`` and the default ``SoftRegressionTree`` at each depth,
one run each, in one process on a 2-core machine.  At the deepest depth the same fit is also
run with the full evaluation of E at every point (:class:`srtopt.kernels.IncrementalObjective`
keeping nothing: how every point was evaluated before the incremental evaluation), so the
two columns compare in the same run.  Seconds per macro iteration: fit seconds / ``n_iter_``
(initialization included).  Writes ``benchmarks/results/depth_speed.md``.  ``--smoke``: one tiny dataset, depths 2
and 3.
"""

from __future__ import annotations

import argparse
import statistics
from unittest import mock

from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

from benchmarks.common import parse, results, timed, write_report
from benchmarks.common.protocol import first_fold
from srtopt import SoftRegressionTree, kernels
from srtopt.datasets import DATASETS


def row(name, depths):
    """The table row of one dataset and (D_max seconds, RF seconds, incremental / full, the relative
    difference of their final E)."""
    X_train, X_test, y_train, y_test = first_fold(name)
    rf_s, rf = timed(RandomForestRegressor(100, n_jobs=1, random_state=0), X_train, y_train)
    fits = {d: timed(SoftRegressionTree(depth=d, random_state=0), X_train, y_train) for d in depths}
    deepest = depths[-1]
    with mock.patch.object(kernels.IncrementalObjective.__init__, "__defaults__", (0,)):
        full_s, full = timed(SoftRegressionTree(depth=deepest, random_state=0), X_train, y_train)
    gap = abs(full.objective_ - fits[deepest][1].objective_) / abs(full.objective_)
    cells = [name, str(len(y_train)), f"{rf_s:.2f}", *(f"{fits[d][0]:.2f}" for d in depths), f"{full_s:.2f}",
             f"{fits[deepest][0] / rf_s:.2f}",
             " / ".join(f"{fits[d][0] / max(fits[d][1].n_iter_, 1):.3f}" for d in depths),
             " / ".join(f"{fits[d][1].score(X_test, y_test):.3f}" for d in depths), f"{rf.score(X_test, y_test):.3f}"]
    return "| " + " | ".join(cells) + " |", (fits[deepest][0], rf_s, fits[deepest][0] / full_s, gap)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--depths", default="3,4,5")
    args = parse(parser, argv, ["--datasets", "yacht", "--depths", "2,3"])
    depths = [int(d) for d in args.depths.split(",")]
    D = depths[-1]
    lines = ["# Deeper trees: fit time against a forest", "",
             f"Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/perf/depth_speed.py --depths {args.depths}"
             f"{'' if args.datasets == ','.join(DATASETS) else ' --datasets ' + args.datasets}` (first fold of the "
             "paper's split, one run each, one BLAS thread, 2-core machine; 'D full s': the same depth-"
             f"{D} fit evaluating E in full at every point, as before the incremental evaluation).", "",
             "| dataset | N train | RF(100) s | " + " | ".join(f"D{d} s" for d in depths) + f" | D{D} full s | "
             f"D{D} / RF | s per macro iteration ({' / '.join(f'D{d}' for d in depths)}) | test R^2 "
             f"({' / '.join(f'D{d}' for d in depths)}) | RF R^2 |",
             "|---|---:|---:|" + "---:|" * len(depths) + "---:|---:|---|---|---:|"]
    summary = []
    with threadpool_limits(1):
        for name in args.datasets.split(","):
            line, numbers = row(name, depths)
            lines.append(line)
            summary.append(numbers)
            print(line, flush=True)
    geo = statistics.geometric_mean
    lines += ["", f"Depth {D} against RF(100): geometric mean {geo([a / b for a, b, *_ in summary]):.2f}x, "
              f"{sum(a <= b for a, b, *_ in summary)} of {len(summary)} datasets at or under the forest's time. "
              f"Incremental against full evaluation at depth {D}: {geo([c for _, _, c, _ in summary]):.2f}x the time "
              f"(geometric mean); final E equal to {max(g for *_, g in summary):.1e} (relative, largest)."]
    write_report(results() / "depth_speed.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
