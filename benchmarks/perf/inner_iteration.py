"""Seconds per NODEC-DR inner iteration on small data, against what a forest's time allows.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/perf/inner_iteration.py

The five paper datasets of fewer than 400 training rows, first training fold of the paper's
split (seed 0): ``RandomForestRegressor(100, n_jobs=1)``, and ``SoftRegressionTree`` at
depths 3 and 5 with the small-data guard off (``leaf_ridge=1``: one NODEC-DR run of
10 macro iterations of 2^D - 1 inner iterations each), best of 2 runs.  'budget': the
forest's seconds divided by the inner iterations, what an inner iteration may cost for the
fit to take the forest's time.  'largest share': a profiled depth-5 fit (cProfile), the
function with the most own time and its share of the fit: how spread the cost of an inner
iteration is (pstats' public profile keys functions by name, so of two functions of one name
one is shown).  Writes ``benchmarks/results/inner_iteration.md``.  ``--smoke``: one tiny dataset, one fit each.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
from pathlib import Path

from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

from benchmarks.common import parse, pick, results, timed, write_report
from benchmarks.common.protocol import first_fold
from srtopt import SoftRegressionTree

DATASETS = ("lpga2009", "computer", "yacht", "auto_mpg", "housing")


def per_iteration(X, y, depth):
    """(ms per inner iteration, inner iterations) of the guard-off fit at ``depth``, best of 2."""
    fits = [timed(SoftRegressionTree(depth=depth, random_state=0, leaf_ridge=1), X, y) for _ in range(pick(2, 1))]
    seconds, model = min(fits, key=lambda fit: fit[0])
    return 1000 * seconds / len(model.history_), len(model.history_)


def largest_share(X, y):
    """(function, share of the profiled time) of the function with the most own time in a
    depth-5 guard-off fit."""
    profile = cProfile.Profile()
    profile.runcall(SoftRegressionTree(depth=5, random_state=0, leaf_ridge=1).fit, X, y)
    stats = pstats.Stats(profile).get_stats_profile()  # functions keyed by name (one of each name)
    name, own = max(stats.func_profiles.items(), key=lambda item: item[1].tottime)
    where = f"{Path(own.file_name).name}:{own.line_number}({name})" if own.line_number else name
    return where, own.tottime / stats.total_tt


def main(argv=None) -> int:
    parse(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter), argv)
    lines = ["# Seconds per inner iteration on small data", "",
             "Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/perf/inner_iteration.py` (first fold of "
             "the paper's split; the guard off, `leaf_ridge=1`; best of 2 runs; one BLAS thread, 2-core machine).",
             "",
             "| dataset | N train | RF(100) s | D3 ms per inner iteration | D5 ms per inner iteration | D5 budget ms "
             "(RF s / 310) | D5 / budget | largest share of a D5 fit |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    with threadpool_limits(1):
        SoftRegressionTree(depth=2, max_iter=1).fit(*first_fold("yacht")[::2])  # loads the compiled kernels
        for name in pick(DATASETS, DATASETS[2:3]):
            X, _, y, _ = first_fold(name)
            rf_s = min(timed(RandomForestRegressor(100, n_jobs=1, random_state=0), X, y)[0] for _ in range(pick(2, 1)))
            (d3, _), (d5, k5) = per_iteration(X, y, 3), per_iteration(X, y, 5)
            budget = 1000 * rf_s / k5
            function, share = largest_share(X, y)
            lines.append(f"| {name} | {len(y)} | {rf_s:.2f} | {d3:.2f} | {d5:.2f} | {budget:.2f} | {d5 / budget:.1f}x "
                         f"| {function}: {100 * share:.0f}% |")
            print(lines[-1], flush=True)
    write_report(results() / "inner_iteration.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
