"""IPOPT through cyipopt (optional extra ``srtopt[cyipopt]``), fed the numpy evaluator.

Value and gradient come from ``problem.evaluate`` (vectorised numpy, the fast path
measured in docs/departures.md, "Engineering measurements"); with ``hessian="exact"`` (the default) the
Hessian is the formulation's own (``problem.hessian``: the compiled BN Hessian) or, for a
formulation without one, its CasADi rendering's (cached per ``structure_key``).  cyipopt
hands numpy arrays to IPOPT without conversion, so a BN solve costs little more than
IPOPT's own iterations.

Installing cyipopt (PyPI has no Linux wheel, only an sdist that links a system IPOPT):

* Debian/Ubuntu: ``sudo apt-get install coinor-libipopt-dev liblapack-dev libblas-dev
  pkg-config`` then ``pip install cyipopt`` (or ``pip install "srtopt[cyipopt]"``);
* conda: ``conda install -c conda-forge cyipopt``;
* unofficial binary wheel: ``pip install cyipopt-wheels`` (same import name; do not
  install it beside ``cyipopt``).
"""

from __future__ import annotations

import numpy as np

from .base import Acceptance, Availability, Solver, SolverResult, should_stop, smooth_problem, termination
from .derivatives import CasadiDerivatives
from .ipopt import IPOPT_TOL

CYIPOPT_INSTALL = ("cyipopt is not installed. Debian/Ubuntu: `apt-get install coinor-libipopt-dev "
                   "liblapack-dev libblas-dev pkg-config && pip install cyipopt` (or `pip install "
                   "'srtopt[cyipopt]'` after the apt step); conda: `conda install -c conda-forge cyipopt`; "
                   "unofficial binary: `pip install cyipopt-wheels`")


class _Oracle:
    """cyipopt problem object: f and grad from one ``evaluate`` call per point; IPOPT stops at
    ``deadline``."""

    def __init__(self, problem, deadline):
        self.problem, self.deadline = problem, deadline
        self._x, self._fg, self.iterations = None, None, 0

    def _eval(self, x):
        if self._x is None or not np.array_equal(x, self._x):
            self._x, self._fg = np.array(x, float), self.problem.evaluate(x)
        return self._fg

    def objective(self, x):
        return float(self._eval(x)[0])

    def gradient(self, x):
        return np.asarray(self._eval(x)[1], float)

    def constraints(self, x):
        return np.zeros(0)

    def jacobian(self, x):
        return np.zeros(0)

    def intermediate(self, alg_mod, iter_count, *args):
        """Continue unless Ctrl-C was pressed or the deadline passed (:func:`~.base.should_stop`)."""
        self.iterations = int(iter_count)
        return not should_stop(self.deadline)


class _ExactOracle(_Oracle):
    """With the exact Hessian (lower triangle); cyipopt uses it only if these methods exist."""

    def __init__(self, problem, deadline, hessian):
        super().__init__(problem, deadline)
        self._hess = hessian
        self._rows, self._cols = np.tril_indices(problem.start().size)

    def hessianstructure(self):
        return self._rows, self._cols

    def hessian(self, x, lagrange, obj_factor):
        return obj_factor * self._hess(x)[self._rows, self._cols]


class IpoptCyipopt(Solver):
    """IPOPT via ``cyipopt.Problem`` on the numpy evaluator.

    Parameters
    ----------
    hessian : {"exact", "limited-memory"}
        The exact Hessian (default; the formulation's own, else CasADi's AD) or L-BFGS.
    tol, max_iter : IPOPT's ``tol`` (default :data:`~srtopt.solvers.ipopt.IPOPT_TOL`, as
        :class:`~.ipopt.IpoptCasadi`) and ``max_iter``.
    options : extra IPOPT options (name -> value).
    time_limit, verbosity : seconds per solve (polled at every iteration) and IPOPT's
        ``print_level`` (0 silent, 1 and more: 5).
    """

    name = "cyipopt"
    family = "cyipopt"

    def __init__(self, hessian="exact", tol=IPOPT_TOL, max_iter=200, options=None, time_limit=None,
                 verbosity=0):
        if hessian not in ("limited-memory", "exact"):
            raise ValueError(f"hessian must be 'limited-memory' or 'exact', got {hessian!r}")
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.hessian, self.options = hessian, options
        self._derivatives = CasadiDerivatives()

    def available(self) -> Availability:
        try:
            import cyipopt  # noqa: F401
        except Exception:
            return Availability(False, CYIPOPT_INSTALL)
        return Availability(True)

    def version(self) -> str:
        import cyipopt

        return f"cyipopt {cyipopt.__version__}"

    def accepts(self, problem) -> Acceptance:
        own = getattr(problem, "hessian", None) is not None
        return smooth_problem(problem, "render" if self.hessian == "exact" and not own else None,
                              "CasADi rendering for the exact Hessian")

    def _solve(self, problem, x0, deadline) -> SolverResult:
        import cyipopt

        if self.hessian == "exact":
            own = getattr(problem, "hessian", None)
            oracle = _ExactOracle(problem, deadline, own if own is not None else self._derivatives.hessian(problem))
        else:
            oracle = _Oracle(problem, deadline)
        nlp = cyipopt.Problem(n=x0.size, m=0, problem_obj=oracle)
        for key, value in {"print_level": 5 if self.verbosity else 0, "sb": "yes", "tol": float(self.tol),
                           "max_iter": int(self.max_iter), "hessian_approximation": self.hessian,
                           **(self.options or {})}.items():
            nlp.add_option(key, value)
        x, info = nlp.solve(x0)
        status = info["status_msg"]
        status = status.decode() if isinstance(status, bytes) else str(status)
        condition = termination(self.family, info["status"], info["status"] in (0, 1))
        return SolverResult(np.asarray(x), float(info["obj_val"]), info["status"] in (0, 1), status,
                            oracle.iterations, 0.0, info, condition, self.name)
