"""QP solvers for the LN step of the losses whose leaf problem is a QP.

A leaf model's ``residual_loss`` with ``qp_form = (a, b)`` satisfies loss(r) = min_z a z^2 + b |r - z| (squared:
b infinite, so z = r; Huber: a = 1, b = 2 delta; absolute: a = 0, b = 1).  With the
diagonal ridge r (the l2 term: r = lambda_b) the LN problem of leaf l,
min_beta sum_i Q_il loss(Xa_i beta - y_i) + sum_k r_k beta_k^2 / 2, is then the QP
(:func:`leaf_qp`)

    min over (beta, z, t)   sum_k r_k beta_k^2 / 2 + sum_i Q_il (a z_i^2 + b t_i)
    s.t.  t_i + z_i - Xa_i beta >= -y_i,   t_i - z_i + Xa_i beta >= y_i

(t_i >= |r_i - z_i|; without z for a = 0, and for the squared loss just the quadratic in
beta).  The QP data come from the loss term's ``qp_form``: the loss is not restated.
Leaves are independent: small ones are solved side by side in one QP (:func:`leaf_qps`).
Constraints (:mod:`srtopt.models.constraints`) enter as they are: the bounds of the
coefficients as column bounds, linear constraint rows (a parity constraint of the LN step) as
rows of A over all the working leaves, which are then solved in one QP.
The data go to the solvers as plain CSC arrays (:class:`Csc`) and each adapter keeps its
solver objects for the whole fit.

* :class:`HighsQP` -- HiGHS's QP solver (LP when the quadratic part vanishes) through
  ``highspy`` (``ln_solver="qp"`` or ``"highs"``; for Huber's LN problem the "auto" choice is
  exact Newton instead: docs/formulations.md, "Losses and the LN step");
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
from typing import NamedTuple

import casadi as ca
import numpy as np
from scipy import sparse

from .base import Acceptance, Availability, Solver, SolverResult, termination
from ..linalg import normal_equations


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
    """Accept LN subproblems whose loss has a QP form and whose penalty on beta is a diagonal ridge
    (smooth terms) plus, possibly, a weighted l1 term (``leaf_l1``)."""
    if not hasattr(type(problem), "leaf_weights"):
        return Acceptance(False, f"{type(problem).__name__} is not an LN subproblem (LeafSubproblem)")
    loss = problem.residual_loss
    if loss is None or loss.qp_form is None:
        return Acceptance(False, f"R_il is no loss of the residual with a QP form (the leaf model's residual_loss "
                                 f"is {getattr(loss, 'name', None)!r})")
    if problem.ridge() is None:
        return Acceptance(False, "the penalty on beta is not a diagonal quadratic (the l2 term, feature_l1's "
                                 "majorizer)")
    if problem.nonsmooth and problem.l1_weights() is None:
        return Acceptance(False, "its nonsmooth penalty on beta is not a weighted l1 term")
    return Acceptance(True)


class Csc(NamedTuple):
    """A sparse matrix in compressed sparse columns, the arrays HiGHS and CasADi take
    (``scipy.sparse`` constructors, through COO and format checks, were most of the QP
    route's LN time on the small blocks here)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def block_diagonal(cls, blocks) -> "Csc":
        """The block-diagonal matrix of ``blocks``."""
        rows = np.cumsum([0] + [b.shape[0] for b in blocks])
        nnz = np.cumsum([0] + [b.data.size for b in blocks])
        indptr = np.concatenate([[0]] + [b.indptr[1:] + start for b, start in zip(blocks, nnz)])
        indices = np.concatenate([b.indices + start for b, start in zip(blocks, rows)])
        return cls(indptr, indices, np.concatenate([b.data for b in blocks]),
                   (int(rows[-1]), sum(b.shape[1] for b in blocks)))

    def lower(self) -> "Csc":
        """The lower triangle (with the diagonal)."""
        columns = np.repeat(np.arange(self.shape[1]), np.diff(self.indptr))
        keep = self.indices >= columns
        counts = np.bincount(columns[keep], minlength=self.shape[1])
        return Csc(np.concatenate([[0], np.cumsum(counts)]), self.indices[keep], self.data[keep], self.shape)

    @classmethod
    def of(cls, M) -> "Csc":
        """A dense array (every entry stored) or a scipy sparse matrix as :class:`Csc`."""
        if sparse.issparse(M):
            M = sparse.csc_matrix(M)
            return cls(M.indptr, M.indices, M.data, M.shape)
        rows, cols = M.shape
        return cls(rows * np.arange(cols + 1), np.tile(np.arange(rows), cols), M.ravel(order="F"), M.shape)


#: variables of one QP of :func:`leaf_qps`: leaves are put side by side in one QP up to this size
#: (small QPs gain by it, large ones lose: docs/solvers.md)
MAX_BATCH = 64


@dataclass
class LeafQP:
    """min 1/2 x'Hx + g'x + const s.t. lower <= A x <= upper, x_lower <= x <= x_upper; the
    coefficients are x[beta]."""

    H: Csc
    g: np.ndarray
    A: Csc
    lower: np.ndarray
    upper: np.ndarray
    const: float
    beta: np.ndarray
    x_lower: np.ndarray
    x_upper: np.ndarray


def leaf_qp(problem, j: int) -> LeafQP:
    """The QP (module docstring) of the j-th working leaf of an LN subproblem."""
    a, b = problem.residual_loss.qp_form
    lam, shift = problem.ridge()[j], problem.ridge_shift()[j]
    (Xa, y), w = problem.design, problem.leaf_weights[:, j]
    q = Xa.shape[1]
    bounds = problem.bounds()
    lo, hi = (np.full(q, -np.inf), np.full(q, np.inf)) if bounds is None else (side[j * q:(j + 1) * q]
                                                                                for side in bounds)
    if not np.isfinite(b):  # squared: z = r, a quadratic in beta alone: H, -g are its normal equations
        H, rhs = normal_equations(Xa, y, a * w, lam)
        return LeafQP(Csc.of(H), -rhs - shift, Csc.of(np.zeros((0, q))), np.zeros(0), np.zeros(0),
                      float(a * np.sum(w * y**2)), np.arange(q), lo, hi)
    keep = w > 0  # rows of weight 0: no t_i, z_i
    Xa, y, w = Xa[keep], y[keep], w[keep]
    n, with_z = len(y), a > 0
    I = sparse.identity(n, format="csc")
    blocks_upper = [-sparse.csc_matrix(Xa)] + ([I] if with_z else []) + [I]
    blocks_lower = [sparse.csc_matrix(Xa)] + ([-I] if with_z else []) + [I]
    A = sparse.vstack([sparse.hstack(blocks_upper), sparse.hstack(blocks_lower)], format="csc")
    diagonal = np.concatenate([lam] + ([2.0 * a * w] if with_z else []) + [np.zeros(n)])
    g = np.concatenate([-shift] + ([np.zeros(n)] if with_z else []) + [b * w])
    H = sparse.diags(diagonal, format="csc")
    H.eliminate_zeros()
    free = np.full(len(g) - q, np.inf)
    return LeafQP(Csc.of(H), g, Csc.of(A), np.concatenate([-y, y]), np.full(2 * n, np.inf), 0.0, np.arange(q),
                  np.concatenate([lo, -free]), np.concatenate([hi, free]))


def leaf_qps(problem):
    """The QPs of an LN subproblem, in the order of its working leaves: the leaves' QPs
    (:func:`leaf_qp`) side by side (block diagonal: the leaves are independent) in groups of
    at most :data:`MAX_BATCH` variables, so that one solver call serves several small leaves;
    with linear constraint rows, which couple the leaves, all of them in one QP with the rows."""
    qps = [leaf_qp(problem, j) for j in range(len(problem.working))]
    if problem.nonsmooth:  # a weighted l1 term (qp_leaf_problem): its variables and rows, leaf by leaf
        weights = np.reshape(problem.l1_weights(), (len(qps), -1))
        qps = [_with_l1(qp, w) for qp, w in zip(qps, weights)]
    if problem.constraint_blocks:
        yield _with_rows(_side_by_side(qps), problem)
        return
    group: list = []
    for qp in qps:
        if group and sum(p.g.size for p in group) + qp.g.size > MAX_BATCH:
            yield _side_by_side(group)
            group = []
        group.append(qp)
    if group:
        yield _side_by_side(group)


def _side_by_side(qps) -> LeafQP:
    if len(qps) == 1:
        return qps[0]
    offsets = np.cumsum([0] + [qp.g.size for qp in qps])
    return LeafQP(Csc.block_diagonal([qp.H for qp in qps]), np.concatenate([qp.g for qp in qps]),
                  Csc.block_diagonal([qp.A for qp in qps]), np.concatenate([qp.lower for qp in qps]),
                  np.concatenate([qp.upper for qp in qps]), float(sum(qp.const for qp in qps)),
                  np.concatenate([offset + qp.beta for offset, qp in zip(offsets, qps)]),
                  np.concatenate([qp.x_lower for qp in qps]), np.concatenate([qp.x_upper for qp in qps]))


def _with_l1(qp: LeafQP, weights) -> LeafQP:
    """``qp`` plus sum_k w_k |beta_k|: a variable s_k >= |beta_k| (rows s_k - beta_k >= 0 and
    s_k + beta_k >= 0) of cost w_k for every coefficient of positive weight."""
    k = np.flatnonzero(weights > 0)
    if not len(k):
        return qp
    n, m = qp.g.size, len(k)
    zeros = Csc(np.zeros(m + 1, dtype=int), np.zeros(0, dtype=int), np.zeros(0), (m, m))
    old = sparse.csc_matrix((qp.A.data, qp.A.indices, qp.A.indptr), shape=qp.A.shape)
    new = sparse.lil_matrix((2 * m, n + m))
    for row, (coefficient, variable) in enumerate(zip(qp.beta[k], range(n, n + m))):
        new[row, variable], new[row, coefficient] = 1.0, -1.0
        new[m + row, variable], new[m + row, coefficient] = 1.0, 1.0
    A = sparse.vstack([sparse.hstack([old, sparse.csc_matrix((old.shape[0], m))]), new], format="csc")
    return LeafQP(Csc.block_diagonal([qp.H, zeros]), np.concatenate([qp.g, weights[k]]), Csc.of(A),
                  np.concatenate([qp.lower, np.zeros(2 * m)]), np.concatenate([qp.upper, np.full(2 * m, np.inf)]),
                  qp.const, qp.beta, np.concatenate([qp.x_lower, np.zeros(m)]),
                  np.concatenate([qp.x_upper, np.full(m, np.inf)]))


def _with_rows(qp: LeafQP, problem) -> LeafQP:
    """``qp`` with the linear constraint rows of ``problem`` (g = J beta + c, J constant) appended to A."""
    beta0 = np.zeros(problem.start().size)
    J, c = problem.constraint_jacobian(beta0), problem.constraint_values(beta0)
    lower, upper = problem.constraint_bounds()
    rows = np.zeros((len(c), qp.g.size))
    rows[:, qp.beta] = J
    A = sparse.vstack([sparse.csc_matrix((qp.A.data, qp.A.indices, qp.A.indptr), shape=qp.A.shape),
                       sparse.csc_matrix(rows)], format="csc")
    return LeafQP(qp.H, qp.g, Csc.of(A), np.concatenate([qp.lower, lower - c]), np.concatenate([qp.upper, upper - c]),
                  qp.const, qp.beta, qp.x_lower, qp.x_upper)


class HighsQP(Solver):
    """LN step with HiGHS's (active-set) QP solver through ``highspy``, the QPs of
    :func:`leaf_qps`, in one ``Highs`` object kept for the adapter's life (its options set
    once, the model replaced at each solve).  Each QP gets HiGHS's ``time_limit`` of the seconds
    left to the deadline: the earlier of ``time_limit`` from the solve's start and the deadline
    ``solve`` is given."""

    name = "highs"
    family = "highs"
    takes_constraints = frozenset({"fixed", "bounds", "linear"})

    def __init__(self, tol=1e-10, max_iter=100000, time_limit=None, verbosity=0):
        super().__init__(tol, max_iter, time_limit, verbosity)
        self._highs = None

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

    def _solve(self, problem, x0, deadline) -> SolverResult:
        h, x, statuses, iterations, raw = self._solver(), [], [], 0, []
        for qp in leaf_qps(problem):
            _pass_qp(h, qp)
            h.setOptionValue("time_limit", max(deadline.left(), 0.0))  # inf: no limit
            h.run()
            info = h.getInfo()
            x.append(np.asarray(h.getSolution().col_value, float)[qp.beta])
            statuses.append(h.modelStatusToString(h.getModelStatus()))
            iterations += int(info.qp_iteration_count + info.simplex_iteration_count)
            raw.append(info)
        x = np.concatenate(x)
        status = next((s for s in statuses if s != "Optimal"), "Optimal")
        return self._result(x, problem.evaluate(x)[0], status, iterations, raw)

    def _solver(self):
        """The adapter's ``Highs`` object, made and configured on first use."""
        if self._highs is None:
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
            self._highs = h
        return self._highs


def _pass_qp(h, qp: LeafQP) -> None:
    """Hand ``qp`` to the ``Highs`` object ``h`` as arrays (the ``HighsModel`` route converted
    them entry by entry: most of the time of an LN step on 20-feature data)."""
    import highspy

    n, m, L = qp.g.size, qp.A.shape[0], qp.H.lower()  # HiGHS 1.11 takes the triangle only
    int32 = np.int32
    h.passModel(n, m, qp.A.data.size, L.data.size, int(highspy.MatrixFormat.kColwise),
                int(highspy.HessianFormat.kTriangular), int(highspy.ObjSense.kMinimize), qp.const, qp.g,
                qp.x_lower, qp.x_upper, qp.lower, qp.upper, qp.A.indptr.astype(int32),
                qp.A.indices.astype(int32), qp.A.data, L.indptr.astype(int32), L.indices.astype(int32), L.data,
                np.zeros(n, int32))  # integrality: every column continuous


def _sparsity(m: Csc) -> ca.Sparsity:
    """The CasADi sparsity pattern of a :class:`Csc` matrix."""
    return ca.Sparsity(*m.shape, m.indptr.tolist(), m.indices.tolist())


_TALKS_PER_SOLVE = {"osqp"}  # its polishing note; the other plugins print nothing once built

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
    sparsity pattern (reused across leaves and iterations).  The plugins take no time limit: a
    deadline applies before the solve begins (:meth:`~.base.Solver.solve`)."""

    family = "conic"
    takes_constraints = frozenset({"fixed", "bounds", "linear"})

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

    def _solve(self, problem, x0, deadline) -> SolverResult:
        x, ok, statuses, iterations = [], True, [], 0
        for qp in leaf_qps(problem):
            solver, h, a = self._conic(qp.H, qp.A)
            A = ca.DM(a, qp.A.data) if qp.A.data.size else ca.DM(a)  # no constraints: no conversion
            with silenced_stdout(not self.verbosity and self.plugin in _TALKS_PER_SOLVE):
                out = solver(h=ca.DM(h, qp.H.data), g=qp.g, a=A, lba=qp.lower, uba=qp.upper, lbx=qp.x_lower,
                             ubx=qp.x_upper)
            stats = solver.stats()
            x.append(np.asarray(out["x"]).ravel()[qp.beta])
            ok = ok and bool(stats.get("success", True))
            statuses.append(str(stats.get("return_status", "")))
            iterations += int(stats.get("iter_count", 0) or 0)
        x = np.concatenate(x)
        status = statuses[0] if statuses else ""
        return SolverResult(x, problem.evaluate(x)[0], ok, status, iterations, 0.0, None,
                            termination(self.family, status, ok), self.name)

    def _conic(self, H: Csc, A: Csc):
        """(conic, H's sparsity, A's sparsity) for the patterns of H and A, built on first use
        (keyed by the index arrays: CasADi's own serialization cost more than a leaf's solve)."""
        key = tuple((m.shape, m.indptr.tobytes(), m.indices.tobytes()) for m in (H, A))
        if key not in self._conics:
            h, a = _sparsity(H), _sparsity(A)
            opts = _CONIC_OPTIONS[self.plugin](self.tol, self.max_iter)
            with silenced_stdout(not self.verbosity):  # qpOASES prints its banner when built
                self._conics[key] = (ca.conic("ln_qp", self.plugin, {"h": h, "a": a}, opts), h, a)
        return self._conics[key]
