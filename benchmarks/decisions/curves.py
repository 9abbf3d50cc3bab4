"""Spline leaves' curves: monotone curves, and where a leaf's curves are read (issue 60, items 2 and 3).

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/curves.py --stage monotone
    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/curves.py --stage baselines --panel /path/to/datasets_panel

Stages:

* ``monotone``: y = exp(3 x0) + x1 + N(0, 0.1^2), x uniform on [0, 1]^2, 2000 training rows and 10000 test rows
  (seeds 0 and 1), depth 1, ``leaf="spline"``, random_state 0: the free tree against ``monotonic_cst=[1, 0]``
  (test R^2 against the noiseless truth; the largest decrease of ``predict`` along x0 on a grid of 3001 points
  over [-1, 2], x1 at -0.5, 0, 0.3, 0.7, 1, 1.5; fit seconds); and the classifier of the labels exp(3 x0) + x1 +
  N(0, 2^2) > 6 (accuracy against the noiseless labels; the largest decrease of the probability of the second
  class on the same grid).  Only the public API: the same command on an older checkout gives its row.
* ``baselines``: the six regression tables of the shared panel (``--panel``, or ``SRTOPT_PANEL_DATA``), the training
  part of fold 0 of KFold(4, shuffle, seed 0), text columns as pandas categories, a depth-2 spline tree
  (random_state 0): the range of its training predictions and each leaf's stated value read at the median row
  (this release) and at the middle of every feature's range (the reading before; the same basis without its
  quantiles), and how many lie inside that range.

Tables go to ``benchmarks/results/curves_<stage>.md``.  ``--smoke``: the monotone stage on 300 training rows.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.common import parse, pick, require, results, smoke, write_report

GRID = np.linspace(-1.0, 2.0, 3001)
OTHERS = (-0.5, 0.0, 0.3, 0.7, 1.0, 1.5)
PANEL = ("budgetfood", "computers", "diamonds", "gapminder", "movies", "wage")


def _truth(X):
    return np.exp(3 * X[:, 0]) + X[:, 1]


def _largest_decrease(predict) -> float:
    """The largest decrease of ``predict`` between neighbouring points of the grid along x0 (0: none)."""
    return max(0.0, *(float(-np.diff(predict(np.column_stack([GRID, np.full_like(GRID, v)]))).min())
                      for v in OTHERS))


def monotone() -> list[str]:
    from srtopt import SoftClassificationTree, SoftRegressionTree

    rng, test_rng = np.random.default_rng(0), np.random.default_rng(1)
    n = pick(2000, 300)
    X, X_test = rng.random((n, 2)), test_rng.random((10000, 2))
    y = _truth(X) + 0.1 * rng.standard_normal(n)
    labels = (_truth(X) + 2 * rng.standard_normal(n) > 6).astype(int)
    rows = ["| tree | monotonic_cst | test score | largest decrease along x0 on [-1, 2] | fit seconds |",
            "|---|---|---:|---:|---:|"]
    for kind, estimator, target, score in (
            ("regression (R^2)", SoftRegressionTree, y, lambda m: m.score(X_test, _truth(X_test))),
            ("classification (accuracy)", SoftClassificationTree, labels,
             lambda m: m.score(X_test, (_truth(X_test) > 6).astype(int)))):
        for cst in (None, [1, 0]):
            start = time.perf_counter()
            model = estimator(depth=1, leaf="spline", random_state=0, monotonic_cst=cst).fit(X, target)
            seconds = time.perf_counter() - start
            predict = model.predict if kind.startswith("regression") else (lambda Z, m=model: m.predict_proba(Z)[:, 1])
            rows.append(f"| {kind} | {cst} | {score(model):.4f} | {_largest_decrease(predict):.3g} | {seconds:.2f} |")
    return rows


def baselines(panel: Path) -> list[str]:
    import pandas as pd
    from sklearn.model_selection import KFold

    from srtopt import SoftRegressionTree
    from srtopt.bases import SplineBasis
    from srtopt.export.curves import curve_effects, curve_frame

    rows = ["| table | training predictions | stated at the median row | inside | stated at mid-range (before) | inside |",
            "|---|---|---|---:|---|---:|"]
    totals = np.zeros(3, dtype=int)
    for name in PANEL:
        frame = pd.read_csv(panel / f"{name}.csv")
        y = frame.pop("target").to_numpy(float)
        for column in frame.columns[frame.dtypes == object]:
            frame[column] = frame[column].astype("category")
        train, _ = next(KFold(4, shuffle=True, random_state=0).split(frame))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = SoftRegressionTree(depth=2, leaf="spline", random_state=0).fit(frame.iloc[train], y[train])
            predictions = tree.predict(frame.iloc[train])
        basis = tree.leaf_model_.basis
        p = basis.n_features  # the encoded columns of the table
        before = SplineBasis(p, basis.curves, basis.degree, basis.scale)  # a basis without its quantiles
        mean, std = tree.scaler_.y_mean, tree.scaler_.y_std
        reached = [i for i, t in enumerate(range(4, 8)) if tree.node_counts_[t - 1] > 0]
        values = [[mean + std * curve_effects(basis, tree.beta_[i], curve_frame(b, p))[0] for i in reached]
                  for b in (basis, before)]
        inside = [sum(predictions.min() <= v <= predictions.max() for v in side) for side in values]
        totals += [len(reached), *inside]
        rows.append(f"| {name} | {predictions.min():.4g} .. {predictions.max():.4g} | "
                    f"{', '.join(f'{v:.4g}' for v in values[0])} | {inside[0]}/{len(reached)} | "
                    f"{', '.join(f'{v:.4g}' for v in values[1])} | {inside[1]}/{len(reached)} |")
    rows.append(f"| **all** | | | **{totals[1]}/{totals[0]}** | | **{totals[2]}/{totals[0]}** |")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("monotone", "baselines"), default=None)
    parser.add_argument("--panel", type=Path, default=os.environ.get("SRTOPT_PANEL_DATA"),
                        help="the folder of the panel's CSVs (baselines)")
    args = parse(parser, argv)
    require(parser, args, "--stage")
    if smoke():
        args.stage = "monotone"
    if args.stage == "baselines" and args.panel is None:
        parser.error("--stage baselines needs --panel DIR (or SRTOPT_PANEL_DATA): the folder of the panel's CSVs")
    command = (f"PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/curves.py --stage {args.stage}"
               + (" --panel /path/to/datasets_panel" if args.stage == "baselines" else ""))
    rows = monotone() if args.stage == "monotone" else baselines(args.panel)
    write_report(results() / f"curves_{args.stage}.md", [f"# Spline curves: {args.stage}", "", f"`{command}`", "",
                                                      *rows])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
