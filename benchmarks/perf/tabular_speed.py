"""Speed on a wide table: the soft tree fitted on ames (2,930 rows, 73 columns of which 40 are text, 266
encoded columns) against RandomForestRegressor(100) behind the usual pipeline, in the same run.

    PYTHONPATH=. SRTOPT_TABULAR_DATA=/path/to/datasets_tabular python benchmarks/perf/tabular_speed.py

Each fold of KFold(4, shuffle, seed 0) is fitted ``--repeats`` times by each model, the models alternating
(so that the machine's load falls on both alike); the table gives the median fit seconds and their ratio to
the forest's.  ``SoftRegressionTree`` is fitted with its defaults at depth 3 (``leaf_ridge="auto"``: the
leaf-ridge comparison runs where the leaves have few rows per coefficient, as on ames) and with
``leaf_ridge=1`` (no comparison), which shows the comparison's share.  No thread variable is set: the run
is timed as a user runs it.  The table goes to ``benchmarks/results/tabular_speed.md``.  ``--smoke``: a tiny
stand-in of ames, one fold, one round.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from benchmarks.common import parse, results, smoke, write_report
from benchmarks.common.data import load_table, pipeline

MODELS = ("RF (pipeline)", "soft tree", "soft tree, leaf_ridge=1")


def make(model, X):
    from sklearn.ensemble import RandomForestRegressor

    import srtopt

    if model == "RF (pipeline)":
        return pipeline(RandomForestRegressor(100, random_state=0), X)
    ridge = {"leaf_ridge": 1.0} if model.endswith("leaf_ridge=1") else {}
    return srtopt.SoftRegressionTree(depth=3, random_state=0, **ridge)


def timed_fits(X, y, train, repeats) -> dict:
    """{model: [fit seconds]} over ``repeats`` alternating rounds on the rows ``train``."""
    seconds = {model: [] for model in MODELS}
    for _ in range(repeats):
        for model in MODELS:
            estimator = make(model, X)
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                estimator.fit(X.iloc[train], y[train])
            seconds[model].append(time.perf_counter() - started)
    return seconds


def main(argv=None) -> int:
    from sklearn.model_selection import KFold

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folds", type=int, default=4, help="how many of the 4 folds")
    parser.add_argument("--repeats", type=int, default=2)
    args = parse(parser, argv, ["--folds", "1", "--repeats", "1"])
    if not smoke() and not os.environ.get("SRTOPT_TABULAR_DATA"):
        raise SystemExit("set SRTOPT_TABULAR_DATA to the folder of the tabular datasets")
    X, y, _ = load_table("ames")
    y = np.asarray(y, dtype=float)
    splits = list(KFold(4, shuffle=True, random_state=0).split(X))[: args.folds]
    lines = ["# Speed on a wide table (ames)", "",
             "Command: `PYTHONPATH=. SRTOPT_TABULAR_DATA=/path/to/datasets_tabular python benchmarks/perf/"
             "tabular_speed.py`", "", f"Median fit seconds of {args.repeats} alternating rounds per fold; the "
             "ratio is to RandomForestRegressor(100) behind the usual pipeline in the same round.", "",
             "| fold | " + " | ".join(MODELS) + " | " + " | ".join(f"{m} / RF" for m in MODELS[1:]) + " |",
             "|---|" + "---:|" * (2 * len(MODELS) - 1)]
    ratios = {model: [] for model in MODELS[1:]}
    for fold, (train, _) in enumerate(splits):
        median = {m: float(np.median(s)) for m, s in timed_fits(X, y, train, args.repeats).items()}
        for model in MODELS[1:]:
            ratios[model].append(median[model] / median["RF (pipeline)"])
        lines.append(f"| {fold} | " + " | ".join(f"{median[m]:.1f}" for m in MODELS) + " | "
                     + " | ".join(f"{ratios[m][-1]:.2f}" for m in MODELS[1:]) + " |")
        print(lines[-1], flush=True)
    lines.append("| **geometric mean ratio** | | | | " + " | ".join(
        f"**{np.exp(np.mean(np.log(ratios[m]))):.2f}**" for m in MODELS[1:]) + " |")
    write_report(results() / "tabular_speed.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
