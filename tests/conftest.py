import contextlib
import itertools
import math
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

#: The directory of the 15 dataset CSVs (srtopt.datasets), from $SRTOPT_DATA; tests that need
#: it skip when it is not set (.ci/run sets it).
DATA = Path(os.environ["SRTOPT_DATA"]) if os.environ.get("SRTOPT_DATA") else None
#: The directory of the 20 classification dataset CSVs, from $SRTOPT_CLASSIFICATION_DATA (skipped without).
CLASSIFICATION_DATA = (Path(os.environ["SRTOPT_CLASSIFICATION_DATA"])
                       if os.environ.get("SRTOPT_CLASSIFICATION_DATA") else None)

# A background job of a non-interactive shell (`nohup pytest &`) starts with SIGINT ignored, and
# the programs the interrupt tests start would inherit that: handle SIGINT as in a terminal, so
# they start with the default disposition (Python then raises KeyboardInterrupt on SIGINT).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# One BLAS and one OpenMP thread, as .ci/run sets them (OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1), unless
# they are set already: the tests run one at a time on a machine of few cores, often beside other work,
# where a second thread only waits (HistGradientBoosting's OpenMP loops on iris took 4-6 s, 0.1 s with
# one thread, on a loaded 2-core machine). The environment reaches the programs and workers the tests
# start; numpy is imported before this file, so its BLAS is limited here through threadpoolctl.
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
if not any(os.environ.get(name) for name in _THREAD_VARIABLES):
    for _name in _THREAD_VARIABLES:
        os.environ[_name] = "1"
    threadpool_limits(limits=1)


class StoppedClock:
    """A stopped clock in place of a module's ``time``: ``perf_counter``, ``monotonic`` and ``time`` stand
    still unless the test moves them (``advance``).  In place of the clock of srtopt's deadlines
    (``srtopt.solvers.deadline`` reads ``time.perf_counter``; the ``stopped_clock`` fixture), a
    ``time_limit`` runs out only when the test says so: a test that compares two fits, or asserts what a
    fit decided from the time left (which stages ran, a search's result), gets the same answer on a
    loaded machine as on a quiet one.  A solver's own clock (HiGHS's, SCIP's, IPOPT's time limit) is not
    stopped: such tests bound the solver by an iteration or node limit instead.  Anything else of the
    time module (``sleep``, ``strftime``) is the real one."""

    def __init__(self):
        self.now = time.time()

    def perf_counter(self) -> float:
        return self.now

    monotonic = time = perf_counter

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def __getattr__(self, name):  # anything else of the time module, as it is
        return getattr(time, name)


@contextlib.contextmanager
def stopped_clock():
    """A :class:`StoppedClock` in place of the deadlines' clock, for the block (module-scoped fixtures)."""
    from srtopt.solvers import deadline

    clock = StoppedClock()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(deadline, "time", clock)
        yield clock


@pytest.fixture(name="stopped_clock")
def stopped_clock_fixture():
    """The deadlines' clock stopped for the test (:class:`StoppedClock`)."""
    with stopped_clock() as clock:
        yield clock


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def load_csv(slug):
    """(X, y) of a dataset CSV in $SRTOPT_DATA; skips the test when the directory is absent."""
    if DATA is None or not (DATA / f"{slug}.csv").exists():
        pytest.skip(f"{slug}.csv not found: set SRTOPT_DATA to the datasets directory (now {DATA})")
    path = DATA / f"{slug}.csv"
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    return data[:, :-1], data[:, -1]


def sklearn_data(name, n=None, p=6):
    """(X, y) that needs no download: the first ``n`` rows of scikit-learn's bundled diabetes data
    (442 x 10), or a Friedman #1 sample of ``n`` rows (300 when None) and ``p`` >= 5 features
    (noise 0.5; the features after the fifth are pure noise)."""
    from sklearn.datasets import load_diabetes, make_friedman1

    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        return X[:n], y[:n]
    if name == "friedman":
        return make_friedman1(n_samples=n or 300, n_features=p, noise=0.5, random_state=0)
    raise ValueError(f"sklearn_data: unknown name {name!r} (diabetes or friedman)")


def random_tree_problem(rng, depth, n=60, p=3):
    from srtopt.models.srt import SRTProblem
    from srtopt.tree import Tree

    tree = Tree(depth)
    X, y = rng.random((n, p)), rng.standard_normal(n)
    omega = 2 * rng.standard_normal((tree.n_branch, p + 1))
    beta = rng.standard_normal((tree.n_leaves, p + 1))
    return SRTProblem(X, y, tree, mu=1.3, lambda_w=0.05, lambda_b=0.02), omega, beta


def load_frame(slug):
    """(X as a DataFrame with the CSV's feature names, y) of a dataset in $SRTOPT_DATA (skips when absent)."""
    import pandas as pd

    load_csv(slug)  # skips the test when the file is missing
    frame = pd.read_csv(DATA / f"{slug}.csv")
    return frame.drop(columns="target"), frame["target"].to_numpy(dtype=float)


def pairwise(*factors, ids):
    """``pytest.param`` of every combination of the ``factors``' values (their product, in order),
    those outside a set that covers every pair of values of any two factors marked ``slow``: the quick
    loop runs each pair once (a handful of combinations), the full run all of them.  The covering set is
    chosen greedily (the combination that covers most pairs not yet covered, the first of equals), so it
    is the same at every run.  ``ids``: one list of names per factor."""
    combos = list(itertools.product(*(range(len(values)) for values in factors)))

    def pairs(combo):
        return {(i, combo[i], j, combo[j]) for i, j in itertools.combinations(range(len(combo)), 2)}

    uncovered, quick = set().union(*map(pairs, combos)), set()
    while uncovered:
        best = max(combos, key=lambda combo: len(pairs(combo) & uncovered))
        quick.add(best)
        uncovered -= pairs(best)
    return [pytest.param(*(values[k] for values, k in zip(factors, combo)),
                         id="-".join(names[k] for names, k in zip(ids, combo)),
                         marks=() if combo in quick else pytest.mark.slow)
            for combo in combos]


@pytest.fixture(autouse=True)
def _no_running_workers(monkeypatch):
    """Every test starts as a fresh process does: no search's workers running (srtopt.estimators.cv runs every
    round on them within WARM_SECONDS of a round that used them), so where a search's fits run does not hang on
    the tests before it (a monkeypatch reaches this process, not the workers)."""
    from srtopt.estimators import cv

    monkeypatch.setattr(cv._Workers, "last", -math.inf)
