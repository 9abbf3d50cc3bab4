"""Take any NODEC subproblem of a training run apart.

``capture(tree, X, y, node=2, macro=3)`` returns a :class:`Snapshot` of inner
iteration k (the ``macro``-th visit of branch node ``node``, both 0-based as in
``tree.history_``): the iterate (omega, beta) before its BN step, the iterate
after it (the LN step's start), and the formulations the step handed to its
solvers.  From it, :meth:`Snapshot.bn`, :meth:`Snapshot.ln`,
:meth:`Snapshot.wlr` and :meth:`Snapshot.full` give :class:`Subproblem` views:
variables and current values, objective and gradient at a point, the data
subset I_t (row indices of the training data), sizes, rendering with either
backend, solving with any solver spec, and export.

How the iterate of iteration k is obtained.  The estimator does not keep the
training data nor the iterates, so ``capture`` **re-runs training** on a clone
of the estimator (same parameters, ``verbose=0``) up to the end of iteration k
and stops it there, with an ordinary training callback (:class:`Capture`).  This is deterministic given an integer ``random_state``
(the initialization is the only random part) and no ``time_limit``; when the
estimator is fitted, the objective at the captured iterate is checked against
``history_[k]["E_before"]`` and a warning is issued on a mismatch (different
data, a time limit, or a non-deterministic solver).  The minimal change that
would make the re-run unnecessary is a ``record_iterates=True`` estimator option
storing omega/beta before each BN step in the history records.

``capture_run(algorithm, problem, omega0, beta0, k)`` does the same for a
:class:`~srtopt.training.nodec.NodecGS` built by hand, and ``Capture`` can be passed
in ``callbacks`` of any run.

Export formats (:meth:`Subproblem.export`, by extension): ``.nl`` (AMPL),
``.gms`` (GAMS), ``.lp`` (CPLEX LP; quadratic objectives only, i.e. the LN
subproblem) from the Pyomo rendering; ``.casadi`` (a serialized CasADi
Function x -> (f, grad) with the data embedded, ``casadi.Function.load``) and
``.c`` (C code of that Function, CasADi code generation).
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from .models.pyomo_backend import render_pyomo
from .training.callbacks import Callback
from .training.subproblems import branch_subproblem, hbp_rows, leaf_subproblem


class IterationNotFound(ValueError):
    """The requested inner iteration was not reached by the training run."""


@dataclass
class Subproblem:
    """A formulation with the context it came from (kind, node, iteration, rows I_t).

    ``formulation`` is the object the algorithm uses (:class:`BranchSubproblem`,
    :class:`LeafSubproblem`, :class:`WLRProxy` or :class:`SRTObjective`): its
    ``evaluate``/``render``/``start`` are the ground truth; this class only reads them.

    Parameters
    ----------
    formulation : object
        The subproblem's formulation (BranchSubproblem, LeafSubproblem, WLRProxy or SRTObjective).
    kind : {"bn", "ln", "wlr", "full"}
        Which subproblem it is.
    node : int
        The branch node t of the inner iteration.
    k : int
        The inner iteration (0-based).
    macro : int
        The macro iteration (0-based).
    rows : ndarray of int or None, default=None
        I_t: indices of the training rows the subproblem uses; None: read from the formulation.
    solved_in_training : bool, default=False
        Whether training handed this formulation to a solver.
    _casadi : object, default=None
        Cache of the CasADi rendering (internal; leave None).
    """

    formulation: object
    kind: str
    node: int
    k: int
    macro: int
    rows: np.ndarray | None = None
    solved_in_training: bool = False
    _casadi: object = field(default=None, repr=False)

    # --- what it is --------------------------------------------------------------
    @property
    def x0(self) -> np.ndarray:
        """Current values of the variables (the start of the step)."""
        return self.formulation.start()

    @property
    def n_variables(self) -> int:
        return self.x0.size

    @property
    def n_rows(self) -> int:
        """|I_t|: data points the subproblem uses."""
        if self.rows is not None:
            return len(self.rows)
        return len(getattr(self.formulation, "c", getattr(getattr(self.formulation, "problem", None), "y", [])))

    @property
    def variable_names(self) -> list[str]:
        return self.casadi().variable_names

    def variables(self) -> dict[str, float]:
        """Variable name -> current value."""
        return dict(zip(self.variable_names, self.x0.tolist()))

    # --- evaluation --------------------------------------------------------------
    def evaluate(self, x=None):
        """(objective, gradient) at x (default: the current values), numpy reference."""
        return self.formulation.evaluate(self.x0 if x is None else np.asarray(x, float))

    def objective(self, x=None) -> float:
        return float(self.evaluate(x)[0])

    def gradient(self, x=None) -> np.ndarray:
        return self.evaluate(x)[1]

    def hessian(self, x=None) -> np.ndarray:
        """Exact Hessian (CasADi AD)."""
        return self.casadi().hessian(self.x0 if x is None else x)

    # --- rendering, solving, export ---------------------------------------------------
    def casadi(self):
        if self._casadi is None:
            self._casadi = self.formulation.render()
        return self._casadi

    def render(self, backend: str = "casadi"):
        """The CasADi (``CasadiModel``) or Pyomo (``PyomoModel``) model."""
        if backend == "casadi":
            return self.casadi()
        if backend == "pyomo":
            return render_pyomo(self.formulation)
        raise ValueError(f"unknown backend {backend!r}; use 'casadi' or 'pyomo'")

    def solve(self, solver="ipopt", x0=None, **options):
        """Solve with a solver spec or object (see :func:`srtopt.solvers.make_solver`).

        Raises
        ------
        ValueError
            If the solver does not accept the subproblem (e.g. a QP and a classifier's log loss), naming why.
        """
        from .solvers import make_solver
        from .solvers.base import acceptance

        kind = {"full": "bn"}.get(self.kind, self.kind)
        made = make_solver(kind, solver, **options)
        verdict = acceptance(made, self.formulation)
        if not verdict:
            raise ValueError(f"the {getattr(made, 'name', solver)} solver does not accept this {self.kind} subproblem: "
                             f"{verdict.reason}; solve it with a solver that does (e.g. 'ipopt', 'newton')")
        return made.solve(self.formulation, self.x0 if x0 is None else x0)

    def casadi_function(self) -> ca.Function:
        """x -> (f, grad) with the data embedded as constants."""
        model = self.casadi()
        x = ca.MX.sym("x", self.n_variables)
        p = ca.DM(model.p_value)
        return ca.Function(model.name, [x], [model.f_function(x, p), model.grad_function(x, p)],
                           ["x"], ["f", "grad"])

    def export(self, path) -> str:
        """Write the subproblem; the format follows the extension (module docstring)."""
        path = str(path)
        ext = os.path.splitext(path)[1].lower()
        if ext in (".nl", ".gms", ".lp"):
            return self.render("pyomo").write(path)
        if ext == ".casadi":
            self.casadi_function().save(path)
            return path
        if ext == ".c":
            directory, base = os.path.split(path)
            gen = ca.CodeGenerator(base, {"with_header": True})
            gen.add(self.casadi_function())
            gen.generate(os.path.join(directory, "") if directory else "./")
            return path
        raise ValueError(f"unknown export format {ext!r}; use .nl, .gms, .lp, .casadi or .c")

    # --- printing -------------------------------------------------------------------
    def summary(self, max_variables: int = 12) -> str:
        f, g = self.evaluate()
        f_form = self.formulation
        lines = [f"{self.kind.upper()} subproblem of node {self.node}, inner iteration k={self.k} "
                 f"(macro {self.macro}): {type(f_form).__name__}",
                 f"  variables: {self.n_variables}    data points |I_t|: {self.n_rows}"
                 + ("" if self.solved_in_training else "    (not handed to a solver in training)")]
        lines += [f"  {line}" for line in f_form.constraint_summary()]
        for attr in ("root", "working"):
            if hasattr(f_form, attr):
                lines.append(f"  {attr}: {getattr(f_form, attr)}")
        lines.append(f"  objective at current values: {f:.10g}    ||gradient||: {np.linalg.norm(g):.3e}")
        for name, value in list(self.variables().items())[:max_variables]:
            lines.append(f"    {name:>16} = {value: .6g}")
        if self.n_variables > max_variables:
            lines.append(f"    ... ({self.n_variables - max_variables} more)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


@dataclass
class Snapshot:
    """State of a training run at inner iteration k (before its BN step).

    Parameters
    ----------
    problem : SRTProblem
        The training problem (scaled data ``problem.X``, ``problem.y``, the tree, mu, the penalty terms).
    k : int
        The inner iteration (0-based).
    macro : int
        Its macro iteration (0-based).
    node : int
        Its branch node t.
    W_B : tuple of int
        The branch working set.
    W_L : tuple of int
        The leaf working set.
    omega : ndarray of shape (2^D - 1, p + 1)
        Split weights before the BN step.
    beta : ndarray of shape (2^D, p + 1)
        Leaf weights before the BN step.
    omega_after_bn : ndarray or None, default=None
        Split weights after the BN step (the LN step's start).
    solved : dict, default={}
        Kind ("bn", "wlr", "ln", ...) -> the formulation the step handed to a solver.
    bn_info : dict, default={}
        The BN step's record in the history (its ``update``, solver status, ...).
    safeguards : bool, default=False
        Whether the convergence safeguards were on (k >= k0; then the LN subproblem is E's own).
    """

    problem: object
    k: int
    macro: int
    node: int
    W_B: tuple
    W_L: tuple
    omega: np.ndarray
    beta: np.ndarray
    omega_after_bn: np.ndarray | None = None
    solved: dict = field(default_factory=dict)  # kind -> formulation handed to a solver
    bn_info: dict = field(default_factory=dict)
    safeguards: bool = False

    def __repr__(self) -> str:
        """A summary (the data and the parameters are attributes: ``problem.X``, ``omega``, ...)."""
        X = self.problem.X
        return (f"Snapshot(macro {self.macro}, inner iteration {self.k}, node {self.node}, W_B={list(self.W_B)}, "
                f"W_L={list(self.W_L)}, data {X.shape[0]} x {X.shape[1]}, depth {self.problem.tree.depth}, "
                f"E = {self.problem.objective(self.omega, self.beta):.6g}, solved: {sorted(self.solved) or 'none'})")

    def bn(self) -> Subproblem:
        """The BN subproblem over omega_{W_B} on I_r, r the root of the working set (the one the
        NLP solver got, or the one it would have got when the step was skipped or took the
        WLR heuristic)."""
        f = self.solved.get("bn") or branch_subproblem(self.problem, self.omega, self.beta, self.node, self.W_B)
        if f is None:
            raise ValueError(f"inner iteration {self.k} (node {self.node}) has no BN subproblem: no training row "
                             f"reaches its root")
        return Subproblem(f, "bn", self.node, self.k, self.macro, np.asarray(f.rows), "bn" in self.solved)

    def ln(self) -> Subproblem:
        """The LN subproblem over beta_{W_L} (after the BN step)."""
        f = self.solved.get("ln")
        if f is None:
            if not self.W_L:
                raise ValueError(f"inner iteration {self.k} (node {self.node}) has no leaf working set")
            omega = self.omega if self.omega_after_bn is None else self.omega_after_bn
            f = leaf_subproblem(self.problem, omega, self.beta, self.node, self.W_L, self.safeguards)
            if f is None:
                raise ValueError(f"inner iteration {self.k} (node {self.node}) has no LN subproblem: no training "
                                 f"row reaches its root")
        return Subproblem(f, "ln", self.node, self.k, self.macro, np.asarray(f.rows), "ln" in self.solved)

    def wlr(self) -> Subproblem:
        """The WLR proxy of the reassignment heuristic, if the BN step used it."""
        if "wlr" not in self.solved:
            raise ValueError(f"inner iteration {self.k} (node {self.node}) did not use the WLR heuristic "
                             f"(BN update: {self.bn_info.get('update')!r})")
        return Subproblem(self.solved["wlr"], "wlr", self.node, self.k, self.macro, hbp_rows(self.problem, self.omega, self.node), True)

    def full(self) -> Subproblem:
        """E(omega, beta) of eq. (obj) over all variables at this iterate."""
        f = self.problem.full(self.omega, self.beta)
        return Subproblem(f, "full", self.node, self.k, self.macro, np.arange(len(self.problem.y)))

    @property
    def E(self) -> float:
        return float(self.problem.objective(self.omega, self.beta))


class Capture(Callback):
    """A training callback that keeps the :class:`Snapshot` of inner iteration ``k`` (or of the
    ``macro``-th visit of branch node ``node``, 0-based) and stops the run there.

    Parameters
    ----------
    k : int or None, default=None
        The inner iteration to capture (0-based, as ``history_[k]``).
    node : int or None, default=None
        With ``macro`` (instead of ``k``): the branch node whose visit is captured.
    macro : int or None, default=None
        With ``node``: which visit of ``node`` (0-based), i.e. the macro iteration.

    Attributes
    ----------
    snapshot : Snapshot or None
        The captured state, None until the iteration is reached.

    Raises
    ------
    ValueError
        If neither ``k`` nor both ``node`` and ``macro`` are given.
    """

    def __init__(self, k=None, node=None, macro=None):
        if k is None and (node is None or macro is None):
            raise ValueError("give k, or node and macro")
        self.k, self.node, self.macro = k, node, macro
        self.snapshot, self._visits = None, {}

    def on_inner_iteration(self, state):
        visit = self._visits.get(state.t, 0)
        self._visits[state.t] = visit + 1
        target = state.k == self.k if self.k is not None else (state.t == self.node and visit == self.macro)
        if not target or self.snapshot is not None:
            return
        omega, beta = state.start
        self.snapshot = Snapshot(state.problem, state.k, state.record.macro, state.t, state.W_B, state.W_L, omega,
                                 beta, state.omega_after_bn, {solve.kind: solve.subproblem for solve in state.solves},
                                 dict(state.record.bn), state.record.ln.get("safeguards", False))
        state.stop("captured")

    def describe(self) -> str:
        return f"k={self.k}" if self.k is not None else f"visit {self.macro} of node {self.node}"


def _target_k(history, node, macro):
    seen = [r["k"] for r in history if r["node"] == node]
    return seen[macro] if macro < len(seen) else None


def capture_run(algorithm, problem, omega0, beta0, k=None, *, node=None, macro=None) -> Snapshot:
    """Run ``algorithm`` (a NodecGS whose steps are NODEC-DR steps) from (omega0, beta0) and stop
    after inner iteration ``k`` (or the ``macro``-th visit of ``node``); return its :class:`Snapshot`.

    Parameters
    ----------
    algorithm : NodecGS
        The training algorithm (:class:`~srtopt.training.nodec.NodecGS`); a :class:`Capture` is added to its
        callbacks for the run and removed afterwards.
    problem : SRTProblem
        The training problem.
    omega0 : ndarray of shape (2^D - 1, p + 1)
        Initial split weights.
    beta0 : ndarray of shape (2^D, p + 1)
        Initial leaf weights.
    k : int or None, default=None
        The inner iteration to capture (0-based, as ``history_[k]``).
    node : int or None, default=None
        With ``macro`` (instead of ``k``): the branch node whose visit is captured.
    macro : int or None, default=None
        With ``node``: which visit of ``node`` (0-based), i.e. the macro iteration.

    Returns
    -------
    Snapshot
        The state at the start of that inner iteration.

    Raises
    ------
    ValueError
        If neither ``k`` nor both ``node`` and ``macro`` are given.
    IterationNotFound
        If training ends before reaching that iteration.
    """
    capturer = Capture(k, node, macro)
    algorithm.callbacks.append(capturer)
    try:
        result = algorithm.run(problem, omega0, beta0)
    finally:
        algorithm.callbacks.remove(capturer)
    if capturer.snapshot is None:
        raise IterationNotFound(f"training ended ({result.stopped_by}) after {len(result.history)} inner "
                                f"iterations without reaching {capturer.describe()}")
    return capturer.snapshot


def capture(estimator, X, y, *, node=None, macro=None, k=None, sample_weight=None,
            sensitive_features=None) -> Snapshot:
    """Snapshot of inner iteration ``k`` (or the ``macro``-th visit of ``node``, 0-based) of
    training ``estimator`` (a SoftRegressionTree or a SoftClassificationTree, fitted or not) on (X, y), by
    re-running training on a clone up to that iteration (module docstring).

    Parameters
    ----------
    estimator : SoftRegressionTree or SoftClassificationTree
        The tree, fitted or not; a clone is trained (``verbose=0``, no ``time_limit``).
    X : array-like of shape (n_samples, p)
        Training inputs, as given to ``fit``.
    y : array-like of shape (n_samples,)
        Training targets: numbers, or a classifier's class labels.
    node : int or None, default=None
        With ``macro`` (instead of ``k``): the branch node whose visit is captured.
    macro : int or None, default=None
        With ``node``: which visit of ``node`` (0-based), i.e. the macro iteration.
    k : int or None, default=None
        The inner iteration to capture (0-based, as ``history_[k]``).
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Passed to ``fit``.
    sensitive_features : array-like, str or None, default=None
        Passed to ``fit`` (the protected groups of the group constraints).

    Returns
    -------
    Snapshot
        The state at the start of that inner iteration; its ``seconds`` holds the re-run's duration.

    Raises
    ------
    ValueError
        If neither ``k`` nor both ``node`` and ``macro`` are given.
    IterationNotFound
        If the fitted tree's history, or the re-run, does not reach that iteration.

    Warns
    -----
    UserWarning
        If ``estimator`` has a ``time_limit`` (ignored), or the re-run's E differs from ``history_[k]``.

    Examples
    --------
    >>> from srtopt.datasets import example_tree
    >>> tree, X, y = example_tree(max_iter=2)  # depth 2, on 200 rows: y = 2 x1 where x0 > 0.5, else -x2
    >>> snap = capture(tree, X, y, node=2, macro=1)  # second visit of node 2
    >>> bn = snap.bn()  # the BN subproblem over omega_2 on the rows I_2
    >>> bn.kind, bn.node, bn.n_variables  # omega_2: intercept and 3 weights
    ('bn', 2, 4)
    >>> f, g = bn.evaluate()
    >>> g.shape
    (4,)
    """
    from sklearn.base import clone

    if k is None and (node is None or macro is None):
        raise ValueError("give k, or node and macro")
    history = getattr(estimator, "history_", None)
    if history is not None:
        target = k if k is not None else _target_k(history, node, macro)
        if target is None or target >= len(history):
            raise IterationNotFound(f"the fitted tree has {len(history)} inner iterations; node {node} is "
                                    f"visited {sum(r['node'] == node for r in history)} times")
    if getattr(estimator, "time_limit", None) is not None:
        warnings.warn("time_limit makes the re-run non-deterministic; it is ignored here", stacklevel=2)
    twin = clone(estimator)
    params = twin.get_params(deep=False)
    capturer = Capture(k, node, macro)
    twin.set_params(**{key: value for key, value in (("verbose", 0), ("time_limit", None), ("callbacks", [capturer]))
                       if key in params})
    start = time.perf_counter()
    twin.fit(X, y, sample_weight=sample_weight,
             **({} if sensitive_features is None else {"sensitive_features": sensitive_features}))
    snapshot = capturer.snapshot
    if snapshot is None:
        raise IterationNotFound(f"training ended ({twin.stopped_by_}) after {len(twin.history_)} inner iterations "
                                f"without reaching {capturer.describe()}")
    snapshot.seconds = time.perf_counter() - start
    if history is not None and snapshot.k < len(history):
        expected = history[snapshot.k]["E_before"]
        if not np.isclose(snapshot.E, expected, rtol=1e-9, atol=1e-12):
            warnings.warn(f"re-run iterate has E = {snapshot.E:.12g} but the fitted tree recorded "
                          f"{expected:.12g} at k={snapshot.k}: different data or a non-deterministic "
                          f"run", stacklevel=2)
    return snapshot


__all__ = ["Capture", "IterationNotFound", "Snapshot", "Subproblem", "capture", "capture_run"]
