"""One BLAS thread in fit (srtopt/estimators/threads.py), and Ctrl-C while threadpoolctl looks for the libraries."""

import os
import signal

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_info, threadpool_limits

from srtopt import SoftRegressionTree
from srtopt.estimators import threads
from srtopt.solvers.base import deferred_signals


def _blas_threads():
    return [library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"]


def test_a_fit_runs_on_one_blas_thread_and_restores_the_callers_limit(monkeypatch):
    seen = []
    fit = SoftRegressionTree._train

    def train(self, *args):
        seen.append(_blas_threads())
        return fit(self, *args)

    monkeypatch.setattr(SoftRegressionTree, "_train", train)
    X = np.random.default_rng(0).random((60, 3))
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        SoftRegressionTree(depth=1, max_iter=1, random_state=0).fit(X, X[:, 0])
        assert _blas_threads() == before
    assert seen and all(n == 1 for n in seen[0])


def test_a_ctrl_c_while_threadpoolctl_looks_for_the_libraries_is_raised_after_it(monkeypatch):
    """threadpoolctl looks in a ctypes callback, where Python prints a KeyboardInterrupt and drops it (a Ctrl-C
    at the start of a fit was lost so, and the fit ran on for minutes): the signal is deferred to the end of the
    look, where it raises, the limits restored."""
    looked = []

    def signalled_while_looking():
        os.kill(os.getpid(), signal.SIGINT)
        looked.append(_blas_threads())  # not interrupted: the look goes on to its end
        return ThreadpoolController()

    monkeypatch.setattr(threads, "ThreadpoolController", signalled_while_looking)
    threads._controller.cache_clear()  # the process's first look
    before = _blas_threads()
    entered = []
    with pytest.raises(KeyboardInterrupt):
        with threads.one_thread("blas"):
            entered.append(True)
    assert looked and not entered  # raised as the look ended, before the block's body
    assert _blas_threads() == before and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_libraries_are_looked_for_once_per_process(monkeypatch):
    looks = []

    def looking():
        looks.append(True)
        return ThreadpoolController()

    monkeypatch.setattr(threads, "ThreadpoolController", looking)
    threads._controller.cache_clear()
    X = np.random.default_rng(0).random((60, 3))
    for _ in range(3):
        SoftRegressionTree(depth=1, max_iter=1, random_state=0).fit(X, X[:, 0])
    assert looks == [True]


def test_deferred_signals_handle_a_signal_at_the_end_of_the_block():
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            reached.append("after the signal")
    assert reached == ["after the signal"]
    with deferred_signals():  # nothing left over for the next block
        reached.append("again")
    assert reached == ["after the signal", "again"]
