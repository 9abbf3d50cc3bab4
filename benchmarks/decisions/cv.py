"""The split-weight grid of SoftRegressionTreeCV, chosen on some datasets and confirmed on others.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/cv.py --stage tune --jobs 2
    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/cv.py --stage confirm --jobs 2

For every outer fold (4-fold CV, KFold shuffle seed 0, as ``benchmarks/decisions/defaults.py``) and
every factor of ``FACTORS`` on the depth-3 default tree's lambda_w (``"l2:split=FACTOR"``):
the mean R^2 of an inner 5-fold CV on the outer training fold (what SoftRegressionTreeCV
ranks the factors by) and the outer test R^2 of the tree refit on the whole training fold.
A grid's choice on a fold is then the factor with the best inner score among the grid's
factors (GridSearchCV's rule, the first on ties), and its test R^2 the one recorded for that
factor: every grid of ``GRIDS`` is scored from the same runs.  Baselines: RF(100), linear
regression.  Datasets as in ``benchmarks/decisions/defaults.py``: ``tune`` = 8 of the paper's and 8
held-out ones (heldout.TUNING; the grid is chosen there), ``confirm`` = the paper's other 7
and 10 more held-out ones, looked at once the grid was fixed.

Runs go to ``benchmarks/results/cv.jsonl`` (not committed; resumable); the tables to
``benchmarks/results/cv_<stage>.md``.  ``--smoke``: both stages on their first datasets (tiny), outer fold 0, the chosen grid's
factors, 2 inner folds, at max_iter 2.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import add_smoke, budget, pick, require, results, start
from benchmarks.common.protocol import baseline, outer_folds, regression_data, regression_groups
from benchmarks.common.store import run_into_store, stored

STORE = "cv.jsonl"  # in benchmarks/results/
DEPTH, INNER = 3, 5
FACTORS = (0.1, 0.3, 1.0, 3.0, 10.0, 100.0, 1e4)
GRIDS = {"default (1)": (1.0,), "1, 10": (1.0, 10.0), "1, 3, 10": (1.0, 3.0, 10.0), "0.3, 1, 10": (0.3, 1.0, 10.0),
         "1, 10, 100": (1.0, 10.0, 100.0), "1, 10, 1e4": (1.0, 10.0, 1e4),
         "0.3, 1, 10, 1e4": (0.3, 1.0, 10.0, 1e4), "0.1, 1, 10, 1e4": (0.1, 1.0, 10.0, 1e4),
         "1, 3, 10, 100, 1e4": (1.0, 3.0, 10.0, 100.0, 1e4), "all": FACTORS}
BASELINES = ("RF(100)", "linear regression")
CHOSEN = "0.3, 1, 10"  # the grid chosen on the tune stage (SoftRegressionTreeCV's default)


def fold_data(dataset, fold):
    from srtopt.experiments.protocol import fold_indices

    X, y = regression_data(dataset)
    train, test = fold_indices(len(y), 4, 0, fold)
    return X[train], y[train], X[test], y[test]


def run(dataset, fold, factor):
    """One factor on one outer fold: inner CV scores and the outer test R^2 (or a baseline's)."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold
    from threadpoolctl import threadpool_limits

    from srtopt import SoftRegressionTree

    X, y, X_test, y_test = fold_data(dataset, fold)
    if factor in BASELINES:
        model, inner = baseline(factor, DEPTH, 0), []
    else:
        model = SoftRegressionTree(depth=DEPTH, random_state=0, regularization=f"l2:split={factor}",
                                   **budget())
    with threadpool_limits(1):
        start = time.perf_counter()
        if factor not in BASELINES:
            inner = [clone(model).fit(X[a], y[a]).score(X[b], y[b])
                     for a, b in KFold(pick(INNER, 2), shuffle=True, random_state=0).split(X)]
        inner_seconds = time.perf_counter() - start
        r2 = model.fit(X, y).score(X_test, y_test)
        seconds = time.perf_counter() - start - inner_seconds
    return dict(dataset=dataset, fold=fold, factor=factor, inner=inner, r2=r2, seconds=seconds,
                inner_seconds=inner_seconds)


def chosen(rows, grid):
    """{(dataset, fold): the row of the grid's factor with the best inner mean (first on ties)}."""
    out = {}
    for r in sorted((r for r in rows if r["factor"] in grid), key=lambda r: grid.index(r["factor"])):
        key = (r["dataset"], r["fold"])
        if key not in out or np.mean(r["inner"]) > np.mean(out[key]["inner"]):
            out[key] = r
    return out


def cost(rows, dataset, fold, grid, pick) -> float:
    """Seconds SoftRegressionTreeCV spends on a fold: the inner fits of every factor of the grid
    and the refit of the chosen one (the default tree alone: its fit)."""
    inner = [r["inner_seconds"] for r in rows if r["dataset"] == dataset and r["fold"] == fold
             and r["factor"] in grid] if len(grid) > 1 else []
    return sum(inner) + pick["seconds"]


def report(stage) -> str:
    datasets = regression_groups()[stage]
    rows = [r for r in stored(results() / STORE) if r["dataset"] in datasets]
    cells = {}
    for name, grid in GRIDS.items():
        for (d, fold), r in chosen(rows, grid).items():
            cells.setdefault((d, name), []).append((r, cost(rows, d, fold, grid, r)))
    for r in rows:
        if r["factor"] in BASELINES:
            cells.setdefault((r["dataset"], r["factor"]), []).append((r, r["seconds"]))
    columns = [*GRIDS, *BASELINES]
    head = ("| dataset | " + " | ".join(columns) + f" | chosen by \"{CHOSEN}\" |\n|---|"
            + "---:|" * len(columns) + "---|")
    lines, means, seconds = [head], {c: [] for c in columns}, {c: [] for c in columns}
    for d in datasets:
        values = []
        for c in columns:
            runs = cells.get((d, c), [])
            values.append(np.mean([r["r2"] for r, _ in runs]) if len(runs) == len(outer_folds()) else np.nan)
            means[c].append(values[-1])
            if len(runs) == len(outer_folds()):
                seconds[c].append(np.mean([t for _, t in runs]))
        picks = [f"{r['factor']:g}" for r, _ in sorted(cells.get((d, CHOSEN), []), key=lambda x: x[0]["fold"])]
        lines.append(f"| {d} | " + " | ".join(f"{v:.3f}" for v in values) + f" | {' '.join(picks)} |")
    lines.append("| **mean** | " + " | ".join(f"**{np.nanmean(means[c]):.3f}**" for c in columns) + " | |")
    lines.append("| fit s (geometric mean) | " + " | ".join(
        f"{np.exp(np.mean(np.log(seconds[c]))):.3f}" if seconds[c] else "" for c in columns) + " | |")
    return (f"Command: `PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/cv.py --stage {stage} "
            f"--jobs 2`\n\nDepth {DEPTH}; 4 outer folds (seed 0) per dataset; mean outer test R^2 of the factor "
            f"chosen by inner {INNER}-fold CV among each grid's factors (\"default (1)\" is the default tree, no "
            "search); fit seconds per outer fold: the inner fits of the grid's factors and the refit.\n\n"
            + "\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=("tune", "confirm"))
    parser.add_argument("--datasets", nargs="+", default=None, help="a subset of the stage's datasets")
    parser.add_argument("--jobs", type=int, default=2)
    add_smoke(parser)
    args = parser.parse_args(argv)
    require(parser, args, "--stage")
    start(args)
    for stage in pick([args.stage], ["tune", "confirm"]):
        datasets = args.datasets or regression_groups()[stage]
        factors = pick(FACTORS, GRIDS[CHOSEN])
        tasks = [(d, f, c) for d in datasets for c in (*factors, *BASELINES) for f in outer_folds()]
        run_into_store(results() / STORE, run, tasks, lambda r: (r["dataset"], r["fold"], r["factor"]), args.jobs,
                       lambda row: f"{row['dataset']} fold {row['fold']} {row['factor']}: R^2 {row['r2']:.3f}")
        text = report(stage)
        (results() / f"cv_{stage}.md").write_text(text)
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
