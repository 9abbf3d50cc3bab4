"""The same data, the same answer: what the searches choose from run to run and from seed to seed.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=/path/to/datasets_classification SRTOPT_TABULAR_DATA=/path/to/tabular \\
        SRTOPT_PANEL_DATA=/path/to/panel python benchmarks/decisions/search_seeds.py [--jobs 2]

Runs, each one fit of a search on fold 0 and its test predictions:

* the 20 classification datasets (the classification protocol's fold 0: stratified 4-fold, seed 0, X min-max scaled
  on the training rows, labels as codes): ``SoftClassificationTreeCV(random_state=s)`` for s in 0..4, and
  ``SoftClassificationTreeCV()`` (random_state None) twice;
* the 18 shared tables (fold 0 of (Stratified)KFold(4, shuffle, seed 0), the DataFrame as it is):
  ``SoftRegressionTreeCV()`` or ``SoftClassificationTreeCV()`` twice;
* the 20 classification datasets on every fold of the classification protocol, ``random_state=0``: the mean test
  accuracy and log loss over the 20, beside what the previous search (srtopt 0.3) and RF(100) scored there.

Reported: per seed the mean test accuracy over the 20 sets and its spread over the seeds, each set's spread; whether
the two default runs predicted the same, byte for byte (a digest of the test predictions).  Runs go to
``benchmarks/results/search_seeds.jsonl`` (resumable), the report to ``benchmarks/results/search_seeds.md``.
``--smoke``: two stand-ins, seeds 0-1, depths 1-2 and 2 folds.

``--tables /path/to/tables``: instead, the tables of a folder of one's own (``benchmarks.common.data.folder_tables``),
fold 0, seeds 0-4 and the two default runs each; the store and the report in ``--out`` (default
``benchmarks/results/private/<folder name>/``, which git ignores).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import time
import warnings

import numpy as np

from benchmarks.common import budget, parse, pick, write_report
from benchmarks.common.data import add_tables, table_fold, tables_of
from benchmarks.common.protocol import class_fold, class_groups
from benchmarks.common.store import run_into_store, stored

SEEDS = pick(range(5), range(2))
#: a default run's two repeats
REPEATS = ("none", "none again")
#: the classification protocol's four folds, test accuracy / log loss over the 20 datasets, of the search of srtopt
#: 0.3 (SoftClassificationTreeCV's defaults then; benchmarks/results/classification_selection_confirm.md) and RF(100)
BEFORE = {"the search of srtopt 0.3": (0.8713, 0.339), "RF(100)": (0.8728, 0.472)}


def search(task, seed):
    """The search of ``task`` with its defaults, ``random_state`` the run's seed (None for the default runs)."""
    import srtopt

    params = pick({}, {"depths": (1, 2), "cv": 2})
    random_state = None if seed in REPEATS else int(seed)
    cls = srtopt.SoftClassificationTreeCV if task == "classification" else srtopt.SoftRegressionTreeCV
    tree = (srtopt.SoftClassificationTree if task == "classification" else srtopt.SoftRegressionTree)(**budget())
    return cls(tree, random_state=random_state, **params)


def run(collection, name, seed, folder=None) -> dict:
    """One search of the ``collection``'s table ``name`` (the shared tables, or the tables of ``folder``, a folder
    of one's own): ``seed`` a seed or a repeat of :data:`REPEATS` (fold 0), or "fold k" (the classification
    protocol's fold k, seed 0)."""
    fold, random_state = (int(seed.split()[1]), "0") if seed.startswith("fold ") else (0, seed)
    if collection in ("tables", "own"):
        X_train, X_test, y_train, y_test, task = table_fold(name, folder if collection == "own" else None)
    else:
        (X_train, X_test, y_train, y_test), task = class_fold(name, fold), "classification"
    model = search(task, random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - started
        predictions = model.predict(X_test) if task == "regression" else model.predict_proba(X_test)
    score = float(np.mean(model.predict(X_test) == y_test)) if task == "classification" else \
        float(model.score(X_test, y_test))
    extra = {"log_loss": _log_loss(predictions, model.classes_, y_test)} if task == "classification" else {}
    return {"collection": collection, "dataset": name, "seed": seed, "score": score, "seconds": seconds, **extra,
            "chosen": {k: str(v) for k, v in model.best_params_.items()},
            "digest": hashlib.sha256(np.ascontiguousarray(predictions, dtype=np.float64).tobytes()).hexdigest()}


def _log_loss(P, classes, y) -> float:
    """The mean test log loss, a class the fit did not see at probability FLOOR."""
    from benchmarks.common.protocol import FLOOR

    column = {label: k for k, label in enumerate(np.asarray(classes).tolist())}
    p = np.array([P[i, column[label]] if label in column else 0.0 for i, label in enumerate(np.asarray(y).tolist())])
    return float(-np.mean(np.log(np.clip(p, FLOOR, 1.0))))


def tasks() -> list[tuple]:
    from srtopt.datasets import PANEL_DATASETS, TABULAR_DATASETS

    classification = [name for names in class_groups().values() for name in names]
    tables = pick(sorted([*TABULAR_DATASETS, *PANEL_DATASETS]), ["penguins"])
    folds = [f"fold {k}" for k in pick(range(4), range(1))]
    return ([("classification", name, str(seed)) for name in classification for seed in (*SEEDS, *REPEATS)]
            + [("tables", name, seed) for name in tables for seed in REPEATS]
            + [("classification folds", name, fold) for name in classification for fold in folds])


def own_tasks(tables) -> list[tuple]:
    """The runs on the tables of a folder of one's own ({name: task}): seeds 0-4 and the two default runs of
    each."""
    return [("own", name, str(seed)) for name in sorted(tables) for seed in (*SEEDS, *REPEATS)]


def report(rows, folder=None) -> list[str]:
    """The report's lines: the seeds' table of each collection run, every fold's scores, and the two default runs."""
    command = ("`PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... SRTOPT_TABULAR_DATA=... SRTOPT_PANEL_DATA=... python "
               "benchmarks/decisions/search_seeds.py --jobs 2`" if folder is None else
               f"`PYTHONPATH=. python benchmarks/decisions/search_seeds.py --tables {folder}`")
    lines = ["# The same data, the same answer: the searches across seeds and runs", "",
             f"Command: {command} (fold 0; the defaults of the searches).", ""]
    lines += _seeds(rows, "classification", "SoftClassificationTreeCV(random_state=s) on the 20 classification sets: "
                                            "test accuracy")
    lines += _seeds(rows, "own", "The search with random_state=s on your tables: test accuracy or R^2")
    folded = [r for r in rows if r["collection"] == "classification folds"]
    if folded:
        lines += ["## SoftClassificationTreeCV(random_state=0) on every fold of the 20 classification sets", "",
                  "| method | test accuracy | test log loss | runs |", "|---|---:|---:|---:|",
                  f"| SoftClassificationTreeCV() | **{np.mean([r['score'] for r in folded]):.4f}** | "
                  f"{np.mean([r['log_loss'] for r in folded]):.3f} | {len(folded)} |"]
        lines += [f"| {name} | {accuracy:.4f} | {loss:.3f} | 80 |" for name, (accuracy, loss) in BEFORE.items()]
        lines += ["", f"Seconds per search: {np.mean([r['seconds'] for r in folded]):.2f} on average.", ""]
    lines += ["## Two runs with the defaults (random_state None): the same test predictions?", "",
              "| collection | tables | identical | different |", "|---|---:|---:|---|"]
    for collection in ("classification", "tables", "own"):
        pairs = {}
        for r in rows:
            if r["collection"] == collection and r["seed"] in REPEATS:
                pairs.setdefault(r["dataset"], {})[r["seed"]] = r["digest"]
        done = {n: p for n, p in pairs.items() if len(p) == 2}
        differ = sorted(n for n, p in done.items() if p[REPEATS[0]] != p[REPEATS[1]])
        if done:
            lines.append(f"| {collection} | {len(done)} | {len(done) - len(differ)} | {', '.join(differ) or '-'} |")
    return lines


def _seeds(rows, collection, title) -> list[str]:
    """The table of a collection's runs across the seeds: each set's score per seed, its spread and the choice of
    the first seed, and the mean's spread (none before every set has every seed)."""
    runs = [r for r in rows if r["collection"] == collection]
    names = sorted({r["dataset"] for r in runs})
    cells = {(r["dataset"], r["seed"]): r for r in runs}
    seeds = [str(s) for s in SEEDS if all((n, str(s)) in cells for n in names)]
    if not names or not seeds:
        return []
    lines = [f"## {title}", "", "| dataset | " + " | ".join(f"seed {s}" for s in seeds) + " | spread | chosen (seed "
             f"{seeds[0]}) |", "|---|" + "---:|" * (len(seeds) + 1) + "---|"]
    spreads = []
    for name in names:
        scores = [cells[name, s]["score"] for s in seeds]
        spreads.append(max(scores) - min(scores))
        chosen = cells[name, seeds[0]]["chosen"]
        lines.append(f"| {name} | " + " | ".join(f"{v:.3f}" for v in scores) + f" | {spreads[-1]:.3f} | "
                     f"D{chosen['depth']} {chosen['leaf']} |")
    means = [np.mean([cells[n, s]["score"] for n in names]) for s in seeds]
    spread = max(means) - min(means)
    return lines + ["| **mean** | " + " | ".join(f"**{m:.4f}**" for m in means) + f" | **{spread:.4f}** | |", "",
                    f"The mean over the sets spreads by {spread:.4f} over the seeds; the largest spread of one set is "
                    f"{max(spreads):.3f} ({names[int(np.argmax(spreads))]}).", ""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1)
    add_tables(parser)
    args = parse(parser, argv)
    tables, out = tables_of(parser, args)
    todo, fit = (tasks(), run) if tables is None else (own_tasks(tables), functools.partial(run, folder=args.tables))
    store = out / "search_seeds.jsonl"
    run_into_store(store, fit, todo, key=lambda r: (r["collection"], r["dataset"], r["seed"]), jobs=args.jobs,
                   describe=lambda r: f"{r['dataset']} seed {r['seed']}: {r['score']:.4f} ({r['seconds']:.1f} s)")
    write_report(out / "search_seeds.md", report(stored(store), args.tables))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
