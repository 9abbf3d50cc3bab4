"""The leaf-ridge comparison's zone, screen and target: where the default tree compares leaf-ridge
factors by cross-validation (``ZONE``: fewer than ZONE rows per leaf coefficient; ``SCREEN``: and the
initial tree's leave-one-out MSE at least SCREEN times the linear model's) and what the factors pull
the leaves towards (``leaf_center``: 0, the paper's l2 target, or the ridge regression of the whole
training set), on data where a linear model is the better model and on data where it is not.

Stage ``tune`` chooses on generated data and three of the paper's small datasets; stage ``confirm``
runs the choice on held-out data: two paper datasets, scikit-learn's diabetes and communities_crime
(``--fairness-data``).  4 folds (KFold, seed 0), depths 2 and 3, the default tree and least squares
in the same run.  Runs are stored in a JSONL file and resumed.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/leaf_shrinkage.py \\
        --stage tune --fairness-data /path/to/datasets_fairness

``--smoke``: both stages on two datasets each (tiny: generated ones at their size), depth 2, fold 0.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold

from benchmarks.common import parse, pick, results, write_report
from benchmarks.common.data import small_regression
from benchmarks.common.protocol import outer_folds
from srtopt import SoftRegressionTree
from srtopt.estimators import leaf_ridge

VARIANTS = {  # name: (ZONE, SCREEN, leaf_center)
    "previous: N < 2^D (p+1), toward 0": (1.0, 0.8, "zero"),
    "N < 2^D (p+1), toward the linear fit": (1.0, 0.8, "linear"),
    "zone 10, no screen": (10.0, 0.0, "linear"),
    "zone 10, screen 0.8 (default)": (10.0, 0.8, "linear"),
    "zone 10, screen 0.9": (10.0, 0.9, "linear"),
}
STAGES = {"tune": ["noise-140x50", "linear-300x60", "friedman-200x10", "auto_mpg", "housing", "yacht"],
          "confirm": ["lpga2009", "computer", "diabetes", "communities_crime"]}


def stages() -> dict:
    """:data:`STAGES` (two datasets of each in smoke mode)."""
    return pick(STAGES, {"tune": ["noise-140x50", "auto_mpg"], "confirm": ["diabetes", "communities_crime"]})


def run(name, depth, variant, fold, fairness):
    X, y = small_regression(name, fairness)
    train, test = list(KFold(4, shuffle=True, random_state=0).split(X))[fold]
    if variant == "least squares":
        start = time.process_time()
        prediction = LinearRegression().fit(X[train], y[train]).predict(X[test])
        return r2_score(y[test], prediction), time.process_time() - start, None
    zone, screen, center = VARIANTS[variant]
    saved = leaf_ridge.ZONE, leaf_ridge.SCREEN
    leaf_ridge.ZONE, leaf_ridge.SCREEN = zone, screen
    try:
        start = time.process_time()
        model = SoftRegressionTree(depth=depth, random_state=0, leaf_center=center).fit(X[train], y[train])
        seconds = time.process_time() - start
    finally:
        leaf_ridge.ZONE, leaf_ridge.SCREEN = saved
    return r2_score(y[test], model.predict(X[test])), seconds, model.leaf_ridge_


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=sorted(STAGES), default="tune")
    parser.add_argument("--fairness-data", default=os.environ.get("SRTOPT_FAIRNESS_DATA"),
                        help="folder of communities_crime.csv (confirm stage)")
    args = parse(parser, argv)
    for stage in pick([args.stage], sorted(STAGES)):
        run_stage(stage, args.fairness_data)


def run_stage(stage, fairness):
    """Run a stage's missing runs into its store; write its report."""
    store = results() / f"leaf_shrinkage_{stage}.jsonl"
    done = {}
    if store.exists():
        for line in store.read_text().splitlines():
            row = json.loads(line)
            done[row["dataset"], row["depth"], row["variant"], row["fold"]] = row
    variants = ["least squares", *VARIANTS]
    with store.open("a") as out:
        for name in stages()[stage]:
            for depth in pick((2, 3), (2,)):
                for variant in variants:
                    for fold in outer_folds():
                        key = (name, depth, variant, fold)
                        if key in done:
                            continue
                        r2, seconds, factor = run(name, depth, variant, fold, fairness)
                        done[key] = {"dataset": name, "depth": depth, "variant": variant, "fold": fold, "r2": r2,
                                     "seconds": seconds, "factor": factor}
                        out.write(json.dumps(done[key]) + "\n")
                        out.flush()
                        print(key, round(r2, 4), round(seconds, 2), factor, flush=True)
    lines = [f"# Leaf shrinkage: zone and target ({stage} stage)", "",
             "Mean test R^2 over 4 folds (KFold, seed 0); in brackets the CPU seconds per fit. Command: "
             f"`python benchmarks/decisions/leaf_shrinkage.py --stage {stage}`.", "",
             "| dataset | depth | " + " | ".join(variants) + " |", "|---|---:|" + "---:|" * len(variants)]
    for name in stages()[stage]:
        for depth in pick((2, 3), (2,)):
            cells = []
            for variant in variants:
                rows = [done[name, depth, variant, f] for f in outer_folds()]
                cells.append(f"{np.mean([r['r2'] for r in rows]):.4f} ({np.mean([r['seconds'] for r in rows]):.2f})")
            lines.append(f"| {name} | {depth} | " + " | ".join(cells) + " |")
    write_report(results() / f"leaf_shrinkage_{stage}.md", lines)


if __name__ == "__main__":
    main()
