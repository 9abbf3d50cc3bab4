"""MILO tree under a time limit: test R^2, seconds and MIP gap vs CART and linear regression.

One fold per dataset (KFold(4, shuffle=True, random_state=0), first fold), X
min-max scaled with training-fold statistics (the MILO estimator also scales y
internally, training fold only).  Datasets are CSV files in ``--data`` or
$SRTOPT_DATA: header row, last column ``target``.

    PYTHONPATH=. python benchmarks/milo_gap.py --time-limit 20

Writes the table to benchmarks/results/milo_gap.md (``--out`` to change).
Solves run one after another with one HiGHS thread.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold
from sklearn.preprocessing import MinMaxScaler
from sklearn.tree import DecisionTreeRegressor

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from srtopt.estimators.milo import MILOTreeRegressor  # noqa: E402

DEFAULT_DATASETS = ("yacht", "housing", "auto_mpg", "airfoil")


def load(name: str, data_dir: Path):
    df = pd.read_csv(data_dir / f"{name}.csv")
    if df.columns[-1] != "target":
        raise ValueError(f"{name}.csv: last column must be 'target', got {df.columns[-1]!r}")
    return df.iloc[:, :-1].to_numpy(float), df.iloc[:, -1].to_numpy(float)


def first_fold(X, y):
    tr, te = next(KFold(4, shuffle=True, random_state=0).split(X))
    sc = MinMaxScaler().fit(X[tr])
    return sc.transform(X[tr]), y[tr], sc.transform(X[te]), y[te]


def run(args):
    if not (args.data or os.environ.get("SRTOPT_DATA")):
        raise SystemExit("milo_gap.py: give --data DIR or set SRTOPT_DATA to the directory of the dataset CSVs")
    data_dir = Path(args.data or os.environ["SRTOPT_DATA"])
    rows = []
    for name in args.datasets:
        X, y = load(name, data_dir)
        Xtr, ytr, Xte, yte = first_fold(X, y)
        t = time.perf_counter()
        lr = LinearRegression().fit(Xtr, ytr)
        rows.append(dict(dataset=name, n_train=len(ytr), p=X.shape[1], depth="-", method="LinearRegression",
                         r2=r2_score(yte, lr.predict(Xte)), seconds=time.perf_counter() - t))
        for depth in args.depths:
            t = time.perf_counter()
            cart = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(Xtr, ytr)
            rows.append(dict(dataset=name, n_train=len(ytr), p=X.shape[1], depth=depth, method="CART",
                             r2=r2_score(yte, cart.predict(Xte)), seconds=time.perf_counter() - t))
            for ws in args.warm_starts:
                t = time.perf_counter()
                est = MILOTreeRegressor(depth=depth, time_limit=args.time_limit, warm_start=ws,
                                        random_state=0).fit(Xtr, ytr)
                sec = time.perf_counter() - t
                rows.append(dict(
                    dataset=name, n_train=len(ytr), p=X.shape[1], depth=depth, method=f"MILO ({ws})",
                    r2=r2_score(yte, est.predict(Xte)), seconds=sec, gap=est.mip_gap_,
                    status=est.solver_status_, objective=est.objective_,
                    start_objective=est.warm_start_objective_,
                    train_r2=est.score(Xtr, ytr),
                ))
                print(f"{name:9s} D={depth} {rows[-1]['method']:14s} test R2={rows[-1]['r2']:.4f} "
                      f"{sec:6.1f} s gap={est.mip_gap_:.3f} obj {est.warm_start_objective_:.4f} -> "
                      f"{est.objective_:.4f} [{est.solver_status_}]", flush=True)
    return pd.DataFrame(rows)


def to_markdown(df: pd.DataFrame, args, total: float) -> str:
    def fmt(v, spec):
        return "" if v is None or (isinstance(v, float) and np.isnan(v)) else format(v, spec)

    lines = [
        "# MILO tree: test R^2, time and MIP gap",
        "",
        f"Command: `PYTHONPATH=. python benchmarks/milo_gap.py --time-limit {args.time_limit:g}"
        + (f" --warm-starts {' '.join(args.warm_starts)}" if args.warm_starts != ["cart", "best"] else "")
        + "`",
        "",
        f"One fold (KFold(4, shuffle=True, random_state=0), first fold), X min-max scaled on the training "
        f"fold. MILO: `MILOTreeRegressor(depth, time_limit={args.time_limit:g}, warm_start=..., random_state=0)`, "
        "HiGHS via Pyomo APPSI, 1 thread, L1 loss + l1=1e-3 on leaf slopes. "
        "`gap` = (objective - best bound) / objective of the MILO objective (mean absolute error on "
        "standardized y + penalties), `start -> final` that objective for the warm start and the returned tree. "
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other work; total {total:.0f} s.",
        "",
        "| dataset | N train | p | depth | method | test R^2 | seconds | MIP gap | MILO obj start -> final | status |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in df.to_dict("records"):
        obj = ""
        if isinstance(r.get("objective"), float) and not np.isnan(r["objective"]):
            obj = f"{fmt(r['start_objective'], '.4f')} -> {r['objective']:.4f}"
        lines.append(
            f"| {r['dataset']} | {r['n_train']} | {r['p']} | {r['depth']} | {r['method']} | "
            f"{r['r2']:.4f} | {r['seconds']:.2f} | {fmt(r.get('gap'), '.3f')} | {obj} | "
            f"{r.get('status') if isinstance(r.get('status'), str) else ''} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-limit", type=float, default=60.0, help="MILO time limit per fit (s), default 60")
    ap.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--warm-starts", nargs="+", default=["cart", "best"],
                    choices=["cart", "greedy", "best"], help="MILO warm starts to compare")
    ap.add_argument("--data", default=None, help="datasets directory (default $SRTOPT_DATA)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "milo_gap.md"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    df = run(args)
    md = to_markdown(df, args, time.perf_counter() - t0)
    print()
    print(md)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md)
    print(f"written {out}")


if __name__ == "__main__":
    main()
