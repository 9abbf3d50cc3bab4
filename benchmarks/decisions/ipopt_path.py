"""The design's own path against the default: IPOPT on the BN subproblems, a QP on the LN steps.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/ipopt_path.py
        [--datasets a,b] [--routes auto,ipopt,...] [--repeats 3] [--out ipopt_path] [--fresh]

Depth-3 ``SoftRegressionTree(random_state=0)`` on the paper's 15 datasets with each solver route
(a ``bn_solver=`` or ``ln_solver=`` spec, everything else the default): the fit time on the first
training fold (the best of interleaved rounds of every route: ``--repeats``, more on small
data), the mean test R^2 over the paper's 4 folds
(the model-tree start is deterministic: one seed is the quick protocol), and for the BN routes
the median seconds and mean iterations of one BN solve (from ``history_``).  Each dataset's
rows are appended to ``benchmarks/results/<out>.jsonl`` when it ends (a rerun with the same routes
resumes after the last finished dataset; ``--fresh`` starts over).  Writes
``benchmarks/results/<out>.md`` (``--out``, default ``ipopt_path``).  ``--smoke``: one tiny dataset, the default
and IPOPT routes, one timing round, fold 0, the trees at max_iter 2, IPOPT's own cost over 5 solves.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np

from benchmarks.common import budget, parse, pick, results, write_report
from benchmarks.common.data import load
from benchmarks.common.protocol import outer_folds, paper_fold
from srtopt import SoftRegressionTree
from srtopt.datasets import DATASETS

SECONDS, MAX_ROUNDS = 3.0, 15  # timing rounds on small data: see main
PAPER = list(DATASETS)  # the paper's 15
ROUTES = {"auto": {}, "ipopt": {"bn_solver": "ipopt"}, "ipopt tol 1e-6": {"bn_solver": "ipopt:tol=1e-6"},
          "ipopt L-BFGS": {"bn_solver": "ipopt:hessian=limited-memory"},
          "cyipopt": {"bn_solver": "cyipopt"},
          "LN highs": {"ln_solver": "highs"}, "LN qpoases": {"ln_solver": "qpoases"}, "LN osqp": {"ln_solver": "osqp"}}


def fit(params, X, y):
    start = time.perf_counter()
    model = SoftRegressionTree(depth=3, random_state=0, **params, **budget()).fit(X, y)
    return time.perf_counter() - start, model


def bn_solves(model):
    records = [r["bn"] for r in model.history_ if r["bn"].get("solver") not in (None, "") and "seconds" in r["bn"]]
    if not records:
        return float("nan"), float("nan")
    return statistics.median(r["seconds"] for r in records), float(np.mean([r.get("iterations", 0) for r in records]))


def ipopt_floor(n: int = 14, rows: int = 50, repeats: int = 300) -> tuple[float, float, int]:
    """IPOPT's own cost, without Python: (ms per solve stopped at iteration 0, ms per solve to
    convergence, iterations) on a compiled (SX) smooth problem of a one-node BN subproblem's
    size (a ridge logistic regression with n variables on ``rows`` random rows), the options of
    ``bn_solver="ipopt"``."""
    import casadi as ca

    from srtopt.solvers.ipopt import IPOPT_TOL

    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(rows, n)), rng.integers(0, 2, rows)
    x = ca.SX.sym("x", n)
    u = ca.mtimes(A, x)
    f = ca.sum1(ca.log(1 + ca.exp(u)) - b * u) / rows + 1e-2 * ca.sumsqr(x)
    base = {"ipopt.print_level": 0, "print_time": False, "ipopt.sb": "yes", "ipopt.tol": IPOPT_TOL}
    out = []
    for options in ({"ipopt.max_iter": 0}, {}):
        solver = ca.nlpsol("floor", "ipopt", {"x": x, "f": f}, {**base, **options})
        solver(x0=np.zeros(n))
        start = time.process_time()
        for _ in range(repeats):
            solver(x0=np.zeros(n))
        out.append((time.process_time() - start) / repeats * 1e3)
    return out[0], out[1], int(solver.stats()["iter_count"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(PAPER))
    parser.add_argument("--routes", default=",".join(ROUTES))
    parser.add_argument("--repeats", type=int, default=3,
                        help=f"timed fits per route at least (the best counts; on small data up to {MAX_ROUNDS}, "
                             f"until the default's fits take {SECONDS:g} s)")
    parser.add_argument("--fresh", action="store_true", help="ignore the stored rows of earlier runs")
    parser.add_argument("--out", default="ipopt_path", help="name of the report (.md) and store (.jsonl) in "
                                                             "benchmarks/results")
    argv = sys.argv[1:] if argv is None else argv
    args = parse(parser, argv, ["--datasets", "yacht", "--routes", "auto,ipopt", "--repeats", "1"])
    from srtopt.solvers import make_solver

    routes = {}
    for name in args.routes.split(","):
        spec = next(iter(ROUTES[name].values()), None)
        kind = next(iter(ROUTES[name]), "bn_solver")[:2]
        if spec is None or make_solver(kind, spec).available():
            routes[name] = ROUTES[name]
        else:
            print(f"{name}: not installed here, skipped", flush=True)
    store = results() / f"{args.out}.jsonl"
    if args.fresh:
        store.unlink(missing_ok=True)
    rows = {}
    for line in (store.read_text().splitlines() if store.exists() else []):
        record = json.loads(line)
        if record["routes"] == list(routes):
            rows.update({(record["dataset"], name): tuple(row) for name, row in record["rows"].items()})
    for dataset in args.datasets.split(","):
        if all((dataset, name) in rows for name in routes):
            continue
        X, y, _ = load(dataset)
        X0, _, y0, _ = paper_fold(X, y, 0)
        seconds = {name: [] for name in routes}
        rounds = args.repeats
        while len(seconds["auto"]) < rounds:  # interleaved, best of the rounds
            for name, params in routes.items():
                seconds[name].append(fit(params, X0, y0)[0])
            # small data: more rounds, until the default's fits add up to SECONDS (at most MAX_ROUNDS)
            rounds = max(args.repeats, min(pick(MAX_ROUNDS, 1), math.ceil(SECONDS / min(seconds["auto"]))))
        for name, params in routes.items():
            scores, solve, iters = [], [], []
            for k in outer_folds():
                Xtr, Xte, ytr, yte = paper_fold(X, y, k)
                _, model = fit(params, Xtr, ytr)
                scores.append(model.score(Xte, yte))
                if k == 0:
                    solve, iters = bn_solves(model)
            rows[dataset, name] = (min(seconds[name]), float(np.mean(scores)), solve, iters)
            print(f"{dataset} {name}: {min(seconds[name]):.2f} s, test R^2 {np.mean(scores):.3f}, "
                  f"BN solve {solve * 1e3:.1f} ms ({iters:.1f} it)", flush=True)
        with store.open("a") as out:
            out.write(json.dumps({"dataset": dataset, "routes": list(routes),
                                  "rows": {name: rows[dataset, name] for name in routes}}) + "\n")
    write_report(results() / f"{args.out}.md", report(rows, list(routes), args.datasets.split(","), args.repeats,
                                                      argv or [], ipopt_floor(repeats=pick(300, 5))))
    return 0


def report(rows, routes, datasets, repeats, argv, floor) -> list[str]:
    command = " ".join(["python benchmarks/decisions/ipopt_path.py", *(f"'{a}'" if " " in a else a for a in argv)])
    lines = ["# IPOPT on the BN subproblems and QPs on the LN steps against the default", "",
             f"Command: `PYTHONPATH=. SRTOPT_DATA=... OPENBLAS_NUM_THREADS=1 {command}` "
             f"(depth 3, fit seconds on the first fold, best of {repeats} to {MAX_ROUNDS} interleaved rounds, more on "
             f"small data until the default's fits take {SECONDS:g} s; mean test R^2 over the "
             "paper's 4 folds; a 2-core machine shared with other work).", "",
             "| dataset | " + " | ".join(f"{r} s / R^2" for r in routes) + " |",
             "|---|" + "---:|" * len(routes)]
    for dataset in datasets:
        lines.append(f"| {dataset} | " + " | ".join(
            f"{rows[dataset, r][0]:.2f} ({rows[dataset, r][0] / rows[dataset, 'auto'][0]:.2f}x) / "
            f"{rows[dataset, r][1]:.3f}" for r in routes) + " |")
    lines += ["", "| route | time / default (geometric mean) | worst dataset | mean test R^2 | vs default | "
                  "BN solve ms (median of medians) | BN iterations |", "|---|---:|---:|---:|---:|---:|---:|"]
    base_r2 = np.mean([rows[d, "auto"][1] for d in datasets])
    for r in routes:
        ratios = [rows[d, r][0] / rows[d, "auto"][0] for d in datasets]
        r2 = np.mean([rows[d, r][1] for d in datasets])
        lines.append(f"| {r} | {np.exp(np.mean(np.log(ratios))):.2f} | {max(ratios):.2f} | {r2:.4f} | "
                     f"{r2 - base_r2:+.4f} | {np.nanmedian([rows[d, r][2] for d in datasets]) * 1e3:.1f} | "
                     f"{np.nanmean([rows[d, r][3] for d in datasets]):.1f} |")
    lines += ["", f"IPOPT's own cost, no Python in the loop (CPU time; compiled CasADi SX functions, a 14-variable "
                  f"ridge logistic regression on 50 rows, the options of `bn_solver=\"ipopt\"`): "
                  f"{floor[0]:.2f} ms per solve stopped at iteration 0, {floor[1]:.2f} ms per solve to "
                  f"convergence ({floor[2]} iterations)."]
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
