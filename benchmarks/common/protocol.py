"""The protocols the scripts share: the paper's folds, the regression decisions' datasets and runs (4-fold CV,
KFold shuffled with seed 0), the classification protocol (4-fold stratified CV, split seed 0, X min-max scaled
on the training fold) and its scores.  In smoke mode the groups of datasets shrink to their first ones and the
outer folds to one."""

from __future__ import annotations

import time

import numpy as np

from srtopt.experiments.protocol import PROBABILITY_FLOOR as FLOOR  # the floor on a probability
from srtopt.experiments.protocol import fold_indices, scale_fold

from . import heldout, pick
from .data import load

__all__ = ["FLOOR", "GROUPS", "PAPER_CONFIRM", "PAPER_TUNE", "baseline",
           "class_fold", "class_groups", "first_fold", "mean_table", "outer_folds", "paper_fold",
           "regression_data", "regression_groups", "regression_run", "test_scores"]

#: the paper's datasets the regression defaults were chosen on, and the others (benchmarks/decisions/defaults.py)
PAPER_TUNE = ["airfoil", "auto_mpg", "friedman", "housing", "kin8nm", "lpga2009", "puma", "yacht"]
PAPER_CONFIRM = ["abalone", "ailerons", "compactiv", "computer", "cpu_small", "delta_ailerons", "elevators"]
#: the 20 classification datasets: the tuning half and the held-out half
GROUPS = {
    "tune": ["australian", "bupa", "ionosphere", "mammographic", "monk_2", "balance", "dermatology", "glass",
             "yeast", "segment"],
    "confirm": ["pima", "wdbc", "car", "ecoli", "vowel", "satimage", "page_blocks", "splice", "german", "vehicle"],
}


def outer_folds() -> range:
    """The outer folds of the 4-fold protocols (fold 0 alone in smoke mode)."""
    return range(pick(4, 1))


def paper_fold(X, y, k, seed=0):
    """(X_train, X_test, y_train, y_test) of fold k of the paper's split (KFold(4), ``seed``), X
    min-max scaled and y standardized on the training part."""
    train, test = fold_indices(len(y), 4, seed, k)
    return scale_fold(X[train], X[test], y[train], y[test])[:4]


def first_fold(name, data_home=None):
    """:func:`paper_fold` 0 of the dataset ``name``."""
    X, y, _ = load(name, data_home=data_home)
    return paper_fold(X, y, 0)


# ---------------------------------------------------------------- the regression decisions
def regression_groups() -> dict:
    """{"tune": the paper's and held-out datasets the defaults were chosen on, "confirm": the others}."""
    groups = {"tune": PAPER_TUNE + heldout.TUNING, "confirm": PAPER_CONFIRM + heldout.CONFIRM}
    return pick(groups, {"tune": [PAPER_TUNE[0], heldout.TUNING[0]], "confirm": [heldout.CONFIRM[0]]})


def regression_data(name):
    """(X, y) of a paper or held-out dataset."""
    if name in PAPER_TUNE + PAPER_CONFIRM:
        X, y, _ = load(name)
        return X, y
    return heldout.load(name)


def baseline(name, depth, seed):
    """The model of a baseline of the regression decisions: "RF(100)", "linear regression" or "CART"."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression
    from sklearn.tree import DecisionTreeRegressor

    return {"RF(100)": lambda: RandomForestRegressor(100, n_jobs=1, random_state=seed),
            "linear regression": LinearRegression,
            "CART": lambda: DecisionTreeRegressor(max_depth=depth, random_state=seed)}[name]()


def regression_run(dataset, depth, variant, model, fold, seed) -> dict:
    """One stored row of the regression decisions: ``model`` fitted on the raw training fold (one BLAS thread),
    its seconds and test and training R^2; a soft tree's objective and unclipped test R^2 too."""
    from sklearn.metrics import r2_score
    from threadpoolctl import threadpool_limits

    X, y = regression_data(dataset)
    train, test = fold_indices(len(y), 4, 0, fold)
    with threadpool_limits(1):
        start = time.perf_counter()
        model.fit(X[train], y[train])
        seconds = time.perf_counter() - start
        pred, pred_train = model.predict(X[test]), model.predict(X[train])
    row = dict(dataset=dataset, depth=depth, variant=variant, fold=fold, seed=seed, seconds=seconds,
               r2=r2_score(y[test], pred), r2_train=r2_score(y[train], pred_train))
    if hasattr(model, "objective_"):
        row["objective"] = float(model.objective_)
        model.set_params(clip_predictions=False)
        row["r2_unclipped"] = r2_score(y[test], model.predict(X[test]))
    return row


def mean_table(rows, datasets, variants, depth, key="r2") -> str:
    """The Markdown table of the mean ``key`` per dataset and variant at ``depth``, and the mean over datasets."""
    cells = {(r["dataset"], r["variant"]): [] for r in rows}
    for r in rows:
        if r["depth"] == depth:
            cells[(r["dataset"], r["variant"])].append(r[key])
    head = "| dataset | " + " | ".join(variants) + " |\n|---|" + "---:|" * len(variants)
    lines, means = [head], {v: [] for v in variants}
    for d in datasets:
        values = [np.mean(cells.get((d, v)) or [np.nan]) for v in variants]
        for v, x in zip(variants, values):
            means[v].append(x)
        lines.append(f"| {d} | " + " | ".join(f"{x:.3f}" for x in values) + " |")
    lines.append("| **mean** | " + " | ".join(f"**{np.nanmean(means[v]):.3f}**" for v in variants) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- the classification protocol
def class_groups() -> dict:
    """:data:`GROUPS`, or their first datasets in smoke mode."""
    return pick(GROUPS, {name: names[:1] for name, names in GROUPS.items()})


def class_fold(dataset, fold):
    """(X_train, X_test, train codes, test codes) of the classification protocol's outer fold: X min-max scaled
    on the training fold, the labels as codes of the sorted training classes (-1: a class the training fold
    lacks)."""
    from srtopt.experiments.protocol import _codes, _min_max

    X, y, _ = load(dataset)
    train, test = fold_indices(len(y), 4, 0, fold, y)
    X_train, X_test = _min_max(X[train], X[test])[:2]
    return (X_train, X_test, *_codes(y[train], y[test]))


def test_scores(model, X, y) -> dict:
    """Test accuracy and mean log loss (a class the fit did not see: probability FLOOR)."""
    P = np.zeros((len(y), int(max(y.max(), np.max(model.classes_))) + 1))
    P[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(X)
    known = y >= 0
    p = np.where(known, P[np.arange(len(y)), np.maximum(y, 0)], 0.0)
    return {"accuracy": float(np.mean(np.argmax(P, axis=1) == y)),
            "log_loss": float(-np.mean(np.log(np.clip(p, FLOOR, 1.0))))}
