"""What ``SoftClassificationTreeCV`` chooses among, and by which score: measured on held-out folds.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=/path/to/datasets_classification \\
        python benchmarks/decisions/classification_cv.py --stage tune [--jobs 1]     # then --stage confirm

The project's classification protocol (4-fold stratified CV, split seed 0, X min-max scaled on the training
fold, labels coded by the training fold's classes; ``srtopt.experiments.protocol``) on the 10 tuning datasets of
``benchmarks/decisions/classification.py`` (australian, bupa, ionosphere, mammographic, monk_2, balance,
dermatology, glass, yeast, segment); the other 10 (pima, wdbc, car, ecoli, vowel, satimage, page_blocks, splice,
german, vehicle) are held out for ``srtopt bench --methods sct-cv`` once the choice is made.

For every outer fold and every candidate (a depth, a factor on the leaves' l2 weight ``leaf_ridge`` and one on the
splits' ``regularization="l2:split=c"``) the run stores what a selection rule needs, so that every rule is judged
on the same fits: the candidate's inner cross-validation (``StratifiedKFold(3, shuffle=True, random_state=0)`` of
the outer training rows: out-of-fold accuracy and log loss) and its refit on the outer training rows (test
accuracy and log loss); both log losses also at each temperature T of :data:`TEMPERATURES` (probabilities
p^(1/T), normalized), so that a temperature chosen on the out-of-fold rows is judged on the test rows.
RandomForestClassifier(100) and the logistic regression of ``srtopt.experiments.methods`` run on the same folds.

Runs go to ``benchmarks/results/classification_cv.jsonl`` (not committed; a run already there is skipped, so an
interrupted benchmark resumes); the tables to ``benchmarks/results/classification_cv_tune.md``: each rule's mean
test accuracy and log loss, the oracle's (the best candidate on the test folds), the forest's and the logistic
regression's.

``--stage confirm`` runs the estimator the tuning chose, ``SoftClassificationTreeCV()`` (the experiments' method
``sct-cv``), beside ``RandomForestClassifier(100)``, the logistic regression and the depth-3 tree on all 20
datasets, by the experiments' runner into ``benchmarks/results/classification_cv.db`` (resumable, not committed;
the same as ``srtopt bench --task classification --methods sct-cv rf-clf logreg-clf sct --depths 3 --folds 4
--seeds 1 --split-seed 0``), and writes ``benchmarks/results/classification_cv_confirm.md``: the means over the 10
held-out datasets, over the 10 tuning ones and over all 20, and per dataset.

``--smoke``: both stages on their first datasets (tiny), outer fold 0 (the confirm stage's protocol: 2 folds), the
candidates of factors 1 alone, the trees at max_iter 2, the search of the confirm stage on depths 1-2 and 2 inner folds.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np

from benchmarks.common import add_smoke, budget, pick, results, start, write_report
from benchmarks.common.data import bench_datasets, bench_slug
from benchmarks.common.protocol import FLOOR, class_fold, class_groups, outer_folds
from benchmarks.common.store import run_into_store, stored

STORE = "classification_cv.jsonl"  # in benchmarks/results/
DEPTHS = (1, 2, 3, 4)
LEAF_RIDGES = (1.0, 10.0, 100.0)
SPLIT_WEIGHTS = (1.0, 10.0)
TEMPERATURES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
INNER_FOLDS = 3
ANCHORS = ("RF(100)", "logistic regression")


def candidates() -> list[tuple]:
    """(depth, leaf_ridge, split weight) of every candidate (in smoke mode the depths with factors 1 alone)."""
    return list(itertools.product(DEPTHS, *pick((LEAF_RIDGES, SPLIT_WEIGHTS), ((1.0,), (1.0,)))))


def tempered_log_losses(P, codes) -> list[float]:
    """The mean log loss of the probabilities P (n, K) at every temperature of :data:`TEMPERATURES`."""
    logP = np.log(np.clip(P, FLOOR, 1.0))
    out = []
    for T in TEMPERATURES:
        scaled = logP / T
        scaled -= scaled.max(axis=1, keepdims=True)
        logQ = scaled - np.log(np.exp(scaled).sum(axis=1, keepdims=True))
        out.append(float(-np.mean(np.clip(logQ[np.arange(len(codes)), codes], np.log(FLOOR), 0.0))))
    return out


def _columns(model, X, n_classes) -> np.ndarray:
    """predict_proba with one column per class code 0..n_classes-1 (0 for a class the fit did not see)."""
    P = np.zeros((len(X), n_classes))
    P[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(X)
    return P


def make(candidate, seed=0):
    """The model of a candidate (a tuple) or an anchor (a name)."""
    from srtopt import SoftClassificationTree
    from srtopt.experiments.methods import logistic_regression, random_forest_classifier

    if candidate == "RF(100)":
        return random_forest_classifier(None, seed)
    if candidate == "logistic regression":
        return logistic_regression(None, seed)
    depth, leaf_ridge, split = candidate
    return SoftClassificationTree(depth=depth, leaf_ridge=leaf_ridge, regularization=f"l2:split={split!r}",
                                  random_state=seed, **budget())


def run(dataset, fold, candidate):
    """One stored row: the candidate's out-of-fold and test scores on the outer fold."""
    from sklearn.model_selection import StratifiedKFold
    from threadpoolctl import threadpool_limits

    X_train, X_test, y_train, y_test = class_fold(dataset, fold)
    n_classes = int(y_train.max()) + 1
    known = y_test >= 0
    row = {"dataset": dataset, "fold": fold, "candidate": list(candidate) if isinstance(candidate, tuple)
           else candidate}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(candidate, tuple):
            P = np.zeros((len(y_train), n_classes))
            splitter = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=0)
            for inner, held in splitter.split(X_train, y_train):
                model = make(candidate).fit(X_train[inner], y_train[inner])
                P[held] = _columns(model, X_train[held], n_classes)
            row["inner"] = {"accuracy": float(np.mean(np.argmax(P, axis=1) == y_train)),
                            "log_loss": tempered_log_losses(P, y_train)}
        start = time.perf_counter()
        model = make(candidate).fit(X_train, y_train)
        row["seconds"] = time.perf_counter() - start
        P = _columns(model, X_test[known], n_classes)
        row["test"] = {"accuracy": float(np.sum(np.argmax(P, axis=1) == y_test[known]) / len(y_test)),
                       "log_loss": tempered_log_losses(P, y_test[known])}
    return row


def key(row) -> tuple:
    candidate = row["candidate"]
    return row["dataset"], row["fold"], tuple(candidate) if isinstance(candidate, list) else candidate


# ---------------------------------------------------------------- the selection rules, offline
def choose(rows, criterion, allowed) -> tuple:
    """The candidate of ``allowed`` with the best inner score ("log_loss": lowest at T = 1; "accuracy": highest,
    ties to the lower inner log loss)."""
    one = TEMPERATURES.index(1.0)
    pool = [r for r in rows if tuple(r["candidate"]) in allowed]
    if criterion == "accuracy":
        best = max(pool, key=lambda r: (r["inner"]["accuracy"], -r["inner"]["log_loss"][one]))
    else:
        best = min(pool, key=lambda r: r["inner"]["log_loss"][one])
    return best


def outcome(best, tempered) -> tuple[float, float]:
    """(test accuracy, test log loss) of the chosen row; ``tempered``: at the temperature of lowest inner log
    loss."""
    t = int(np.argmin(best["inner"]["log_loss"])) if tempered else TEMPERATURES.index(1.0)
    return best["test"]["accuracy"], best["test"]["log_loss"][t]


def rules() -> dict:
    """Rule name -> (criterion, allowed candidates, tempered)."""
    every = candidates()
    plain = [c for c in every if c[1:] == (1.0, 1.0)]
    leaf = [c for c in every if c[2] == 1.0]
    split = [c for c in every if c[1] == 1.0]
    no_depth1 = [c for c in every if c[0] > 1]
    out = {}
    for criterion in ("log_loss", "accuracy"):
        for label, allowed in (("depth only", plain), ("depth x leaf_ridge", leaf), ("depth x split", split),
                               ("depth x leaf_ridge x split", every),
                               ("depths 2-4 x leaf_ridge x split", no_depth1)):
            for tempered in (False, True):
                out[f"{label}, by {criterion.replace('_', ' ')}{', temperature' if tempered else ''}"] = \
                    (criterion, allowed, tempered)
    return out


def report(stage, datasets) -> list[str]:
    rows = [r for r in stored(results() / STORE) if r["dataset"] in datasets]
    one = TEMPERATURES.index(1.0)
    by_fold = {}
    for r in rows:
        by_fold.setdefault((r["dataset"], r["fold"]), []).append(r)
    complete = [k for k, v in by_fold.items() if len(v) == len(candidates()) + len(ANCHORS)]
    lines = ["# Choosing the classifier's depth and regularization by cross-validation", "",
             f"Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python benchmarks/decisions/classification_cv.py "
             f"--stage {stage}` (the classification protocol: 4-fold stratified CV, split seed 0; inner "
             f"StratifiedKFold({INNER_FOLDS}, shuffle, seed 0); {len(complete)} outer folds of {len(datasets)} "
             f"datasets: {', '.join(datasets)}).", "",
             f"Candidates: depths {DEPTHS} x leaf_ridge {LEAF_RIDGES} x split weight {SPLIT_WEIGHTS}.  A rule picks "
             f"one candidate per outer fold by its inner score; 'temperature': its probabilities p^(1/T) "
             f"normalized, T in {TEMPERATURES} chosen on the inner out-of-fold rows.  Means over the datasets of "
             f"the means over their folds.", "", "| rule | test accuracy | test log loss | mean depth |",
             "|---|---:|---:|---:|"]

    def mean_over(values):  # {(dataset, fold): value} -> mean over datasets of the fold means
        per = {}
        for (d, _), v in values.items():
            per.setdefault(d, []).append(v)
        return float(np.mean([np.mean(v) for v in per.values()]))

    per_dataset = {}
    for name, (criterion, allowed, tempered) in rules().items():
        acc, loss, depth = {}, {}, {}
        for k in complete:
            best = choose([r for r in by_fold[k] if isinstance(r["candidate"], list)], criterion, allowed)
            acc[k], loss[k] = outcome(best, tempered)
            depth[k] = best["candidate"][0]
        per_dataset[name] = acc
        lines.append(f"| {name} | {mean_over(acc):.4f} | {mean_over(loss):.4f} | {mean_over(depth):.2f} |")
    for fixed in ((2, 1.0, 1.0), (3, 1.0, 1.0), (4, 1.0, 1.0)):
        acc = {k: next(r for r in by_fold[k] if r["candidate"] == list(fixed))["test"]["accuracy"] for k in complete}
        loss = {k: next(r for r in by_fold[k] if r["candidate"] == list(fixed))["test"]["log_loss"][one]
                for k in complete}
        lines.append(f"| depth {fixed[0]}, the defaults | {mean_over(acc):.4f} | {mean_over(loss):.4f} | |")
    oracle = {k: max(r["test"]["accuracy"] for r in by_fold[k] if isinstance(r["candidate"], list)) for k in complete}
    lines.append(f"| oracle: the best candidate on each test fold (accuracy) | {mean_over(oracle):.4f} | | |")
    for anchor in ANCHORS:
        acc = {k: next(r for r in by_fold[k] if r["candidate"] == anchor)["test"]["accuracy"] for k in complete}
        loss = {k: next(r for r in by_fold[k] if r["candidate"] == anchor)["test"]["log_loss"][one] for k in complete}
        lines.append(f"| {anchor} | {mean_over(acc):.4f} | {mean_over(loss):.4f} | |")
    return lines


CONFIRM_STORE = "classification_cv.db"  # in benchmarks/results/
CONFIRM_METHODS = {"sct-cv": "SoftClassificationTreeCV()", "rf-clf": "RF(100)", "logreg-clf": "logistic regression",
                   "sct": "SoftClassificationTree(depth=3)"}


#: the methods' parameters in smoke mode: a small search, short fits
SMOKE_PARAMS = {"sct-cv": {"depths": (1, 2), "cv": 2}, "sct": {"max_iter": 2}}


def confirm(jobs: int, report_only: bool) -> list[str]:
    """Run (or read) the confirm stage's store and the lines of its report."""
    from srtopt.datasets import CLASSIFICATION_DATASETS
    from srtopt.experiments.runner import run_benchmark
    from srtopt.experiments.store import ResultStore

    GROUPS = class_groups()
    if not report_only:
        run_benchmark(bench_datasets(pick(list(CLASSIFICATION_DATASETS), GROUPS["tune"] + GROUPS["confirm"])), [3],
                      list(CONFIRM_METHODS), folds=pick(4, 2), seeds=1, split_seed=0, store=results() / CONFIRM_STORE,
                      jobs=pick(jobs, 1), quiet=True, params=pick(None, SMOKE_PARAMS))
    with ResultStore(results() / CONFIRM_STORE, readonly=True) as store:
        runs = store.dataframe(status="ok")
    runs["dataset"] = runs["dataset"].map(bench_slug)
    per = runs.groupby(["method", "dataset"])[["accuracy_test", "log_loss_test", "seconds"]].mean()
    groups = {"the 10 held-out datasets": GROUPS["confirm"], "the 10 tuning datasets": GROUPS["tune"],
              "all 20": GROUPS["tune"] + GROUPS["confirm"]}
    lines = ["# SoftClassificationTreeCV on the 20 classification datasets", "",
             "Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python benchmarks/decisions/classification_cv.py "
             "--stage confirm` (the classification protocol: 4-fold stratified CV, split seed 0, one seed; the "
             "store's runs, one method after another on a 2-core machine shared with other work: compare the seconds "
             "within a row of datasets only).", "",
             "| datasets | " + " | ".join(f"{name}: accuracy, log loss, fit s" for name in CONFIRM_METHODS.values()) +
             " |", "|---|" + "---:|" * len(CONFIRM_METHODS)]
    for label, names in groups.items():
        cells = []
        for method in CONFIRM_METHODS:
            means = per.loc[method].loc[names].mean()
            cells.append(f"{means['accuracy_test']:.4f}, {means['log_loss_test']:.3f}, {means['seconds']:.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Per dataset (test accuracy / test log loss; held out: the confirm datasets):", "",
              "| dataset | held out | " + " | ".join(CONFIRM_METHODS.values()) + " |",
              "|---|---|" + "---:|" * len(CONFIRM_METHODS)]
    for name in GROUPS["tune"] + GROUPS["confirm"]:
        cells = [f"{per.loc[(m, name), 'accuracy_test']:.3f} / {per.loc[(m, name), 'log_loss_test']:.3f}"
                 for m in CONFIRM_METHODS]
        lines.append(f"| {name} | {'yes' if name in GROUPS['confirm'] else ''} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=("tune", "confirm"), default="tune")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--report-only", action="store_true")
    add_smoke(parser)
    args = parser.parse_args(argv)
    start(args)
    for stage in pick([args.stage], ["tune", "confirm"]):
        if stage == "confirm":
            write_report(results() / "classification_cv_confirm.md", confirm(args.jobs, args.report_only))
            continue
        datasets = class_groups()[stage]
        if not args.report_only:
            tasks = [(d, f, c) for d in datasets for f in outer_folds() for c in (*ANCHORS, *candidates())]
            run_into_store(results() / STORE, run, tasks, key, args.jobs,
                           describe=lambda r: f"{r['dataset']} fold {r['fold']} {r['candidate']}: test accuracy "
                                              f"{r['test']['accuracy']:.3f}, {r['seconds']:.2f} s")
        write_report(results() / f"classification_cv_{stage}.md", report(stage, datasets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
