"""The LN step of the smooth losses other than squared: exact Newton (the "auto" choice)
against IPOPT with CasADi's exact Hessian and, for Huber, HiGHS's QP.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/ln_solvers.py

On airfoil and abalone (the first training fold of the paper's 4-fold split, seed 0,
scaled as ``srtopt bench`` does), a depth-2 training run of one macro iteration with
each loss (Huber delta 0.3, smoothed absolute, log-cosh as a CasADi callable) hands its
LN subproblems (2) to IPOPT; each is then solved again from the same start by every
solver: seconds per solve and the objective reached.  Writes
benchmarks/results/ln_solvers.md.  ``--smoke``: one tiny dataset.
"""

from __future__ import annotations

import argparse
import time

import casadi as ca
from threadpoolctl import threadpool_limits

from benchmarks.common import parse, pick, results
from benchmarks.common.data import load
from srtopt import SoftRegressionTree
from srtopt.experiments.protocol import fold_indices, scale_fold
from srtopt.solvers import make_solver

LOSSES = {"huber": "huber", "absolute (smoothed)": "absolute", "log-cosh (CasADi callable)": lambda r: ca.log(ca.cosh(r))}
SOLVERS = ["newton", "ipopt:hessian=exact,tol=1e-10", "highs"]


def ln_subproblems(X, y, loss):
    """The LN subproblems of one macro iteration of a depth-2 fit."""
    subproblems = []

    def keep(state):
        subproblems.extend(solve.subproblem for solve in state.solves if solve.kind == "ln")
    SoftRegressionTree(depth=2, loss=loss, max_iter=1, random_state=0, ln_solver=SOLVERS[1],
                       callbacks=[keep]).fit(X, y)
    return subproblems


def main(argv=None) -> int:
    parse(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter), argv)
    lines = ["# LN solvers of the smooth losses (issue 13)", "",
             "Command: `PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python "
             "benchmarks/decisions/ln_solvers.py`", "",
             "Seconds per LN solve (mean over the LN subproblems of one macro iteration of a depth-2 fit, first "
             "training fold) and the objectives reached, by solver.", "",
             "| dataset (training rows) | loss | solver | seconds per solve | objectives |", "|---|---|---|---:|---|"]
    with threadpool_limits(1):
        for slug in pick(("airfoil", "abalone"), ("airfoil",)):
            X, y, _ = load(slug)
            train, test = fold_indices(len(y), 4, 0, 0)
            Xtr, _, ytr, _ = scale_fold(X[train], X[test], y[train], y[test])[:4]
            for label, loss in LOSSES.items():
                subs = ln_subproblems(Xtr, ytr, loss)
                for spec in SOLVERS:
                    solver = make_solver("ln", spec)
                    if not all(solver.accepts(sub) for sub in subs):
                        continue
                    start = time.perf_counter()
                    solved = [solver.solve(sub, sub.start()) for sub in subs]
                    seconds = (time.perf_counter() - start) / len(subs)
                    values = ", ".join(f"{sub.value(r.x):.10f}" for sub, r in zip(subs, solved))
                    lines.append(f"| {slug} ({len(ytr)}) | {label} | {spec} | {seconds:.4f} | {values} |")
                    print(lines[-1], flush=True)
    out = results() / "ln_solvers.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
