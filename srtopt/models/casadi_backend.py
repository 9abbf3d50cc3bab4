"""CasADi rendering of the formulations: vectorised MX expressions over the data matrix.

Data enter as *parameters*, so one symbolic model (and one ``nlpsol`` built
from it) serves every re-solve of a subproblem with the same structure.  The
logistic CDF is written ``0.5 (1 + tanh(mu u / 2))``: the ``1/(1+exp(-mu u))``
form gives NaN in CasADi once it saturates (docs/departures.md, "Engineering measurements").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import casadi as ca
import numpy as np

from ..tree import Tree

MIN_ROWS = 32  # smallest padded row count of a rendered subproblem


def padded_rows(n: int) -> int:
    """Row count of the rendered model: the next power of two >= n.

    Subproblems on I_t change size every iteration; padding with zero-weight
    rows lets one compiled solver per power of two serve them all.
    """
    return max(MIN_ROWS, 1 << max(0, n - 1).bit_length())


def pad(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` with zero rows appended up to ``n`` rows."""
    out = np.zeros((n,) + a.shape[1:])
    out[: a.shape[0]] = a
    return out


def sigmoid(u, mu):
    """F(u) of eq. (cdf) in the overflow-safe tanh form."""
    return 0.5 * (1.0 + ca.tanh(0.5 * mu * u))


def softplus(z):
    """log(1 + exp(z)) without overflow."""
    return ca.fmax(z, 0) + ca.log1p(ca.exp(-ca.fabs(z)))


def matrix(x, rows: int, cols: int):
    """View a flat variable vector (row-major, like ``ndarray.ravel``) as a rows x cols matrix."""
    return ca.reshape(x, cols, rows).T


def soft_loss(S, R, s, tree: Tree, root: int, columns: dict[int, int]):
    """sum_i s_i sum_{l in D_L(root)} P_il R_il with the subtree proxy rooted at ``root``.

    ``S`` holds p_it in the columns given by ``columns`` (node -> column); the
    probabilities of the path above ``root`` are taken as 1.  Mirrors
    :func:`srtopt.kernels.soft_loss`.
    """
    return ca.dot(s, sweep(S, R, tree, root, columns))


def sweep(S, R, tree: Tree, root: int, columns: dict[int, int]):
    """sum_{l in D_L(root)} P_il R_il of every row (a column), the upward sweep of
    :func:`soft_loss` (``S``, ``R``, ``columns`` as there)."""
    V = {leaf: R[:, j] for j, leaf in enumerate(tree.descendants_leaves(root))}
    for a in reversed(tree.subtree_branch(root)):
        sa = S[:, columns[a]]
        V[a] = sa * V[2 * a] + (1 - sa) * V[2 * a + 1]
    return V[root]


@dataclass
class CasadiModel:
    """A rendered formulation: min_x f(x; p) s.t. lbg <= g(x; p) <= ubg, lbx <= x <= ubx, with ``p``
    bound to ``p_value``.

    ``x``, ``p`` are CasADi MX symbols, ``f`` the MX objective and ``g`` the MX constraint rows
    (None without any); the functions ``objective``, ``gradient``, ``hessian`` and ``constraints``
    evaluate the model at a point with the bound data.  ``nlp`` is the dict ``nlpsol`` takes, and
    ``bounds`` the bounds its solver call takes (lbg, ubg, lbx, ubx).
    """

    name: str
    x: ca.MX
    p: ca.MX
    f: ca.MX
    p_value: np.ndarray
    variable_names: list[str] = field(default_factory=list)
    g: ca.MX | None = None
    lbg: np.ndarray | None = None
    ubg: np.ndarray | None = None
    lbx: np.ndarray | None = None
    ubx: np.ndarray | None = None

    @property
    def nlp(self) -> dict:
        return {"x": self.x, "p": self.p, "f": self.f, **({"g": self.g} if self.g is not None else {})}

    @property
    def bounds(self) -> dict:
        """The bounds of ``nlpsol``'s call: lbg/ubg with constraint rows, lbx/ubx with bounded variables."""
        out = {} if self.g is None else {"lbg": self.lbg, "ubg": self.ubg}
        return out if self.lbx is None else {**out, "lbx": self.lbx, "ubx": self.ubx}

    @cached_property
    def g_function(self) -> ca.Function:
        return ca.Function(f"{self.name}_g", [self.x, self.p], [self.g if self.g is not None else ca.MX(0, 1)],
                           ["x", "p"], ["g"])

    def constraints(self, x) -> np.ndarray:
        """g(x) with the bound data (empty without constraint rows)."""
        return np.asarray(self.g_function(np.ravel(x), self.p_value)).ravel()

    @cached_property
    def f_function(self) -> ca.Function:
        return ca.Function(f"{self.name}_f", [self.x, self.p], [self.f], ["x", "p"], ["f"])

    @cached_property
    def grad_function(self) -> ca.Function:
        return ca.Function(f"{self.name}_grad", [self.x, self.p], [ca.gradient(self.f, self.x)],
                           ["x", "p"], ["grad"])

    @cached_property
    def hess_function(self) -> ca.Function:
        return ca.Function(f"{self.name}_hess", [self.x, self.p], [ca.hessian(self.f, self.x)[0]],
                           ["x", "p"], ["hess"])

    def objective(self, x) -> float:
        return float(self.f_function(np.ravel(x), self.p_value))

    def gradient(self, x) -> np.ndarray:
        return np.asarray(self.grad_function(np.ravel(x), self.p_value)).ravel()

    def hessian(self, x) -> np.ndarray:
        return np.asarray(self.hess_function(np.ravel(x), self.p_value))

    def __repr__(self) -> str:
        rows = "" if self.g is None else f", {self.g.numel()} constraint rows"
        return f"CasadiModel({self.name!r}: {self.x.numel()} variables, {self.p.numel()} parameters{rows})"
