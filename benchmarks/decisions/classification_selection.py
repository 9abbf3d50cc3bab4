"""How ``SoftClassificationTreeCV`` should pick among its candidates: the inner folds and the score, measured on
held-out folds.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=/path/to/datasets_classification \\
        python benchmarks/decisions/classification_selection.py --stage tune [--jobs 2]   # then --stage confirm

The classification protocol (4-fold stratified CV, split seed 0, X min-max scaled on the training fold;
``benchmarks/decisions/classification_cv.py``'s ``fold_data``).  For every outer fold and every candidate of the
search (depths 1-4 x leaf factors 1, 10, 100 x logistic and spline leaves: the search's two stages are a subset)
the run stores, per inner splitter, each inner fold's held-out accuracy and log loss, and the test scores of the
candidate refit on the outer training rows, so that every rule below is judged on the same fits:

* the inner splitters: ``StratifiedKFold(k, shuffle, seed 0)`` with k = 3, 5 (the search's default) and, on
  the tuning datasets only, 10 (``cv=k``);
* the scores: the mean held-out log loss (the search's default) or the accuracy (ties to the lower log loss);
* the candidates: the search's two stages (logistic leaves on the grid, then spline leaves at every depth with
  that depth's best factor), spline leaves on the whole grid too, or the two stages with a leaf factor of
  :data:`LOWER` = 0.3 besides the grid's (its candidates scored by 5 folds only).

``--stage tune`` runs and reports the 10 tuning datasets of ``benchmarks/decisions/classification.py``;
``--stage confirm`` the other 10, held out while choosing; ``--stage refits`` (after both) refits the default
rule's choice with other seeds and with restarts (:data:`REFITS`), for the spread of its test accuracy.  Runs go to
``benchmarks/results/classification_selection.jsonl`` (not committed; a stored run is skipped, so an interrupted
run resumes); the tables to ``benchmarks/results/classification_selection_{stage}.md``.

``--stage mixture`` (after both) predicts by the soft model's mixture over all leaves
(``predict_proba(X, mixture=True)``) instead of each row's HBP leaf: every candidate's 5 inner folds and its
refit scored so, on the 20 datasets, for the default rule's choice predicted by the mixture and for the choice
the mixture's own held-out scores make.

``--stage deeper`` (after both) scores every candidate of depth :data:`DEEPER` = 5 on the 5 inner folds and refit,
on the 20 datasets, for two rules: depths 1-5 on the grid, or depth 5 only where depth 4 scores best.

``--smoke``: the five stages in order on the halves' first datasets (tiny), outer fold 0, the leaf factor 1 alone,
every inner splitter of 2 folds, the trees at max_iter 2.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np

from benchmarks.common import add_smoke, budget, pick, require, results, start, write_report
from benchmarks.common.protocol import class_fold, class_groups, outer_folds, test_scores
from benchmarks.common.store import run_into_store, stored

STORE = "classification_selection.jsonl"  # in benchmarks/results/
DEPTHS = (1, 2, 3, 4)
LEAF_RIDGES = (1.0, 10.0, 100.0)
LEAVES = ("logistic", "spline")
LOWER = 0.3  # a leaf factor below the grid's, tried with 5 folds: the "factor 0.3 too" rule
SPLITS = ("3", "5", "test")  # the inner splitters' numbers of folds, and the refit scored on the test rows
TUNE_ONLY = ("10",)  # 10 inner folds: run on the tuning datasets only (no better than 5 there: not confirmed)
ANCHOR = "RF(100)"
DEEPER = 5  # --stage deeper: the depth one more than the grid's
MIXTURE = " mixture"  # a split's suffix: its fits scored by the mixture over all leaves (--stage mixture)
#: ``--stage refits``: the chosen candidate (5 folds, by log loss) refit otherwise than with random_state 0
REFITS = {**{f"random_state={seed}": {"random_state": seed} for seed in (1, 2, 3, 4)},
          **{f"n_restarts={n}": {"n_restarts": n} for n in (3, 5)}}


def leaf_ridges() -> tuple:
    """The grid's leaf factors (the first alone in smoke mode)."""
    return pick(LEAF_RIDGES, LEAF_RIDGES[:1])


def candidates(factors=None, depths=DEPTHS) -> list[tuple]:
    """(depth, leaf_ridge, leaf) of every candidate (``factors``: the grid's by default)."""
    return list(itertools.product(depths, factors or leaf_ridges(), LEAVES))


def stage_splits(stage) -> tuple:
    return (*SPLITS, *TUNE_ONLY) if stage == "tune" else SPLITS


def fold_tasks(splits=SPLITS) -> list[tuple]:
    """(candidate, split) of every run of one outer fold."""
    return ([(ANCHOR, "test")] + [(c, s) for c in candidates() for s in splits]
            + [(c, s) for c in candidates((LOWER,)) for s in ("5", "test")])


class Mixture:
    """A fitted tree whose ``predict_proba`` is the soft model's mixture sum_l P_il p_l(x_i) over all leaves."""

    def __init__(self, tree):
        self.tree, self.classes_ = tree, tree.classes_

    def predict_proba(self, X):
        return self.tree.predict_proba(X, mixture=True)


def run(dataset, fold, candidate, split) -> dict:
    from sklearn.model_selection import StratifiedKFold
    from threadpoolctl import threadpool_limits

    from srtopt import SoftClassificationTree
    from srtopt.experiments.methods import random_forest_classifier

    X_train, X_test, y_train, y_test = class_fold(dataset, fold)
    row = {"dataset": dataset, "fold": fold, "candidate": list(candidate) if candidate != ANCHOR else candidate,
           "split": split}

    def make():
        if candidate == ANCHOR:
            return random_forest_classifier(None, 0)
        depth, leaf_ridge, leaf = candidate
        return SoftClassificationTree(depth=depth, leaf_ridge=leaf_ridge, leaf=leaf, random_state=0,
                                      **budget())

    def scores(tree, X, y):
        return test_scores(Mixture(tree) if split.endswith(MIXTURE) else tree, X, y)

    started = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if split.startswith("test") or split in REFITS:
            row["test"] = scores(make().set_params(**REFITS.get(split, {})).fit(X_train, y_train), X_test, y_test)
        else:
            splitter = StratifiedKFold(pick(int(split.split()[0]), 2), shuffle=True, random_state=0)
            row["folds"] = [scores(make().fit(X_train[inner], y_train[inner]), X_train[held], y_train[held])
                            for inner, held in splitter.split(X_train, y_train)]
    row["seconds"] = time.perf_counter() - started
    return row


def key(row) -> tuple:
    candidate = row["candidate"]
    return row["dataset"], row["fold"], tuple(candidate) if isinstance(candidate, list) else candidate, row["split"]


def tasks(datasets, splits) -> list[tuple]:
    return [(dataset, fold, c, s) for dataset, fold in itertools.product(datasets, outer_folds())
            for c, s in fold_tasks(splits)]


# ---------------------------------------------------------------- the selection rules, offline
def fold_means(values, datasets) -> dict:
    """{dataset: its mean over its 4 outer folds} of ``values`` = {(dataset, outer fold): value}."""
    return {d: float(np.mean([values[d, f] for f in outer_folds()])) for d in datasets}


def dataset_mean(values, datasets) -> float:
    """The mean over ``datasets`` of :func:`fold_means` (NaN for none): every table's mean."""
    return float(np.mean(list(fold_means(values, datasets).values()))) if datasets else float("nan")


def inner_score(folds, score) -> tuple:
    """A candidate's inner score as a sort key, higher is better: the mean log loss negated, or the mean accuracy
    with ties to the lower log loss."""
    loss = -float(np.mean([f["log_loss"] for f in folds]))
    return (float(np.mean([f["accuracy"] for f in folds])), loss) if score == "accuracy" else (loss,)


def choose(table, splits, score, grid, depths=DEPTHS) -> tuple:
    """The candidate a rule chooses on one outer fold. ``table``: {(candidate, split): row}; ``splits``: the inner
    splitters whose folds are pooled; ``grid``: "two stages" (the search's), "full", or "factor 0.3 too" (the
    two stages with :data:`LOWER` among the factors); ``depths``: the depths compared."""
    def key(c):
        return inner_score([f for s in splits for f in table[c, s]["folds"]], score)

    if grid == "full":
        return max(candidates(), key=key)
    factors = (LOWER, *leaf_ridges()) if grid == "factor 0.3 too" else leaf_ridges()
    first = [c for c in candidates(factors, depths) if c[2] == LEAVES[0]]
    pool = list(first)
    for depth in depths:
        best = max((c for c in first if c[0] == depth), key=key)
        pool.append((depth, best[1], LEAVES[1]))
    return max(pool, key=key)


RULES = {f"cv={'+'.join(splits)}, by {score.replace('_', ' ')}, {grid}": (splits, score, grid)
         for grid in ("two stages", "full") for score in ("log_loss", "accuracy")
         for splits in (("3",), ("5",), ("3", "5"))}
RULES.update({f"cv={'+'.join(splits)}, by {score.replace('_', ' ')}, two stages": (splits, score, "two stages")
              for score in ("log_loss", "accuracy") for splits in (("10",), ("5", "10"))})
RULES["cv=5, by log loss, factor 0.3 too"] = (("5",), "log_loss", "factor 0.3 too")


def report(stage, datasets) -> list[str]:
    by_fold = {k: table for k, table in stored_folds().items() if k[0] in datasets}
    splits = stage_splits(stage)
    rules = {name: rule for name, rule in RULES.items() if set(rule[0]) <= set(splits)}
    complete = sorted(k for k, table in by_fold.items() if all(t in table for t in fold_tasks(splits)))
    done = [d for d in datasets if sum(k[0] == d for k in complete) == len(outer_folds())]

    columns = {}
    for name, (pooled, score, grid) in rules.items():
        chosen = {k: choose(by_fold[k], pooled, score, grid) for k in complete if k[0] in done}
        columns[name] = ({k: by_fold[k][c, "test"]["test"]["accuracy"] for k, c in chosen.items()},
                         {k: by_fold[k][c, "test"]["test"]["log_loss"] for k, c in chosen.items()},
                         {k: c[0] for k, c in chosen.items()})
    oracle = {k: max(by_fold[k][c, "test"]["test"]["accuracy"] for c in candidates()) for k in complete}
    forest = ({k: by_fold[k][ANCHOR, "test"]["test"]["accuracy"] for k in complete},
              {k: by_fold[k][ANCHOR, "test"]["test"]["log_loss"] for k in complete})
    seconds = {s: {k: sum(by_fold[k][c, sp]["seconds"] for c, sp in fold_tasks(splits) if sp == s and c != ANCHOR)
                   for k in complete} for s in splits}  # this stage's runs only: later stages store theirs beside
    lines = ["# How SoftClassificationTreeCV picks among its candidates: inner folds and score", "",
             f"Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python "
             f"benchmarks/decisions/classification_selection.py --stage {stage}` (the classification protocol: "
             f"4-fold stratified CV, split seed 0; {len(done)} of {len(datasets)} datasets complete: "
             f"{', '.join(done)}).", "",
             "Each rule picks one candidate (depth x leaf factor x leaf model) per outer fold by its inner score; "
             "'two stages': the search's candidates (logistic leaves on the grid, then spline leaves at every depth "
             "with that depth's best factor); 'full': spline leaves on the whole grid too.  'cv=3+5': the 8 folds "
             "of both splitters pooled (likewise 'cv=5+10').  Means over the datasets of the means over their 4 "
             "outer folds.", "",
             "| rule | test accuracy | test log loss | mean depth |", "|---|---:|---:|---:|"]
    for name, (acc, loss, depth) in columns.items():
        lines.append(f"| {name} | {dataset_mean(acc, done):.4f} | {dataset_mean(loss, done):.4f} | "
                     f"{dataset_mean(depth, done):.2f} |")
    lines += [f"| oracle: the best candidate on each test fold | {dataset_mean(oracle, done):.4f} | | |",
              f"| {ANCHOR} | {dataset_mean(forest[0], done):.4f} | {dataset_mean(forest[1], done):.4f} | |", "",
              "Seconds per outer fold (all candidates): " + ", ".join(
                  f"{'refit' if s == 'test' else 'cv=' + s} {dataset_mean(seconds[s], done):.0f}" for s in splits), "",
              "Test accuracy per dataset:", "",
              "| dataset | " + " | ".join(rules) + f" | oracle | {ANCHOR} |", "|---|" + "---:|" * (len(rules) + 2)]
    per = {name: fold_means(columns[name][0], done) for name in rules}
    oracle, forest = fold_means(oracle, done), fold_means(forest[0], done)
    for d in done:
        lines.append(f"| {d} | " + " | ".join(f"{per[n][d]:.3f}" for n in rules) +
                     f" | {oracle[d]:.3f} | {forest[d]:.3f} |")
    return lines


def stored_folds() -> dict:
    """{(dataset, outer fold): {(candidate, split): row}} of the store."""
    by_fold = {}
    for row in stored(results() / STORE):
        k = key(row)
        by_fold.setdefault(k[:2], {})[k[2:]] = row
    return by_fold


def chosen() -> dict:
    """{(dataset, outer fold): the candidate of the default rule (5 folds, by log loss, two stages)}."""
    return {k: choose(table, ("5",), "log_loss", "two stages") for k, table in stored_folds().items()}


def refits_report() -> list[str]:
    GROUPS = class_groups()
    by_fold, datasets = stored_folds(), GROUPS["tune"] + GROUPS["confirm"]
    choice = chosen()

    def mean(split, group):
        return dataset_mean({k: by_fold[k][choice[k], split]["test"]["accuracy"] for k in choice}, group)

    lines = ["# The chosen tree refit otherwise: the spread of the default rule's test accuracy", "",
             "Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python "
             "benchmarks/decisions/classification_selection.py --stage refits` (after both stages): on every outer "
             "fold of the 20 datasets, the candidate that 5 folds and the log loss choose, refit with another "
             "random_state or with restarts (`n_restarts`: that many starts run 2 macro iterations, the best "
             "continues).", "", "| refit | tuning 10 | held-out 10 | all 20 |", "|---|---:|---:|---:|"]
    for split in ("test", *REFITS):
        name = "random_state=0 (the benchmark's)" if split == "test" else split
        lines.append(f"| {name} | {mean(split, GROUPS['tune']):.4f} | {mean(split, GROUPS['confirm']):.4f} | "
                     f"{mean(split, datasets):.4f} |")
    forest = {k: table[ANCHOR, "test"]["test"]["accuracy"] for k, table in by_fold.items()}
    lines.append(f"| {ANCHOR} | " + " | ".join(f"{dataset_mean(forest, g):.4f}"
                                               for g in (GROUPS["tune"], GROUPS["confirm"], datasets)) + " |")
    return lines


def complete_groups(by_fold, both) -> dict:
    """{"tuning": .., "held-out": .., ``both``: the two}: the datasets of each half with all 4 outer folds in
    ``by_fold``."""
    groups = {name: [d for d in class_groups()[stage] if all((d, f) in by_fold for f in outer_folds())]
              for name, stage in (("tuning", "tune"), ("held-out", "confirm"))}
    return {**groups, both: groups["tuning"] + groups["held-out"]}


def chosen_test_scores(by_fold, choice) -> dict:
    """{score: {(dataset, outer fold): the test score}} of the candidate split ``choice`` takes on each fold."""
    return {score: {k: by_fold[k][choice(k, table)]["test"][score] for k, table in by_fold.items()}
            for score in ("accuracy", "log_loss")}


def score_cells(scores, groups) -> str:
    """"accuracy / log loss" of :func:`chosen_test_scores`'s ``scores`` per group, as table cells."""
    return " | ".join(f"{dataset_mean(scores['accuracy'], g):.4f} / {dataset_mean(scores['log_loss'], g):.3f}"
                      for g in groups.values())


def anchor_scores(by_fold) -> dict:
    return chosen_test_scores(by_fold, lambda k, table: (ANCHOR, "test"))


def mixture_tasks() -> list[tuple]:
    return [(d, f, c, s + MIXTURE) for d in sum(class_groups().values(), []) for f in outer_folds()
            for c in candidates() for s in ("5", "test")]


def mixture_report() -> list[str]:
    wanted = {(c, s + MIXTURE) for c in candidates() for s in ("5", "test")}
    by_fold = {k: table for k, table in stored_folds().items() if wanted <= set(table)}
    groups = complete_groups(by_fold, "both")
    rows = {"chosen by the HBP leaf's held-out log loss, predicted by the HBP leaf (the default)": ("5", "test"),
            "the same choice, predicted by the mixture": ("5", "test" + MIXTURE),
            "chosen by the mixture's held-out log loss, predicted by the mixture": ("5" + MIXTURE, "test" + MIXTURE)}
    lines = ["# Predicting by the soft model's mixture over all leaves instead of the HBP leaf", "",
             "Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python "
             "benchmarks/decisions/classification_selection.py --stage mixture` (after both stages): the search's "
             "two stages, 5 inner folds, by log loss; each candidate's inner folds and refit scored by "
             "`predict_proba(X, mixture=True)` as well as by the HBP leaf.  Test accuracy / test log loss, means "
             "over the datasets of the means over their 4 outer folds; complete: " + ", ".join(
                 f"{len(group)} {name}" for name, group in groups.items()) + ".", "",
             "| rule | " + " | ".join(f"{name} {len(group)}" for name, group in groups.items()) + " |",
             "|---|" + "---:|" * len(groups)]
    for name, (inner, test) in rows.items():
        scores = chosen_test_scores(by_fold, lambda k, table: (choose(table, (inner,), "log_loss", "two stages"), test))
        lines.append(f"| {name} | {score_cells(scores, groups)} |")
    lines.append(f"| {ANCHOR} | {score_cells(anchor_scores(by_fold), groups)} |")
    return lines


def deeper_tasks() -> list[tuple]:
    return [(d, f, c, s) for d in sum(class_groups().values(), []) for f in outer_folds()
            for c in candidates(depths=(DEEPER,)) for s in ("5", "test")]


#: --stage deeper's rules: the default's choice, or one of depths 1-5 (on the grid; only where depth 4 scores best)
DEEPER_RULES = {"depths 1-4 (the default)": "default", f"depths 1-{DEEPER} on the grid": "grid",
                f"depth {DEEPER} where depth {DEPTHS[-1]} scores best": "edge"}


def deeper_choice(table, rule) -> tuple:
    """The candidate of a :data:`DEEPER_RULES` rule (5 folds, by log loss, two stages) on one outer fold."""
    best = choose(table, ("5",), "log_loss", "two stages")
    if rule == "grid" or (rule == "edge" and best[0] == DEPTHS[-1]):
        return choose(table, ("5",), "log_loss", "two stages", (*DEPTHS, DEEPER))
    return best


def deeper_report() -> list[str]:
    wanted = {(c, s) for c in candidates(depths=(DEEPER,)) for s in ("5", "test")}
    by_fold = {k: table for k, table in stored_folds().items() if wanted <= set(table)}
    groups = complete_groups(by_fold, "all")
    choice = {rule: {k: deeper_choice(table, rule) for k, table in by_fold.items()} for rule in DEEPER_RULES.values()}
    scores = {rule: chosen_test_scores(by_fold, lambda k, table, rule=rule: (choice[rule][k], "test"))
              for rule in choice}
    scores[ANCHOR] = anchor_scores(by_fold)
    names = {**{rule: name for name, rule in DEEPER_RULES.items()}, ANCHOR: ANCHOR}
    seconds = {depths: {k: sum(table[c, s]["seconds"] for c in candidates(depths=depths) for s in ("5", "test"))
                        for k, table in by_fold.items()} for depths in (DEPTHS, (DEEPER,))}
    lines = [f"# One depth more in SoftClassificationTreeCV: depth {DEEPER}", "",
             "Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python "
             "benchmarks/decisions/classification_selection.py --stage deeper` (after both stages): every candidate "
             f"of depth {DEEPER} (the leaf factors 1, 10, 100 x logistic and spline leaves) on the 5 inner folds and "
             "refit, beside the search's; each rule takes the search's two stages, by the held-out log loss.  Test "
             "accuracy / test log loss, means over the datasets of the means over their 4 outer folds; complete: "
             + ", ".join(f"{len(group)} {name}" for name, group in groups.items()) + ".", "",
             "| rule | " + " | ".join(f"{name} {len(group)}" for name, group in groups.items()) +
             " | folds that take depth 5 |", "|---|" + "---:|" * (len(groups) + 1)]
    for rule, name in names.items():
        taken = sum(c[0] == DEEPER for c in choice[rule].values()) if rule in choice else ""
        lines.append(f"| {name} | {score_cells(scores[rule], groups)} | {taken} |")
    lines += ["", "Seconds per outer fold, all 20: the search's candidates (depths 1-4) "
              f"{dataset_mean(seconds[DEPTHS], groups['all']):.0f}, those of depth {DEEPER} "
              f"{dataset_mean(seconds[(DEEPER,)], groups['all']):.0f}.", "",
              "Test accuracy per dataset where a rule differs from the default:", "",
              "| dataset | " + " | ".join(names.values()) + " |", "|---|" + "---:|" * len(names)]
    per = {rule: fold_means(scores[rule]["accuracy"], groups["all"]) for rule in names}
    for d in groups["all"]:
        if any(abs(per[rule][d] - per["default"][d]) > 1e-12 for rule in choice):
            lines.append(f"| {d} | " + " | ".join(f"{per[rule][d]:.3f}" for rule in names) + " |")
    return lines


def refits_tasks() -> list[tuple]:
    return [(d, f, c, split) for (d, f), c in chosen().items() for split in REFITS]


#: the stages run after both halves: (their runs, their report)
LATER_STAGES = {"refits": (refits_tasks, refits_report), "mixture": (mixture_tasks, mixture_report),
                "deeper": (deeper_tasks, deeper_report)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("tune", "confirm", *LATER_STAGES))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--report-only", action="store_true")
    add_smoke(parser)
    args = parser.parse_args(argv)
    require(parser, args, "--stage")
    start(args)
    for stage in pick([args.stage], ["tune", "confirm", *LATER_STAGES]):
        run_stage(stage, args.jobs, args.report_only)
    return 0


def run_stage(stage, jobs, report_only) -> None:
    """Run a stage's tasks (unless ``report_only``) and write its report."""
    if stage in LATER_STAGES:
        todo, report_of = LATER_STAGES[stage]
        if not report_only:
            run_into_store(results() / STORE, run, todo(), key, jobs)
        write_report(results() / f"classification_selection_{stage}.md", report_of())
        return
    datasets = class_groups()[stage]
    if not report_only:
        run_into_store(results() / STORE, run, tasks(datasets, stage_splits(stage)), key, jobs)
    write_report(results() / f"classification_selection_{stage}.md", report(stage, datasets))


if __name__ == "__main__":
    raise SystemExit(main())
