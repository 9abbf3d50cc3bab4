"""Re-opening dead leaves: three readings of "a leaf that HBP empties is re-seeded", on accuracy.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/reseed.py
        [--datasets a,b] [--seeds 0,1] [--depth 3]

The default ``SoftRegressionTree(depth=3, random_state=0)`` on the paper's 4 folds of each split
seed.  From the iterate training returns (before the closing of empty subtrees), at every branch
node q that HBP routes rows through and that sends all of them to one child (top down, the
routing recomputed after each change):

* ``reopen``: q gets the model-tree split of its rows (the split of the default start, at least
  2 (p + 1) rows a side), the leaves below q the regressions on their new rows, and NODEC-DR runs
  3 more macro iterations from there (up to 3 rounds while a leaf is dead);
* ``regrow``: the same split and leaf regressions (ridge 1e-3 per row), no further training;
* ``regrow-cv``: as ``regrow``, only where 3-fold cross-validation on q's rows says the split
  (chosen on each training part) and its two regressions predict the held-out rows better than
  one regression does; the other dead subtrees stay pruned.

For each: fits that keep a dead leaf, and the mean test R^2 against the default's (the default
prunes what is dead: its test R^2 is the unpruned tree's).  Writes ``benchmarks/results/reseed.md``.  ``--smoke``:
one tiny dataset, split seed 0, fold 0.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from sklearn.base import clone
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold

from benchmarks.common import parse, results, write_report
from benchmarks.common.data import load
from benchmarks.common.protocol import outer_folds, paper_fold
from srtopt import SoftRegressionTree, kernels
from srtopt.datasets import DATASETS
from srtopt.solvers.least_squares import weighted_ridge
from srtopt.training.callbacks import Callback
from srtopt.training.initialization import MODEL_TREE_RIDGE, linear_split, soft_split
from srtopt.training.nodec import TrainingState

PAPER = list(DATASETS)  # the paper's 15
READINGS = ("reopen", "regrow", "regrow-cv")
BINS, CV_FOLDS, REOPEN_ITER, REOPEN_ROUNDS = 16, 3, 3, 3


class Capture(Callback):
    """Keeps the training problem and the iterate NODEC-DR returns."""

    def on_fit_begin(self, problem, estimator):
        self.problem = problem

    def on_run_end(self, state, result):
        self.result = result


def dead_leaves(problem, omega) -> int:
    counts = kernels.node_counts(problem.hbp_leaves(omega), problem.tree)
    return int((counts[problem.tree.n_branch:] == 0).sum())


def ridge(problem, rows):
    w = problem.s[rows] * len(problem.s)
    return weighted_ridge(problem.Xa[rows], problem.y[rows], w, MODEL_TREE_RIDGE * len(rows))


def split_of(problem, rows):
    """(j, c) of the model-tree split of ``rows``, at least 2 (p + 1) rows a side, or None."""
    min_rows = 2 * (problem.n_features + 1)
    if len(rows) < 2 * min_rows:
        return None
    w = problem.s[rows] * len(problem.s)
    return linear_split(problem.X[rows], problem.Xa[rows], problem.y[rows], w, BINS, min_rows,
                        MODEL_TREE_RIDGE * len(rows))


def split_generalizes(problem, rows) -> bool:
    """3-fold CV on ``rows``: a split chosen on each training part and its two regressions
    against one regression, on the held-out rows' squared error."""
    sse_split = sse_one = 0.0
    for train, test in KFold(CV_FOLDS, shuffle=True, random_state=0).split(rows):
        train, test = rows[train], rows[test]
        split = split_of(problem, train)
        if split is None:
            return False
        j, c = split
        one = problem.Xa[test] @ ridge(problem, train) - problem.y[test]
        sse_one += float(one @ one)
        for side in (problem.X[:, j] <= c, problem.X[:, j] > c):
            fit, held = train[side[train]], test[side[test]]
            if len(held):
                r = problem.Xa[held] @ ridge(problem, fit) - problem.y[held]
                sse_split += float(r @ r)
    return sse_split < sse_one


def regrow(problem, omega, beta, gate):
    """(omega, beta, re-seeded nodes): every dead side re-seeded top down, where ``gate(rows)``."""
    tree, p = problem.tree, problem.n_features
    omega, beta, seeded = omega.copy(), beta.copy(), []
    for q in tree.branch_nodes:
        leaves = problem.hbp_leaves(omega)
        rows = np.flatnonzero(kernels.hbp_contains(leaves, tree, q))
        left = kernels.hbp_contains(leaves[rows], tree, 2 * q)
        if len(rows) == 0 or 0 < left.sum() < len(rows):
            continue
        split = split_of(problem, rows)
        if split is None or not gate(rows):
            continue
        j, c = split
        omega[q - 1] = soft_split(j, c, p, problem.mu)
        seeded.append(q)
    leaves = problem.hbp_leaves(omega)
    for leaf in {leaf for q in seeded for leaf in tree.descendants_leaves(q)}:
        rows = np.flatnonzero(leaves == leaf)
        if len(rows):
            beta[tree.leaf_index(leaf)] = ridge(problem, rows)
    return omega, beta, seeded


def reopen(model, problem, omega, beta):
    """``regrow`` without a gate, then NODEC-DR for REOPEN_ITER macro iterations, up to REOPEN_ROUNDS times."""
    for _ in range(REOPEN_ROUNDS):
        if dead_leaves(problem, omega) == 0:
            break
        omega, beta, seeded = regrow(problem, omega, beta, lambda rows: True)
        if not seeded:
            break
        continued = clone(model).set_params(max_iter=REOPEN_ITER, callbacks=None)
        algorithm = continued._algorithm(problem, continued._solvers(problem), None, (), 0)
        result = algorithm.run(problem, state=TrainingState.start_at(problem, omega, beta))
        omega, beta = result.omega, result.beta
    return omega, beta


def one_fit(X, y, k, seed, depth):
    """{reading: (dead leaves, test R^2, seconds after training)} on fold k of split ``seed``."""
    X_train, X_test, y_train, y_test = paper_fold(X, y, k, seed)
    capture = Capture()
    model = SoftRegressionTree(depth=depth, random_state=0, callbacks=[capture]).fit(X_train, y_train)
    problem, result = capture.problem, capture.result

    def scored(omega, beta, started):
        pred = model.scaler_.inverse_y(kernels.hbp_predict(model.scaler_.transform(X_test), omega, beta,
                                                           problem.tree))
        return (dead_leaves(problem, omega), r2_score(y_test, np.clip(pred, *model.y_range_)),
                time.perf_counter() - started)

    out = {"default": scored(result.omega, result.beta, time.perf_counter())}
    started = time.perf_counter()
    out["reopen"] = scored(*reopen(model, problem, result.omega, result.beta), started)
    started = time.perf_counter()
    out["regrow"] = scored(*regrow(problem, result.omega, result.beta, lambda rows: True)[:2], started)
    started = time.perf_counter()
    out["regrow-cv"] = scored(*regrow(problem, result.omega, result.beta,
                                      lambda rows: split_generalizes(problem, rows))[:2], started)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(PAPER))
    parser.add_argument("--seeds", default="0,1", help="split seeds of the paper's 4 folds")
    parser.add_argument("--depth", type=int, default=3)
    args = parse(parser, argv, ["--datasets", "yacht", "--seeds", "0"])
    seeds = [int(s) for s in args.seeds.split(",")]
    head = " | ".join(f"{r}: dead fits | {r}: R^2 - default" for r in READINGS)
    lines = ["# Re-opening dead leaves: three readings, on accuracy", "",
             f"Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/reseed.py --depth {args.depth} "
             f"--seeds {args.seeds} --datasets {args.datasets}` (SoftRegressionTree(depth={args.depth}, "
             f"random_state=0), the paper's 4 folds of each split seed; mean test R^2 over the fits).", "",
             f"| dataset | fits | default: dead fits | default R^2 | {head} |",
             "|---|---:|---:|---:|" + "---:|---:|" * len(READINGS)]
    every = []
    for dataset in args.datasets.split(","):
        X, y, _ = load(dataset)
        runs = [one_fit(X, y, k, seed, args.depth) for seed in seeds for k in outer_folds()]
        every += runs
        lines.append(f"| {dataset} | {len(runs)} | " + _cells(runs) + " |")
        print(lines[-1], flush=True)
    lines += ["", f"| all | {len(every)} | " + _cells(every) + " |", "",
              "Seconds after training, mean per fit: " + ", ".join(
                  f"{r} {statistics.mean(run[r][2] for run in every):.2f}" for r in READINGS) + "."]
    write_report(results() / ("reseed.md" if args.depth == 3 else f"reseed_depth{args.depth}.md"), lines)
    return 0


def _cells(runs) -> str:
    base = statistics.mean(run["default"][1] for run in runs)
    cells = [str(sum(run["default"][0] > 0 for run in runs)), f"{base:.4f}"]
    for reading in READINGS:
        cells += [str(sum(run[reading][0] > 0 for run in runs)),
                  f"{statistics.mean(run[reading][1] for run in runs) - base:+.4f}"]
    return " | ".join(cells)


if __name__ == "__main__":
    raise SystemExit(main())
