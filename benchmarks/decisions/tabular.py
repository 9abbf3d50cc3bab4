"""Real tabular data (text columns, empty cells): the soft trees fitted on the table as it is, against the same
trees and the usual models behind scikit-learn's usual pipeline, and the models that take tables natively.

    PYTHONPATH=. SRTOPT_TABULAR_DATA=/path/to/datasets_tabular python benchmarks/decisions/tabular.py

Datasets: the eight tables of ``srtopt.datasets.TABULAR_DATASETS`` (five classification, three regression),
read from ``SRTOPT_TABULAR_DATA``.  Protocol: fold 0 of KFold / StratifiedKFold(4, shuffle=True,
random_state=0) (``--folds 4`` for every fold); accuracy (classification) or R^2 (regression) on the test rows,
fit seconds; random_state 0.

Models:

* ``soft tree``: SoftRegressionTree / SoftClassificationTree (depth 3, defaults) on the raw table;
* ``soft tree, imputed``: the same on the table whose numeric empty cells hold the training median (no
  missing indicators), the imputation-alone reading;
* ``soft tree, leaf_ridge=1``: the regression tree without its leaf-ridge comparison (``leaf_ridge="auto"``);
* ``soft tree, pooled below 5`` / ``30``: categories of fewer training rows pooled (the default: 10);
* ``soft tree, group ridge``: a text column's indicators enter the leaves scaled by 1 / sqrt(its levels), so
  the l2 term on their weights grows with the levels (a group's weights shrink as one feature's);
* ``soft tree CV``: the search, SoftRegressionTreeCV() / SoftClassificationTreeCV() with their defaults, on the
  raw table (the rows of ``benchmarks/results/tabular.md`` were measured with srtopt 0.3's searches, commit
  9d68697: SoftRegressionTreeCV over depths 1-3 by the best mean and by the one-standard-error rule, and
  SoftClassificationTreeCV; ``decisions/search.py`` measures the one search on these tables);
* ``... (pipeline)``: behind the usual pipeline (one-hot with ``min_frequency=10`` and a "(missing)" category
  for text columns, median imputation with indicators for numeric ones): the soft tree, ridge / logistic
  regression (RidgeCV / LogisticRegression), CART of depth 4, RandomForest(100);
* ``HGB``: HistGradientBoosting with native categories and NaN;
* ``EBM``: interpret's ExplainableBoosting (one outer bag) on the raw table (optional: left out when
  ``interpret`` is missing).

Runs go to ``benchmarks/results/tabular.jsonl`` (not committed; a run already there is skipped); the table to
``benchmarks/results/tabular.md``.  ``--smoke``: a tiny stand-in of one classification and one regression table
(a text column, empty cells), fold 0, every model (EBM skipped, saying so, without interpret), the searches on
depths 1-2 and 2 folds, the trees at max_iter 2.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks.common import budget, parse, pick, results, skip, write_report
from benchmarks.common.data import load_table, pipeline
from benchmarks.common.store import run_into_store, stored

STORE = "tabular.jsonl"  # in benchmarks/results/
MODELS = ["soft tree", "soft tree, imputed", "soft tree, leaf_ridge=1", "soft tree, pooled below 5", "soft tree, pooled below 30",
          "soft tree, group ridge", "soft tree CV", "soft tree (pipeline)", "soft tree CV (pipeline)",
          "linear (pipeline)", "CART (pipeline)", "RF (pipeline)", "HGB", "EBM"]
#: the variants that encode the table in the benchmark (a pooling threshold, or the columns' groups for the leaves)
ENCODED = {"soft tree, pooled below 5": 5, "soft tree, pooled below 30": 30, "soft tree, group ridge": 10}


def search(classify):
    """The soft tree's search with its defaults (smaller in smoke mode: depths 1-2, 2 folds)."""
    import srtopt

    smaller = pick({}, {"cv": 2, "depths": (1, 2)})
    tree = (srtopt.SoftClassificationTree if classify else srtopt.SoftRegressionTree)(random_state=0, **budget())
    return (srtopt.SoftClassificationTreeCV if classify else srtopt.SoftRegressionTreeCV)(tree, **smaller)


def _text_columns(X) -> list:
    """The columns of X that hold text (pandas' object or string dtype)."""
    import pandas as pd

    return [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]


def make(model, task, X):
    from sklearn.ensemble import (HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                                  RandomForestClassifier, RandomForestRegressor)
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    import srtopt

    classify = task == "classification"
    tree = (srtopt.SoftClassificationTree if classify else srtopt.SoftRegressionTree)(depth=3, random_state=0,
                                                                                      **budget())
    if model in ("soft tree", "soft tree, imputed"):
        return tree
    if model == "soft tree, leaf_ridge=1":
        return tree.set_params(leaf_ridge=1.0)
    if model.startswith("soft tree CV"):
        found = search(classify)
        return pipeline(found, X) if model.endswith("(pipeline)") else found
    if model == "soft tree (pipeline)":
        return pipeline(tree, X)
    if model == "linear (pipeline)":
        return pipeline(LogisticRegression(max_iter=2000) if classify else RidgeCV(alphas=np.logspace(-3, 3, 13)), X)
    if model == "CART (pipeline)":
        return pipeline((DecisionTreeClassifier if classify else DecisionTreeRegressor)(max_depth=4, random_state=0), X)
    if model == "RF (pipeline)":
        return pipeline((RandomForestClassifier if classify else RandomForestRegressor)(100, random_state=0), X)
    if model == "HGB":
        kind = HistGradientBoostingClassifier if classify else HistGradientBoostingRegressor
        return kind(categorical_features="from_dtype", random_state=0)
    if model == "EBM":
        from interpret.glassbox import ExplainableBoostingClassifier, ExplainableBoostingRegressor

        return (ExplainableBoostingClassifier if classify else ExplainableBoostingRegressor)(
            outer_bags=1, n_jobs=1, random_state=0)
    raise ValueError(model)


class GroupScaledBasis:
    """The linear leaf basis [1, x_s * scale]: the indicators of a text column of L levels scaled by 1 /
    sqrt(L), so that eq. (obj)'s l2 term weighs their coefficients L times (the ``group ridge`` variant)."""

    @staticmethod
    def make(encoder):
        from srtopt.bases import LinearBasis

        sizes = np.bincount(encoder.groups)[encoder.groups]
        scale = np.where(encoder.categorical(), 1.0 / np.sqrt(sizes), 1.0)

        class Scaled(LinearBasis):
            def design(self, Xs):
                return np.hstack([np.ones((len(Xs), 1)), Xs * scale])

            @property
            def key(self):
                return ("group-scaled", self.n_features, scale.tobytes())

        return Scaled(len(scale))


def encoded_run(model, task, X_train, X_test, n_classes):
    """(estimator, train, test) of a variant that encodes the table here (:data:`ENCODED`); ``n_classes``: of the
    training labels (None for regression)."""
    import srtopt
    from srtopt.encoding import TableEncoder
    from srtopt.models.leaves import ClassLeaves, RegressionLeaves
    from srtopt.models.terms import SQUARED
    from srtopt.models.terms.class_losses import LogLoss

    encoder = TableEncoder(ENCODED[model]).fit(X_train)
    A, B = encoder.transform(X_train), encoder.transform(X_test)
    classify = task == "classification"
    kind = srtopt.SoftClassificationTree if classify else srtopt.SoftRegressionTree
    if model != "soft tree, group ridge":
        return kind(depth=3, random_state=0, **budget()), A, B
    basis = GroupScaledBasis.make(encoder)
    leaves = ClassLeaves(LogLoss(), n_classes, basis) if classify else RegressionLeaves(SQUARED, basis)
    return kind(depth=3, random_state=0, leaf=leaves, **budget()), A, B


def prepared(model, X_train, X_test):
    """The tables a model gets: the raw ones; medians in the numeric empty cells (``imputed``); text as pandas
    categories (HGB's native categories)."""
    if model == "soft tree, imputed":
        numbers = [c for c in X_train.columns if c not in _text_columns(X_train)]
        medians = X_train[numbers].median()
        return X_train.fillna(medians), X_test.fillna(medians)
    if model == "HGB":
        text = _text_columns(X_train)
        X_train, X_test = X_train.copy(), X_test.copy()
        for c in text:
            categories = X_train[c].dropna().unique()
            X_train[c] = X_train[c].astype("category").cat.set_categories(categories)
            X_test[c] = X_test[c].astype("category").cat.set_categories(categories)
        return X_train, X_test
    return X_train, X_test


def run(dataset, model, fold):
    from sklearn.metrics import accuracy_score, r2_score
    from threadpoolctl import threadpool_limits

    from srtopt.experiments.protocol import fold_indices

    X, y, task = load_table(dataset)
    train, test = fold_indices(len(y), 4, 0, fold, y=y if task == "classification" else None)
    if model in ENCODED:
        n_classes = len(np.unique(y[train])) if task == "classification" else None
        estimator, X_train, X_test = encoded_run(model, task, X.iloc[train], X.iloc[test], n_classes)
    else:
        X_train, X_test = prepared(model, X.iloc[train], X.iloc[test])
        estimator = make(model, task, X)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        estimator.fit(X_train, y[train])
        seconds = time.perf_counter() - start
        predicted = estimator.predict(X_test)
    score = accuracy_score(y[test], predicted) if task == "classification" else r2_score(y[test], predicted)
    return dict(dataset=dataset, model=model, fold=fold, task=task, score=float(score), seconds=seconds)


def available(model) -> bool:
    import importlib.util

    return model != "EBM" or importlib.util.find_spec("interpret") is not None


def runnable(dataset, model) -> bool:
    """Whether the model exists for the dataset's task (the leaf-ridge comparison is the regression tree's)."""
    from srtopt.datasets import TABULAR_DATASETS

    return not (model == "soft tree, leaf_ridge=1" and TABULAR_DATASETS[dataset].task == "classification")


def report(datasets, models, folds) -> list[str]:
    rows = [r for r in stored(results() / STORE) if r["dataset"] in datasets and r["model"] in models and r["fold"] in folds]
    models = [m for m in models if any(r["model"] == m for r in rows)]
    cells = {}
    for r in rows:
        cells.setdefault((r["dataset"], r["model"]), []).append(r)
    lines = ["# Real tabular data", "",
             "Command: `PYTHONPATH=. SRTOPT_TABULAR_DATA=/path/to/datasets_tabular python benchmarks/decisions/tabular.py`",
             "", f"{len(rows)} runs, folds {sorted(folds)} of (Stratified)KFold(4, shuffle, seed 0); accuracy "
             "(classification) or test R^2 (regression); fit seconds in parentheses.", "",
             "| dataset | task | " + " | ".join(models) + " |", "|---|---|" + "---:|" * len(models)]
    means = {(task, m): [] for task in ("classification", "regression") for m in models}
    for d in datasets:
        task = next((r["task"] for r in rows if r["dataset"] == d), "?")
        values = []
        for m in models:
            runs = cells.get((d, m), [])
            score, seconds = (np.mean([r["score"] for r in runs]), np.mean([r["seconds"] for r in runs])) if runs else (
                np.nan, np.nan)
            if task in ("classification", "regression"):
                means[(task, m)].append(score)
            values.append(f"{score:.3f} ({seconds:.1f})")
        lines.append(f"| {d} | {task} | " + " | ".join(values) + " |")
    for task in ("classification", "regression"):
        lines.append(f"| **mean** | {task} | " + " | ".join(f"**{np.nanmean(means[(task, m)]):.3f}**" for m in models)
                     + " |")
    return lines


def main(argv=None) -> int:
    from srtopt.datasets import TABULAR_DATASETS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--datasets", nargs="+", default=list(TABULAR_DATASETS))
    parser.add_argument("--folds", type=int, default=1, help="how many of the 4 folds (1: fold 0)")
    parser.add_argument("--jobs", type=int, default=1)
    args = parse(parser, argv, ["--datasets", "credit_data", "ames"])
    models = [m for m in args.models if available(m)]
    for model in sorted(set(args.models) - set(models)):
        skip(model, "interpret is not installed")
    folds = list(range(args.folds))
    tasks = [(d, m, f) for d in args.datasets for m in models for f in folds if runnable(d, m)]
    run_into_store(results() / STORE, run, tasks, lambda r: (r["dataset"], r["model"], r["fold"]), args.jobs,
                   describe=lambda r: f"{r['dataset']} {r['model']} fold {r['fold']}: {r['score']:.3f}, "
                                      f"{r['seconds']:.1f} s")
    write_report(results() / "tabular.md", report(args.datasets, MODELS, folds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
