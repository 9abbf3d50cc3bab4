"""srtopt.solvers.milp: what its adapters guarantee beyond the solver contract."""

import os
import signal
import time

import numpy as np
import pytest

from srtopt.solvers.milp import _in_child


def test_a_solver_in_a_child_process_cannot_end_the_caller():
    """ScipMIQP solves in a forked child: an abort there (SCIP via Pyomo has aborted on MILO
    models) or an overrun becomes a status, an exception comes back as itself."""
    assert _in_child(lambda: ("optimal", True, 1.0, 0.5, np.array([1.0, 2.0])), 60)[:4] == ("optimal", True, 1.0, 0.5)
    # a child killed outright, as an abort would (os.abort would also print pytest's faulthandler dump)
    assert _in_child(lambda: os.kill(os.getpid(), signal.SIGKILL), 60) == ("solver_crashed", False, None, None, None)
    assert _in_child(lambda: time.sleep(30), 0.5)[0] == "maxTimeLimit"
    with pytest.raises(ZeroDivisionError):
        _in_child(lambda: 1 / 0, 60)


@pytest.mark.slow
def test_a_child_that_overruns_is_killed_not_waited_for():
    started = time.perf_counter()
    assert _in_child(lambda: time.sleep(30), 0.5)[0] == "maxTimeLimit"
    assert time.perf_counter() - started < 15  # 0.5 s asked, the child sleeps 30 s
