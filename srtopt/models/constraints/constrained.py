"""What a formulation gives its solvers about its constraints: bounds, rows, their derivatives and
renderings (the :class:`Constrained` mixin)."""

from __future__ import annotations

import casadi as ca
import numpy as np

from .. import casadi_backend as cb


class Constrained:
    """What a formulation gives its solvers about its constraints (a mixin): the subclass sets
    ``constraint_blocks`` (blocks with ``value``, ``jacobian``, ``hessian``, ``linear``,
    ``parameter_values`` and a ``term`` with ``lower``, ``upper``) and :meth:`bounds`; none by default."""

    constraint_blocks: tuple = ()

    def constraint_key(self) -> tuple:
        """What the constraints add to a structure key: their terms and parameter shapes (empty
        without constraints, so that the key of an unconstrained formulation is unchanged)."""
        bounds = self.bounds()
        blocks = tuple((block.term.key, tuple(np.shape(v) for v in block.parameter_values()))
                       for block in self.constraint_blocks)
        return () if bounds is None and not blocks else (("constraints", bounds is not None, blocks),)

    def constraint_parameters(self) -> np.ndarray:
        """The values of the constraint rows' parameters, vectorized as CasADi's ``vec``."""
        return np.concatenate([np.ravel(v, order="F") for block in self.constraint_blocks
                               for v in block.parameter_values()] or [np.zeros(0)])

    def casadi_model(self, x, p, f, names, rows=()):
        """A :class:`~.casadi_backend.CasadiModel` of f over x with parameters ``p`` (an MX vector, its
        values :meth:`render_parameters`), the constraint rows ``rows`` = [(g, parameter symbols)]
        of the blocks (their symbols appended to p) and the formulation's bounds."""
        bounds = self.bounds()
        g = ca.vertcat(*[row for row, _ in rows]) if rows else None
        p = ca.vertcat(p, *[ca.vec(symbol) for _, symbols in rows for symbol in symbols])
        lbg, ubg = self.constraint_bounds() if rows else (None, None)
        lbx, ubx = bounds if bounds is not None else (None, None)
        return cb.CasadiModel(self.name, x, p, f, self.render_parameters(), names, g, lbg, ubg, lbx, ubx)

    def pyomo_constraints(self, model, rows) -> None:
        """Add the rows (Pyomo expressions, in block order) as ``model.constraints`` with their bounds,
        and the formulation's bounds to ``model.x``."""
        import pyomo.environ as pyo

        bounds = self.bounds()
        if bounds is not None:
            for j, (lo, hi) in enumerate(zip(*bounds)):
                model.x[j].setlb(None if lo == -np.inf else float(lo))
                model.x[j].setub(None if hi == np.inf else float(hi))
        if rows:
            lower, upper = self.constraint_bounds()
            model.constraints = pyo.ConstraintList()
            for expr, lo, hi in zip(rows, lower, upper):
                if isinstance(expr, (int, float)):  # a row this block does not move (another leaf's): kept, as a row
                    expr = expr + 0.0 * model.x[0]
                model.constraints.add((None if lo == -np.inf else float(lo), expr, None if hi == np.inf else float(hi)))

    def bounds(self):
        """(lower, upper) of the variables (flat), or None when no variable is bounded."""
        return None

    def constraint_kinds(self) -> frozenset:
        """The kinds of constraints carried: "fixed" (variables fixed to a value), "bounds" (other
        bounds), "linear" and "nonlinear" (constraint rows)."""
        kinds = set()
        bounds = self.bounds()
        if bounds is not None:
            lower, upper = bounds
            fixed = lower == upper
            if fixed.any():
                kinds.add("fixed")
            if np.any(~fixed & (np.isfinite(lower) | np.isfinite(upper))):
                kinds.add("bounds")
        kinds.update("linear" if block.linear else "nonlinear" for block in self.constraint_blocks)
        return frozenset(kinds)

    def constraint_summary(self) -> list[str]:
        """Lines that say which constraints the formulation carries (none without constraints)."""
        kinds = self.constraint_kinds()
        if not kinds:
            return []
        rows = ", ".join(f"{block.term.name} ({len(block.term.lower)} rows)" for block in self.constraint_blocks)
        return [f"constraints: {', '.join(sorted(kinds))}" + (f"; rows: {rows}" if rows else "")]

    @property
    def n_constraints(self) -> int:
        return int(sum(len(block.term.lower) for block in self.constraint_blocks))

    def constraint_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of the constraint rows, concatenated over the blocks."""
        blocks = self.constraint_blocks
        return (np.concatenate([b.term.lower for b in blocks]) if blocks else np.zeros(0),
                np.concatenate([b.term.upper for b in blocks]) if blocks else np.zeros(0))

    def constraint_values(self, x) -> np.ndarray:
        return np.concatenate([b.value(x) for b in self.constraint_blocks]) if self.constraint_blocks else np.zeros(0)

    def constraint_jacobian(self, x) -> np.ndarray:
        if not self.constraint_blocks:
            return np.zeros((0, np.size(x)))
        return np.vstack([b.jacobian(x) for b in self.constraint_blocks])

    def constraint_hessian(self, x, lam):
        """sum_k lam_k times the Hessian of row k (every block must have ``has_hessian``)."""
        total = np.zeros((np.size(x), np.size(x)))
        for block, multipliers in zip(self.constraint_blocks, self._per_block(lam)):
            total = total + block.hessian(x, multipliers)
        return total

    def _per_block(self, lam) -> list:
        """``lam`` (one entry per constraint row) cut into the blocks' parts."""
        ends = np.cumsum([len(block.term.lower) for block in self.constraint_blocks])
        return np.split(np.asarray(lam, float), ends[:-1]) if len(ends) else []

    def lagrangian_hessian(self, x, lam_f, lam):
        """lam_f times the objective's exact Hessian (``hessian(x)``) plus the rows' (``lam``: one
        multiplier per row), the Hessian of the Lagrangian an NLP solver asks for."""
        H = lam_f * self.hessian(x)
        return H + self.constraint_hessian(x, lam) if self.constraint_blocks else H

    def violation(self, x) -> float:
        """The largest violation of a bound or a constraint row at x (0 when all hold)."""
        worst = 0.0
        bounds = self.bounds()
        if bounds is not None:
            worst = max(worst, _excess(np.asarray(x, float), *bounds))
        if self.constraint_blocks:
            worst = max(worst, _excess(self.constraint_values(x), *self.constraint_bounds()))
        return worst


def _excess(values, lower, upper) -> float:
    """max over entries of max(lower - value, value - upper, 0)."""
    if values.size == 0:
        return 0.0
    return float(max(np.max(lower - values, initial=0.0), np.max(values - upper, initial=0.0), 0.0))
