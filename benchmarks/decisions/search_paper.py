"""The recommended search, ``SoftRegressionTreeCV()``, on the paper's 15 data sets, against the depth-3 tree of
spline leaves (the search should be no lower) and the plain default tree.

    SRTOPT_DATA=/path/to/datasets PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/search_paper.py

Protocol: fold 0 of split 0 of the paper's protocol (:func:`benchmarks.common.protocol.first_fold`: X min-max
scaled and y standardized on the training part), the trees seeded 0, test R^2 and fit seconds, one fit at a time.
Runs go to ``benchmarks/results/search_paper.jsonl`` (resumable: a run already there is skipped); the report to
``benchmarks/results/search_paper.md``.  ``--smoke``: two tiny stand-ins.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from benchmarks.common import parse, pick, results, write_report
from benchmarks.common.protocol import PAPER_CONFIRM, PAPER_TUNE, first_fold
from benchmarks.common.store import run_into_store, stored

#: the models compared: the search with its defaults, the depth-3 tree of spline leaves, the plain default tree
MODELS = ("search", "D3 spline", "plain")


def model(name):
    from srtopt import SoftRegressionTree, SoftRegressionTreeCV

    if name == "search":
        return SoftRegressionTreeCV(**pick({}, {"depths": (1, 2), "cv": 2}))
    return SoftRegressionTree(random_state=0, **({"depth": 3, "leaf": "spline"} if name == "D3 spline" else {}))


def run(dataset, name) -> dict:
    X_train, X_test, y_train, y_test = first_fold(dataset, os.environ.get("SRTOPT_DATA"))
    estimator = model(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        estimator.fit(X_train, y_train)
        seconds = time.perf_counter() - start
    row = {"dataset": dataset, "model": name, "score": float(estimator.score(X_test, y_test)), "seconds": seconds}
    if name == "search":
        row["chosen"] = f"depth {estimator.depth_}, {estimator.leaf_}, lambda_b x{estimator.leaf_ridge_:g}"
    return row


def report(rows, datasets) -> list[str]:
    """A data set per row (each model's test R^2, the search's choice), the means and the geometric mean seconds."""
    cells = {(r["dataset"], r["model"]): r for r in rows}
    lines = ["# The search on the paper's 15 data sets", "",
             "Command: `SRTOPT_DATA=... PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python "
             "benchmarks/decisions/search_paper.py`. Fold 0 of split 0 of the paper's protocol, test R^2 (fit "
             "seconds).", "",
             "| dataset | " + " | ".join(MODELS) + " | the search's choice |", "|---|" + "---:|" * len(MODELS) + "---|"]
    for name in datasets:
        found = [cells.get((name, m)) for m in MODELS]
        lines.append(f"| {name} | " + " | ".join("" if r is None else f"{r['score']:.4f} ({r['seconds']:.1f} s)"
                                                 for r in found)
                     + f" | {(cells.get((name, 'search')) or {}).get('chosen', '')} |")
    complete = [n for n in datasets if all((n, m) in cells for m in MODELS)]
    means = [np.mean([cells[(n, m)]["score"] for n in complete]) for m in MODELS]
    seconds = [np.exp(np.mean([np.log(cells[(n, m)]["seconds"]) for n in complete])) for m in MODELS]
    lines.append(f"| **mean** ({len(complete)}) | " + " | ".join(f"**{s:.4f}**" for s in means) + " | |")
    lines.append("| seconds, geometric mean | " + " | ".join(f"{s:.2f}" for s in seconds) + " | |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parse(parser, argv)
    datasets = pick(sorted(PAPER_TUNE + PAPER_CONFIRM), sorted(PAPER_TUNE + PAPER_CONFIRM)[:2])
    store = results() / "search_paper.jsonl"
    run_into_store(store, run, [(d, m) for d in datasets for m in MODELS], lambda r: (r["dataset"], r["model"]),
                   jobs=1, describe=lambda r: f"{r['dataset']} {r['model']}: {r['score']:.4f} in {r['seconds']:.1f} s")
    write_report(results() / "search_paper.md", report(stored(store), datasets))


if __name__ == "__main__":
    main()
