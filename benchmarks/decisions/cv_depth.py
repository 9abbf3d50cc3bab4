"""Choosing the depth by cross-validation: ``SoftRegressionTreeCV(depths=...)`` against the
depth-3 search and a forest.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/cv_depth.py
        [--datasets a,b] [--depths 2,3,4,5] [--cv 3]

First training fold of the paper's split (seed 0).  ``SoftRegressionTreeCV(cv=K)`` (depth 3,
the split weight among 0.3, 1, 10), the same with ``depths``, and ``RandomForestRegressor(100,
n_jobs=1)``: test R^2, the chosen depth and seconds.  Writes ``benchmarks/results/cv_depth.md``.
``--smoke``: one tiny dataset, depths 2-3, 2 folds, the trees at max_iter 2.
"""

from __future__ import annotations

import argparse
import statistics

from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

from benchmarks.common import budget, parse, results, timed, write_report
from benchmarks.common.protocol import first_fold
from srtopt import SoftRegressionTree, SoftRegressionTreeCV

DATASETS = "abalone,airfoil,auto_mpg,housing,kin8nm,yacht"
SMOKE = ["--datasets", "airfoil", "--depths", "2,3", "--cv", "2"]  # the arguments of --smoke


def search(base, cv, **params):
    """The search of the split weight (and of the depth, given ``depths``) around ``base``."""
    return SoftRegressionTreeCV(base, cv=cv, random_state=0, **params)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--depths", default="2,3,4,5")
    parser.add_argument("--cv", type=int, default=3)
    args = parse(parser, argv, SMOKE)
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
            base = SoftRegressionTree(depth=3, random_state=0, **budget())
            fixed_s, fixed = timed(search(base, args.cv), X_train, y_train)
            deep_s, deep = timed(search(base, args.cv, depths=depths), X_train, y_train)
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
    write_report(results() / "cv_depth.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
