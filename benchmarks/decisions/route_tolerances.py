"""The default tolerances of the BN routes by name: does each reach a captured subproblem's optimum?

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/route_tolerances.py

Captures BN subproblems of five small fits (``srtopt.inspect.capture``: a few inner iterations
each, from the first to the last) and solves each with every available route of
``SOLVERS["bn"]`` at its default, and with the SciPy routes at their former defaults (SciPy's own
tolerance; 1e-6 for L-BFGS-B and IPOPT, the budgets "auto" keeps).  The optimum is the lower of Newton's and
IPOPT's (tol 1e-12).  Prints, per route and setting, the largest relative gap
(f - f*) / |f*| over the subproblems, how many are above 1e-7, and the mean iterations; writes
``benchmarks/results/route_tolerances.md``.  ``--smoke``: the first fit (60 rows, max_iter 2) and two of its
subproblems.
"""

from __future__ import annotations

import argparse
import itertools
import warnings

import numpy as np
from sklearn.datasets import load_diabetes, make_friedman1

from benchmarks.common import parse, pick, results, write_report
from srtopt import SoftRegressionTree
from srtopt.inspect import capture
from srtopt.solvers import ScipyHessian, available_solvers

TARGET = 1e-7
#: the former defaults of the routes whose default changed, and trust-krylov, no longer registered
#: (prox-gradient at its former tolerance, with the stopping test from its second iteration on)
FORMER = {"l-bfgs-b, tol 1e-6 (former; auto's)": "l-bfgs-b:tol=1e-6", "ipopt, tol 1e-6 (former; auto's)": "ipopt:tol=1e-6",
          "slsqp, SciPy's tol (former)": "slsqp:tol=None", "trust-exact, SciPy's tol (former)": "trust-exact:tol=None",
          "trust-krylov, SciPy's tol (former)": ScipyHessian("trust-krylov"),
          "trust-krylov, tol 1e-8": ScipyHessian("trust-krylov", tol=1e-8),
          "prox-gradient, tol 1e-10 (former; auto's)": "prox-gradient:tol=1e-10"}


def cases():
    """(name, estimator, X, y) of the five fits."""
    rng, n = np.random.default_rng(0), pick(200, 60)
    X = rng.random((n, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    yield f"sine, {n} rows, depth 3", SoftRegressionTree(depth=3, regularization=1e-3, max_iter=pick(3, 2), n_init=2,
                                                         random_state=0), X, y
    rng = np.random.default_rng(0)
    X = rng.random((600, 5))
    y = np.where(X[:, 0] > 0.5, np.sin(4 * X[:, 1]), X[:, 2] ** 2 - X[:, 3]) + 0.05 * rng.standard_normal(600)
    yield "switch, 600 rows, depth 3", SoftRegressionTree(depth=3, regularization=1e-3, max_iter=5,
                                                          random_state=0), X, y
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes, depth 2", SoftRegressionTree(depth=2, max_iter=4, random_state=0), X, y
    yield "diabetes, depth 3", SoftRegressionTree(depth=3, max_iter=3, random_state=0), X, y
    X, y = make_friedman1(300, noise=1.0, random_state=0)
    yield "Friedman #1, 300 rows, depth 2", SoftRegressionTree(depth=2, max_iter=4, random_state=0), X, y


def subproblems():
    """(case, k, BN subproblem) for a spread of inner iterations of each fit."""
    for name, estimator, X, y in itertools.islice(cases(), pick(None, 1)):
        estimator.fit(X, y)
        last = len(estimator.history_) - 1
        for k in pick(sorted({0, 1, last // 3, last // 2, last}), [0, last]):
            try:
                yield name, k, capture(estimator, X, y, k=k).bn()
            except ValueError:  # no training row reaches that node: no BN subproblem
                continue


def main(argv=None):
    parse(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter), argv)
    warnings.filterwarnings("ignore")
    routes = [name for name, ok in available_solvers("bn").items() if ok]
    specs = {f"{name} (default)": name for name in routes}
    specs.update(FORMER)
    gaps = {label: [] for label in specs}
    iterations = {label: [] for label in specs}
    count = 0
    for _, _, bn in subproblems():
        count += 1
        optimum = min(bn.solve("ipopt:tol=1e-12").objective, bn.solve("newton").objective)
        for label, spec in specs.items():
            result = bn.solve(spec)
            gaps[label].append((result.objective - optimum) / abs(optimum))
            iterations[label].append(result.iterations)
    lines = [f"# The BN routes' default tolerances on {count} captured subproblems", "",
             ("`benchmarks/decisions/route_tolerances.py`: five small fits, BN subproblems of a spread of their "
              "inner iterations; optimum: the lower of Newton's and IPOPT's (tol 1e-12)."), "",
             "| route | largest relative gap | above 1e-7 | mean iterations |", "|---|---:|---:|---:|"]
    for label in specs:
        gap = np.array(gaps[label])
        lines.append(f"| {label} | {gap.max():.1e} | {int((gap > TARGET).sum())} of {len(gap)} | "
                     f"{np.mean(iterations[label]):.1f} |")
    write_report(results() / "route_tolerances.md", lines)


if __name__ == "__main__":
    main()
