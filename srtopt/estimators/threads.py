"""BLAS threads during a fit: one, whatever the environment sets.

A fit is many small dense products and factorizations (a few hundred coefficients at most),
where OpenBLAS's threads cost more in synchronization than they gain (docs/benchmarks.md,
"BLAS threads").  The estimators' ``fit`` methods run under
:func:`one_blas_thread`; the caller's setting is restored afterwards.
"""

from __future__ import annotations

import functools

from threadpoolctl import threadpool_limits


def one_blas_thread(fit):
    """Decorate a ``fit`` method: it runs with one BLAS thread (threadpoolctl), the previous limits
    restored when it returns or raises."""

    @functools.wraps(fit)
    def limited(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fit(*args, **kwargs)
    return limited
