"""One line on stderr when a block of work outlasts a threshold (the one-time compile of the
compiled kernels in a fresh installation: loading them from numba's disk cache is quick, so the
line appears only when they compile)."""

from __future__ import annotations

import contextlib
import sys
import threading


@contextlib.contextmanager
def announce_if_slow(message: str, after: float = 2.0):
    """Print ``message`` once to stderr if the ``with`` block is still running ``after`` seconds in."""
    timer = threading.Timer(after, lambda: print(message, file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
