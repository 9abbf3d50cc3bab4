"""Why a dataset falls short of the paper: optimization or generalization?

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/decisions/shortfall.py [--cells airfoil:2 ...]

For each cell (dataset, depth), on the paper's 4 folds x ``--seeds`` seeds, the default
SRT l2 fit against three others from the same fold and seed:

* ``more search``: the same objective E, searched harder (``n_restarts=8`` initializations
  compared after 2 macro iterations, then ``max_iter=30``);
* ``weaker l2`` / ``no l2``: another objective (``regularization="l2-calibrated"``: the
  paper's lambdas x 1e-3/N, and ``None``).

Per variant: mean training objective E (the default's E for ``more search``: same
objective), mean train and test R^2, and the share of runs where ``more search`` lowered E.
``--runs dataset:depth:fold:seed ...`` adds single runs (e.g. the worst ones of the paper
protocol's store) fitted with the defaults, ``n_restarts=3`` and ``more search``.
If searching harder lowers E and raises test R^2, the default stops short of what the
objective offers (optimization); if train R^2 is close to test R^2 and stays there
whatever the search, the shortfall is the model class at this depth with these lambdas
(the paper's own number is beside each cell).  Writes ``benchmarks/results/shortfall.md``.  ``--smoke``: the cell
airfoil:2 and the run airfoil:2:0:0 (tiny), fold 0, one seed, every variant at max_iter 2.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.common import budget, parse, results
from benchmarks.common.data import load
from benchmarks.common.protocol import outer_folds
from srtopt import SoftRegressionTree
from srtopt.experiments.protocol import fold_indices, scale_fold
from srtopt.experiments.report import paper_tables

VARIANTS = {
    "default": {},
    "more search": {"n_restarts": 8, "max_iter": 30},
    "weaker l2": {"regularization": "l2-calibrated"},
    "no l2": {"regularization": None},
}


def run_cell(name, depth, seeds, data_home):
    X, y, _ = load(name, data_home=data_home)
    runs = {variant: [] for variant in VARIANTS}
    for fold in outer_folds():
        train, test = fold_indices(len(y), 4, 0, fold)
        Xtr, Xte, ytr, yte = scale_fold(X[train], X[test], y[train], y[test])[:4]
        for seed in range(seeds):
            for variant, params in VARIANTS.items():
                start = time.perf_counter()
                model = SoftRegressionTree(depth=depth, random_state=seed, **{**budget(), **params}).fit(Xtr, ytr)
                runs[variant].append({"E": model.objective_, "train": model.score(Xtr, ytr),
                                      "test": model.score(Xte, yte), "seconds": time.perf_counter() - start})
    return runs


def cell_rows(name, depth, runs):
    default, searched = runs["default"], runs["more search"]
    lowered = sum(s["E"] < d["E"] * (1 - 1e-6) for d, s in zip(default, searched)) / len(default)
    mean = lambda rows, key: statistics.fmean(r[key] for r in rows)  # noqa: E731
    paper = paper_tables()[f"depth{depth}"][name]["SRT_l2"]["r2"]
    rows = []
    for variant, rows_v in runs.items():
        comparable = variant in ("default", "more search")
        E = f"{mean(rows_v, 'E'):.5f}" if comparable else "(other objective)"
        share = f"{lowered:.0%}" if variant == "more search" else ""
        rows.append(f"| {name} | {depth} | {paper:.3f} | {variant} | {E} | {share} | {mean(rows_v, 'train'):.3f} | "
                    f"{mean(rows_v, 'test'):.3f} | {min(r['test'] for r in rows_v):.3f} | "
                    f"{mean(rows_v, 'seconds'):.2f} |")
    spread = np.corrcoef([r["E"] for r in default], [r["test"] for r in default])[0, 1]
    return rows, spread


def runs_table(runs, data_home) -> list[str]:
    """E, train and test R^2 of single runs with the defaults, 3 restarts and ``more search``."""
    lines = ["| dataset | depth | fold | seed | variant | training E | train R^2 | test R^2 |",
             "|---|---:|---:|---:|---|---:|---:|---:|"]
    for run in runs:
        name, depth, fold, seed = run.split(":")
        X, y, _ = load(name, data_home=data_home)
        train, test = fold_indices(len(y), 4, 0, int(fold))
        Xtr, Xte, ytr, yte = scale_fold(X[train], X[test], y[train], y[test])[:4]
        for variant, params in (("default", {}), ("n_restarts=3", {"n_restarts": 3}),
                                ("more search", VARIANTS["more search"])):
            model = SoftRegressionTree(depth=int(depth), random_state=int(seed), **{**budget(), **params}).fit(Xtr, ytr)
            lines.append(f"| {name} | {depth} | {fold} | {seed} | {variant} | {model.objective_:.5f} | "
                         f"{model.score(Xtr, ytr):.3f} | {model.score(Xte, yte):.3f} |")
            print(lines[-1], flush=True)
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", nargs="+", default=["airfoil:2", "airfoil:3", "puma:2"],
                        help="dataset:depth cells (default: the cells more than 0.02 below the paper)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per fold (default 5)")
    parser.add_argument("--runs", nargs="*", default=[], help="single runs dataset:depth:fold:seed to add")
    parser.add_argument("--data-home", default=None)
    args = parse(parser, argv, ["--cells", "airfoil:2", "--seeds", "1", "--runs", "airfoil:2:0:0"])
    head = ["| dataset | depth | paper SRT l2 | variant | mean training E | runs with lower E | train R^2 | "
            "test R^2 | min test R^2 | fit s |", "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    lines, notes = list(head), []
    started = time.perf_counter()
    with threadpool_limits(1):
        for cell in args.cells:
            name, depth = cell.split(":")
            rows, spread = cell_rows(name, int(depth), run_cell(name, int(depth), args.seeds, args.data_home))
            lines += rows
            notes.append(f"- {name}, depth {depth}: correlation of E and test R^2 over the default runs {spread:+.2f}")
            print("\n".join(rows), flush=True)
        single = runs_table(args.runs, args.data_home) if args.runs else []
    command = " ".join(["python benchmarks/decisions/shortfall.py", "--cells", *args.cells, "--seeds", str(args.seeds),
                        *(["--runs", *args.runs] if args.runs else [])])
    text = (f"# Cells below the paper: optimization or generalization\n\n"
            f"`PYTHONPATH=. SRTOPT_DATA=/path/to/datasets {command}` "
            f"(4 folds x {args.seeds} seeds per cell, one thread; {time.perf_counter() - started:.0f} s)\n\n"
            + "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"
            + ("\n## Single runs\n\n" + "\n".join(single) + "\n" if single else ""))
    print(text)
    (results() / "shortfall.md").write_text(text)


if __name__ == "__main__":
    main()
