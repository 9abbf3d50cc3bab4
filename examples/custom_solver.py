"""
Your own solver, registered under a name
========================================

A solver of your own, registered under a name and used for the BN subproblems of training.

    PYTHONPATH=. python examples/custom_solver.py      (SRTOPT_EXAMPLES_QUICK=1: a smaller run)

``AdamSolver`` follows the one solver contract of :mod:`srtopt.solvers.base`: it says which
formulations it accepts (smooth ones: ``evaluate(x) -> (f, grad)``), its version, takes
the shared configuration (tol, max_iter, time_limit, verbosity), returns its best point once the
deadline it is given passes, maps its statuses through ``termination``, and is clone-safe (its
parameters are its constructor's).  ``Solver.solve(problem, x0, deadline=...)`` makes the checks
(availability, constraints, a deadline already passed) and calls ``_solve(problem, x0, deadline)``.
``register_solver`` makes ``bn_solver="adam:lr=0.05"`` a spec like the built-in ones.
"""

import os
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.model_selection import train_test_split

from srtopt import SoftRegressionTree
from srtopt.solvers import Solver, make_solver, register_solver
from srtopt.solvers.base import should_stop

QUICK = bool(os.environ.get("SRTOPT_EXAMPLES_QUICK"))


class AdamSolver(Solver):
    """Adam (Kingma and Ba) with a fixed step ``lr``; stops when the gradient norm is below ``tol``."""

    name = "adam"

    def __init__(self, lr=0.05, tol=1e-6, max_iter=300, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.lr = lr

    def version(self) -> str:
        return "adam 1.0 (examples/custom_solver.py)"

    def _solve(self, problem, x0, deadline):
        x, m, v = x0.copy(), np.zeros_like(x0), np.zeros_like(x0)
        best = problem.evaluate(x)[0], x.copy()
        status, it = "iteration limit", 0
        for it in range(1, self.max_iter + 1):
            if should_stop(deadline):  # the deadline (the fit's time_limit, or this solver's) or Ctrl-C
                status = "stopped"
                break
            f, g = problem.evaluate(x)
            best = min(best, (f, x.copy()), key=lambda pair: pair[0])
            if np.linalg.norm(g) <= self.tol:
                status = "solved"
                break
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g**2
            x = x - self.lr * (m / (1 - 0.9**it)) / (np.sqrt(v / (1 - 0.999**it)) + 1e-8)
        return self._result(best[1], best[0], status, it)


register_solver("bn", "adam", AdamSolver)


def main():
    X, y = make_friedman1(800 if QUICK else 3000, noise=1.0, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    adam = make_solver("bn", "adam:lr=0.02")
    print(f"registered: {adam!r}, {adam.version()}")
    print(f"{'bn_solver':<16}{'E':>10}{'test R^2':>10}{'seconds':>9}")
    objectives = {}
    for spec in ("auto", "adam", "adam:lr=0.02"):
        start = time.perf_counter()
        tree = SoftRegressionTree(depth=2, bn_solver=spec, max_iter=3 if QUICK else 10, random_state=0)
        tree.fit(X_train, y_train)
        print(f"{spec:<16}{tree.objective_:10.4f}{tree.score(X_test, y_test):10.3f}{time.perf_counter() - start:9.2f}")
        objectives[spec] = tree.objective_
    fig, ax = plt.subplots(figsize=(5, 2.8))
    ax.barh(list(objectives), list(objectives.values()))
    ax.invert_yaxis()
    ax.set(xlabel="E of the trained tree (lower is better)", title="A registered solver beside the default")
    fig.tight_layout()


if __name__ == "__main__":
    main()
