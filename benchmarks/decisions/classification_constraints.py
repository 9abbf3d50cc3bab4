"""What the classification constraints guarantee and what they cost.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=/path/to/datasets_classification \\
        python benchmarks/decisions/classification_constraints.py

* class recall: on pima (its minority class "positive", 35 % of the rows), a recall bound of 0.9 on that
  class (``"class_recall:class=positive,lower=0.9"``), depth 3, 4-fold stratified CV:
  per fold the recall of the class and the accuracy of ``predict()`` on the training part and on the
  test part, against the unconstrained tree;
* monotone probability: on the same folds, ``monotonic_cst`` on pima's "Plas" (+1: the glucose level)
  and the count of test rows whose probability of the positive class, swept over plas's training
  range, moves against the sign (0 expected), and the test accuracy it costs.

Prints and writes ``benchmarks/results/classification_constraints.md``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold

from benchmarks.common import RESULTS, write_report

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


def main() -> int:
    from srtopt import SoftClassificationTree
    from srtopt.datasets import load

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
    for fold, (train, test) in enumerate(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y)):
        grid = np.linspace(X[train, j].min(), X[train, j].max(), 50)
        trees = {"free": SoftClassificationTree(depth=3, random_state=0),
                 "recall bound": SoftClassificationTree(depth=3, random_state=0,
                                                        constraints=f"class_recall:class={minority},lower={BOUND}"),
                 "monotone": SoftClassificationTree(depth=3, random_state=0, monotonic_cst={j: 1})}
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
    write_report(RESULTS / "classification_constraints.md", lines + monotone)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
