"""The paper's full configuration (section 5): all 15 datasets, depths 2 and 3,
SRT, SRT l2, ORRT, the MILO tree (ORT-L), CART and random forests, 4-fold CV
with 20 initialization seeds per fold (80 runs per dataset, method and depth).

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/reproduce/run_paper.py --jobs 2

This takes days on one machine (the MILO tree alone took hours per dataset in
the paper); it resumes where it stopped when started again.  Runs are stored
in benchmarks/results/paper.db (not committed), the report goes to
benchmarks/results/paper/ and the table is printed.  Use --backend dask with
a dask.distributed cluster (pip install 'srtopt[distributed]') to spread it.  ``--smoke``: a tiny stand-in of
yacht, depth 2, 2 folds, one seed, the MILO tree's limit 1 s.
"""

from __future__ import annotations

import argparse

from benchmarks.common import parse, pick, results
from benchmarks.common.data import bench_datasets
from srtopt.datasets import DATASETS
from srtopt.experiments import run_benchmark, write_report

CONFIG = dict(datasets=list(DATASETS), depths=[2, 3],
              methods=["srt", "srt-l2", "orrt", "milo", "cart", "rf"], folds=4, seeds=20)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="parallel worker processes")
    parser.add_argument("--backend", default="loky", help="joblib backend (loky, dask, ray)")
    parser.add_argument("--methods", nargs="+", default=CONFIG["methods"], help="subset of the methods")
    parser.add_argument("--datasets", nargs="+", default=CONFIG["datasets"], help="subset of the datasets")
    parser.add_argument("--store", default=None, help="SQLite results file (default: benchmarks/results/paper.db)")
    parser.add_argument("--out", default=None, help="report directory (default: benchmarks/results/paper)")
    parser.add_argument("--data-home", default=None, help="dataset directory (default: $SRTOPT_DATA or the cache)")
    parser.add_argument("--retry-failed", action="store_true", help="run again the runs stored as failed")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parse(parser, argv, ["--jobs", "1", "--datasets", "yacht"])
    store, out = args.store or results() / "paper.db", args.out or results() / "paper"
    config = dict(CONFIG, methods=args.methods, datasets=bench_datasets(args.datasets),
                  **pick({}, {"depths": [2], "folds": 2, "seeds": 1}))
    run_benchmark(**config, store=store, jobs=args.jobs, backend=args.backend, data_home=args.data_home,
                  quiet=args.quiet, retry_failed=args.retry_failed, params=pick(None, {"milo": {"time_limit": 1}}))
    print(write_report(store, out).markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
