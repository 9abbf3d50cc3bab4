"""Speed of the default SoftRegressionTree against a random forest, the time limit, and the
per-solve cost of the BN solvers on small subproblems.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/perf/speed.py

1. Every one of the paper's 15 datasets: a depth-3 fit with the defaults and
   ``RandomForestRegressor(100, n_jobs=1)`` on the first training fold of the paper's
   4-fold split (X min-max scaled, y standardized), interleaved, best of ``--repeats``,
   one BLAS/OpenMP thread; the ratio SRT / RF and the geometric means.
2. ``time_limit`` on friedman (depth 3): the limit against the seconds ``fit`` took,
   initialization included.
3. One BN subproblem per node of a depth-3 training run on yacht and on friedman (nodes 1
   and 4: one node; node 2: its subtree 2, 4, 5), solved from the same start by each BN
   solver ("newton" here without max_blocks, so it takes node 2 too): median seconds of 5 solves.

Prints and writes ``benchmarks/results/speed.md``.  Run it on an otherwise idle machine.  ``--smoke``: one tiny
dataset per table, one round, the limit 0.5 s.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

from benchmarks.common import parse, pick, results, write_report
from benchmarks.common.protocol import first_fold
from srtopt import SoftRegressionTree
from srtopt.datasets import DATASETS
from srtopt.inspect import capture
from srtopt.solvers import available_solvers, make_solver


def fit_seconds(make, X, y) -> tuple[float, object]:
    start = time.perf_counter()
    model = make().fit(X, y)
    return time.perf_counter() - start, model


def datasets_table(data_home, repeats) -> str:
    rows, ratios, srt_all, rf_all = [], [], [], []
    for name in pick(list(DATASETS), ["yacht"]):
        Xtr, Xte, ytr, yte = first_fold(name, data_home)
        best = {"srt": math.inf, "rf": math.inf}
        for _ in range(repeats):
            for key, make in (("srt", lambda: SoftRegressionTree(depth=3, random_state=0)),
                              ("rf", lambda: RandomForestRegressor(100, n_jobs=1, random_state=0))):
                seconds, model = fit_seconds(make, Xtr, ytr)
                best[key] = min(best[key], seconds)
                if key == "srt":
                    r2 = model.score(Xte, yte)
        ratio = best["srt"] / best["rf"]
        ratios.append(ratio)
        srt_all.append(best["srt"])
        rf_all.append(best["rf"])
        rows.append(f"| {name} | {len(ytr)} | {best['srt']:.3f} | {best['rf']:.3f} | {ratio:.2f} | {r2:.3f} |")
        print(rows[-1], flush=True)
    geo = statistics.geometric_mean
    head = ("| dataset | training rows | SRT depth 3 s | RF(100) s | SRT / RF | SRT test R^2 |\n"
            "|---|---:|---:|---:|---:|---:|")
    tail = (f"| **geometric mean** | | **{geo(srt_all):.3f}** | **{geo(rf_all):.3f}** | **{geo(ratios):.2f}** | |\n"
            f"| **arithmetic mean** | | **{statistics.fmean(srt_all):.3f}** | **{statistics.fmean(rf_all):.3f}** | | |")
    return "\n".join([head, *rows, tail])


def time_limit_table(data_home, limits=(0.5, 1.0, 2.0, 5.0)) -> str:
    Xtr, _, ytr, _ = first_fold("friedman", data_home)
    rows = ["| time_limit s | fit s | fit / limit | stopped_by_ |", "|---:|---:|---:|---|"]
    for limit in pick(limits, limits[:1]):
        seconds, model = fit_seconds(lambda: SoftRegressionTree(depth=3, random_state=0, time_limit=limit), Xtr, ytr)
        rows.append(f"| {limit} | {seconds:.2f} | {seconds / limit:.2f} | {model.stopped_by_} |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


def solver_table(data_home) -> str:
    names = [n for n, ok in available_solvers("bn").items()
             if ok and n in ("newton", "l-bfgs-b", "ipopt", "cyipopt", "slsqp")]
    rows = ["| dataset | node | rows | " + " | ".join(f"{n} s" for n in names) + " |",
            "|---|---:|---:|" + "---:|" * len(names)]
    for dataset in pick(("yacht", "friedman"), ("yacht",)):
        Xtr, _, ytr, _ = first_fold(dataset, data_home)
        tree = SoftRegressionTree(depth=3, random_state=0, max_iter=2)
        for node in (1, 2, 4):
            bn = capture(tree, Xtr, ytr, node=node, macro=1).bn()
            if bn is None:
                continue
            cells = []
            for name in names:
                solver = make_solver("bn", name)
                solver.solve(bn.formulation, bn.x0)  # builds and caches what the solver builds once
                times = []
                for _ in range(pick(5, 1)):
                    start = time.perf_counter()
                    solver.solve(bn.formulation, bn.x0)
                    times.append(time.perf_counter() - start)
                cells.append(f"{statistics.median(times):.4f}")
            rows.append(f"| {dataset} | {node} | {bn.n_rows} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--repeats", type=int, default=2)
    args = parse(parser, argv, ["--repeats", "1"])
    with threadpool_limits(1):
        parts = [
            "Command: `PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/perf/speed.py` "
            "(2-core machine, one BLAS/OpenMP thread)\n",
            f"### Depth-3 SRT (defaults) against RandomForestRegressor(100, n_jobs=1), first training fold, "
            f"best of {args.repeats}\n", datasets_table(args.data_home, args.repeats),
            "\n### time_limit on friedman (30,576 training rows, depth 3), initialization included\n",
            time_limit_table(args.data_home),
            "\n### One BN subproblem solved from the same start (median of 5 solves, seconds)\n",
            solver_table(args.data_home)]
    write_report(results() / "speed.md", parts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
