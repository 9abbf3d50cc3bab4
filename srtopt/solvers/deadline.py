"""The time budget of a fit: one :class:`Deadline`, made at ``fit``'s entry from ``time_limit``.

A fit makes it once, ``Deadline.active().within(time_limit)`` (the earlier of its own limit and
the one of an enclosing search), and hands it to every loop that can run long: the loop polls
``passed()`` or gives a part of it, ``share(n)`` seconds, to a fit of its own.  Around its
solver calls the fit makes it the active deadline (``with deadline:``): the solvers, whose
contract ``solve(problem, x0)`` has no place for it, read :meth:`Deadline.active` (IPOPT's
iteration callback, SciPy's ``callback``, the proximal gradient's loop, HiGHS's ``time_limit``)
and return their current point once it has passed.  Outside any ``with`` block the active
deadline never passes.
"""

from __future__ import annotations

import contextvars
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
    >>> with deadline.within(0):
    ...     Deadline.active().passed()
    True
    """

    __slots__ = ("at",)

    def __init__(self, seconds: float | None = None):
        self.at = math.inf if seconds is None else time.perf_counter() + float(seconds)

    @classmethod
    def active(cls) -> Deadline:
        """The deadline of the innermost ``with`` block of this thread (one that never passes
        outside any)."""
        entered = _ENTERED.get()
        return entered[-1] if entered else _NEVER

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

    def __enter__(self) -> Deadline:
        _ENTERED.set((*_ENTERED.get(), self))
        return self

    def __exit__(self, *exc) -> None:
        _ENTERED.set(_ENTERED.get()[:-1])

    def __repr__(self) -> str:
        return "Deadline(None)" if math.isinf(self.at) else f"Deadline({self.left():.3f} s left)"


_NEVER = Deadline()
#: the deadlines of the ``with`` blocks the current context is in, innermost last (a thread starts with none)
_ENTERED: contextvars.ContextVar = contextvars.ContextVar("srtopt_deadlines", default=())
