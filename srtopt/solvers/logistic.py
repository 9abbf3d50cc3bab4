"""scikit-learn ``LogisticRegression`` as a solver of the WLR proxy (eq. reshuffle).

This is the paper's choice for the reassignment heuristic.  scikit-learn
minimises 1/2 ||c||^2 + C sum_i w_i logloss_i in its own parametrisation
sigma(b + c.x); with b = mu omega_0 and c = (mu/p) omega_{1:} this is
C N_t times the WLR objective with ridge alpha = mu^2 / (C N_t p^2) on
omega_{1:}, so the regularisation strength is read off ``problem.alpha``.
"""

from __future__ import annotations

import warnings

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from ..models.srt import omega_from_logistic
from .base import Acceptance, Solver, SolverResult


class SklearnLogistic(Solver):
    """Solve a :class:`~srtopt.models.srt.WLRProxy` with scikit-learn (lbfgs); ``verbosity``
    is ``LogisticRegression``'s ``verbose`` (the deadline and ``time_limit`` apply only before the solve
    begins)."""

    name = "sklearn-logistic"

    def __init__(self, max_iter=100, tol=1e-4, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)

    def version(self) -> str:
        return f"scikit-learn {sklearn.__version__}"

    def accepts(self, problem) -> Acceptance:
        if not all(hasattr(problem, a) for a in ("Z", "c", "w", "alpha", "mu")):
            return Acceptance(False, f"{type(problem).__name__} is not a weighted logistic regression (WLRProxy)")
        return Acceptance(True)

    def _solve(self, problem, x0, deadline) -> SolverResult:
        if len(np.unique(problem.c)) < 2:
            return self._result(x0, problem.evaluate(x0)[0], "single class", 0, success=False)
        p, n, mu = problem.Z.shape[1] - 1, len(problem.c), problem.mu
        C = mu**2 / (problem.alpha * n * p**2) if problem.alpha > 0 else np.inf
        model = LogisticRegression(C=C, max_iter=self.max_iter, tol=self.tol, verbose=self.verbosity)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(problem.Z[:, 1:] * p, problem.c, sample_weight=problem.w)
        x = omega_from_logistic(model.intercept_, model.coef_, mu)
        return self._result(x, problem.evaluate(x)[0], "solved", int(model.n_iter_[0]))
