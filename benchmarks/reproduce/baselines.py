"""Baselines beside SRT l2: ORRT, the MILO tree (60 s limit), CART and RF.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/reproduce/baselines.py --jobs 2

yacht, housing, auto_mpg, airfoil at depths 2 and 3 under the paper's protocol,
4 folds; 2 initialization seeds for the seeded methods and one for the MILO tree
(its CART warm start and HiGHS are deterministic, so seeds only repeat it).
Report (with the paper's values) in benchmarks/results/baselines/.  The MILO's
MIP gaps at the time limit are measured by benchmarks/milo_gap.py.  ``--smoke``: a tiny stand-in of yacht, depth
2, 2 folds, one seed, the MILO tree's limit 1 s.
"""

from __future__ import annotations

import argparse

from benchmarks.common import parse, pick, results
from benchmarks.common.data import bench_datasets
from srtopt.experiments import run_benchmark, write_report

DATASETS = ["yacht", "housing", "auto_mpg", "airfoil"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=60.0, help="MILO time limit in seconds")
    parser.add_argument("--data-home", default=None)
    args = parse(parser, argv, ["--jobs", "1", "--time-limit", "1"])
    store = results() / "baselines.db"
    datasets, depths = bench_datasets(pick(DATASETS, DATASETS[:1])), pick([2, 3], [2])
    common = dict(folds=pick(4, 2), store=store, jobs=args.jobs, data_home=args.data_home)
    run_benchmark(datasets, depths, ["srt-l2", "orrt", "cart", "rf"], seeds=pick(2, 1), **common)
    run_benchmark(datasets, depths, ["milo"], seeds=1, params={"milo": {"time_limit": args.time_limit}}, **common)
    print(write_report(store, results() / "baselines").markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
