"""SRT core benchmark (issue 2): accuracy under the paper's protocol and the speed target.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/srt_core.py --jobs 2

1. SRT l2 and SRT at depths 2 and 3 on yacht, housing, auto_mpg, airfoil and kin8nm,
   4 folds x 2 seeds (paper protocol), report beside the paper's tables in
   benchmarks/results/srt_core/.
2. Speed target: a depth-3 SRT l2 fit on the first training fold of cpu_small against
   scikit-learn's RandomForestRegressor(n_estimators=100, n_jobs=1) on the same fold,
   timed in the same run, one BLAS/OpenMP thread each; ratio written to
   benchmarks/results/srt_speed.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

from srtopt import SoftRegressionTree
from srtopt.datasets import load
from srtopt.experiments import run_benchmark, write_report
from srtopt.experiments.protocol import fold_indices, scale_fold

HERE = Path(__file__).resolve().parent / "results"
DATASETS = ["yacht", "housing", "auto_mpg", "airfoil", "kin8nm"]


def speed_table(data_home=None, repeats=2) -> str:
    X, y, _ = load("cpu_small", data_home=data_home)
    train, test = fold_indices(len(y), 4, 0, 0)
    Xtr, Xte, ytr, yte, _ = scale_fold(X[train], X[test], y[train], y[test])
    models = {"SRT l2 (defaults: bn_solver=l-bfgs-b)": lambda: SoftRegressionTree(depth=3, random_state=0),
              "SRT l2 (bn_solver=ipopt)": lambda: SoftRegressionTree(depth=3, random_state=0, bn_solver="ipopt"),
              "RandomForest(100, n_jobs=1)": lambda: RandomForestRegressor(100, n_jobs=1, random_state=0)}
    seconds, r2 = {}, {}
    with threadpool_limits(1):
        for _ in range(repeats):  # interleaved repeats; keep the fastest of each
            for name, make in models.items():
                start = time.perf_counter()
                model = make().fit(Xtr, ytr)
                seconds[name] = min(seconds.get(name, float("inf")), time.perf_counter() - start)
                r2[name] = model.score(Xte, yte)
    rf = seconds["RandomForest(100, n_jobs=1)"]
    lines = ["| cpu_small, depth 3, fold 1 | fit seconds (best of %d) | ratio to RF | test R^2 |" % repeats,
             "|---|---:|---:|---:|"]
    lines += [f"| {name} | {s:.2f} | {s / rf:.2f} | {r2[name]:.3f} |" for name, s in seconds.items()]
    return "\n".join(lines) + "\n\nPaper: SRT l2 took 58.7 s per run on cpu_small (depth 3, i7-9700K).\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args(argv)
    HERE.mkdir(parents=True, exist_ok=True)
    if not args.skip_accuracy:
        store = HERE / "srt_core.db"
        run_benchmark(DATASETS, [2, 3], ["srt-l2", "srt"], folds=4, seeds=2, store=store, jobs=args.jobs,
                      data_home=args.data_home)
        print(write_report(store, HERE / "srt_core").markdown)
    table = speed_table(args.data_home)
    (HERE / "srt_speed.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
