"""The soft classification tree's defaults, measured against the alternatives they replaced.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=/path/to/datasets_classification \\
        python benchmarks/decisions/classification.py --stage tune        # then --stage confirm

Each variant is ``SoftClassificationTree(depth=3, random_state=0, **variant)``, 4-fold stratified CV
(split seed 0), on two groups of the 20 classification datasets: **tune** (australian, bupa,
ionosphere, mammographic, monk_2, balance, dermatology, glass, yeast, segment), where the defaults
were chosen, and **confirm** (pima, wdbc, car, ecoli, vowel, satimage, page_blocks, splice, german,
vehicle), run with the chosen defaults against the closest alternatives only.  Prints and writes
``benchmarks/results/classification_defaults_<stage>.md``: per variant the mean test accuracy, log loss
and fit seconds over the group, and per dataset the accuracy.  ``--smoke``: both stages on their first dataset
(tiny), fold 0, every variant at max_iter 2 (a variant's own max_iter kept).
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold

from benchmarks.common import add_smoke, budget, pick, results, start, write_report
from benchmarks.common.data import load
from benchmarks.common.protocol import FLOOR, GROUPS, class_groups, outer_folds

EXACT_LN = ["newton:max_variables=800", "l-bfgs-b", "ipopt", "prox-gradient"]  # the LN steps solved to the end


def variants(stage: str) -> dict:
    """Name -> keyword arguments (the defaults are ``{}``)."""
    confirm = {"defaults": {}, "tol=None (5 macro iterations)": {"tol": None},
               "max_iter=10, tol=None": {"max_iter": 10, "tol": None},
               "exact LN steps, max_iter=10, tol=None": {"max_iter": 10, "tol": None, "ln_solver": ("auto", EXACT_LN)}}
    if stage == "confirm":
        return confirm
    return {**confirm, "tol=1e-2": {"tol": 1e-2}, "leaf='constant'": {"leaf": "constant"},
            "max_iter=3, tol=None": {"max_iter": 3, "tol": None}, "theta_b=0.8": {"theta_b": 0.8},
            "init='cluster'": {"init": "cluster"}, "no reassignment (eps1=0)": {"eps1": 0.0},
            "leaf l2 as C=10": {"leaf_C": 10}, "leaf l2 as C=1": {"leaf_C": 1}, "leaf l2 as C=0.1": {"leaf_C": 0.1}}


def estimator(variant: dict, p: int):
    """The variant's tree; "leaf_C": lambda_b = 1 / (C N), scikit-learn's C of a logistic regression per leaf
    (through leaf_ridge); ("auto", specs): the LN solvers "auto" tries."""
    from srtopt import SoftClassificationTree
    from srtopt.solvers import Auto

    params = {**budget(), **variant}
    if "leaf_C" in params:
        params["leaf_ridge"] = p * 2**3 / (2 * params.pop("leaf_C"))
    if isinstance(params.get("ln_solver"), tuple):
        params["ln_solver"] = Auto("ln", specs=params["ln_solver"][1])
    return SoftClassificationTree(depth=3, random_state=0, **params)


def run(name: str, variant: dict) -> dict:
    """Mean test accuracy, log loss and fit seconds of the variant over the 4 folds of dataset ``name``."""
    data = load(name)
    X, y = np.asarray(data.X, float), np.asarray(data.y)
    scores = {"accuracy": [], "log_loss": [], "seconds": []}
    folds = StratifiedKFold(4, shuffle=True, random_state=0).split(X, y)
    for train, test in itertools.islice(folds, len(outer_folds())):
        model = estimator(variant, X.shape[1])
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a class of one row in a fold (ecoli)
            model.fit(X[train], y[train])
        scores["seconds"].append(time.perf_counter() - start)
        scores["accuracy"].append(float(np.mean(model.predict(X[test]) == y[test])))
        P = np.clip(model.predict_proba(X[test]), FLOOR, 1)
        scores["log_loss"].append(log_loss(y[test], P, labels=model.classes_))
    return {key: float(np.mean(values)) for key, values in scores.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=sorted(GROUPS), default="tune")
    add_smoke(parser)
    args = parser.parse_args(argv)
    start(args)
    for stage in pick([args.stage], sorted(GROUPS)):
        write_report(results() / f"classification_defaults_{stage}.md", stage_report(stage))
    return 0


def stage_report(stage) -> list[str]:
    """Run every variant of ``stage`` on its datasets; the lines of its report."""
    names = class_groups()[stage]
    scores = {}
    for label, variant in variants(stage).items():
        scores[label] = {name: run(name, variant) for name in names}
        mean = np.mean([r["accuracy"] for r in scores[label].values()])
        print(f"{label}: mean accuracy {mean:.4f}", flush=True)
    lines = [f"Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python benchmarks/decisions/classification.py "
             f"--stage {stage}` (depth 3, 4-fold stratified CV, split seed 0; 2-core machine)", "",
             "| variant | accuracy | log loss | fit s |", "|---|---:|---:|---:|"]
    for label, rows in scores.items():
        means = {key: np.mean([r[key] for r in rows.values()]) for key in ("accuracy", "log_loss", "seconds")}
        lines.append(f"| {label} | {means['accuracy']:.4f} | {means['log_loss']:.3f} | {means['seconds']:.2f} |")
    lines += ["", "Test accuracy per dataset:", "", "| dataset | " + " | ".join(scores) + " |",
              "|---|" + "---:|" * len(scores)]
    lines += [f"| {name} | " + " | ".join(f"{scores[label][name]['accuracy']:.3f}" for label in scores) + " |"
              for name in names]
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
