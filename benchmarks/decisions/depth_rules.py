"""Where depth-5 time goes: the paper's subtree working sets against one split per inner iteration.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/depth_rules.py
        [--datasets a,b] [--depth 5]

First training fold of the paper's split (seed 0).  The default fit (``working_sets="subtree"``:
node t's BN step optimizes every split of its subtree, so the subproblems of the upper levels
hold most of the tree's variables) against the rule "one split": node t's BN step optimizes
omega_t alone and its LN step the leaves below t (``working_sets`` as a callable); seconds per
macro iteration, test R^2, and RF(100)'s time in the same run.  Writes
``benchmarks/results/depth_rules.md``.  ``--smoke``: one tiny dataset, depth 2.
"""

from __future__ import annotations

import argparse
import statistics

from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits

from benchmarks.common import parse, results, timed, write_report
from benchmarks.common.protocol import first_fold
from srtopt import SoftRegressionTree
from srtopt.datasets import DATASETS

PAPER = list(DATASETS)  # the paper's 15
SMOKE = ["--datasets", "yacht", "--depth", "2"]  # the arguments of --smoke


def one_split(tree):
    """W_B = {t}, W_L = the leaves below t, for t = 1..2^D - 1."""
    for t in tree.branch_nodes:
        yield t, (t,), tree.descendants_leaves(t)


def row(name, depth):
    X_train, X_test, y_train, y_test = first_fold(name)
    forest_s, _ = timed(RandomForestRegressor(100, random_state=0), X_train, y_train)
    fits = {rule: timed(SoftRegressionTree(depth=depth, random_state=0, working_sets=ws), X_train, y_train)
            for rule, ws in (("subtree", "subtree"), ("one split", one_split))}
    per_macro = {rule: s / max(model.n_iter_, 1) for rule, (s, model) in fits.items()}
    r2 = {rule: model.score(X_test, y_test) for rule, (_, model) in fits.items()}
    cells = [name, str(len(y_train)), f"{forest_s:.2f}", *(f"{fits[r][0]:.2f}" for r in fits),
             *(f"{per_macro[r]:.3f}" for r in fits), *(f"{r2[r]:.3f}" for r in fits)]
    return "| " + " | ".join(cells) + " |", fits["one split"][0] / fits["subtree"][0], r2["one split"] - r2["subtree"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(PAPER))
    parser.add_argument("--depth", type=int, default=5)
    args = parse(parser, argv, SMOKE)
    lines = [f"# Depth {args.depth}: subtree working sets against one split per inner iteration", "",
             f"Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/depth_rules.py --depth {args.depth}` "
             "(first fold of the paper's split, one run each, one BLAS thread).", "",
             "| dataset | N train | RF(100) s | subtree s | one split s | subtree s / macro | one split s / macro | "
             "subtree R^2 | one split R^2 |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ratios, diffs = [], []
    with threadpool_limits(1):
        for name in args.datasets.split(","):
            line, ratio, diff = row(name, args.depth)
            lines.append(line)
            ratios.append(ratio)
            diffs.append(diff)
            print(line, flush=True)
    lines += ["", f"One split against subtree: fit time {statistics.geometric_mean(ratios):.2f}x (geometric mean; "
              f"{min(ratios):.2f}x to {max(ratios):.2f}x), test R^2 {statistics.fmean(diffs):+.4f} (mean; "
              f"{min(diffs):+.3f} to {max(diffs):+.3f})."]
    write_report(results() / ("depth_rules.md" if args.depth == 5 else f"depth_rules_depth{args.depth}.md"), lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
