"""Whether ``SoftClassificationTreeCV`` should also compare spline leaves (a logistic GAM per leaf) with the
logistic ones: measured on held-out folds.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=/path/to/datasets_classification \\
        python benchmarks/decisions/classification_leaves.py --stage tune      # then --stage confirm

The classification protocol (4-fold stratified CV, split seed 0, X min-max scaled on the training fold;
``benchmarks/decisions/classification_cv.py``'s ``fold_data``).  On every outer fold the search as it is,
``SoftClassificationTreeCV(random_state=0, leaves=("logistic",))`` (depths 1-4 x leaf factors 1, 10, 100 with logistic leaves, by
the held-out log loss of its inner ``StratifiedKFold(3, shuffle, seed 0)``), then, on the same inner folds and
by the same score, spline leaves (``leaf="spline"``) at each depth with that depth's best leaf factor.  Stored
per outer fold: the search's choice and its test accuracy and log loss, each spline candidate's inner score,
and the test scores of the refits the rules below choose, so that every rule is judged on the same fits:

* ``logistic``: the search as it is;
* ``+ spline at the best``: spline leaves at the search's chosen depth and factor, taken when their inner score
  is better;
* ``+ spline at every depth``: the best inner score among the search's candidates and the spline candidates
  of every depth.

``--stage tune`` runs and reports the 10 tuning datasets of ``benchmarks/decisions/classification.py``;
``--stage confirm`` the other 10, held out while choosing.  Runs go to
``benchmarks/results/classification_leaves.jsonl`` (not committed; a stored run is skipped, so an interrupted
run resumes); the tables to ``benchmarks/results/classification_leaves_{stage}.md``.  ``--smoke``: both stages on
their first datasets (tiny), outer fold 0, the search on depths 1-2 and 2 inner folds, the trees at max_iter 2.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks.common import add_smoke, budget, pick, require, results, start, write_report
from benchmarks.common.protocol import (LEAVES_RULES as RULES, LEAVES_STORE as STORE, class_fold, class_groups,
                                        leaves_outcome as outcome, outer_folds, test_scores)
from benchmarks.common.store import run_into_store, stored

ANCHOR = "RF(100)"
#: the search in smoke mode: depths 1-2, 2 inner folds
SMOKE_SEARCH = {"depths": (1, 2), "cv": 2}


def make_search():
    """The search of logistic leaves (``leaves=("logistic",)``: the search as it was when this benchmark chose to
    add spline leaves to it; its ``cv_scores_`` are keyed (depth, factor, "logistic"))."""
    from srtopt import SoftClassificationTreeCV

    return SoftClassificationTreeCV(random_state=0, leaves=("logistic",), **pick({}, SMOKE_SEARCH))


def run(dataset, fold) -> dict:
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from threadpoolctl import threadpool_limits

    from srtopt import SoftClassificationTree
    from srtopt.estimators.cv import SCORES
    from srtopt.experiments.methods import random_forest_classifier

    X_train, X_test, y_train, y_test = class_fold(dataset, fold)
    row = {"dataset": dataset, "fold": fold}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        search = make_search().fit(X_train, y_train)
        row["search_seconds"] = time.perf_counter() - started
        row["logistic"] = {"depth": search.depth_, "leaf_ridge": search.leaf_ridge_,
                           "inner": max(search.cv_scores_.values()), **test_scores(search, X_test, y_test)}
        inner = StratifiedKFold(3, shuffle=True, random_state=0)
        splines, started = {}, time.perf_counter()
        for depth in sorted({d for d, *_ in search.cv_scores_}):
            ridge = max((r for d, r, _ in search.cv_scores_ if d == depth),
                        key=lambda r: search.cv_scores_[(depth, r, "logistic")])
            tree = SoftClassificationTree(depth=depth, leaf_ridge=ridge, leaf="spline", random_state=0, **budget())
            score = float(np.mean(cross_val_score(clone(tree), X_train, y_train, cv=inner,
                                                  scoring=SCORES["log_loss"])))
            splines[depth] = {"leaf_ridge": ridge, "inner": score}
        row["spline_seconds"] = time.perf_counter() - started
        top = max(splines, key=lambda d: splines[d]["inner"])
        for depth in {search.depth_, top}:  # the refits the rules may choose
            if splines[depth]["inner"] > row["logistic"]["inner"]:
                tree = SoftClassificationTree(depth=depth, leaf_ridge=splines[depth]["leaf_ridge"], leaf="spline",
                                              random_state=0, **budget()).fit(X_train, y_train)
                splines[depth].update(test_scores(tree, X_test, y_test))
        row["spline"] = {str(d): s for d, s in splines.items()}
        forest = random_forest_classifier(None, 0).fit(X_train, y_train)
        row[ANCHOR] = test_scores(forest, X_test, y_test)
    return row


def report(stage, datasets) -> list[str]:
    rows = [r for r in stored(results() / STORE) if r["dataset"] in datasets]
    per = {d: [r for r in rows if r["dataset"] == d] for d in datasets}
    done = [d for d in datasets if len(per[d]) == len(outer_folds())]
    columns = (*RULES, ANCHOR)

    def score(r, column, key):
        return r[ANCHOR][key] if column == ANCHOR else outcome(r, column)[key]

    lines = ["# Spline leaves as a candidate of SoftClassificationTreeCV", "",
             f"Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python "
             f"benchmarks/decisions/classification_leaves.py --stage {stage}` (the classification protocol: 4-fold "
             f"stratified CV, split seed 0; {len(done)} of {len(datasets)} datasets complete).", "",
             "Test accuracy / test log loss per dataset (means over the 4 folds); the last columns: how many "
             "folds chose spline leaves, and the seconds of the search and of the spline candidates.", "",
             "| dataset | " + " | ".join(columns) + " | spline chosen (best / every depth) | search s | spline s |",
             "|---|" + "---:|" * (len(columns) + 3)]
    for d in done:
        cells = [f"{np.mean([score(r, c, 'accuracy') for r in per[d]]):.3f} / "
                 f"{np.mean([score(r, c, 'log_loss') for r in per[d]]):.3f}" for c in columns]
        chosen = [sum(outcome(r, rule) is not r["logistic"] for r in per[d]) for rule in RULES[1:]]
        lines.append(f"| {d} | " + " | ".join(cells) + f" | {chosen[0]} / {chosen[1]} | "
                     f"{np.mean([r['search_seconds'] for r in per[d]]):.1f} | "
                     f"{np.mean([r['spline_seconds'] for r in per[d]]):.1f} |")
    if done:
        means = [f"**{np.mean([np.mean([score(r, c, 'accuracy') for r in per[d]]) for d in done]):.4f} / "
                 f"{np.mean([np.mean([score(r, c, 'log_loss') for r in per[d]]) for d in done]):.3f}**"
                 for c in columns]
        lines.append("| mean | " + " | ".join(means) + " | | | |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("tune", "confirm"))
    parser.add_argument("--jobs", type=int, default=1)
    add_smoke(parser)
    args = parser.parse_args(argv)
    require(parser, args, "--stage")
    start(args)
    for stage in pick([args.stage], ["tune", "confirm"]):
        datasets = class_groups()[stage]
        run_into_store(results() / STORE, run, [(d, fold) for d in datasets for fold in outer_folds()],
                       lambda row: (row["dataset"], row["fold"]), args.jobs,
                       describe=lambda r: f"{r['dataset']} fold {r['fold']}: {r['search_seconds']:.0f} s")
        write_report(results() / f"classification_leaves_{stage}.md", report(stage, datasets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
