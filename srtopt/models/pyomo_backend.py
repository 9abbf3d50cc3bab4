"""Pyomo rendering of the formulations: one scalar expression per data point.

Each formulation renders itself (its ``render_pyomo()`` method, next to its numpy
``evaluate`` and its CasADi ``render``) from the data it already holds, with the
building blocks of this module and the Pyomo expressions of its loss and penalty
terms (:mod:`.terms`); :func:`render_pyomo` calls it and times it.  The model is a
``pyomo.environ.ConcreteModel`` with one indexed variable ``x`` (flat, in the order
of ``formulation.start()`` and of the CasADi model) and one objective.  The
building blocks:

* :func:`sigmoid` -- F(u) of eq. (cdf) in the tanh form 0.5 (1 + tanh(mu u / 2));
* :func:`point_sweep` -- the upward sweep sum_l P_il v_il of one point over the
  subtree rooted at t (probabilities above t taken as 1), which gives both the
  SRT loss of a point (v = leaf losses R_il, eq. obj / BN proxy) and the ORRT
  prediction (v = leaf outputs yhat_il, eq. formulation);
* :func:`softplus` -- log(1 + exp(z)) of the WLR proxy (eq. reshuffle);
* :func:`model`, :func:`rows_of`, :func:`split_exprs`, :func:`linear`,
  :func:`finish` -- the variable vector, its rows, the split probabilities of a
  point, linear forms and the objective.

Size limits.  Pyomo expressions are Python object trees: the model has about
N (|tau_B| q + |tau_L| q) nodes for the full objective (N points, q = p + 1
columns), and its build time grows with that count, where the vectorised CasADi
model's barely does (the times: docs/solvers.md).  Use the Pyomo rendering for
inspection, export (``.nl``, ``.gms``, ``.lp`` for the quadratic LN subproblem) and
small reference solves -- not inside the NODEC loop.  The numeric ``objective``/``gradient``/``hessian`` helpers of
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

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.calculus import diff_with_pyomo
from pyomo.core.expr.calculus.derivatives import Modes, differentiate

from ..tree import Tree


def _diff_tanh(node, val_dict, der_dict):
    """d tanh(u) = (1 - tanh(u)^2) du, missing from Pyomo 6.10's ``differentiate``."""
    arg = node.args[0]
    der_dict[arg] += der_dict[node] * (1 - pyo.tanh(val_dict[arg]) ** 2)


def _diff_sinh(node, val_dict, der_dict):
    arg = node.args[0]
    der_dict[arg] += der_dict[node] * pyo.cosh(val_dict[arg])


def _diff_cosh(node, val_dict, der_dict):
    arg = node.args[0]
    der_dict[arg] += der_dict[node] * pyo.sinh(val_dict[arg])


# Pyomo's differentiate() knows exp/log/sin/cos/tan/... but not the hyperbolic functions (user
# losses such as log(cosh(r)) use them); register them once (no effect on anything Pyomo
# already differentiates).
for _name, _rule in (("tanh", _diff_tanh), ("sinh", _diff_sinh), ("cosh", _diff_cosh)):
    diff_with_pyomo._unary_map.setdefault(_name, _rule)

# --- the equations (one definition each) -------------------------------------------


def sigmoid(u, mu):
    """F(u) of eq. (cdf), tanh form (overflow-safe, as in the CasADi backend).

    Parameters
    ----------
    u : Pyomo expression or float
        The split value u.
    mu : float
        Slope of the logistic CDF.

    Returns
    -------
    Pyomo expression
        0.5 (1 + tanh(mu u / 2)).
    """
    return 0.5 * (1.0 + pyo.tanh(0.5 * mu * u))


def softplus(z):
    """log(1 + exp(z)).

    Parameters
    ----------
    z : Pyomo expression or float
        The argument.

    Returns
    -------
    Pyomo expression
        log(1 + exp(z)).
    """
    return pyo.log(1.0 + pyo.exp(z))


def linear(coefficients, variables):
    """sum_j c_j v_j, skipping zero coefficients (v_j may be variables or numbers).

    Parameters
    ----------
    coefficients : sequence of float
        The numbers c_j.
    variables : sequence of Pyomo variables, expressions or numbers
        The v_j, paired with ``coefficients``.

    Returns
    -------
    Pyomo expression or float
        The sum (0 when every c_j is 0).
    """
    return sum(float(c) * v for c, v in zip(coefficients, variables) if c != 0.0)


def point_sweep(split, values, tree: Tree, root: int):
    """sum_{l in D_L(root)} P_l v_l for one point: ``split[a]`` is p_a (node -> expr),
    ``values`` the leaf values in the order of ``tree.descendants_leaves(root)``.
    Mirrors :func:`srtopt.kernels.soft_loss` (upward sweep, no division).

    Parameters
    ----------
    split : dict of int to Pyomo expression
        p_a of the point for every branch node a of the subtree rooted at ``root``.
    values : sequence of Pyomo expressions or floats
        v_l of the leaves of D_L(root), in increasing leaf order.
    tree : Tree
        The tree.
    root : int
        The node whose subtree is swept (probabilities above it taken as 1).

    Returns
    -------
    Pyomo expression
        sum_{l in D_L(root)} P_l v_l.
    """
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

    Parameters
    ----------
    name : str
        The formulation's name.
    model : pyomo.environ.ConcreteModel
        The model, with the flat variable ``x`` and ``objective``.
    variable_names : list of str
        Name of each entry of ``x``.
    build_seconds : float, default=0.0
        Seconds the rendering took.
    _grad_exprs : list or None, default=None
        Cache of the symbolic gradient used by :meth:`hessian` (internal; leave None).
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


def model(name, start, names) -> pyo.ConcreteModel:
    """A ConcreteModel with the flat variable ``x`` (one entry per name), started at ``start``.

    Parameters
    ----------
    name : str
        The model's name.
    start : array-like
        Initial values of ``x`` (flattened, one per name).
    names : sequence of str
        The variable names; their number is the size of ``x``.

    Returns
    -------
    pyomo.environ.ConcreteModel
        The model, with ``x`` indexed 0..len(names) - 1 and no objective yet.
    """
    m = pyo.ConcreteModel(name=name)
    m.x = pyo.Var(range(len(names)), initialize=dict(enumerate(np.ravel(start).astype(float))))
    return m


def split_exprs(Z_i, columns, mu):
    """p_a of one point for every node a of ``columns`` (node -> coefficient vector).

    Parameters
    ----------
    Z_i : array-like of shape (q,)
        The point's row z_i = (1, x_i / p) of the split design.
    columns : dict of int to sequence
        Branch node a -> its split weights omega_a (q variables or numbers).
    mu : float
        Slope of the logistic CDF.

    Returns
    -------
    dict of int to Pyomo expression
        Node a -> p_a = F(z_i . omega_a).
    """
    return {a: sigmoid(linear(Z_i, col), mu) for a, col in columns.items()}


def rows_of(x, n_rows, q, offset=0):
    """The flat variable ``x`` from ``offset`` as n_rows rows of q variables (row-major).

    Parameters
    ----------
    x : indexed Pyomo variable
        The flat variable (``model.x``).
    n_rows : int
        Number of rows.
    q : int
        Variables per row.
    offset : int, default=0
        Index of ``x`` where the first row starts.

    Returns
    -------
    list of list
        ``n_rows`` lists of q entries of ``x``.
    """
    return [[x[offset + r * q + j] for j in range(q)] for r in range(n_rows)]


def finish(m, data_terms, penalty_terms, names):
    """Set the objective sum(data_terms) + sum(penalty_terms) on ``m``; return (m, names).

    Parameters
    ----------
    m : pyomo.environ.ConcreteModel
        The model of :func:`model`.
    data_terms : iterable of Pyomo expressions
        One term per data point.
    penalty_terms : iterable of Pyomo expressions or floats
        The penalty terms.
    names : list of str
        The variable names, returned unchanged.

    Returns
    -------
    m : pyomo.environ.ConcreteModel
        The model, with ``objective`` (minimised) set.
    names : list of str
        ``names``.
    """
    m.objective = pyo.Objective(expr=pyo.quicksum(data_terms) + sum(penalty_terms))
    return m, names


def render_pyomo(formulation) -> PyomoModel:
    """The Pyomo model of ``formulation`` (same variables, order and objective as
    ``formulation.render()``; no row padding): its ``render_pyomo()`` method.

    Parameters
    ----------
    formulation : object
        A formulation with a ``render_pyomo()`` method (e.g. a BN, LN or WLR subproblem, SRTObjective).

    Returns
    -------
    PyomoModel
        The model, with the seconds its rendering took.

    Raises
    ------
    TypeError
        If ``formulation`` has no ``render_pyomo()`` method.
    """
    if not hasattr(formulation, "render_pyomo"):
        raise TypeError(f"no Pyomo rendering for {type(formulation).__name__}: it has no render_pyomo() method")
    start = time.perf_counter()
    model, names = formulation.render_pyomo()
    return PyomoModel(formulation.name, model, names, time.perf_counter() - start)


def render(formulation, backend: str = "casadi"):
    """Render with ``backend`` "casadi" (``formulation.render()``) or "pyomo".

    Parameters
    ----------
    formulation : object
        A formulation (e.g. a BN, LN or WLR subproblem, SRTObjective).
    backend : {"casadi", "pyomo"}, default="casadi"
        The modelling backend.

    Returns
    -------
    CasadiModel or PyomoModel
        The rendered model.

    Raises
    ------
    ValueError
        If ``backend`` is unknown.
    TypeError
        If ``backend`` is "pyomo" and ``formulation`` has no Pyomo rendering.
    """
    if backend == "casadi":
        return formulation.render()
    if backend == "pyomo":
        return render_pyomo(formulation)
    raise ValueError(f"unknown backend {backend!r}; use 'casadi' or 'pyomo'")


__all__ = ["PyomoModel", "finish", "linear", "model", "point_sweep", "render", "render_pyomo", "rows_of", "sigmoid",
           "softplus", "split_exprs"]
