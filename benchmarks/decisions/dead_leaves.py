"""Leaves that no training row reaches, and what pruning them does to the test R^2.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/dead_leaves.py
        [--datasets a,b] [--depth 3] [--min-leaf 0.05]

The default ``SoftRegressionTree(depth=3, random_state=0)`` on each of the paper's 15 datasets
and its 4 folds (seed 0 of the paper's split; the model-tree start is deterministic, so
another ``random_state`` gives the same fit).  For each fit: the leaves that HBP routes no
training row to (the tree closes the split above such a subtree, which prunes it), and the
test R^2 of the pruned tree against the same fit left unpruned (the same training run with
:func:`srtopt.kernels.close_unreached` replaced by the identity).  Writes
``benchmarks/results/dead_leaves.md`` (``dead_leaves_depthD.md`` for another depth).  ``--smoke``: one tiny
dataset, depth 2.
"""

from __future__ import annotations

import argparse
import statistics
from unittest import mock

from sklearn.metrics import r2_score

from benchmarks.common import parse, results, write_report
from benchmarks.common.data import load
from benchmarks.common.protocol import outer_folds, paper_fold
from srtopt import SoftRegressionTree
from srtopt.datasets import DATASETS
from srtopt.training.initialization import MIN_LEAF, ModelTreeInitialization

PAPER = list(DATASETS)  # the paper's 15
SMOKE = ["--datasets", "yacht", "--depth", "2"]  # the arguments of --smoke


def one_fold(X, y, k, depth, min_leaf):
    """(dead leaves, test R^2 pruned, test R^2 unpruned) on fold k."""
    X_train, X_test, y_train, y_test = paper_fold(X, y, k)
    init = ModelTreeInitialization(min_leaf=min_leaf)
    pruned = SoftRegressionTree(depth=depth, random_state=0, init=init).fit(X_train, y_train)
    with mock.patch("srtopt.kernels.close_unreached", lambda omega, *args: omega):
        unpruned = SoftRegressionTree(depth=depth, random_state=0, init=init).fit(X_train, y_train)
    dead = 2**depth - pruned.get_n_leaves()
    assert dead == int((pruned.node_counts_[2**depth - 1:] == 0).sum())  # pruned = unreached by training rows
    return dead, r2_score(y_test, pruned.predict(X_test)), r2_score(y_test, unpruned.predict(X_test))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(PAPER))
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--min-leaf", type=float, default=MIN_LEAF,
                        help="the model-tree start's least share of the rows on each side of a split")
    args = parse(parser, argv, SMOKE)
    lines = ["# Dead leaves: leaves that no training row reaches", "",
             f"Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/dead_leaves.py --depth {args.depth} "
             f"--min-leaf {args.min_leaf} --datasets {args.datasets}` "
             f"(SoftRegressionTree, depth {args.depth}, random_state=0, the model-tree start's min_leaf "
             f"{args.min_leaf} (default {MIN_LEAF}), the paper's 4 folds of seed 0).", "",
             "| dataset | fits with a dead leaf | dead leaves per fit | test R^2 pruned | unpruned | difference |",
             "|---|---:|---:|---:|---:|---:|"]
    totals = {"fits": 0, "with": 0, "dead": 0, "diff": []}
    for dataset in args.datasets.split(","):
        X, y, _ = load(dataset)
        runs = [one_fold(X, y, k, args.depth, args.min_leaf) for k in outer_folds()]
        dead = [r[0] for r in runs]
        pruned, unpruned = statistics.mean(r[1] for r in runs), statistics.mean(r[2] for r in runs)
        lines.append(f"| {dataset} | {sum(d > 0 for d in dead)} of {len(runs)} | {statistics.mean(dead):.2f} of "
                     f"{2**args.depth} | {pruned:.4f} | {unpruned:.4f} | {pruned - unpruned:+.5f} |")
        print(lines[-1], flush=True)
        totals["fits"] += len(runs)
        totals["with"] += sum(d > 0 for d in dead)
        totals["dead"] += sum(dead)
        totals["diff"] += [r[1] - r[2] for r in runs]
    lines += ["", f"{totals['with']} of {totals['fits']} fits leave at least one leaf that no training row "
              f"reaches; {totals['dead'] / totals['fits']:.2f} of {2**args.depth} leaves per fit on average. "
              f"Pruning changes the test R^2 by {min(totals['diff']):+.2g} to {max(totals['diff']):+.2g} "
              "(a test row reaches a pruned subtree only if it lies beyond every training row there)."]
    name = "dead_leaves" + ("" if args.depth == 3 else f"_depth{args.depth}") + \
        ("" if args.min_leaf == MIN_LEAF else f"_min_leaf{args.min_leaf:g}")
    write_report(results() / f"{name}.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
