"""The leaf-ridge comparison's rule: the factor of least held-out loss (margin 0), or that factor only
when it beats factor 1 (the paper's lambda_b) by more than ``margin`` standard errors of the sum of
the per-row loss differences (:func:`srtopt.estimators.leaf_ridge.chosen`); and its fits
(``--comparison``): ``warm``, the other factors' fits starting from factor 1's tree of the same fold
(``WARM_ITER`` macro iterations, as shipped), or ``cold``, every fit from the estimator's own
initialization in ``MAX_ITER`` (as before).

One comparison per (data set, depth, fold) gives the per-row losses; the rule of each margin picks its
factor from them, and the tree of each factor picked is fitted (``leaf_ridge=factor``: the final fit of
``leaf_ridge="auto"``).  Only the fits where the comparison runs are rows.  Stage ``tune``: the
generated data and the small data sets the guard was chosen on; stage ``confirm``: the guard's
confirmation sets and ames (the wide table whose test R^2 a few outlying houses decide).  4 folds
(KFold, seed 0), depths 2 and 3.  Runs go to ``benchmarks/results/leaf_ridge_margin.jsonl`` and resume.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets SRTOPT_TABULAR_DATA=/path/to/datasets_tabular \\
        python benchmarks/decisions/leaf_ridge_margin.py --stage tune --fairness-data /path/to/datasets_fairness

``--smoke``: both stages, both comparisons, on two datasets each (tiny), depth 2, fold 0.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from unittest import mock

import numpy as np

from benchmarks.common import parse, pick, results, write_report
from benchmarks.common.data import load_table, small_regression
from benchmarks.common.protocol import outer_folds
from benchmarks.common.store import run_into_store, stored

STORE = "leaf_ridge_margin.jsonl"  # in benchmarks/results/
MARGINS = (0.0, 0.5, 1.0, 2.0)
STAGES = {"tune": ["noise-140x50", "linear-300x60", "friedman-200x10", "auto_mpg", "housing", "yacht"],
          "confirm": ["lpga2009", "computer", "diabetes", "communities_crime", "ames"]}


def stages() -> dict:
    """:data:`STAGES` (two datasets of each in smoke mode)."""
    return pick(STAGES, {"tune": ["noise-140x50", "auto_mpg"], "confirm": ["communities_crime", "ames"]})


def data(name, fairness):
    if name == "ames":
        X, y, _ = load_table(name)
        return X, np.asarray(y, float)
    return small_regression(name, fairness)


def run(name, depth, fold, fairness, comparison="warm") -> dict:
    from sklearn.metrics import r2_score
    from sklearn.model_selection import KFold

    from srtopt import SoftRegressionTree
    from srtopt.estimators import leaf_ridge
    from srtopt.estimators.nodec_tree import NodecTree

    X, y = data(name, fairness)
    train, test = list(KFold(4, shuffle=True, random_state=0).split(X))[fold]
    take = (lambda rows: X.iloc[rows]) if hasattr(X, "iloc") else (lambda rows: X[rows])
    seen, rule, fold_loss = [], leaf_ridge.chosen, leaf_ridge._fold_loss

    def recording(losses, rows, complete, weights=None):
        seen.append((losses, rows, complete, weights))
        return rule(losses, rows, complete, weights)

    def cold(*args):  # the fit without its start (the ninth argument)
        return fold_loss(*args[:8])

    before = {"_fold_loss": cold, "_train": NodecTree._train} if comparison == "cold" else {}  # as before
    with warnings.catch_warnings(), mock.patch.object(leaf_ridge, "chosen", recording), \
            mock.patch.object(leaf_ridge, "_fold_loss", before.get("_fold_loss", fold_loss)), \
            mock.patch.object(SoftRegressionTree, "_train", before.get("_train", SoftRegressionTree._train)):
        warnings.simplefilter("ignore")
        started = time.process_time()
        SoftRegressionTree(depth=depth, random_state=0).fit(take(train), y[train])
        seconds = time.process_time() - started
        factors = {}
        if seen:
            for margin in MARGINS:
                with mock.patch.object(leaf_ridge, "MARGIN", margin):
                    factors[margin] = rule(*seen[0])
        r2 = {factor: float(r2_score(y[test], final(take(train), y[train], depth, factor, comparison).predict(
            take(test)))) for factor in set(factors.values())}
    return dict(dataset=name, depth=depth, fold=fold, comparison=comparison, ran=bool(seen), seconds=seconds,
                **{f"factor {m:g}": factors.get(m) for m in MARGINS},
                **{f"r2 {m:g}": r2.get(factors.get(m)) for m in MARGINS})


def final(X, y, depth, factor, comparison):
    """The final tree of ``leaf_ridge="auto"`` when it chooses ``factor``: for the ``warm`` comparison (as
    shipped), the tree of factor 1 continued for ``WARM_ITER`` macro iterations with the factor; for
    ``cold`` (as before), the fit with the factor from the initialization."""
    from srtopt import SoftRegressionTree
    from srtopt.estimators import leaf_ridge
    from srtopt.training.initialization import WarmStart

    if comparison == "cold" or factor == 1.0:
        return SoftRegressionTree(depth=depth, random_state=0, leaf_ridge=factor).fit(X, y)
    paper = SoftRegressionTree(depth=depth, random_state=0, leaf_ridge=1.0).fit(X, y)
    return SoftRegressionTree(depth=depth, random_state=0, leaf_ridge=factor, max_iter=leaf_ridge.WARM_ITER,
                              init=WarmStart.from_estimator(paper)).fit(X, y)


def report(stage) -> list[str]:
    rows = [r for r in stored(results() / STORE) if r["dataset"] in stages()[stage]]
    lines = [f"# The leaf-ridge comparison's rule and fits ({stage} stage)", "",
             f"Command: `PYTHONPATH=. python benchmarks/decisions/leaf_ridge_margin.py --stage {stage} --comparison "
             "cold`, then `--comparison warm`. Mean test R^2 over the folds where the comparison ran (of 4; KFold, "
             "seed 0), and the factors chosen; margin m: a factor other than 1 only when it beats factor 1 by more "
             "than m standard errors."]
    for comparison in ("cold", "warm"):
        lines += ["", f"Comparison `{comparison}`:", "",
                  "| dataset | depth | folds run | " + " | ".join(f"margin {m:g}" for m in MARGINS) + " |",
                  "|---|---:|---:|" + "---:|" * len(MARGINS)]
        lines += _margin_rows([r for r in rows if r["comparison"] == comparison], stage)
    lines += ["", "Margin 1, the two comparisons: mean test R^2 (factors) and CPU seconds of the default fit "
              "(comparison and final fit):", "",
              "| dataset | depth | cold | warm | cold seconds | warm seconds |", "|---|---:|---:|---:|---:|---:|"]
    for name in stages()[stage]:
        for depth in pick((2, 3), (2,)):
            runs = {c: [r for r in rows if r["dataset"] == name and r["depth"] == depth and r["comparison"] == c]
                    for c in ("cold", "warm")}
            if not all(any(r["ran"] for r in runs[c]) for c in runs):
                continue
            cells = [_mean_and_factors([r for r in runs[c] if r["ran"]], 1.0) for c in runs]
            seconds = [f"{np.mean([r['seconds'] for r in runs[c] if r['ran']]):.2f}" for c in runs]
            lines.append(f"| {name} | {depth} | " + " | ".join(cells + seconds) + " |")
    return lines


def _margin_rows(rows, stage) -> list[str]:
    lines, means = [], {m: [] for m in MARGINS}
    for name in stages()[stage]:
        for depth in pick((2, 3), (2,)):
            ran = [r for r in rows if r["dataset"] == name and r["depth"] == depth and r["ran"]]
            if not ran:
                lines.append(f"| {name} | {depth} | 0 | " + " | ".join("" for _ in MARGINS) + " |")
                continue
            for m in MARGINS:
                means[m].append(np.mean([r[f"r2 {m:g}"] for r in ran]))
            lines.append(f"| {name} | {depth} | {len(ran)} | " + " | ".join(_mean_and_factors(ran, m) for m in MARGINS)
                         + " |")
    return lines + ["| **mean** | | | " + " | ".join(f"**{np.mean(means[m]):.4f}**" for m in MARGINS) + " |"]


def _mean_and_factors(runs, margin) -> str:
    chosen = ", ".join(f"{r[f'factor {margin:g}']:g}" for r in runs)
    return f"{np.mean([r[f'r2 {margin:g}'] for r in runs]):.4f} ({chosen})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=sorted(STAGES), default="tune")
    parser.add_argument("--comparison", choices=("warm", "cold"), default="warm")
    parser.add_argument("--fairness-data", default=os.environ.get("SRTOPT_FAIRNESS_DATA"),
                        help="folder of communities_crime.csv")
    parser.add_argument("--jobs", type=int, default=1)
    args = parse(parser, argv)
    for stage, comparison in pick([(args.stage, args.comparison)],
                                  [(s, c) for s in sorted(STAGES) for c in ("cold", "warm")]):
        tasks = [(name, depth, fold, args.fairness_data, comparison) for name in stages()[stage]
                 for depth in pick((2, 3), (2,)) for fold in outer_folds()]
        run_into_store(results() / STORE, run, tasks,
                       lambda r: (r["dataset"], r["depth"], r["fold"], args.fairness_data, r["comparison"]), args.jobs,
                       describe=lambda r: f"{r['comparison']} {r['dataset']} depth {r['depth']} fold {r['fold']}: "
                                          f"{r['seconds']:.1f} s; " + " ".join(
                                              f"{m:g}: {r[f'factor {m:g}']} {r[f'r2 {m:g}']}" for m in MARGINS))
        write_report(results() / f"leaf_ridge_margin_{stage}.md", report(stage))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
