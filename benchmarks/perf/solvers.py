"""BN solver comparison and Pyomo vs CasADi model build times.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/perf/solvers.py

For cpu_small and friedman (one 75/25 split, seed 0, depth 3, SRT with its
default l2 weights, ``--max-iter`` macro iterations, default 3 instead of the
paper's 10 to keep the run under ~10 minutes):

1. time per BN solve: the BN subproblem of node 2 (W_B = {2, 4, 5}, the rows I_2;
   node 3, then 1, when |I_2| < 100)
   at the start of macro iteration 1, captured from a run with the default BN solver using
   :func:`srtopt.inspect.capture`, solved from the same start by every available
   BN solver (median of 3 solves; the first, cold solve is reported separately
   because IPOPT/CasADi builds its solver then);
2. one full training run per BN solver: seconds, E, train/test R^2;
3. build time of the BN model of the whole tree (root, W_B = all 7 branch nodes)
   with the CasADi (vectorised MX) and the Pyomo (one expression per point)
   backends at N = 1000 and 8192 rows of cpu_small.

Writes ``benchmarks/results/solvers.md``.  ``--smoke``: one tiny dataset, three BN solvers, two for training, one
macro iteration, the build at N = 50.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from benchmarks.common import parse, results
from benchmarks.common.data import load
from srtopt import SoftRegressionTree
from srtopt.inspect import capture
from srtopt.models.pyomo_backend import render_pyomo
from srtopt.solvers import SolverUnavailableError, make_solver

BN_SOLVERS = ["newton", "ipopt", "ipopt:hessian=exact", "cyipopt", "cyipopt:hessian=exact", "l-bfgs-b", "slsqp",
              "trust-exact", "pyomo/ipopt"]


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def bn_solve_table(snapshot_bn, solvers):
    rows = []
    for spec in solvers:
        try:
            solver = make_solver("bn", spec)
        except SolverUnavailableError as exc:
            rows.append((spec, None, None, None, None, str(exc).split(".")[0]))
            continue
        cold = solver.solve(snapshot_bn.formulation, snapshot_bn.x0)
        warm = [solver.solve(snapshot_bn.formulation, snapshot_bn.x0) for _ in range(3)]
        rows.append((spec, cold.seconds, statistics.median(r.seconds for r in warm), warm[0].iterations,
                     warm[0].objective, str(warm[0].termination_condition)))
    return rows


def training_table(X_train, y_train, X_test, y_test, solvers, max_iter):
    rows = []
    for spec in solvers:
        try:
            make_solver("bn", spec)
        except SolverUnavailableError as exc:
            rows.append((spec, None, None, None, None, str(exc).split(".")[0]))
            continue
        tree = SoftRegressionTree(depth=3, max_iter=max_iter, bn_solver=spec, random_state=0)
        _, seconds = timed(tree.fit, X_train, y_train)
        rows.append((spec, seconds, tree.objective_, tree.score(X_train, y_train), tree.score(X_test, y_test), ""))
    return rows


def build_table(X, y, sizes):
    from srtopt.models.srt import SRTProblem
    from srtopt.tree import Tree

    rows = []
    tree = Tree(3)
    rng = np.random.default_rng(0)
    for n in sizes:
        Xn = (X[:n] - X[:n].min(0)) / np.maximum(X[:n].max(0) - X[:n].min(0), 1e-12)
        yn = (y[:n] - y[:n].mean()) / y[:n].std()
        problem = SRTProblem(Xn, yn, tree, 1.0, 1e-3, 1e-3)
        omega = rng.standard_normal((tree.n_branch, Xn.shape[1] + 1))
        beta = rng.standard_normal((tree.n_leaves, Xn.shape[1] + 1))
        bn = problem.branch_subproblem(omega, beta, 1, tree.branch_nodes, np.arange(n))
        casadi_model, t_casadi = timed(bn.render)
        _, t_eval = timed(casadi_model.gradient, bn.start())
        pyomo_model, t_pyomo = timed(render_pyomo, bn)
        assert abs(pyomo_model.objective(bn.start()) - casadi_model.objective(bn.start())) < 1e-8
        rows.append((n, Xn.shape[1], bn.start().size, t_casadi, t_eval, t_pyomo, t_pyomo / t_casadi))
    return rows


def fmt(value, spec=".3f"):
    return "-" if value is None else format(value, spec)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["cpu_small", "friedman"])
    parser.add_argument("--solvers", nargs="+", default=BN_SOLVERS)
    parser.add_argument("--train-solvers", nargs="+", default=["auto", "ipopt", "cyipopt", "l-bfgs-b", "slsqp"])
    parser.add_argument("--max-iter", type=int, default=3)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 8192])
    parser.add_argument("--out", default=None, help="the report (default: benchmarks/results/solvers.md)")
    args = parse(parser, argv, ["--datasets", "friedman", "--solvers", "newton", "ipopt", "l-bfgs-b",
                                "--train-solvers", "auto", "ipopt", "--max-iter", "1", "--sizes", "50"])
    out = Path(args.out) if args.out else results() / "solvers.md"
    data_home = os.environ.get("SRTOPT_DATA")  # None: srtopt.datasets' cache (downloaded once)

    lines = ["# BN solvers and model backends", "",
             "`PYTHONPATH=. SRTOPT_DATA=/path/to/datasets python benchmarks/perf/solvers.py` "
             f"({platform.node() and 'this machine'}, {os.cpu_count()} cores, shared; one run, "
             f"noise about +-25 %). Depth 3, default l2 weights, one 75/25 split, seed 0, "
             f"**max_iter = {args.max_iter}** macro iterations (the paper uses 10).", ""]
    for slug in args.datasets:
        data = load(slug, data_home)
        X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, test_size=0.25, random_state=0)
        print(f"[{slug}] N_train = {len(y_train)}, p = {data.X.shape[1]}", flush=True)
        ref = SoftRegressionTree(depth=3, max_iter=2, random_state=0).fit(X_train, y_train)
        for node in (2, 3, 1):  # the first of these whose I_t is not tiny
            bn = capture(ref, X_train, y_train, node=node, macro=1).bn()
            if bn.n_rows >= 100:
                break
        print(bn.summary(max_variables=0), flush=True)
        lines += [f"## {slug} (N_train = {len(y_train)}, p = {data.X.shape[1]})", "",
                  f"### One BN solve: node {bn.node}, W_B = {set(bn.formulation.working)}, |I_t| = {bn.n_rows}, "
                  f"{bn.n_variables} variables, "
                  f"start objective {bn.objective():.6f}", "",
                  "| solver | cold solve s | warm-cache solve s (median of 3) | iterations | objective | termination |",
                  "|---|---|---|---|---|---|"]
        for spec, cold, warm, it, obj, term in bn_solve_table(bn, args.solvers):
            lines.append(f"| {spec} | {fmt(cold)} | {fmt(warm)} | {fmt(it, 'd')} | {fmt(obj, '.8f')} | {term} |")
            print(lines[-1], flush=True)
        lines += ["", f"### Full training (NODEC-DR, max_iter = {args.max_iter})", "",
                  "| bn_solver | seconds | E | train R^2 | test R^2 | note |", "|---|---|---|---|---|---|"]
        for spec, sec, E, r2_train, r2_test, note in training_table(X_train, y_train, X_test, y_test,
                                                                    args.train_solvers, args.max_iter):
            lines.append(f"| {spec} | {fmt(sec, '.2f')} | {fmt(E, '.6f')} | {fmt(r2_train, '.4f')} | "
                         f"{fmt(r2_test, '.4f')} | {note} |")
            print(lines[-1], flush=True)
        lines.append("")
    data = load("cpu_small", data_home)
    lines += ["## Model build: BN subproblem of the whole depth-3 tree (cpu_small rows)", "",
              "| N | p | variables | CasADi render s | CasADi first gradient s | Pyomo render s | Pyomo / CasADi |",
              "|---|---|---|---|---|---|---|"]
    for n, p, nv, tc, te, tp, ratio in build_table(data.X, data.y, args.sizes):
        lines.append(f"| {n} | {p} | {nv} | {tc:.3f} | {te:.3f} | {tp:.2f} | {ratio:.0f}x |")
        print(lines[-1], flush=True)
    lines += ["", "Pyomo builds one scalar expression per data point (size ~ N * q * (|tau_B| + 1)); "
              "CasADi builds one vectorised MX graph with the data as parameters (size independent of N).", ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
