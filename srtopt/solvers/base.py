"""The one interface every solver adapter implements.

``solver.solve(problem, x0) -> SolverResult``.  ``problem`` is a formulation
from :mod:`srtopt.models` (it has ``evaluate(x) -> (f, grad)``, ``render()``
and ``structure_key``); ``x0`` the start.  Adapters never raise on a failed
solve: they report it in ``success``/``status`` so training can fall back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class SolverResult:
    """Outcome of one solve: solution, objective, status, iterations, wall time."""

    x: np.ndarray
    objective: float
    success: bool
    status: str
    iterations: int
    seconds: float
    raw: Any = field(default=None, repr=False)

    def usable(self) -> bool:
        """A finite point was returned (even if the solver reported a failure)."""
        return bool(np.all(np.isfinite(self.x)) and np.isfinite(self.objective))
