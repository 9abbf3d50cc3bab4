"""Pyomo rendering of the formulations: one scalar expression per data point.

``render_pyomo(formulation)`` reads the data a formulation already holds (the
same arrays its numpy ``evaluate`` and its CasADi ``render`` use: ``Z``,
``Xa``, the leaf losses R, the weights s_i, the leaf weights Q_il, ...) and
builds a ``pyomo.environ.ConcreteModel`` with one indexed variable ``x``
(flat, in the order of ``formulation.start()`` and of the CasADi model) and
one objective.  The equations exist once in this module:

* :func:`sigmoid` -- F(u) of eq. (cdf) in the tanh form 0.5 (1 + tanh(mu u / 2));
* :func:`point_sweep` -- the upward sweep sum_l P_il v_il of one point over the
  subtree rooted at t (probabilities above t taken as 1), which gives both the
  SRT loss of a point (v = leaf losses R_il, eq. obj / BN proxy) and the ORRT
  prediction (v = leaf outputs yhat_il, eq. formulation);
* :func:`softplus` -- log(1 + exp(z)) of the WLR proxy (eq. reshuffle).

Size limits.  Pyomo expressions are Python object trees: the model has about
N (|tau_B| q + |tau_L| q) nodes for the full objective (N points, q = p + 1
columns), and building it costs roughly 1.5 us per node in CPython.  Measured
on this machine (``benchmarks/solvers.py``, results in
``benchmarks/results/solvers.md``): seconds for N = 1000 and tens of seconds at
N = 8192 with depth 3, against milliseconds for the vectorised CasADi model.
Use the Pyomo rendering for inspection, export (``.nl``, ``.gms``, ``.lp`` for
the quadratic LN subproblem) and small reference solves -- not inside the
NODEC loop.  The numeric ``objective``/``gradient``/``hessian`` helpers of
:class:`PyomoModel` are for checking (the Hessian is a symbolic gradient
differentiated again: fine for a few hundred points, slow beyond).

``softplus`` is written ``log(1 + exp(z))`` (Pyomo has no smooth max); Python
float evaluation overflows for z > ~700, i.e. only for absurdly saturated WLR
points.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.calculus import diff_with_pyomo
from pyomo.core.expr.calculus.derivatives import Modes, differentiate

from ..tree import Tree


def _diff_tanh(node, val_dict, der_dict):
    """d tanh(u) = (1 - tanh(u)^2) du, missing from Pyomo 6.10's ``differentiate``."""
    arg = node.args[0]
    der_dict[arg] += der_dict[node] * (1 - pyo.tanh(val_dict[arg]) ** 2)


# Pyomo's differentiate() knows exp/log/sin/cos/tan/... but not tanh; register it once
# (no effect on anything Pyomo already differentiates).
diff_with_pyomo._unary_map.setdefault("tanh", _diff_tanh)

# --- the equations (one definition each) -------------------------------------------


def sigmoid(u, mu):
    """F(u) of eq. (cdf), tanh form (overflow-safe, as in the CasADi backend)."""
    return 0.5 * (1.0 + pyo.tanh(0.5 * mu * u))


def softplus(z):
    """log(1 + exp(z))."""
    return pyo.log(1.0 + pyo.exp(z))


def linear(coefficients, variables):
    """sum_j c_j v_j, skipping zero coefficients (v_j may be variables or numbers)."""
    return sum(float(c) * v for c, v in zip(coefficients, variables) if c != 0.0)


def _square(e):
    """e^2 written as a product (quadratic-aware writers such as APPSI-HiGHS expand
    products of linear expressions but not powers of sums)."""
    return e * e


def point_sweep(split, values, tree: Tree, root: int):
    """sum_{l in D_L(root)} P_l v_l for one point: ``split[a]`` is p_a (node -> expr),
    ``values`` the leaf values in the order of ``tree.descendants_leaves(root)``.
    Mirrors :func:`srtopt.kernels.soft_loss` (upward sweep, no division)."""
    V = dict(zip(tree.descendants_leaves(root), values))
    for a in reversed(tree.subtree_branch(root)):
        V[a] = split[a] * V[2 * a] + (1 - split[a]) * V[2 * a + 1]
    return V[root]


# --- the rendered model --------------------------------------------------------------


@dataclass
class PyomoModel:
    """A rendered formulation: ``model.x[0..n-1]`` and ``model.objective`` (minimise).

    ``variable_names[j]`` names ``model.x[j]`` as in the CasADi model;
    ``build_seconds`` is the time :func:`render_pyomo` took.
    """

    name: str
    model: pyo.ConcreteModel
    variable_names: list[str]
    build_seconds: float = 0.0
    _grad_exprs: list | None = field(default=None, repr=False)

    @property
    def n_variables(self) -> int:
        return len(self.variable_names)

    @property
    def variables(self) -> list:
        return [self.model.x[j] for j in range(self.n_variables)]

    def set_x(self, x) -> None:
        for v, value in zip(self.variables, np.ravel(x)):
            v.set_value(float(value), skip_validation=True)

    def get_x(self) -> np.ndarray:
        return np.array([pyo.value(v) for v in self.variables], float)

    def objective(self, x) -> float:
        self.set_x(x)
        return float(pyo.value(self.model.objective.expr))

    def gradient(self, x) -> np.ndarray:
        self.set_x(x)
        return np.asarray(differentiate(self.model.objective.expr, wrt_list=self.variables,
                                        mode=Modes.reverse_numeric), float)

    def hessian(self, x) -> np.ndarray:
        """Exact Hessian: Pyomo's symbolic gradient, differentiated numerically (small models)."""
        if self._grad_exprs is None:
            self._grad_exprs = differentiate(self.model.objective.expr, wrt_list=self.variables,
                                             mode=Modes.reverse_symbolic)
        self.set_x(x)
        H = np.zeros((self.n_variables, self.n_variables))
        for j, g in enumerate(self._grad_exprs):
            if isinstance(g, (int, float)):
                continue
            H[j] = differentiate(g, wrt_list=self.variables, mode=Modes.reverse_numeric)
        return H

    def write(self, path, symbolic_solver_labels: bool = True) -> str:
        """Write the model; the format follows the extension: ``.nl`` (AMPL, any NLP),
        ``.gms`` (GAMS), ``.lp`` (CPLEX LP: quadratic objectives only, i.e. the LN
        subproblem).  With symbolic labels, ``.nl`` gets ``.col``/``.row`` name files."""
        ext = os.path.splitext(str(path))[1].lower()
        formats = {".nl": "nl", ".gms": "gams", ".lp": "lp"}
        if ext not in formats:
            raise ValueError(f"unknown model format {ext!r}; use one of {sorted(formats)}")
        try:
            self.model.write(str(path),
                             io_options={"symbolic_solver_labels": symbolic_solver_labels})
        except Exception as exc:
            if ext == ".lp":
                raise ValueError(f"{self.name} cannot be written as .lp (LP/QP format): its objective "
                                 f"is not quadratic; use .nl or .gms") from exc
            raise
        return str(path)

    def __repr__(self) -> str:
        return f"PyomoModel({self.name!r}: {self.n_variables} variables, built in {self.build_seconds:.2f} s)"


def _model(name, start, names) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel(name=name)
    m.x = pyo.Var(range(len(names)), initialize=dict(enumerate(np.ravel(start).astype(float))))
    return m


def _split_exprs(Z_i, columns, mu):
    """p_a of one point for every node a of ``columns`` (node -> coefficient vector)."""
    return {a: sigmoid(linear(Z_i, col), mu) for a, col in columns.items()}


def _rows_of(x, n_rows, q, offset=0):
    return [[x[offset + r * q + j] for j in range(q)] for r in range(n_rows)]


def _whole_tree(f, point_term):
    """Pyomo model over x = (vec omega, vec beta) of the whole tree:
    sum_i s_i point_term(splits_i, leaf models_i, y_i) + the l2 terms of eq. (obj)."""
    pr, tree = f.problem, f.problem.tree
    q = pr.Z.shape[1]
    names = ([f"omega[{t}][{j}]" for t in tree.branch_nodes for j in range(q)]
             + [f"beta[{t}][{j}]" for t in tree.leaves for j in range(q)])
    m = _model(f.name, f.start(), names)
    W = dict(zip(tree.branch_nodes, _rows_of(m.x, tree.n_branch, q)))
    B = _rows_of(m.x, tree.n_leaves, q, f.omega.size)
    terms = [float(pr.s[i]) * point_term(_split_exprs(pr.Z[i], W, pr.mu), [linear(pr.Xa[i], b) for b in B],
                                         float(pr.y[i]))
             for i in range(pr.Z.shape[0]) if pr.s[i] != 0]
    reg = 0.5 * pr.lambda_w * sum(m.x[j] ** 2 for j in range(f.omega.size)) \
        + 0.5 * pr.lambda_b * sum(m.x[j] ** 2 for j in range(f.omega.size, len(names)))
    m.objective = pyo.Objective(expr=pyo.quicksum(terms) + reg)
    return m, names


def _srt_objective(f):
    """eq. (obj): sum_l P_il (yhat_il - y_i)^2 per point."""
    tree = f.problem.tree
    return _whole_tree(f, lambda S, yhat, y: point_sweep(S, [(v - y) ** 2 for v in yhat], tree, 1))


def _branch_subproblem(f):
    pr, tree = f.problem, f.problem.tree
    q = pr.Z.shape[1]
    names = [f"omega[{t}][{j}]" for t in f.working for j in range(q)]
    m = _model(f.name, f.start(), names)
    columns = dict(zip(f.working, _rows_of(m.x, len(f.working), q)))
    columns.update({a: list(f.omega[tree.branch_index(a)]) for a in f._fixed_nodes()})
    Z, R, s = pr.Z[f.rows], f._losses, f.weights
    terms = [float(s[i]) * point_sweep(_split_exprs(Z[i], columns, pr.mu), [float(r) for r in R[i]],
                                       tree, f.root)
             for i in range(len(f.rows)) if s[i] != 0]
    reg = 0.5 * pr.lambda_w * sum(m.x[j] ** 2 for j in range(len(names)))
    m.objective = pyo.Objective(expr=pyo.quicksum(terms) + reg)
    return m, names


def _leaf_subproblem(f):
    pr = f.problem
    q = pr.Xa.shape[1]
    names = [f"beta[{t}][{j}]" for t in f.working for j in range(q)]
    m = _model(f.name, f.start(), names)
    B = _rows_of(m.x, len(f.working), q)
    Xa, y, Q = pr.Xa[f.rows], pr.y[f.rows], f.leaf_weights
    terms = [float(Q[i, l]) * _square(linear(Xa[i], B[l]) - float(y[i]))
             for i in range(len(f.rows)) for l in range(len(f.working)) if Q[i, l] != 0]
    reg = 0.5 * pr.lambda_b * sum(m.x[j] ** 2 for j in range(len(names)))
    m.objective = pyo.Objective(expr=pyo.quicksum(terms) + reg)
    return m, names


def _wlr_proxy(f):
    q = f.Z.shape[1]
    names = [f"omega_t[{j}]" for j in range(q)]
    m = _model(f.name, f.start(), names)
    x, n = [m.x[j] for j in range(q)], len(f.c)
    terms = []
    for i in range(n):
        if f.w[i] == 0:
            continue
        u = f.mu * linear(f.Z[i], x)
        terms.append(float(f.w[i]) * (float(f.c[i]) * softplus(-u) + float(1 - f.c[i]) * softplus(u)))
    m.objective = pyo.Objective(expr=(1.0 / n) * pyo.quicksum(terms)
                                + 0.5 * f.alpha * sum(x[j] ** 2 for j in range(1, q)))
    return m, names


def _orrt_objective(f):
    """eq. (formulation): (sum_l P_il yhat_il - y_i)^2 per point."""
    tree = f.problem.tree
    return _whole_tree(f, lambda S, yhat, y: (point_sweep(S, yhat, tree, 1) - y) ** 2)


_RENDERERS = {
    "SRTObjective": _srt_objective,
    "BranchSubproblem": _branch_subproblem,
    "LeafSubproblem": _leaf_subproblem,
    "WLRProxy": _wlr_proxy,
    "ORRTObjective": _orrt_objective,
}


def render_pyomo(formulation) -> PyomoModel:
    """The Pyomo model of ``formulation`` (same variables, order and objective as
    ``formulation.render()``; no row padding)."""
    kind = type(formulation).__name__
    if kind not in _RENDERERS:
        raise TypeError(f"no Pyomo rendering for {kind}; supported: {', '.join(sorted(_RENDERERS))}")
    start = time.perf_counter()
    model, names = _RENDERERS[kind](formulation)
    return PyomoModel(formulation.name, model, names, time.perf_counter() - start)


def render(formulation, backend: str = "casadi"):
    """Render with ``backend`` "casadi" (``formulation.render()``) or "pyomo"."""
    if backend == "casadi":
        return formulation.render()
    if backend == "pyomo":
        return render_pyomo(formulation)
    raise ValueError(f"unknown backend {backend!r}; use 'casadi' or 'pyomo'")


__all__ = ["PyomoModel", "point_sweep", "render", "render_pyomo", "sigmoid", "softplus"]
