"""Quick benchmark: all 15 datasets, depths 2 and 3, srt-l2 / srt / srt-l2-calibrated / cart / rf,
4 folds x 2 seeds (the paper uses 20 seeds: see run_paper.py).

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/reproduce/run_quick.py --jobs 2
        [--depths 3,5 --methods srt-l2 --store ... --out ...]

Runs are stored in benchmarks/results/quick.db (not committed); an
interrupted run resumes where it stopped.  The report (Markdown, LaTeX, PNG)
goes to benchmarks/results/quick/ and the table is printed.  ``--smoke``: a tiny stand-in of yacht, depth 2, 2
folds, one seed.
"""

from __future__ import annotations

import argparse

from benchmarks.common import parse, pick, results
from benchmarks.common.data import bench_datasets
from srtopt.datasets import DATASETS
from srtopt.experiments import run_benchmark, write_report

CONFIG = dict(datasets=list(DATASETS), depths=[2, 3], methods=["srt-l2", "srt", "srt-l2-calibrated", "cart", "rf"],
              folds=4, seeds=2)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="parallel worker processes")
    parser.add_argument("--backend", default="loky", help="joblib backend")
    parser.add_argument("--store", default=None, help="SQLite results file (default: benchmarks/results/quick.db)")
    parser.add_argument("--out", default=None, help="report directory (default: benchmarks/results/quick)")
    parser.add_argument("--data-home", default=None, help="dataset directory (default: $SRTOPT_DATA or the cache)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument("--depths", default=",".join(map(str, CONFIG["depths"])), help="tree depths, comma-separated")
    parser.add_argument("--methods", default=",".join(CONFIG["methods"]), help="methods, comma-separated")
    args = parse(parser, argv, ["--jobs", "1", "--depths", "2"])
    store, out = args.store or results() / "quick.db", args.out or results() / "quick"
    config = dict(CONFIG, depths=[int(d) for d in args.depths.split(",")], methods=args.methods.split(","),
                  datasets=bench_datasets(pick(CONFIG["datasets"], ["yacht"])), **pick({}, {"folds": 2, "seeds": 1}))
    run_benchmark(**config, store=store, jobs=args.jobs, backend=args.backend, data_home=args.data_home,
                  quiet=args.quiet)
    print(write_report(store, out).markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
