"""What the classification constraints guarantee and what they cost.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=/path/to/datasets_classification \\
        python benchmarks/decisions/classification_constraints.py

* class recall: on pima (its minority class "positive", 35 % of the rows), a recall bound of 0.9 on that
  class (``"class_recall:class=positive,lower=0.9"``), depth 3, 4-fold stratified CV:
  per fold the recall of the class and the accuracy of ``predict()`` on the training part and on the
  test part, against the unconstrained tree;
* monotone probability: on the same folds, ``monotonic_cst`` on pima's "Plas" (+1: the glucose level)
  and the count of test rows whose probability of the positive class, swept over plas's training
  range, moves against the sign (0 expected), and the test accuracy it costs;
* fairness, the groups Age > 30 and the others (Age stays a feature): ``parity:gap=0.02``,
  ``equalized_odds:gap=0.05``, ``group_recall:class=positive,lower=0.8`` and ``probability_parity:gap=0.02``:
  fairlearn's demographic parity and equalized odds differences of ``predict()`` on the training and the test
  part, and the accuracy;
* the cost: every constrained fit's seconds over the free fit's on the same fold (the least of 3 fits each, the
  free tree fitted once before, so that no fit pays the compiled kernels' loading; one BLAS thread), and the
  median ratio per constraint over the folds.

Prints and writes ``benchmarks/results/classification_constraints.md``.  ``--smoke``: a tiny stand-in of pima (its
columns and classes), fold 0, one fit per timing, the trees at max_iter 2.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits
from sklearn.model_selection import StratifiedKFold

from benchmarks.common import add_smoke, budget, pick, results, start, write_report
from benchmarks.common.data import load
from benchmarks.common.protocol import outer_folds

BOUND = 0.9


def recall(model, X, y, label) -> float:
    return float(np.mean(model.predict(X)[y == label] == label))


def against_sign(model, X, j, sign, grid) -> int:
    """Rows of X whose probability of ``classes_[1]``, swept over ``grid`` in feature j, moves against ``sign``."""
    count = 0
    for row in X:
        swept = np.tile(row, (len(grid), 1))
        swept[:, j] = grid
        count += int(np.any(sign * np.diff(model.predict_proba(swept)[:, 1]) < -1e-12))
    return count


FAIRNESS = {"parity": "parity:gap=0.02", "equalized odds": "equalized_odds:gap=0.05",
            "group recall": "group_recall:class=positive,lower=0.8", "probability parity": "probability_parity:gap=0.02"}


def differences(model, X, y, group) -> tuple[float, float]:
    """(demographic parity difference, equalized odds difference) of ``predict()`` on (X, y), as fairlearn."""
    from srtopt.fairness import demographic_parity_difference, equalized_odds_difference

    prediction = model.predict(X)
    return (demographic_parity_difference(y, prediction, group, "positive"),
            equalized_odds_difference(y, prediction, group, "positive"))


def tree(**params):
    """The depth-3 tree of ``params`` (max_iter 2 in smoke mode)."""
    from srtopt import SoftClassificationTree

    return SoftClassificationTree(depth=3, random_state=0, **params, **budget())


def folds(X, y):
    """The outer folds: 4-fold stratified CV, split seed 0 (fold 0 alone in smoke mode)."""
    return itertools.islice(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y), len(outer_folds()))


def timed_fit(model, X, y, repeats=3, **fit):
    """The least seconds of ``repeats`` fits of ``model`` (warnings silenced; the machine may be shared)."""
    seconds = []
    for _ in range(pick(repeats, 1)):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y, **fit)
        seconds.append(time.perf_counter() - start)
    return min(seconds)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_smoke(parser)
    start(parser.parse_args(argv))
    data = load("pima")
    X, y = np.asarray(data.X, float), np.asarray(data.y)
    names = list(data.feature_names)
    labels, counts = np.unique(y, return_counts=True)
    labels = [str(label) for label in labels]
    minority = labels[int(np.argmin(counts))]
    j = names.index("Plas")
    lines = ["Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python benchmarks/decisions/"
             "classification_constraints.py` (depth 3, 4-fold stratified CV, split seed 0)", "",
             f"Class recall >= {BOUND} on pima's minority class {minority!r}:", "",
             "| fold | tree | training recall | training accuracy | test recall | test accuracy |",
             "|---:|---|---:|---:|---:|---:|"]
    monotone = ["", f"Monotone probability of {labels[1]!r} in {names[j]!r} (+1):", "",
                "| fold | tree | test rows against the sign | test accuracy |", "|---:|---|---:|---:|"]
    for fold, (train, test) in enumerate(folds(X, y)):
        grid = np.linspace(X[train, j].min(), X[train, j].max(), 50)
        trees = {"free": tree(), "recall bound": tree(constraints=f"class_recall:class={minority},lower={BOUND}"),
                 "monotone": tree(monotonic_cst={j: 1})}
        for name, model in trees.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X[train], y[train])
            accuracy = float(np.mean(model.predict(X[test]) == y[test]))
            if name != "monotone":
                lines.append(f"| {fold} | {name} | {recall(model, X[train], y[train], minority):.3f} | "
                             f"{model.score(X[train], y[train]):.3f} | {recall(model, X[test], y[test], minority):.3f} | "
                             f"{accuracy:.3f} |")
            if name != "recall bound":
                monotone.append(f"| {fold} | {name} | {against_sign(model, X[test], j, 1, grid)} | {accuracy:.3f} |")
    write_report(results() / "classification_constraints.md", lines + monotone + fairness(X, y, names, minority))
    return 0


def fairness(X, y, names, minority) -> list[str]:
    """The fairness constraints' table and every constraint's fit seconds over the free fit's."""
    group = X[:, names.index("Age")] > 30
    lines = ["", "Fairness, the groups Age > 30 and the others (fairlearn's differences of `predict()`; dp: "
             "demographic parity, eo: equalized odds):", "",
             "| fold | tree | training dp | training eo | training accuracy | test dp | test eo | test accuracy |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    specs = {"recall bound": (f"class_recall:class={minority},lower={BOUND}", None), "monotone": (None, None),
             **{name: (spec, "groups") for name, spec in FAIRNESS.items()}}
    ratios = {name: [] for name in specs}
    with threadpool_limits(1):
        for fold, (train, test) in enumerate(folds(X, y)):
            fit = {"sensitive_features": group[train]}
            free = tree()
            timed_fit(free, X[train], y[train], repeats=1)  # the kernels loaded, the caches warm
            seconds = timed_fit(free, X[train], y[train])
            for name, (spec, needs) in specs.items():
                params = {"monotonic_cst": {names.index("Plas"): 1}} if name == "monotone" else {"constraints": spec}
                model = tree(**params)
                ratios[name].append(timed_fit(model, X[train], y[train], **(fit if needs else {})) / seconds)
                if needs:
                    train_d, test_d = (differences(model, X[part], y[part], group[part]) for part in (train, test))
                    lines.append(f"| {fold} | {name} | {train_d[0]:.4f} | {train_d[1]:.4f} | "
                                 f"{model.score(X[train], y[train]):.3f} | {test_d[0]:.4f} | {test_d[1]:.4f} | "
                                 f"{model.score(X[test], y[test]):.3f} |")
            train_d, test_d = (differences(free, X[part], y[part], group[part]) for part in (train, test))
            lines.append(f"| {fold} | free | {train_d[0]:.4f} | {train_d[1]:.4f} | {free.score(X[train], y[train]):.3f} "
                         f"| {test_d[0]:.4f} | {test_d[1]:.4f} | {free.score(X[test], y[test]):.3f} |")
    lines += ["", "Fit seconds over the free fit's on the same fold (the least of 3 fits each; one BLAS thread):", "",
              "| constraint | folds 0-3 | median |", "|---|---|---:|"]
    lines += [f"| {name} | {', '.join(f'{r:.2f}' for r in values)} | {np.median(values):.2f} |"
              for name, values in ratios.items()]
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
