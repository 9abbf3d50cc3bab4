"""Run a grid of (dataset, depth, method, fold, seed) in parallel, resumably.

Runs execute in worker processes (``BACKENDS``: joblib's loky, the default,
and threading; a multiprocessing pool; a Dask cluster, ``srtopt[distributed]``;
a Ray pool, ``srtopt[ray]``) and come back unordered as they complete; the
parent writes each one to the SQLite store at once, in its own transaction.
Runs already in the store are skipped, so a killed benchmark started again
with the same arguments finishes the grid with no run lost or duplicated (at
most the runs in flight at the kill are redone).  A run is claimed in the store
just before it is handed to a worker (see :mod:`srtopt.experiments.store`), so
concurrent benchmarks on one store split the grid instead of both running it.
Workers on this machine exit when the runner dies.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import platform
import queue
import signal
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from srtopt.experiments.methods import get_method, method_names, method_task, method_uses_depth
from srtopt.experiments.protocol import RunSpec, canonical_params, execute_run
from srtopt.experiments.store import ResultStore, new_owner

__all__ = ["BACKENDS", "BenchmarkResult", "build_grid", "grid_task", "package_versions", "run_benchmark"]

#: backend -> what it needs installed (every one is tested end to end)
BACKENDS = {"loky": "", "multiprocessing": "", "threading": "",
            "dask": "pip install 'srtopt[distributed]'", "ray": "pip install 'srtopt[ray]'"}


@dataclasses.dataclass
class BenchmarkResult:
    """What :func:`run_benchmark` did.

    Parameters
    ----------
    store : pathlib.Path
        The results store.
    total : int
        Runs in the grid.
    skipped : int
        Runs already stored before this call.
    ran : int
        Runs run and stored by this call.
    failed : int
        Of those, the runs with status "error".
    seconds : float
        Wall-clock seconds of the call.
    elsewhere : int, default=0
        Runs claimed or stored by other runners while this call ran.
    first_error : str or None, default=None
        The reason of this call's first failed run ("method on dataset: error").
    """

    store: Path
    total: int  # runs in the grid
    skipped: int  # already stored before this call
    ran: int  # run and stored by this call
    failed: int  # of those, with status 'error'
    seconds: float
    elsewhere: int = 0  # claimed or stored by other runners while this call ran
    first_error: str | None = None  # the reason of this call's first failed run


def package_versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in ("srtopt", "numpy", "scipy", "scikit-learn", "joblib", "pandas", "casadi", "pyomo"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    if "srtopt" not in out:
        out["srtopt"] = _source_version()
    return out


def _source_version() -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        import subprocess

        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=5,
        ).stdout.strip()
    except Exception:
        commit = ""
    return f"source+{commit}" if commit else "source"


def build_grid(
    datasets: Sequence[str],
    depths: Sequence[int],
    methods: Sequence[str],
    *,
    folds: int = 4,
    seeds: int | Iterable[int] = 20,
    split_seed: int = 0,
    params: Mapping[str, Mapping] | None = None,
) -> list[RunSpec]:
    """Every run of the grid, validated (unknown names raise ValueError).

    The datasets are of one task (regression or classification), and so are the methods.  A method
    registered with ``uses_depth=False`` runs once per fold and seed, at depth 0, whatever ``depths``.

    Parameters
    ----------
    datasets : sequence of str
        Dataset slugs (:data:`srtopt.datasets.DATASETS` or :data:`srtopt.datasets.CLASSIFICATION_DATASETS`) or
        file datasets' names (:func:`srtopt.datasets.file_dataset`).
    depths : sequence of int
        Tree depths, each >= 1.
    methods : sequence of str
        Registered method names (:mod:`srtopt.experiments.methods`) of the datasets' task.
    folds : int, default=4
        Number of KFold folds (>= 2); every fold is run.
    seeds : int or iterable of int, default=20
        A count (seeds 0..seeds-1) or the seeds themselves.
    split_seed : int, default=0
        ``random_state`` of the fold split, the same for every method and seed.
    params : mapping of str to mapping, or None, default=None
        Method name -> keyword arguments of its factory; only methods of ``methods``.

    Returns
    -------
    list of RunSpec
        One run per (dataset, depth, method, fold, seed), in that nesting order, duplicates dropped.

    Raises
    ------
    ValueError
        If a dataset or method is unknown, the datasets mix tasks, a method is of another task than the
        datasets, ``params`` names a method not in ``methods``, ``folds`` < 2, there are no seeds, or a
        depth is < 1.
    """
    task = grid_task(datasets)
    for name in methods:
        if method_task(name) != task:
            raise ValueError(f"method {name!r} is a {method_task(name)} method and the datasets are {task} "
                             f"datasets; {task} methods: {', '.join(method_names(task))}")
    params = dict(params or {})
    unknown = sorted(set(params) - set(methods))
    if unknown:
        raise ValueError(f"parameters given for methods not in the run: {', '.join(unknown)}")
    if int(folds) < 2:
        raise ValueError(f"folds must be at least 2, got {folds}")
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("no seeds")
    for depth in depths:
        if int(depth) < 1:
            raise ValueError(f"depth must be at least 1, got {depth}")
    grid = []
    for dataset in dict.fromkeys(datasets):
        for depth in dict.fromkeys(int(d) for d in depths):
            for method in dict.fromkeys(methods):
                run_depth = depth if method_uses_depth(method) else 0  # depth-free: once, at depth 0
                if run_depth == 0 and depth != int(depths[0]):
                    continue
                text = canonical_params(params.get(method))
                for fold in range(int(folds)):
                    for seed in dict.fromkeys(seed_list):
                        grid.append(RunSpec(dataset, run_depth, method, text, int(folds),
                                            int(split_seed), fold, seed))
    return grid


def grid_task(datasets: Sequence[str]) -> str:
    """The task ("regression" or "classification") of ``datasets``.

    Parameters
    ----------
    datasets : sequence of str
        Dataset slugs, at least one.

    Returns
    -------
    str
        Their common task.

    Raises
    ------
    ValueError
        If there is no dataset, one is unknown, or they are of different tasks.
    """
    from srtopt.datasets import get_info

    if not datasets:
        raise ValueError("no datasets")
    tasks = {}
    for name in datasets:
        tasks.setdefault(get_info(name).task, []).append(name)
    if len(tasks) > 1:
        raise ValueError("the datasets mix tasks (" + "; ".join(f"{t}: {', '.join(n)}" for t, n in tasks.items())
                         + "): run each task in a bench of its own")
    return next(iter(tasks))


class _Progress:
    """One updating line on stderr: runs done / total, failures, ETA."""

    def __init__(self, total: int, skipped: int, stream, quiet: bool):
        self.total, self.skipped, self.stream, self.quiet = total, skipped, stream, quiet
        self.done = self.failed = self.elsewhere = 0
        self.todo = total - skipped
        self.start = time.perf_counter()
        self._last = 0.0

    @staticmethod
    def _clock(seconds: float) -> str:
        seconds = int(round(seconds))
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"

    def update(self, failed: bool, force: bool = False) -> None:
        self.done += 1
        self.failed += int(failed)
        self.show(force or self.done == self.todo)

    def taken_elsewhere(self) -> None:
        """A run claimed or stored by another runner (called from a dispatching thread)."""
        self.elsewhere += 1
        self.todo -= 1

    def show(self, force: bool = False) -> None:
        if self.quiet:
            return
        now = time.perf_counter()
        if not force and now - self._last < 0.2:
            return
        self._last = now
        elapsed = now - self.start
        if self.done:
            eta = self._clock(elapsed / self.done * (self.todo - self.done))
        else:
            eta = "?"
        line = (
            f"\rbench: {self.skipped + self.done}/{self.total} runs"
            f" ({self.skipped} stored before, {self.failed} failed"
            f"{f', {self.elsewhere} by other runners' if self.elsewhere else ''})"
            f"  elapsed {self._clock(elapsed)}  ETA {eta} "
        )
        self.stream.write(line)
        self.stream.flush()

    def close(self) -> None:
        if not self.quiet:
            self.show(force=True)
            self.stream.write("\n")
            self.stream.flush()


def run_benchmark(
    datasets: Sequence[str],
    depths: Sequence[int],
    methods: Sequence[str],
    *,
    folds: int = 4,
    seeds: int | Iterable[int] = 20,
    split_seed: int = 0,
    params: Mapping[str, Mapping] | None = None,
    store: str | Path = "results.db",
    jobs: int = 1,
    backend: str = "loky",
    data_home=None,
    quiet: bool = False,
    retry_failed: bool = False,
    stream=None,
    lease: float = 60.0,
) -> BenchmarkResult:
    """Run the grid (skipping runs already in ``store``) and store every run.

    ``seeds`` is a count (seeds 0..seeds-1) or an iterable of seeds; ``params``
    maps a method name to the keyword arguments of its factory.  Failed runs
    stay stored as failed; ``retry_failed=True`` runs them again.  Each run is
    claimed for ``lease`` seconds, renewed while it runs; runs claimed by
    another live runner are left to it.

    Parameters
    ----------
    datasets : sequence of str
        Dataset slugs of one task (:data:`srtopt.datasets.DATASETS`, :data:`srtopt.datasets.CLASSIFICATION_DATASETS`)
        or file datasets' names (:func:`srtopt.datasets.file_dataset`).
    depths : sequence of int
        Tree depths, each >= 1.
    methods : sequence of str
        Registered method names (:mod:`srtopt.experiments.methods`).
    folds : int, default=4
        Number of KFold folds (>= 2); every fold is run.
    seeds : int or iterable of int, default=20
        A count (seeds 0..seeds-1) or the seeds themselves.
    split_seed : int, default=0
        ``random_state`` of the fold split, the same for every method and seed.
    params : mapping of str to mapping, or None, default=None
        Method name -> keyword arguments of its factory; only methods of ``methods``.
    store : str or path-like, default="results.db"
        The SQLite results store (created if needed).
    jobs : int, default=1
        Number of workers.
    backend : str, default="loky"
        A backend of ``BACKENDS`` ("loky", "multiprocessing", "threading", "dask", "ray") or another
        joblib backend.
    data_home : str, path-like or None, default=None
        Directory of the dataset files (:func:`srtopt.datasets.load`).
    quiet : bool, default=False
        Whether to hide the progress line.
    retry_failed : bool, default=False
        Whether the grid's runs stored as failed are run again.
    stream : text stream or None, default=None
        Where the progress line is written; None: ``sys.stderr``.
    lease : float, default=60.0
        Seconds a claim on a run lasts unless renewed (renewed every lease/3 seconds).

    Returns
    -------
    BenchmarkResult
        The counts of the grid's runs (skipped, run, failed, taken by other runners) and the seconds.

    Raises
    ------
    ValueError
        If the grid is invalid (see :func:`build_grid`), the backend is unknown or not installed, ``store``
        is not a results store, or a dataset file fails its checksum.
    FileNotFoundError
        If a dataset file is missing and cannot be downloaded (checked before any run).
    """
    from srtopt.datasets import load

    started = time.perf_counter()
    grid = build_grid(datasets, depths, methods, folds=folds, seeds=seeds,
                      split_seed=split_seed, params=params)
    _check_backend(backend)
    for name in dict.fromkeys(datasets):  # fail early, in the parent, on a missing or bad file
        load(name, data_home)
    factories = {name: get_method(name) for name in methods}
    versions = json.dumps(package_versions(), sort_keys=True)

    with ResultStore(store) as results:
        if retry_failed:
            results.delete_failed(grid)
        stored = results.keys()
        pending = [spec for spec in grid if spec.key not in stored]
        first_error = None
        progress = _Progress(len(grid), len(grid) - len(pending), stream or sys.stderr, quiet)
        try:
            if pending:
                progress.show(force=True)
                with _executor(backend, int(jobs), factories, data_home) as execute, \
                        _claims(results, lease) as owner:
                    def claimed():
                        for spec in pending:
                            if results.claim(spec, owner, lease):
                                yield spec
                            else:
                                progress.taken_elsewhere()

                    with contextlib.closing(execute(claimed())) as runs:  # closed now, also on Ctrl-C
                        for spec, result in runs:
                            results.add(spec, result, versions)
                            progress.update(result["status"] != "ok")
                            if result["status"] != "ok" and first_error is None:
                                first_error = (f"{spec.method} on {spec.dataset}: "
                                               f"{str(result['error']).splitlines()[0]}")
        finally:
            progress.close()
    return BenchmarkResult(Path(store), len(grid), len(grid) - len(pending), progress.done, progress.failed,
                           time.perf_counter() - started, progress.elsewhere, first_error)


def _check_backend(backend: str) -> None:
    from joblib.parallel import BACKENDS as JOBLIB_BACKENDS

    if backend not in BACKENDS and backend not in JOBLIB_BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")


@contextlib.contextmanager
def _claims(results: ResultStore, lease: float):
    """A claim owner for this call: a thread renews its leases every lease/3 seconds; its
    claims are dropped at the end (stored runs have lost theirs already), also on Ctrl-C."""
    owner, stop = new_owner(), threading.Event()

    def renew():
        while not stop.wait(lease / 3):
            results.renew(owner, lease)

    thread = threading.Thread(target=renew, name="srtopt-lease", daemon=True)
    thread.start()
    try:
        yield owner
    finally:
        stop.set()
        thread.join()
        results.release(owner)


@contextlib.contextmanager
def _executor(backend: str, jobs: int, factories, data_home):
    """``execute(specs)``: the (spec, result) of each run of the iterator ``specs`` as it
    completes.  ``specs`` is consumed only as workers become free (at most 2 * jobs runs
    ahead), so a run is claimed just before it starts."""
    if backend in ("multiprocessing", "ray"):
        def calls(specs):
            for spec in specs:
                if backend == "multiprocessing":  # forked workers look the method up in the registry
                    yield spec, None, data_home, os.getpid()  # they inherit (closures do not pickle)
                else:  # Ray pickles the factory itself
                    yield spec, factories[spec.method], data_home, None

        with _pool(backend, jobs) as pool:
            yield lambda specs: _pool_results(pool, jobs, calls(specs))
        return
    from joblib import Parallel, delayed, parallel_config

    parent = os.getpid() if backend == "loky" else None
    with _dask_client(backend, jobs), parallel_config(backend=backend, n_jobs=jobs):
        yield lambda specs: _closed_quietly(Parallel(n_jobs=jobs, return_as="generator_unordered", batch_size=1)(
            delayed(_run)(spec, factories[spec.method], data_home, parent) for spec in specs))


def _closed_quietly(results):
    """The items of joblib's result generator; when the caller stops early (Ctrl-C, an error),
    the generator is closed here without joblib's warning that it cancelled the runs in flight:
    the store keeps what finished and a rerun redoes those runs."""
    try:
        for item in results:
            yield item
    finally:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*(cancelled|not used)", category=UserWarning)
            results.close()


@contextlib.contextmanager
def _dask_client(backend: str, jobs: int):
    """For ``backend="dask"`` without a client: a local cluster of ``jobs`` processes."""
    if backend != "dask":
        yield
        return
    try:
        from distributed import Client, get_client
    except ImportError as exc:
        raise ValueError(f"backend 'dask' needs dask.distributed: {BACKENDS['dask']}") from exc
    try:
        get_client()
    except ValueError:
        with _sigint_ignored():  # by the cluster's processes: Ctrl-C is the runner's to handle
            client = Client(n_workers=max(1, jobs), threads_per_worker=1, processes=True,
                            silence_logs=logging.ERROR)
        with client:
            yield
        return
    yield


@contextlib.contextmanager
def _sigint_ignored():
    """SIGINT ignored meanwhile (in the main thread), so that the processes started now inherit it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _pool(backend: str, jobs: int):
    """A ``multiprocessing`` pool (forked, where possible) or a Ray pool (a local Ray instance
    is started, and stopped afterwards, unless Ray is running); terminated at the end."""
    if backend == "multiprocessing":
        import multiprocessing

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        with _sigint_ignored():  # by the workers: Ctrl-C is the runner's to handle
            pool = multiprocessing.get_context(method).Pool(jobs)
        with pool:
            yield pool
        return
    try:
        import ray
        from ray.util.multiprocessing import Pool
    except ImportError as exc:
        raise ValueError(f"backend 'ray' needs ray: {BACKENDS['ray']}") from exc
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        with Pool(processes=jobs) as pool:
            yield pool
    finally:
        if started:
            ray.shutdown()


def _pool_results(pool, jobs: int, calls):
    """Results of ``_run(*args)`` for each ``args`` of ``calls`` through ``pool.apply_async``,
    in completion order, with at most 2 * jobs calls in flight."""
    done = queue.SimpleQueue()

    def submit() -> int:
        args = next(calls, None)
        if args is None:
            return 0
        pool.apply_async(_run, args, callback=done.put, error_callback=done.put)
        return 1

    in_flight = sum(submit() for _ in range(2 * jobs))
    while in_flight:
        item = done.get()
        if isinstance(item, BaseException):
            raise item
        in_flight += submit() - 1
        yield item


def _run(spec: RunSpec, factory, data_home, parent: int | None):
    """One run in a worker.  ``factory`` None: look the method up; ``parent``: the runner's pid,
    for a worker process on this machine (see :func:`_follow`)."""
    if parent is not None and parent != os.getpid():
        _follow(parent)
    return spec, execute_run(spec, factory or get_method(spec.method), data_home)


_FOLLOWING = []


def _follow(parent: int) -> None:
    """Once per worker process: leave Ctrl-C to the runner (which stops the workers), and
    exit as soon as the runner is gone (its workers would otherwise live on: loky's idle
    workers wait minutes before they exit, multiprocessing's forever)."""
    if _FOLLOWING:
        return
    _FOLLOWING.append(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="srtopt-follow-runner", daemon=True).start()
