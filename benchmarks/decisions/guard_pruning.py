"""The small-data guard's comparison, with and without dropping the factors that cannot win.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/guard_pruning.py

Every (dataset, depth <= 5) of the paper's 15 inside the small-data zone (``computer`` at
depths 3-5, ``lpga2009`` at 4-5, ``housing`` at 5), the paper's 4 folds of split seed 0: the
default ``SoftRegressionTree`` (the comparison fits best first and skips the fits that
cannot change its choice: :func:`srtopt.estimators.leaf_ridge._compare`) against the same fit with
every factor fitted on every fold, in the same run.  Columns: fits of the comparison,
seconds of the whole fit, and whether the chosen factor and the final E are the same.
Writes ``benchmarks/results/guard_pruning.md``.  ``--smoke``: one tiny case (computer, depth 3: in the zone),
fold 0.
"""

from __future__ import annotations

import argparse
import statistics
from unittest import mock

from threadpoolctl import threadpool_limits

from benchmarks.common import parse, pick, results, timed, write_report
from benchmarks.common.data import load
from benchmarks.common.protocol import outer_folds, paper_fold
from srtopt import SoftRegressionTree
from srtopt.models.terms import Squared

CASES = [("computer", 3), ("computer", 4), ("computer", 5), ("lpga2009", 4), ("lpga2009", 5), ("housing", 5)]


def counted_fit(X, y, depth):
    """(seconds, fits of the comparison, the model) of the default tree's fit."""
    fits, fit = [0], SoftRegressionTree.fit

    def counting(self, *args, **kwargs):
        fits[0] += 1
        return fit(self, *args, **kwargs)

    with mock.patch.object(SoftRegressionTree, "fit", counting):
        seconds, model = timed(SoftRegressionTree(depth=depth, random_state=0), X, y)
    return seconds, fits[0] - 1, model


def main(argv=None) -> int:
    parse(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter), argv)
    lines = ["# The small-data guard: factors that cannot win are dropped", "",
             "Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/guard_pruning.py` (the paper's 4 "
             "folds of split seed 0, one BLAS thread, 2-core machine).  'full': every factor fitted on every fold, "
             "as before, in the same run.", "",
             "| dataset | depth | fold | fits (dropped / full) | fit s (dropped / full) | same factor | same E |",
             "|---|---:|---:|---|---|---|---|"]
    ratios, same = [], True
    with threadpool_limits(1):
        X, y, _ = load("computer")
        counted_fit(X, y, 2)  # loads the compiled kernels before the timed fits
        for name, depth in pick(CASES, CASES[:1]):
            X_all, y_all, _ = load(name)
            for k in outer_folds():
                X, _, y, _ = paper_fold(X_all, y_all, k)
                s_new, n_new, new = counted_fit(X, y, depth)
                with mock.patch.object(Squared, "nonnegative", False):
                    s_old, n_old, old = counted_fit(X, y, depth)
                factor, E = new.leaf_ridge_ == old.leaf_ridge_, new.objective_ == old.objective_
                same &= factor and E
                ratios.append(s_new / s_old)
                lines.append(f"| {name} | {depth} | {k} | {n_new} / {n_old} | {s_new:.2f} / {s_old:.2f} | "
                             f"{'yes' if factor else 'NO'} | {'yes' if E else 'NO'} |")
                print(lines[-1], flush=True)
    geo = statistics.geometric_mean(ratios)
    lines += ["", f"Fit time with factors dropped / full comparison: geometric mean {geo:.2f}x "
              f"({min(ratios):.2f}x-{max(ratios):.2f}x); chosen factor and final E the same on "
              f"{'every fit' if same else 'NOT every fit'}."]
    write_report(results() / "guard_pruning.md", lines)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
