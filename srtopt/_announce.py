"""Progress lines on stderr: :func:`say` writes one, :func:`announce_if_slow` one when a block of
work outlasts a threshold (the one-time compile of the compiled kernels in a fresh installation:
loading them from numba's disk cache is quick, so the line appears only when they compile)."""

from __future__ import annotations

import contextlib
import sys
import threading


def say(text: str, stream=None) -> None:
    """Write ``text`` and its newline to ``stream`` (stderr by default) in one write, then flush.

    ``print`` writes the newline apart: a Ctrl-C between the two writes left the line open, and the
    CLI's closing "interrupted" line ran on after it."""
    stream = stream or sys.stderr
    stream.write(f"{text}\n")
    stream.flush()


@contextlib.contextmanager
def announce_if_slow(message: str, after: float = 2.0):
    """Print ``message`` once to stderr if the ``with`` block is still running ``after`` seconds in."""
    timer = threading.Timer(after, lambda: say(message))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
