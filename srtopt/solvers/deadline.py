"""The time budget of a fit: one :class:`Deadline`, made at ``fit``'s entry from ``time_limit``.

A fit makes it once, ``Deadline(time_limit)``, and hands it, as an argument, to every loop that
can run long and to every solver call: a loop polls ``passed()`` or gives a part of it to a fit of
its own (``share(n)`` seconds as that fit's ``time_limit``, or ``within(seconds)`` as the deadline of
a search), and a solver gets it in ``solve(problem, x0, deadline=...)`` (:mod:`srtopt.solvers.base`) and
returns its current point once it has passed.  The deadline is a plain value: nothing reads one that
was not passed to it.
"""

from __future__ import annotations

import math
import time


class Deadline:
    """A moment, ``at`` in ``time.perf_counter()`` seconds, by which work should end.

    Parameters
    ----------
    seconds : float or None, default=None
        Seconds from now; None: no limit (``at`` is infinite, the deadline never passes).

    Examples
    --------
    >>> deadline = Deadline(60)
    >>> deadline.passed(), 59 < deadline.left() <= 60, Deadline().left()
    (False, True, inf)
    >>> deadline.within(0).passed(), deadline.within(None) is deadline
    (True, True)
    """

    __slots__ = ("at",)

    def __init__(self, seconds: float | None = None):
        self.at = math.inf if seconds is None else time.perf_counter() + float(seconds)

    def within(self, seconds: float | None) -> Deadline:
        """The earlier of this deadline and ``seconds`` from now (None: this one)."""
        if seconds is None:
            return self
        earlier = Deadline(seconds)
        earlier.at = min(earlier.at, self.at)
        return earlier

    def left(self) -> float:
        """Seconds until the deadline: inf without a limit, negative once it has passed."""
        return self.at - time.perf_counter()

    def passed(self) -> bool:
        return self.left() <= 0

    def share(self, n: float) -> float | None:
        """An ``n``-th of the seconds left (at least a millisecond of them): the ``time_limit`` of
        one of n fits that divide what remains; None without a limit."""
        return None if math.isinf(self.at) else max(self.left(), 1e-3) / n

    def __repr__(self) -> str:
        return "Deadline(None)" if math.isinf(self.at) else f"Deadline({self.left():.3f} s left)"
