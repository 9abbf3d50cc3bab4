"""Formulations as the unit of research: the measurements behind the README's claims
on losses and penalties, and behind the method chosen for the nonsmooth penalties.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/formulations.py \\
        [--reference-checkout /path/to/a/checkout/of/main]

Protocol: the paper's 4-fold split (``fold_indices(n, 4, seed=0, fold)``, folds 1-4), X
min-max scaled and y standardized on the training fold (as ``srtopt bench`` does), one
initialization seed (``random_state=0``); every number is the mean over the 4 test folds
unless a column says "per fold".  A "dense" tree is the default ``SoftRegressionTree``.

1. The method for split_l1's exact zeros (BN subproblems), on computer and housing at
   depth 3, strengths 1e-5 and 1e-4, each fit warm-started from the fold's dense tree: the
   variable split omega = u - v with bounds u, v >= 0 solved by L-BFGS-B (the default), the
   proximal gradient on the nonsmooth problem, and the variable split solved by IPOPT
   (interior point): E, test R^2, nonzero split weights per split, and |weight| > 1e-6 per
   split, seconds.  And feature_l1's two methods (the smooth majorizer with exact zeros by
   group zeroing -- the default -- and the proximal method) on yacht with 10 noise columns.
2. (README) A split_l1 path at depth 3 on computer, housing, lpga2009, compactiv,
   ailerons (11 to 40 features): the dense tree, then strengths 1e-6 .. 1e-3, each fit
   warm-started from the previous one: mean number of features a split reads and test
   R^2 against the dense tree; the smallest strength where splits read <= 3 features on
   average at a test R^2 loss <= 0.01 (chosen on the test folds: a trade-off curve, not a
   tuned model).
3. (README) feature_l1 on yacht with 10 appended uniform noise columns (seed 0), depth 2
   and 3: the dense tree, then strengths 0.003 .. 0.1, each warm-started from the previous
   tree with the safeguards on (k0=0: E never increases from the warm start): noise
   columns and real features still used (a weight nonzero in some split or leaf), test R^2.
4. (README) Losses with 5% of the training targets corrupted by +-10 standard deviations
   of y (seed: the fold number; test targets clean), depth 2, on yacht, housing, auto_mpg,
   airfoil, abalone: squared, Huber with delta 0.1, 0.3 (the default) and 1, smoothed
   absolute; and squared and Huber on clean targets.
5. Fit seconds of the default model (depth 3, first training fold; best of 3, the two
   checkouts alternated, each in its own process) in this checkout and, with
   ``--reference-checkout``, in that one, and whether their test predictions are
   identical.

Writes benchmarks/results/formulations.md (the tables, the command, the wall time).  ``--smoke``: tiny stand-ins,
fold 0, the first strengths of each path, the trees at max_iter 2, one timing round.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import ROOT, parse, pick, regression_tree, results
from benchmarks.common.data import load
from benchmarks.common.protocol import outer_folds
from srtopt.experiments.protocol import fold_indices, scale_fold

FOLDS = 4
PATH_DATASETS = ["computer", "housing", "lpga2009", "compactiv", "ailerons"]
PATH_STRENGTHS = [1e-6, 3e-6, 1e-5, 2e-5, 3e-5, 5e-5, 1e-4, 2e-4, 3e-4, 5e-4, 1e-3]
MAX_FEATURES, MAX_R2_LOSS = 3.0, 0.01
NOISE_COLUMNS = 10
NOISE_STRENGTHS = [0.003, 0.01, 0.03, 0.1]
LOSS_DATASETS = ["yacht", "housing", "auto_mpg", "airfoil", "abalone"]
LOSSES = ["squared", "huber:delta=0.1", "huber", "huber:delta=1.0", "absolute"]
TIMING_DATASETS = ["yacht", "housing", "computer", "abalone", "compactiv", "ailerons"]


def folds(slug, data_home, noise_columns=0):
    """(X_train, X_test, y_train, y_test) of the 4 folds, scaled on the training fold."""
    X, y, _ = load(slug, data_home=data_home)
    if noise_columns:
        X = np.hstack([X, np.random.default_rng(0).random((len(y), noise_columns))])
    for fold in outer_folds():
        train, test = fold_indices(len(y), FOLDS, 0, fold)
        yield scale_fold(X[train], X[test], y[train], y[test])[:4]


def per_split(tree, tol=0.0) -> float:
    """Mean number of features a split reads (|omega_jt| > tol, j >= 1)."""
    return float(np.mean(np.sum(np.abs(tree.omega_[:, 1:]) > tol, axis=1)))


def used(tree, real):
    """(noise columns used, real features used): a weight nonzero in some split or leaf."""
    both = np.any(tree.omega_[:, 1:] != 0, axis=0) | np.any(tree.beta_[:, 1:] != 0, axis=0)
    return int(both[real:].sum()), int(both[:real].sum())


def timed_fit(X, y, **params):
    start = time.perf_counter()
    tree = regression_tree(random_state=0, **params).fit(X, y)
    return tree, time.perf_counter() - start


def warm(tree):
    from srtopt.training.initialization import WarmStart

    return WarmStart.from_estimator(tree)


# ------------------------------------------------------------------------------ 1. methods
def split_methods_table(data_home) -> str:
    method = {"l-bfgs-b": "L-BFGS-B, variable split + bounds (default)", "prox-gradient": "proximal gradient",
              "ipopt:hessian=limited-memory": "IPOPT, variable split + bounds"}
    rows = {}
    for slug in pick(("computer", "housing"), ("computer",)):
        for Xtr, Xte, ytr, yte in folds(slug, data_home):
            dense = regression_tree(depth=3, random_state=0).fit(Xtr, ytr)
            for strength in pick((1e-5, 1e-4), (1e-4,)):
                for bn in method:
                    tree, seconds = timed_fit(Xtr, ytr, depth=3, bn_solver=bn, init=warm(dense),
                                              penalty=f"split_l1:strength={strength}")
                    rows.setdefault((slug, strength, bn), []).append(
                        (tree.objective_, tree.score(Xte, yte), per_split(tree), per_split(tree, 1e-6), seconds))
    lines = ["| dataset | split_l1 strength | BN solver (method) | E | test R^2 | nonzero weights per split | "
             "abs(weight) > 1e-6 per split | seconds per fit |", "|---|---:|---|---:|---:|---:|---:|---:|"]
    for (slug, strength, bn), values in rows.items():
        E, r2, nz, big, s = np.mean(values, axis=0)
        lines.append(f"| {slug} | {strength:g} | {method[bn]} | {E:.5f} | {r2:.3f} | {nz:.2f} | {big:.2f} | {s:.2f} |")
    return "\n".join(lines)


def feature_methods_table(data_home) -> str:
    rows = {}
    for Xtr, Xte, ytr, yte in folds("yacht", data_home, NOISE_COLUMNS):
        dense = regression_tree(depth=2, random_state=0).fit(Xtr, ytr)
        for method in ("majorize", "prox"):
            previous = dense
            for strength in pick((0.01, 0.03), (0.03,)):
                previous, seconds = timed_fit(Xtr, ytr, depth=2, k0=0, init=warm(previous),
                                              penalty=f"feature_l1:strength={strength},method={method}")
                rows.setdefault((method, strength), []).append(
                    (previous.objective_, previous.score(Xte, yte), *used(previous, Xtr.shape[1] - NOISE_COLUMNS),
                     seconds))
    lines = ["| feature_l1 method | strength | E | test R^2 | noise columns used (of 10) | real features used (of 6) "
             "| seconds per fit |", "|---|---:|---:|---:|---:|---:|---:|"]
    label = {"majorize": "majorizer + group zeroing (default)", "prox": "proximal"}
    for (method, strength), values in rows.items():
        E, r2, noise, real, s = np.mean(values, axis=0)
        lines.append(f"| {label[method]} | {strength:g} | {E:.4f} | {r2:.3f} | {noise:.2f} | {real:.2f} | {s:.2f} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------ 2. split_l1 path
def path_datasets() -> list:
    return pick(PATH_DATASETS, PATH_DATASETS[:1])


def path_strengths() -> list:
    return pick(PATH_STRENGTHS, PATH_STRENGTHS[-2:])


def split_path(data_home):
    """{slug: {strength (0 = dense): [(features per split, test R^2) per fold]}}, seconds."""
    out, start = {}, time.perf_counter()
    for slug in path_datasets():
        cells = out.setdefault(slug, {})
        for Xtr, Xte, ytr, yte in folds(slug, data_home):
            tree = regression_tree(depth=3, random_state=0).fit(Xtr, ytr)
            cells.setdefault(0.0, []).append((per_split(tree), tree.score(Xte, yte)))
            for strength in path_strengths():
                tree = regression_tree(depth=3, random_state=0, penalty=f"split_l1:strength={strength}",
                               init=warm(tree)).fit(Xtr, ytr)
                cells.setdefault(strength, []).append((per_split(tree), tree.score(Xte, yte)))
    return out, time.perf_counter() - start


def split_path_tables(data_home) -> str:
    path, seconds = split_path(data_home)
    lines = ["Mean over the 4 folds: features read per split / test R^2 minus the dense tree's.", "",
             "| dataset (p) | dense: features per split, test R^2 | "
             + " | ".join(f"{s:g}" for s in path_strengths()) + f" | smallest strength with <= {MAX_FEATURES:g} "
             f"features and R^2 loss <= {MAX_R2_LOSS:g} |", "|---|---:|" + "---:|" * len(path_strengths()) + "---|"]
    feasible_everywhere = set(path_strengths())
    for slug in path_datasets():
        mean = {s: np.mean(v, axis=0) for s, v in path[slug].items()}
        dense_f, dense_r2 = mean[0.0]
        ok = [s for s in path_strengths() if mean[s][0] <= MAX_FEATURES and mean[s][1] >= dense_r2 - MAX_R2_LOSS]
        feasible_everywhere &= set(ok)
        if ok:
            s = min(ok)
            chosen = f"{s:g}: {mean[s][0]:.2f} features, R^2 {mean[s][1] - dense_r2:+.3f}"
        else:
            best = max(path_strengths(), key=lambda s: (mean[s][0] <= MAX_FEATURES, mean[s][1]))
            chosen = (f"not reached; best with <= {MAX_FEATURES:g} features: {best:g}, "
                      f"R^2 {mean[best][1] - dense_r2:+.3f}")
        p = load(slug, data_home=data_home).X.shape[1]
        lines.append(f"| {slug} ({p}) | {dense_f:.2f}, {dense_r2:.3f} | "
                     + " | ".join(f"{mean[s][0]:.2f} / {mean[s][1] - dense_r2:+.3f}" for s in path_strengths())
                     + f" | {chosen} |")
    common = ", ".join(f"{s:g}" for s in sorted(feasible_everywhere)) or "none"
    lines += ["", f"Strengths that meet both conditions on all {len(path_datasets())} datasets: {common}.  "
                  f"{len(path_datasets()) * len(outer_folds()) * (1 + len(path_strengths()))} fits in {seconds:.0f} s."]
    return "\n".join(lines)


# ---------------------------------------------------------------------- 3. feature_l1 noise
def noise_table(data_home) -> str:
    lines = ["| depth | tree | noise columns used (of 10), per fold | real features used (of 6), per fold | "
             "test R^2 |", "|---:|---|---|---|---:|"]
    for depth in (2, 3):
        rows = {}
        for Xtr, Xte, ytr, yte in folds("yacht", data_home, NOISE_COLUMNS):
            real = Xtr.shape[1] - NOISE_COLUMNS
            tree = regression_tree(depth=depth, random_state=0).fit(Xtr, ytr)
            rows.setdefault("dense (defaults)", []).append((*used(tree, real), tree.score(Xte, yte)))
            for strength in pick(NOISE_STRENGTHS, NOISE_STRENGTHS[-1:]):
                tree = regression_tree(depth=depth, k0=0, random_state=0, penalty=f"feature_l1:strength={strength}",
                               init=warm(tree)).fit(Xtr, ytr)
                rows.setdefault(f"feature_l1 {strength:g}", []).append((*used(tree, real), tree.score(Xte, yte)))
        for name, values in rows.items():
            noise, real, r2 = zip(*values)
            lines.append(f"| {depth} | {name} | {', '.join(map(str, noise))} | {', '.join(map(str, real))} | "
                         f"{np.mean(r2):.3f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- 4. losses
def corrupted(y, seed, share=0.05, size=10.0):
    """y with ``share`` of its entries moved by +-``size`` standard deviations."""
    rng = np.random.default_rng(seed)
    bad = rng.choice(len(y), int(share * len(y)), replace=False)
    y = y.copy()
    y[bad] += rng.choice([-size, size], len(bad)) * y.std()
    return y


def loss_datasets() -> list:
    return pick(LOSS_DATASETS, LOSS_DATASETS[:1])


def loss_table(data_home) -> str:
    rows, clean = {}, {}
    for slug in loss_datasets():
        for fold, (Xtr, Xte, ytr, yte) in enumerate(folds(slug, data_home)):
            y_bad = corrupted(ytr, fold)
            for loss in LOSSES:
                tree, seconds = timed_fit(Xtr, y_bad, depth=2, loss=loss)
                rows.setdefault((slug, loss), []).append((tree.score(Xte, yte), seconds))
            for loss in ("squared", "huber"):
                clean.setdefault((slug, loss), []).append(timed_fit(Xtr, ytr, depth=2, loss=loss)[0].score(Xte, yte))
    names = {"huber": "huber (delta 0.3, default)", "absolute": "absolute (smoothed)"}
    lines = ["Test R^2 (clean test targets), mean over the 4 folds.", "",
             "| dataset | " + " | ".join(names.get(loss, loss) for loss in LOSSES)
             + " | clean targets: squared | clean targets: huber |", "|---|" + "---:|" * (len(LOSSES) + 2)]
    for slug in loss_datasets():
        cells = [np.mean([r for r, _ in rows[(slug, loss)]]) for loss in LOSSES]
        cells += [np.mean(clean[(slug, loss)]) for loss in ("squared", "huber")]
        lines.append(f"| {slug} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")
    cells = [np.mean([np.mean([r for r, _ in rows[(s, loss)]]) for s in loss_datasets()]) for loss in LOSSES]
    cells += [np.mean([np.mean(clean[(s, loss)]) for s in loss_datasets()]) for loss in ("squared", "huber")]
    lines.append("| mean | " + " | ".join(f"{v:.3f}" for v in cells) + " |")
    seconds = {loss: np.mean([s for slug in loss_datasets() for _, s in rows[(slug, loss)]]) for loss in LOSSES}
    lines.append("\nSeconds per fit (corrupted targets, mean over datasets and folds): "
                 + ", ".join(f"{names.get(loss, loss)} {s:.2f}" for loss, s in seconds.items()) + ".")
    return "\n".join(lines)


# --------------------------------------------------------------------- 5. default fit time
TIMING_CODE = """
import json, os, sys, time
import numpy as np
from srtopt import SoftRegressionTree
from srtopt.experiments.protocol import fold_indices, scale_fold
if os.environ.get("SRTOPT_BENCHMARK_SMOKE"):  # smoke mode (benchmarks/common): tiny stand-ins of the datasets
    from benchmarks.common.data import load
else:  # a reference checkout's srtopt alone
    from srtopt.datasets import load
out = {}
for slug in sys.argv[2:]:
    X, y, _ = load(slug, data_home=sys.argv[1] or None)
    train, test = fold_indices(len(y), 4, 0, 0)
    Xtr, Xte, ytr, yte = scale_fold(X[train], X[test], y[train], y[test])[:4]
    start = time.perf_counter()
    tree = SoftRegressionTree(depth=3, random_state=0).fit(Xtr, ytr)
    out[slug] = [time.perf_counter() - start, tree.predict(Xte).tolist()]
print(json.dumps(out))
"""


def timing_datasets() -> list:
    return pick(TIMING_DATASETS, TIMING_DATASETS[:1])


def default_time_table(data_home, reference, repeats=3) -> str:
    checkouts = {"this checkout": ROOT} | ({"reference checkout": Path(reference).resolve()} if reference else {})
    best, predictions = {}, {}
    for _ in range(pick(repeats, 1)):
        for label, checkout in checkouts.items():
            env = dict(os.environ, PYTHONPATH=str(checkout))
            done = subprocess.run([sys.executable, "-c", TIMING_CODE, data_home or "", *timing_datasets()], env=env,
                                  capture_output=True, text=True, check=True, cwd=checkout)
            for slug, (seconds, pred) in json.loads(done.stdout).items():
                best[(label, slug)] = min(best.get((label, slug), np.inf), seconds)
                predictions[(label, slug)] = pred
    header = "| dataset | " + " | ".join(f"{label}: seconds" for label in checkouts)
    lines = [header + (" | ratio | identical test predictions |" if reference else " |"),
             "|---|" + "---:|" * len(checkouts) + ("---:|---|" if reference else "")]
    for slug in timing_datasets():
        cells = [f"{best[(label, slug)]:.2f}" for label in checkouts]
        if reference:
            cells += [f"{best[('this checkout', slug)] / best[('reference checkout', slug)]:.2f}",
                      "yes" if predictions[("this checkout", slug)] == predictions[("reference checkout", slug)]
                      else "NO"]
        lines.append(f"| {slug} | " + " | ".join(cells) + " |")
    if reference:
        ratios = [best[("this checkout", s)] / best[("reference checkout", s)] for s in timing_datasets()]
        lines.append(f"\nGeometric mean of the ratios: {np.exp(np.mean(np.log(ratios))):.2f}.")
    return "\n".join(lines)


SECTIONS = [
    ("1. The method for split_l1 (BN subproblems, depth 3, warm start from the dense tree)", split_methods_table),
    ("1b. The method for feature_l1 (yacht + 10 noise columns, depth 2, path with k0=0)", feature_methods_table),
    ("2. split_l1 path, depth 3", split_path_tables),
    ("3. feature_l1 on yacht with 10 noise columns (paths with k0=0)", noise_table),
    ("4. Losses with 5% of the training targets corrupted by +-10 sd, depth 2", loss_table),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-home", default=os.environ.get("SRTOPT_DATA"))
    parser.add_argument("--reference-checkout", default=None,
                        help="a checkout of srtopt (e.g. main before this work) to time the default fit against")
    parser.add_argument("--out", default=None, help="the report (default: benchmarks/results/formulations.md)")
    args = parse(parser, argv)
    out = Path(args.out) if args.out else results() / "formulations.md"
    from threadpoolctl import threadpool_limits

    start, cpu = time.perf_counter(), time.process_time()
    sections = []
    timing = ("5. Fit seconds of the default model, depth 3, first training fold (best of 3)",
              lambda home: default_time_table(home, args.reference_checkout))
    with threadpool_limits(1):
        for title, table in SECTIONS + [timing]:
            text = table(args.data_home)
            print(f"## {title}\n\n{text}\n", flush=True)
            sections.append(f"## {title}\n\n{text}\n")
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    command = "PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/formulations.py"
    if args.reference_checkout:
        command += " --reference-checkout /path/to/main-checkout"
    header = ["# Formulations: losses, penalties and their methods (issue 13)", "",
              f"Command: `{command}`", "",
              f"Wall time {wall / 60:.1f} min, {cpu / 60:.1f} CPU min in the main process (section 5's fits run in "
              f"subprocesses), on the 2-core development machine while another benchmark ran on it: the "
              f"seconds are indicative, the ratios in section 5 compare runs made side by side.", "",
              "Protocol: the paper's 4-fold split (seed 0), X min-max scaled and y standardized on the training "
              "fold, random_state=0; means over the 4 test folds.  See the script's docstring.", ""]
    out.write_text("\n".join(header + sections))
    print(f"wrote {out} in {wall:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
