"""Choosing the depth by cross-validation: ``SoftRegressionTreeCV(depths=...)`` against the
depth-3 search and a forest.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/cv_depth.py
        [--datasets a,b] [--depths 2,3,4,5] [--cv 3]

First training fold of the paper's split (seed 0).  ``SoftRegressionTreeCV(cv=K)`` (depth 3,
the split weight among 0.3, 1, 10), the same with ``depths``, and ``RandomForestRegressor(100,
n_jobs=1)``: test R^2, the chosen depth and seconds.  Writes ``benchmarks/results/cv_depth.md``.
"""

from __future__ import annotations

import argparse
import statistics

from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

from benchmarks.common import RESULTS, first_fold, timed, write_report
from srtopt import SoftRegressionTree, SoftRegressionTreeCV

OUT = RESULTS / "cv_depth.md"
DATASETS = "abalone,airfoil,auto_mpg,housing,kin8nm,yacht"




def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--depths", default="2,3,4,5")
    parser.add_argument("--cv", type=int, default=3)
    args = parser.parse_args(argv)
    depths = tuple(int(d) for d in args.depths.split(","))
    lines = ["# Choosing the depth by cross-validation", "",
             f"Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/cv_depth.py --depths {args.depths} "
             f"--cv {args.cv}` (first fold of the paper's split, one run each, one BLAS thread). 'depth 3': "
             f"`SoftRegressionTreeCV(cv={args.cv})`; 'depths': the same with `depths=({args.depths})`.", "",
             "| dataset | N train | depth 3 R^2 | depths R^2 | chosen depth | RF R^2 | depth 3 s | depths s | RF s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    gains, ratios = [], []
    with threadpool_limits(1):
        for name in args.datasets.split(","):
            X_train, X_test, y_train, y_test = first_fold(name)
            base = SoftRegressionTree(depth=3, random_state=0)
            fixed_s, fixed = timed(SoftRegressionTreeCV(base, cv=args.cv, random_state=0), X_train, y_train)
            deep_s, deep = timed(SoftRegressionTreeCV(base, cv=args.cv, random_state=0, depths=depths), X_train,
                                 y_train)
            rf_s, rf = timed(RandomForestRegressor(100, n_jobs=1, random_state=0), X_train, y_train)
            r2 = [m.score(X_test, y_test) for m in (fixed, deep, rf)]
            gains.append(r2[1] - r2[0])
            ratios.append(deep_s / rf_s)
            lines.append(f"| {name} | {len(y_train)} | {r2[0]:.3f} | {r2[1]:.3f} | {deep.depth_} | {r2[2]:.3f} | "
                         f"{fixed_s:.1f} | {deep_s:.1f} | {rf_s:.1f} |")
            print(lines[-1], flush=True)
    lines += ["", f"Depth chosen by cross-validation against depth 3: test R^2 {statistics.fmean(gains):+.4f} "
              f"(mean; from {min(gains):+.3f} to {max(gains):+.3f}); its time {statistics.fmean(ratios):.1f}x "
              "the forest's (mean ratio)."]
    write_report(OUT, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
