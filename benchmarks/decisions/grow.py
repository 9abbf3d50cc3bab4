"""Growing deeper trees from shallower fits against fitting each depth from scratch.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/grow.py
        [--datasets a,b]

First training fold of the paper's split (seed 0).  A default depth-3 fit, then depth 4
grown from it (``init=GrowInitialization(depth-3 fit)``) and depth 5 grown from that depth-4
fit, against default fits of depths 4 and 5 from the model-tree start; seconds of the
depth-4 and depth-5 fits and their test R^2.  Writes ``benchmarks/results/grow.md``.  ``--smoke``: one tiny
dataset, the trees at max_iter 2.
"""

from __future__ import annotations

import argparse
import statistics

from threadpoolctl import threadpool_limits

from benchmarks.common import budget, parse, results, timed, write_report
from benchmarks.common.protocol import first_fold
from srtopt import SoftRegressionTree
from srtopt.training.initialization import GrowInitialization

DATASETS = "abalone,airfoil,kin8nm,cpu_small,puma,yacht"


def row(name):
    X_train, X_test, y_train, y_test = first_fold(name)
    previous = SoftRegressionTree(depth=3, random_state=0, **budget()).fit(X_train, y_train)
    grown, scratch = {}, {}
    for depth in (4, 5):
        grown[depth] = timed(SoftRegressionTree(depth=depth, random_state=0, init=GrowInitialization(previous),
                                                **budget()), X_train, y_train)
        previous = grown[depth][1]
        scratch[depth] = timed(SoftRegressionTree(depth=depth, random_state=0, **budget()), X_train, y_train)
    r2 = {key: {d: fits[d][1].score(X_test, y_test) for d in fits} for key, fits in (("g", grown), ("s", scratch))}
    cells = [name, str(len(y_train)), *(f"{fits[d][0]:.2f}" for d in (4, 5) for fits in (scratch, grown)),
             *(f"{r2[key][d]:.3f}" for d in (4, 5) for key in ("s", "g"))]
    return "| " + " | ".join(cells) + " |", [r2["g"][d] - r2["s"][d] for d in (4, 5)], [
        (grown[d][0] / scratch[d][0]) for d in (4, 5)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=DATASETS)
    args = parse(parser, argv, ["--datasets", "yacht"])
    lines = ["# Growing deeper trees from shallower fits", "",
             "Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/grow.py` (first fold of the paper's "
             "split, one run each, one BLAS thread). 'scratch': the default fit; 'grown': "
             "`init=GrowInitialization(the fit one level shallower)` (depth 4 from the default depth-3 fit, depth 5 "
             "from the grown depth-4 fit).", "",
             "| dataset | N train | D4 s scratch | D4 s grown | D5 s scratch | D5 s grown | D4 R^2 scratch | "
             "D4 R^2 grown | D5 R^2 scratch | D5 R^2 grown |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    diffs, ratios = [], []
    with threadpool_limits(1):
        for name in args.datasets.split(","):
            line, diff, ratio = row(name)
            lines.append(line)
            diffs.append(diff)
            ratios.append(ratio)
            print(line, flush=True)
    lines += ["", "Grown against scratch: test R^2 "
              + ", ".join(f"D{d} {statistics.fmean(x[i] for x in diffs):+.4f} (mean; worst "
                          f"{min(x[i] for x in diffs):+.4f})" for i, d in enumerate((4, 5)))
              + "; fit time " + ", ".join(f"D{d} {statistics.fmean(x[i] for x in ratios):.2f}x" for i, d in
                                          enumerate((4, 5))) + " (mean ratio)."]
    write_report(results() / "grow.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
