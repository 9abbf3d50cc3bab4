"""QP solvers for the LN step of the losses whose leaf problem is a QP.

A loss with ``qp_form = (a, b)`` satisfies loss(r) = min_z a z^2 + b |r - z| (squared:
b infinite, so z = r; Huber: a = 1, b = 2 delta; absolute: a = 0, b = 1).  With the
diagonal ridge r (the l2 term: r = lambda_b) the LN problem of leaf l,
min_beta sum_i Q_il loss(Xa_i beta - y_i) + sum_k r_k beta_k^2 / 2, is then the QP
(:func:`leaf_qp`)

    min over (beta, z, t)   sum_k r_k beta_k^2 / 2 + sum_i Q_il (a z_i^2 + b t_i)
    s.t.  t_i + z_i - Xa_i beta >= -y_i,   t_i - z_i + Xa_i beta >= y_i

(t_i >= |r_i - z_i|; without z for a = 0, and for the squared loss just the quadratic in
beta).  The QP data come from the loss term's ``qp_form``: the loss is not restated.
Leaves are independent: one QP per leaf.

* :class:`HighsQP` -- HiGHS's QP solver (LP when the quadratic part vanishes) through
  ``highspy`` (``ln_solver="highs"``; for Huber's LN problem exact Newton, the "auto"
  choice, reaches the optimum 200-1100x faster: docs/formulations.md, "Losses and the LN step");
* :class:`CasadiQP` -- ``casadi.conic`` with a plugin shipped in the casadi wheel
  (``osqp``, ``qpoases``, ``highs``, ``proxqp``, ``qrqp``).
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import sys
from dataclasses import dataclass

import casadi as ca
import numpy as np
from scipy import sparse

from .base import Acceptance, Availability, Solver, SolverResult, termination


_LIBC = ctypes.CDLL(None)


@contextlib.contextmanager
def silenced_stdout(active=True):
    """Point the file descriptor of stdout at /dev/null inside the block, and ``sys.stdout`` at a
    buffer (CasADi hands its plugins' messages to Python's stream): what a C or C++ solver prints
    on its own (HiGHS' and qpOASES' banners, OSQP's polishing note) is dropped."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        _LIBC.fflush(None)  # what C's stdio buffered meanwhile goes to /dev/null too
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def quiet_highs():
    """A ``highspy.Highs`` without its banner (newer HiGHS prints one, from C++, on the first
    construction in a process)."""
    import highspy

    with silenced_stdout():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def qp_leaf_problem(problem) -> Acceptance:
    """Accept LN subproblems whose loss has a QP form and whose penalty on beta is a diagonal ridge."""
    if not hasattr(type(problem), "leaf_weights"):
        return Acceptance(False, f"{type(problem).__name__} is not an LN subproblem (LeafSubproblem)")
    if problem.loss.qp_form is None:
        return Acceptance(False, f"the {problem.loss.name!r} loss has no QP form")
    if problem.ridge() is None:
        return Acceptance(False, "the penalty on beta is not a diagonal quadratic (the l2 term, feature_l1's "
                                 "majorizer)")
    return Acceptance(True)


@dataclass
class LeafQP:
    """min 1/2 x'Hx + g'x + const s.t. lower <= A x <= upper; beta is x[:q]."""

    H: sparse.csc_matrix
    g: np.ndarray
    A: sparse.csc_matrix
    lower: np.ndarray
    upper: np.ndarray
    const: float
    q: int


def leaf_qp(problem, j: int) -> LeafQP:
    """The QP (module docstring) of the j-th working leaf of an LN subproblem."""
    pr = problem.problem
    a, b = problem.loss.qp_form
    lam = problem.ridge()[j]
    w = problem.leaf_weights[:, j]
    keep = w > 0
    Xa, y, w = pr.Xa[problem.rows][keep], pr.y[problem.rows][keep], w[keep]
    n, q = Xa.shape
    if not np.isfinite(b):  # squared: z = r, a quadratic in beta alone
        H = 2.0 * a * (Xa.T * w) @ Xa + np.diag(lam)
        return LeafQP(sparse.csc_matrix(H), -2.0 * a * (Xa.T @ (w * y)), sparse.csc_matrix((0, q)), np.zeros(0),
                      np.zeros(0), float(a * np.sum(w * y**2)), q)
    with_z = a > 0
    I = sparse.identity(n, format="csc")
    blocks_upper = [-sparse.csc_matrix(Xa)] + ([I] if with_z else []) + [I]
    blocks_lower = [sparse.csc_matrix(Xa)] + ([-I] if with_z else []) + [I]
    A = sparse.vstack([sparse.hstack(blocks_upper), sparse.hstack(blocks_lower)], format="csc")
    diagonal = np.concatenate([lam] + ([2.0 * a * w] if with_z else []) + [np.zeros(n)])
    g = np.concatenate([np.zeros(q)] + ([np.zeros(n)] if with_z else []) + [b * w])
    return LeafQP(sparse.diags(diagonal, format="csc"), g, A, np.concatenate([-y, y]), np.full(2 * n, np.inf),
                  0.0, q)


class HighsQP(Solver):
    """LN step with HiGHS's (active-set) QP solver through ``highspy``, one QP per leaf.
    ``time_limit`` is HiGHS's ``time_limit`` for each leaf."""

    name = "highs"
    family = "highs"

    def __init__(self, tol=1e-10, max_iter=100000, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)

    def available(self) -> Availability:
        try:
            import highspy  # noqa: F401
        except Exception:
            return Availability(False, "highspy is not installed: `pip install highspy`")
        return Availability(True)

    def version(self) -> str:
        h = quiet_highs()
        return f"HiGHS {h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"

    def accepts(self, problem) -> Acceptance:
        return qp_leaf_problem(problem)

    def _solve(self, problem, x0=None) -> SolverResult:
        x, statuses, iterations, raw = [], [], 0, []
        for j in range(len(problem.working)):
            beta, status, info = self._solve_qp(leaf_qp(problem, j))
            x.append(beta)
            statuses.append(status)
            iterations += int(info.qp_iteration_count + info.simplex_iteration_count)
            raw.append(info)
        x = np.concatenate(x)
        status = next((s for s in statuses if s != "Optimal"), "Optimal")
        return self._result(x, problem.evaluate(x)[0], status, iterations, raw)

    def _solve_qp(self, qp: LeafQP):
        import highspy

        h = quiet_highs()
        h.setOptionValue("output_flag", bool(self.verbosity))
        h.setOptionValue("log_to_console", bool(self.verbosity))
        h.setOptionValue("qp_regularization_value", 0.0)  # default 1e-7 biases the solution
        # HiGHS starts one thread scheduler per process, sized by the first run's "threads"; one
        # thread here, as the MILO tree's default, so a later MILP solve finds the same size
        h.setOptionValue("threads", 1)
        h.setOptionValue("dual_feasibility_tolerance", max(self.tol, 1e-10))
        h.setOptionValue("primal_feasibility_tolerance", max(self.tol, 1e-10))
        h.setOptionValue("qp_iteration_limit", int(self.max_iter))
        if self.time_limit is not None:
            h.setOptionValue("time_limit", float(self.time_limit))
        n = qp.g.size
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n, qp.A.shape[0]
        lp.col_cost_, lp.offset_ = qp.g, qp.const
        lp.col_lower_, lp.col_upper_ = np.full(n, -highspy.kHighsInf), np.full(n, highspy.kHighsInf)
        lp.row_lower_ = qp.lower
        lp.row_upper_ = np.where(np.isfinite(qp.upper), qp.upper, highspy.kHighsInf)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = qp.A.indptr, qp.A.indices, qp.A.data
        model = highspy.HighsModel()
        model.lp_ = lp
        L = sparse.tril(qp.H, format="csc")
        L.eliminate_zeros()
        if L.nnz:
            hess = highspy.HighsHessian()
            hess.dim_, hess.format_ = n, highspy.HessianFormat.kTriangular
            hess.start_, hess.index_, hess.value_ = L.indptr, L.indices, L.data
            model.hessian_ = hess
        h.passModel(model)
        h.run()
        x = np.asarray(h.getSolution().col_value, float)
        return x[:qp.q], h.modelStatusToString(h.getModelStatus()), h.getInfo()


def _dm(m) -> ca.DM:
    """A CasADi DM of a scipy CSC matrix (same sparsity)."""
    m = sparse.csc_matrix(m)
    return ca.DM(ca.Sparsity(m.shape[0], m.shape[1], m.indptr.tolist(), m.indices.tolist()), m.data)


_CONIC_OPTIONS = {
    "qpoases": lambda tol, it: {"printLevel": "none", "nWSR": it, "error_on_fail": False},
    "osqp": lambda tol, it: {"osqp": {"eps_abs": tol, "eps_rel": tol, "max_iter": it, "polish": True,
                                      "verbose": False}, "error_on_fail": False},
    "highs": lambda tol, it: {"highs": {"output_flag": False}, "error_on_fail": False},
    "proxqp": lambda tol, it: {"proxqp": {"eps_abs": tol, "max_iter": it}, "error_on_fail": False},
    "qrqp": lambda tol, it: {"print_iter": False, "print_header": False, "max_iter": it,
                             "error_on_fail": False},
}


class CasadiQP(Solver):
    """LN step as the QP of :func:`leaf_qp` with ``casadi.conic(plugin)``, one conic per
    sparsity pattern (reused across leaves and iterations)."""

    family = "conic"

    def __init__(self, plugin="qpoases", tol=1e-10, max_iter=10000, time_limit=None, verbosity=0):
        if plugin not in _CONIC_OPTIONS:
            raise ValueError(f"plugin must be one of {sorted(_CONIC_OPTIONS)}, got {plugin!r}")
        super().__init__(tol, max_iter, time_limit, verbosity)
        self.plugin = plugin
        self.name = plugin
        self._conics: dict = {}

    def available(self) -> Availability:
        with silenced_stdout(not self.verbosity):  # loading the plugin prints qpOASES' banner
            found = ca.has_conic(self.plugin)
        if found:
            return Availability(True)
        return Availability(False, f"CasADi has no '{self.plugin}' conic plugin; reinstall the "
                                   f"casadi wheel (`pip install --force-reinstall casadi`)")

    def version(self) -> str:
        return f"casadi {ca.__version__} ({self.plugin} conic plugin)"

    def accepts(self, problem) -> Acceptance:
        return qp_leaf_problem(problem)

    def _solve(self, problem, x0=None) -> SolverResult:
        x, ok, statuses, iterations = [], True, [], 0
        for j in range(len(problem.working)):
            qp = leaf_qp(problem, j)
            H, A = _dm(qp.H), _dm(qp.A)
            with silenced_stdout(not self.verbosity):  # qpOASES' banner, OSQP's polishing note
                solver = self._conic(H.sparsity(), A.sparsity())
                out = solver(h=H, g=qp.g, a=A, lba=qp.lower, uba=qp.upper)
            stats = solver.stats()
            x.append(np.asarray(out["x"]).ravel()[:qp.q])
            ok = ok and bool(stats.get("success", True))
            statuses.append(str(stats.get("return_status", "")))
            iterations += int(stats.get("iter_count", 0) or 0)
        x = np.concatenate(x)
        status = statuses[0] if statuses else ""
        return SolverResult(x, problem.evaluate(x)[0], ok, status, iterations, 0.0, None,
                            termination(self.family, status, ok), self.name)

    def _conic(self, h: ca.Sparsity, a: ca.Sparsity):
        key = (h.serialize(), a.serialize())
        if key not in self._conics:
            opts = _CONIC_OPTIONS[self.plugin](self.tol, self.max_iter)
            self._conics[key] = ca.conic("ln_qp", self.plugin, {"h": h, "a": a}, opts)
        return self._conics[key]
