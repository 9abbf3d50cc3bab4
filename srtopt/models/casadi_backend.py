"""CasADi rendering of the formulations: vectorised MX expressions over the data matrix.

Data enter as *parameters*, so one symbolic model (and one ``nlpsol`` built
from it) serves every re-solve of a subproblem with the same structure.  The
logistic CDF is written ``0.5 (1 + tanh(mu u / 2))``: the ``1/(1+exp(-mu u))``
form gives NaN in CasADi once it saturates (docs/design.md, "Measurements").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import casadi as ca
import numpy as np

from ..tree import Tree


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
    V = {leaf: R[:, j] for j, leaf in enumerate(tree.descendants_leaves(root))}
    for a in reversed(tree.subtree_branch(root)):
        sa = S[:, columns[a]]
        V[a] = sa * V[2 * a] + (1 - sa) * V[2 * a + 1]
    return ca.dot(s, V[root])


@dataclass
class CasadiModel:
    """A rendered formulation: min_x f(x; p), with ``p`` bound to ``p_value``.

    ``x``, ``p`` are CasADi MX symbols and ``f`` the MX objective; the
    functions ``objective``, ``gradient`` and ``hessian`` evaluate the model
    at a point with the bound data.  ``nlp`` is the dict ``nlpsol`` takes.
    """

    name: str
    x: ca.MX
    p: ca.MX
    f: ca.MX
    p_value: np.ndarray
    variable_names: list[str] = field(default_factory=list)

    @property
    def nlp(self) -> dict:
        return {"x": self.x, "p": self.p, "f": self.f}

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
        return (f"CasadiModel({self.name!r}: {self.x.numel()} variables, "
                f"{self.p.numel()} parameters)")
