"""The MILO tree (ORT-L) against the paper's ORT-L column and STreeD, on the paper's folds.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/reproduce/milo.py [--datasets a,b] [--depths 2,3]
        [--folds 4] [--time-limit 60] [--method auto] [--no-streed]

For each dataset, depth and fold of the paper's protocol (KFold(4, shuffle, random_state=0),
features min-max scaled and y standardized on the training fold), seed 0: one fit of
``MILOTreeRegressor(depth, time_limit, random_state=0)`` with its defaults and one of
STreeD (``pystreed``, the registry's "streed" method) when it is installed.  Every run is
appended to ``benchmarks/results/milo/runs.jsonl`` as it ends (a rerun skips the runs
already there: the benchmark resumes), and the tables are written to
``benchmarks/results/milo/README.md``: mean test R^2 and seconds per dataset beside the
paper's ORT-L, the bound and gap the MILO tree proves, and the summary means.  Without ``pystreed`` STreeD's runs
are skipped, saying so.  ``--smoke``: a tiny stand-in of yacht, depth 2, fold 0, the limit 1 s, the store and the
tables in the smoke folder.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.common import parse, results, skip
from srtopt.datasets import DATASETS
from srtopt.experiments.protocol import fold_indices, scale_fold

PAPER = list(DATASETS)  # the paper's 15


def run_one(dataset, depth, fold, method, time_limit, milo_method):
    from sklearn.metrics import r2_score

    from benchmarks.common.data import load

    X, y, _ = load(dataset)
    train, test = fold_indices(len(y), 4, 0, fold)
    X_train, X_test, y_train, y_test, _ = scale_fold(X[train], X[test], y[train], y[test])
    row = {"dataset": dataset, "depth": depth, "fold": fold, "method": method, "time_limit": time_limit,
           "n_train": len(train)}
    start = time.perf_counter()
    if method == "milo":
        from srtopt import MILOTreeRegressor

        model = MILOTreeRegressor(depth=depth, time_limit=time_limit, random_state=0, method=milo_method)
        model.fit(X_train, y_train)
        row.update(objective=model.objective_, bound=model.mip_bound_, gap=model.mip_gap_,
                   status=model.solver_status_, bound_source=model.bound_source_, l1=model.l1_,
                   min_samples_leaf=int(model.min_samples_leaf_),
                   descents=model.local_search_log_[-1][1] if model.local_search_log_ else None,
                   stages=[[round(s, 2), stage] for s, stage, *_ in model.mip_log_])
    else:
        from srtopt.experiments.methods import get_method

        model = get_method("streed")(depth, 0, time_limit=time_limit)
        model.fit(X_train, y_train)
    row["seconds"] = time.perf_counter() - start
    row["r2_test"] = float(r2_score(y_test, model.predict(X_test)))
    row["r2_train"] = float(r2_score(y_train, model.predict(X_train)))
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(PAPER))
    parser.add_argument("--depths", default="2,3")
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--method", default="auto", help="MILOTreeRegressor's method")
    parser.add_argument("--no-streed", action="store_true")
    parser.add_argument("--store", default=None, help="the runs (default: benchmarks/results/milo/runs.jsonl)")
    args = parse(parser, argv, ["--datasets", "yacht", "--depths", "2", "--folds", "1", "--time-limit", "1"])
    store = Path(args.store) if args.store else results() / "milo" / "runs.jsonl"
    store.parent.mkdir(parents=True, exist_ok=True)
    done = {_key(r) for r in _rows(store)}
    if not args.no_streed and not _has_streed():
        skip("STreeD's runs", "pystreed is not installed")
    methods = ["milo"] + ([] if args.no_streed or not _has_streed() else ["streed"])
    for dataset in args.datasets.split(","):
        for depth in map(int, args.depths.split(",")):
            for fold in range(args.folds):
                for method in methods:
                    key = (dataset, depth, fold, method, args.time_limit)
                    if key in done:
                        continue
                    row = run_one(dataset, depth, fold, method, args.time_limit, args.method)
                    with store.open("a") as handle:
                        handle.write(json.dumps(row) + "\n")
                    print(f"{dataset} D{depth} fold {fold} {method}: R^2 {row['r2_test']:.3f} in "
                          f"{row['seconds']:.1f} s" + (f", gap {row['gap']:.3f} ({row['status']})"
                                                       if method == "milo" else ""), flush=True)
    text = report(_rows(store), args.time_limit)
    (results() / "milo" / "README.md").write_text(text)
    print(text)
    return 0


def _key(row):
    return row["dataset"], row["depth"], row["fold"], row["method"], row["time_limit"]


def _rows(store):
    return [json.loads(line) for line in store.read_text().splitlines() if line.strip()] if store.exists() else []


def _has_streed():
    try:
        import pystreed  # noqa: F401
    except ImportError:
        return False
    return True


def report(rows, time_limit) -> str:
    from srtopt.experiments.report import paper_tables

    tables = paper_tables()
    paper = {(d, int(k[-1])): row for k in ("depth2", "depth3") for d, row in tables[k].items()}
    lines = [
        "# The MILO tree (ORT-L) beside the paper's ORT-L and STreeD",
        "",
        f"Command: `PYTHONPATH=. python benchmarks/reproduce/milo.py --time-limit {time_limit:g}` (paper folds, seed 0; "
        "resumable: runs are appended to `runs.jsonl`).",
        "MILO: `MILOTreeRegressor(depth, time_limit, random_state=0)` with its defaults; STreeD: "
        "`STreeDPiecewiseLinearRegressor(max_depth, min_leaf_node_size=10, ridge_penalty=1e-3, cost_complexity=0)`. "
        "Paper ORT-L: Interpretable AI's local search, cp = 0, l1 = 1e-3, 4 folds x 20 seeds, seconds on an "
        "i7-9700K. Gap: (E - bound) / E of the MILO tree's objective, bound proven by enumeration or the MIP solver.",
        "",
    ]
    summary = {}
    for depth in sorted({r["depth"] for r in rows}):
        lines += [f"## Depth {depth}", "",
                  "| dataset | N train | MILO R^2 | ORT-L R^2 | diff | STreeD R^2 | MILO s | ORT-L s | STreeD s | "
                  "certified folds | mean gap |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for dataset in PAPER:
            milo = [r for r in rows if r["dataset"] == dataset and r["depth"] == depth and r["method"] == "milo"
                    and r["time_limit"] == time_limit]
            if not milo:
                continue
            streed = [r for r in rows if r["dataset"] == dataset and r["depth"] == depth and r["method"] == "streed"
                      and r["time_limit"] == time_limit]
            ortl = paper.get((dataset, depth), {}).get("ORT_L", {})
            r2 = np.mean([r["r2_test"] for r in milo])
            diff = r2 - ortl["r2"] if ortl else np.nan
            summary.setdefault(depth, []).append((r2, ortl.get("r2", np.nan), diff,
                                                  np.mean([r["r2_test"] for r in streed]) if streed else np.nan,
                                                  np.mean([r["seconds"] for r in milo]),
                                                  np.mean([r["seconds"] for r in streed]) if streed else np.nan))
            lines.append(
                f"| {dataset} | {milo[0]['n_train']} | {r2:.3f} | {ortl.get('r2', float('nan')):.3f} | {diff:+.3f} | "
                + (f"{np.mean([r['r2_test'] for r in streed]):.3f}" if streed else "-")
                + f" | {np.mean([r['seconds'] for r in milo]):.1f} | {ortl.get('time', float('nan')):.1f} | "
                + (f"{np.mean([r['seconds'] for r in streed]):.1f}" if streed else "-")
                + f" | {sum(r['status'] == 'optimal' for r in milo)}/{len(milo)} | "
                f"{np.mean([r['gap'] for r in milo]):.3f} |")
        values = np.array(summary.get(depth, []), dtype=float)
        if len(values):
            lines += ["", f"Mean over {len(values)} datasets: MILO {values[:, 0].mean():.3f}, paper ORT-L "
                          f"{np.nanmean(values[:, 1]):.3f}, worst difference {np.nanmin(values[:, 2]):+.3f}"
                      + (f"; STreeD {np.nanmean(values[:, 3]):.3f}" if np.isfinite(values[:, 3]).any() else ""),
                      ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
