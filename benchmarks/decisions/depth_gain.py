"""Depth 5 against depth 3 on the quick protocol: the per-dataset table.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/reproduce/run_quick.py --jobs 1 --depths 3,5 \\
        --methods srt-l2 --store benchmarks/results/quick_depth5.db --out benchmarks/results/quick_depth5
    python benchmarks/decisions/depth_gain.py [benchmarks/results/quick_depth5/summary.csv]

Reads the summary of a quick run at depths 3 and 5 (the paper's 4 folds of one split x 2 model
seeds, the default ``SoftRegressionTree``, whose start is deterministic: 4 distinct fits) and writes ``benchmarks/results/depth_gain.md``: mean test R^2
and seconds at each depth, the difference, and whether depth 5 is within 0.005 of depth 3.  ``--smoke``: the
committed summary (it reads it only), the report to the smoke folder.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from benchmarks.common import RESULTS, parse, results, write_report

TOLERANCE = 0.005


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("summary", nargs="?", help="the summary.csv of the quick run at depths 3 and 5")
    args = parse(parser, argv)
    summary = Path(args.summary) if args.summary else RESULTS / "quick_depth5" / "summary.csv"
    runs = {}
    with open(summary, newline="") as f:
        for row in csv.DictReader(f):
            if row["method"] == "srt-l2":
                runs.setdefault(row["dataset"], {})[int(row["depth"])] = row
    lines = ["# Depth 5 against depth 3 (quick protocol)", "",
             f"From `{args.summary or 'benchmarks/results/quick_depth5/summary.csv'}` "
             "(the default SoftRegressionTree, the paper's 4 folds of one split x 2 model seeds, 4 distinct fits as "
             "the start is deterministic; mean test R^2 and training "
             f"seconds). 'ok': depth 5 at least depth 3's R^2 - {TOLERANCE}.", "",
             "| dataset | R^2 depth 3 | R^2 depth 5 | difference | ok | s depth 3 | s depth 5 |",
             "|---|---:|---:|---:|---|---:|---:|"]
    failing = []
    for dataset, depths in sorted(runs.items()):
        if not {3, 5} <= depths.keys():
            continue
        r3, r5 = float(depths[3]["r2_mean"]), float(depths[5]["r2_mean"])
        ok = r5 >= r3 - TOLERANCE
        failing += [] if ok else [dataset]
        lines.append(f"| {dataset} | {r3:.4f} | {r5:.4f} | {r5 - r3:+.4f} | {'yes' if ok else 'no'} | "
                     f"{float(depths[3]['seconds_mean']):.2f} | {float(depths[5]['seconds_mean']):.2f} |")
    lines += ["", f"Depth 5 below depth 3 by more than {TOLERANCE}: {', '.join(failing) or 'none'}."]
    write_report(results() / "depth_gain.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
