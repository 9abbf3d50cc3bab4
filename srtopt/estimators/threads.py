"""BLAS threads during a fit: one, whatever the environment sets.

A fit is many small dense products and factorizations (a few hundred coefficients at most),
where OpenBLAS's threads cost more in synchronization than they gain (docs/benchmarks.md,
"BLAS threads").  The estimators' ``fit`` methods run under
:func:`one_blas_thread`; the caller's setting is restored afterwards.

threadpoolctl finds the loaded libraries in a ctypes callback (``dl_iterate_phdr``), where Python prints an
exception and drops it: a Ctrl-C at that moment would be lost, and the fit would run on for minutes.
:func:`one_thread` defers the ending signals while it looks, and handles them right after.  It looks once per
process (:func:`_controller`; a look costs about 2 ms, a search's small fits a few tens of ms each): the BLAS
libraries are those numpy and scipy loaded when srtopt was imported.
"""

from __future__ import annotations

import contextlib
import functools

from threadpoolctl import ThreadpoolController

from ..solvers.base import deferred_signals


@contextlib.contextmanager
def one_thread(user_api="blas"):
    """One thread in the thread pools of ``user_api`` ("blas", "openmp"; None: both) meanwhile, the previous
    limits restored after, whatever ends the block.  A Ctrl-C, SIGTERM or SIGHUP while threadpoolctl looks for
    the libraries is handled as it ends (:func:`~srtopt.solvers.base.deferred_signals`), the limits restored."""
    with contextlib.ExitStack() as restore:
        with deferred_signals():
            controller = _controller()
        restore.callback(controller.limit(limits=1, user_api=user_api).restore_original_limits)
        yield


@functools.cache
def _controller() -> ThreadpoolController:
    """The thread pools of the libraries loaded, found at the first call of the process."""
    return ThreadpoolController()


def one_blas_thread(fit):
    """Decorate a ``fit`` method: it runs with one BLAS thread (:func:`one_thread`), the previous limits
    restored when it returns or raises."""

    @functools.wraps(fit)
    def limited(*args, **kwargs):
        with one_thread("blas"):
            return fit(*args, **kwargs)
    return limited
