"""The constraints of a problem bound together, and constraints from specs (the registry)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from ..._spec import Registry
from .base import Constraint
from .bounds import FeatureSubset, LeafBounds, Monotone, VariableBounds
from .class_means import ClassRecall, EqualizedOdds, GroupRecall, ProbabilityParity
from .row_means import RowMean
from .soft_means import GroupLoss, Parity, SoftMean


@dataclass
class ConstraintSet:
    """The constraints of an SRT problem, bound to its data: the variable bounds of every split
    and leaf, the rows on each leaf's coefficients, and the soft means.  A leaf's row of beta holds
    ``leaf_outputs`` blocks of the columns of ``leaf_basis`` (one per score of a classification leaf; None: the
    linear basis [1, x]), each block bounded as the features' bounds say (:meth:`srtopt.bases.Basis.column_bounds`)
    and, where a bounded feature has a curve, its slope bounded by linear rows (``leaf_rows``: (A, lower, upper),
    lower <= A beta_l <= upper for every leaf l, :meth:`srtopt.bases.Basis.slope_rows`)."""

    terms: tuple = ()
    q: int = 0
    n_branch: int = 0
    n_leaves: int = 0
    leaf_outputs: int = 1
    leaf_basis: object = None
    bounds: tuple | None = field(init=False, default=None)
    leaf_rows: tuple | None = field(init=False, default=None)

    def __post_init__(self):
        signs = [np.asarray(t.signs) for t in self.terms if isinstance(t, Monotone)]
        if len(signs) > 1 and np.any((np.max(signs, axis=0) > 0) & (np.min(signs, axis=0) < 0)):
            j = int(np.flatnonzero((np.max(signs, axis=0) > 0) & (np.min(signs, axis=0) < 0))[0])
            raise ValueError(f"contradictory monotone signs: feature {j} is constrained increasing and decreasing")
        bounding = [t for t in self.terms if isinstance(t, VariableBounds)]
        self.soft = tuple(t for t in self.terms if isinstance(t, SoftMean))
        if bounding:
            split = [t.split_bounds(self.q) for t in bounding]
            leaf = [t.leaf_bounds(self.q) for t in bounding]
            lo_w, hi_w = np.max([s[0] for s in split], axis=0), np.min([s[1] for s in split], axis=0)
            lo_b, hi_b = np.max([b[0] for b in leaf], axis=0), np.min([b[1] for b in leaf], axis=0)
            for lo, hi, where in ((lo_w, hi_w, "split weights"), (lo_b, hi_b, "leaf coefficients")):
                if np.any(lo > hi):
                    j = int(np.flatnonzero(lo > hi)[0]) - 1
                    raise ValueError(f"contradictory constraints: the {where} of column {j + 1} of the problem "
                                     f"(feature {j}) must lie in [{lo[j + 1]:g}, {hi[j + 1]:g}] (training units): "
                                     f"its variable bounds disagree")
            if self.leaf_basis is not None:
                self._slope_bounds = (lo_b, hi_b)
                self.leaf_rows = self._tiled_rows(self.leaf_basis.slope_rows(lo_b, hi_b))
                lo_b, hi_b = self.leaf_basis.column_bounds(lo_b, hi_b)
            lo_b, hi_b = (np.tile(v, self.leaf_outputs) for v in (lo_b, hi_b))
            self.bounds = (np.tile(lo_w, (self.n_branch, 1)), np.tile(hi_w, (self.n_branch, 1)),
                           np.tile(lo_b, (self.n_leaves, 1)), np.tile(hi_b, (self.n_leaves, 1)))

    def _tiled_rows(self, rows):
        """``rows`` on one block of a leaf's columns as rows on each of its ``leaf_outputs`` blocks."""
        if rows is None:
            return None
        A, lower, upper = rows
        return (np.kron(np.eye(self.leaf_outputs), A), np.tile(lower, self.leaf_outputs),
                np.tile(upper, self.leaf_outputs))

    def __bool__(self) -> bool:
        return bool(self.terms)

    def split_features(self) -> np.ndarray:
        """Boolean (p,): the features a split may use (not fixed to 0 in every split)."""
        if self.bounds is None:
            return np.ones(self.q - 1, dtype=bool)
        lo, hi = self.bounds[0][0, 1:], self.bounds[1][0, 1:]
        return ~((lo == 0) & (hi == 0))

    def split_bounds(self, row: int = 0):
        """(lower, upper) of the weights of the split in row ``row`` of omega, or None when they are unbounded."""
        return None if self.bounds is None else (self.bounds[0][row], self.bounds[1][row])

    def project(self, omega, beta):
        """(omega, beta) clipped to the variable bounds, each leaf's curves moved onto the rows
        (:meth:`srtopt.bases.Basis.within_slopes`)."""
        if self.bounds is None:
            return omega, beta
        lo_w, hi_w, lo_b, hi_b = self.bounds
        beta = np.clip(beta, lo_b, hi_b)
        if self.leaf_rows is not None:
            blocks = np.reshape(beta, (len(beta), self.leaf_outputs, -1))
            beta = self.leaf_basis.within_slopes(blocks, *self._slope_bounds).reshape(beta.shape)
        return np.clip(omega, lo_w, hi_w), beta


#: the entry-point group of the constraints of installed packages (:func:`register_constraint`)
PLUGINS = "srtopt.constraints"
CONSTRAINTS = Registry("constraint", {"monotone": Monotone, "leaf_bounds": LeafBounds, "features": FeatureSubset,
                                      "parity": Parity, "group_loss": GroupLoss, "class_recall": ClassRecall,
                                      "row_mean": RowMean, "group_recall": GroupRecall,
                                      "equalized_odds": EqualizedOdds, "probability_parity": ProbabilityParity},
                       "a Constraint object or a list of these", plugins=PLUGINS)


def register_constraint(name: str, factory) -> None:
    """Make ``constraints=name`` (and ``"name:key=value"``) build ``factory(**options)``.

    A package makes its constraints known to every process, the command line's included, by an
    entry point of the group ``"srtopt.constraints"`` instead (in its ``pyproject.toml``:
    ``[project.entry-points."srtopt.constraints"]`` ``group_bias = "mypackage:GroupBias"``), loaded
    when a spec first names it.

    Parameters
    ----------
    name : str
        The constraint's name (lower-cased; an existing entry is replaced).
    factory : callable
        ``factory(**options)`` returning a :class:`Constraint`; a Constraint subclass will do.
    """
    CONSTRAINTS.register(name, factory)


def make_constraints(spec) -> tuple[Constraint, ...]:
    """Constraint terms from None, a spec (``"parity:gap=0.02"``), a Constraint object
    (deep-copied), or a list or tuple of these.

    Parameters
    ----------
    spec : None, str, Constraint, or list or tuple of these
        Registered names ("monotone", "leaf_bounds", "features", "parity", "group_loss", "class_recall",
        "row_mean", one of :func:`register_constraint` or of an installed package's entry points) with
        their options, or Constraint objects.

    Returns
    -------
    tuple of Constraint
        New constraint objects, in the order given (empty for None).

    Raises
    ------
    ValueError
        If a name is unknown, an option is malformed or not accepted, an item is of another type, or a
        constraint is neither a :class:`SoftMean` nor :class:`VariableBounds` (no formulation carries it).

    Examples
    --------
    >>> make_constraints(["parity:gap=0.02", "monotone:weight=-1"])
    (Parity(gap=0.02), Monotone(signs={'weight': -1}))
    """
    if spec is None:
        return ()
    if isinstance(spec, (list, tuple)):
        return tuple(c for item in spec for c in make_constraints(item))
    term = copy.deepcopy(spec) if isinstance(spec, Constraint) else CONSTRAINTS.make(spec) if isinstance(spec, str) \
        else None
    if term is None:
        raise ValueError(f"constraints must be None, a spec string, a Constraint object or a list of these, got {spec!r}")
    if not isinstance(term, (SoftMean, VariableBounds)):
        raise ValueError(f"constraint {term!r} is neither a SoftMean (rows averaged over the data, e.g. a RowMean) nor "
                         f"VariableBounds (bounds on the coefficients): no formulation would carry it; subclass one "
                         f"(docs/constraints.md, 'Writing a constraint')")
    return (term,)
