"""Whether ``SoftClassificationTreeCV`` should try one depth more when its deepest depth scores best: measured on
the outer folds of ``benchmarks/decisions/classification_leaves.py``.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=/path/to/datasets_classification \\
        python benchmarks/decisions/classification_deeper.py --stage tune      # then --stage confirm

On every stored outer fold of ``classification_leaves.jsonl`` (run that benchmark's stage first), the candidate
the search chooses (its rule "+ spline at every depth", the default) is taken; where its depth is the deepest
compared (4), the same candidate one level deeper (depth 5, the same leaf factor and leaves) is scored on the same
inner folds (``StratifiedKFold(3, shuffle, seed 0)``, held-out log loss) and, where it scores better, refit on
the outer training rows and tested.  Rows go to ``benchmarks/results/classification_deeper.jsonl`` (not
committed; resumable), the table to ``benchmarks/results/classification_deeper_{stage}.md``: the test accuracy
and log loss of the search with and without the deeper candidate, per dataset and on average.  ``--smoke``: both
stages on their first datasets (tiny), outer fold 0, from a made-up row of ``classification_leaves.jsonl`` whose
choice is depth 4 (:func:`smoke_leaves_rows`), the trees at max_iter 2.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from benchmarks.common import add_smoke, budget, pick, require, results, start, write_report
from benchmarks.common.protocol import (LEAVES_STORE, class_fold, class_groups, leaves_outcome, outer_folds,
                                        test_scores)
from benchmarks.common.store import run_into_store, stored

STORE = "classification_deeper.jsonl"  # in benchmarks/results/
RULE = "+ spline at every depth"
DEEPEST = 4


def chosen(row) -> dict:
    """(depth, leaf factor, leaf, inner score, test scores) of the candidate the search chooses on ``row``."""
    best = leaves_outcome(row, RULE)
    if best is row["logistic"]:
        return {**best, "leaf": "logistic"}
    depth = next(int(d) for d, s in row["spline"].items() if s is best)
    return {**best, "depth": depth, "leaf": "spline"}


def run(dataset, fold) -> dict:
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from threadpoolctl import threadpool_limits

    from srtopt import SoftClassificationTree
    from srtopt.estimators.cv import SCORES

    leaves_row = next(r for r in stored(results() / LEAVES_STORE) if (r["dataset"], r["fold"]) == (dataset, fold))
    base = chosen(leaves_row)
    row = {"dataset": dataset, "fold": fold, "base": base, "deeper": None}
    if base["depth"] != DEEPEST:
        return row
    X_train, X_test, y_train, y_test = class_fold(dataset, fold)
    tree = SoftClassificationTree(depth=DEEPEST + 1, leaf_ridge=base["leaf_ridge"], leaf=base["leaf"], random_state=0,
                                  **budget())
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        inner = StratifiedKFold(3, shuffle=True, random_state=0)
        score = float(np.mean(cross_val_score(tree, X_train, y_train, cv=inner, scoring=SCORES["log_loss"])))
        row["deeper"] = {"inner": score, "seconds": time.perf_counter() - started}
        if score > base["inner"]:
            row["deeper"].update(test_scores(tree.fit(X_train, y_train), X_test, y_test))
    return row


def final(row) -> dict:
    deeper = row["deeper"]
    return deeper if deeper is not None and deeper["inner"] > row["base"]["inner"] else row["base"]


def report(stage, datasets) -> list[str]:
    rows = [r for r in stored(results() / STORE) if r["dataset"] in datasets]
    per = {d: [r for r in rows if r["dataset"] == d] for d in datasets}
    done = [d for d in datasets if len(per[d]) == len(outer_folds())]
    lines = ["# One depth more in SoftClassificationTreeCV when the deepest scores best", "",
             f"Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python "
             f"benchmarks/decisions/classification_deeper.py --stage {stage}` (the outer folds of "
             f"`classification_leaves.py`; {len(done)} of {len(datasets)} datasets complete).", "",
             "Test accuracy / test log loss (means over the 4 folds); how many folds chose depth 4, and how many "
             "took depth 5; the seconds of the depth-5 inner fits.", "",
             "| dataset | the search | + depth 5 | depth 4 chosen | depth 5 taken | depth-5 s |",
             "|---|---:|---:|---:|---:|---:|"]
    for d in done:
        cells = [f"{np.mean([f(r)['accuracy'] for r in per[d]]):.3f} / {np.mean([f(r)['log_loss'] for r in per[d]]):.3f}"
                 for f in (lambda r: r["base"], final)]
        fours = sum(r["deeper"] is not None for r in per[d])
        taken = sum(final(r) is not r["base"] for r in per[d])
        seconds = np.mean([r["deeper"]["seconds"] for r in per[d] if r["deeper"] is not None] or [0.0])
        lines.append(f"| {d} | " + " | ".join(cells) + f" | {fours} | {taken} | {seconds:.1f} |")
    if done:
        means = [f"**{np.mean([np.mean([f(r)['accuracy'] for r in per[d]]) for d in done]):.4f} / "
                 f"{np.mean([np.mean([f(r)['log_loss'] for r in per[d]]) for d in done]):.3f}**"
                 for f in (lambda r: r["base"], final)]
        lines.append("| mean | " + " | ".join(means) + " | | | |")
    return lines


def smoke_leaves_rows(datasets) -> None:
    """Smoke mode: a made-up row of ``classification_leaves.jsonl`` per outer fold of ``datasets`` (the benchmark's
    input), whose search chooses spline leaves at depth 4, so that the deeper candidate runs."""
    def scores(inner):
        return {"inner": inner, "accuracy": 0.5, "log_loss": 0.7}

    with open(results() / LEAVES_STORE, "a") as out:
        for dataset in datasets:
            for fold in outer_folds():
                out.write(json.dumps({"dataset": dataset, "fold": fold, "RF(100)": scores(None),
                                      "logistic": {"depth": 2, "leaf_ridge": 1.0, **scores(-0.8)},
                                      "spline": {"2": {"leaf_ridge": 1.0, **scores(-0.9)},
                                                 str(DEEPEST): {"leaf_ridge": 10.0, **scores(-0.6)}}}) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("tune", "confirm"))
    add_smoke(parser)
    args = parser.parse_args(argv)
    require(parser, args, "--stage")
    start(args)
    for stage in pick([args.stage], ["tune", "confirm"]):
        datasets = class_groups()[stage]
        if args.smoke:
            smoke_leaves_rows(datasets)
        run_into_store(results() / STORE, run, [(d, fold) for d in datasets for fold in outer_folds()],
                       lambda row: (row["dataset"], row["fold"]), 1,
                       describe=lambda r: f"{r['dataset']} fold {r['fold']}: {json.dumps(r['deeper'])}")
        write_report(results() / f"classification_deeper_{stage}.md", report(stage, datasets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
