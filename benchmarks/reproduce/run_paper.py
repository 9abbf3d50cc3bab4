"""The paper's full configuration (section 5): all 15 datasets, depths 2 and 3,
SRT, SRT l2, ORRT, the MILO tree (ORT-L), CART and random forests, 4-fold CV
with 20 initialization seeds per fold (80 runs per dataset, method and depth).

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/reproduce/run_paper.py --jobs 2

This takes days on one machine (the MILO tree alone took hours per dataset in
the paper); it resumes where it stopped when started again.  Runs are stored
in benchmarks/results/paper.db (not committed), the report goes to
benchmarks/results/paper/ and the table is printed.  Use --backend dask with
a dask.distributed cluster (pip install 'srtopt[distributed]') to spread it.
"""

from __future__ import annotations

import argparse

from benchmarks.common import BENCHMARKS
from srtopt.datasets import DATASETS
from srtopt.experiments import run_benchmark, write_report

HERE = BENCHMARKS
CONFIG = dict(datasets=list(DATASETS), depths=[2, 3],
              methods=["srt", "srt-l2", "orrt", "milo", "cart", "rf"], folds=4, seeds=20)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="parallel worker processes")
    parser.add_argument("--backend", default="loky", help="joblib backend (loky, dask, ray)")
    parser.add_argument("--methods", nargs="+", default=CONFIG["methods"], help="subset of the methods")
    parser.add_argument("--datasets", nargs="+", default=CONFIG["datasets"], help="subset of the datasets")
    parser.add_argument("--store", default=str(HERE / "results" / "paper.db"), help="SQLite results file")
    parser.add_argument("--out", default=str(HERE / "results" / "paper"), help="report directory")
    parser.add_argument("--data-home", default=None, help="dataset directory (default: $SRTOPT_DATA or the cache)")
    parser.add_argument("--retry-failed", action="store_true", help="run again the runs stored as failed")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    config = dict(CONFIG, methods=args.methods, datasets=args.datasets)
    run_benchmark(**config, store=args.store, jobs=args.jobs, backend=args.backend,
                  data_home=args.data_home, quiet=args.quiet, retry_failed=args.retry_failed)
    print(write_report(args.store, args.out).markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
