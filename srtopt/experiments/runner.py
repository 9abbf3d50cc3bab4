"""Run a grid of (dataset, depth, method, fold, seed) in parallel, resumably.

Runs execute in joblib workers (``backend="loky"`` by default; ``"dask"`` and
``"ray"`` when installed, see ``srtopt[distributed]``) and come back unordered
as they complete; the parent writes each one to the SQLite store at once, in
its own transaction.  Runs already in the store are skipped, so a killed
benchmark started again with the same arguments finishes the grid with no run
lost or duplicated (at most the runs in flight at the kill are redone).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import platform
import sys
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from srtopt.experiments.methods import get_method
from srtopt.experiments.protocol import RunSpec, canonical_params, execute_run
from srtopt.experiments.store import ResultStore

__all__ = ["BenchmarkResult", "build_grid", "package_versions", "run_benchmark"]


@dataclasses.dataclass
class BenchmarkResult:
    store: Path
    total: int  # runs in the grid
    skipped: int  # already stored before this call
    ran: int  # run and stored by this call
    failed: int  # of those, with status 'error'
    seconds: float


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
    """Every run of the grid, validated (unknown names raise ValueError)."""
    from srtopt.datasets import get_info

    for name in datasets:
        get_info(name)
    for name in methods:
        get_method(name)
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
                text = canonical_params(params.get(method))
                for fold in range(int(folds)):
                    for seed in dict.fromkeys(seed_list):
                        grid.append(RunSpec(dataset, depth, method, text, int(folds),
                                            int(split_seed), fold, seed))
    return grid


class _Progress:
    """One updating line on stderr: runs done / total, failures, ETA."""

    def __init__(self, total: int, skipped: int, stream, quiet: bool):
        self.total, self.skipped, self.stream, self.quiet = total, skipped, stream, quiet
        self.done = self.failed = 0
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
            f" ({self.skipped} stored before, {self.failed} failed)"
            f"  elapsed {self._clock(elapsed)}  ETA {eta} "
        )
        self.stream.write(line)
        self.stream.flush()

    def close(self) -> None:
        if not self.quiet:
            self.show(force=True)
            self.stream.write("\n")
            self.stream.flush()


@contextlib.contextmanager
def _backend(backend: str, jobs: int):
    from joblib import parallel_config

    client = None
    if backend == "dask":
        try:
            from distributed import Client, get_client
        except ImportError as exc:
            raise ValueError("backend 'dask' needs dask.distributed: pip install 'srtopt[distributed]'") from exc
        try:
            get_client()
        except ValueError:  # no client yet: a local cluster of `jobs` processes
            client = Client(n_workers=max(1, jobs), threads_per_worker=1, processes=True)
    elif backend == "ray":
        try:
            from ray.util.joblib import register_ray
        except ImportError as exc:
            raise ValueError("backend 'ray' needs ray: pip install ray") from exc
        register_ray()
    try:
        with parallel_config(backend=backend, n_jobs=jobs):
            yield
    finally:
        if client is not None:
            client.close()


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
) -> BenchmarkResult:
    """Run the grid (skipping runs already in ``store``) and store every run.

    ``seeds`` is a count (seeds 0..seeds-1) or an iterable of seeds; ``params``
    maps a method name to the keyword arguments of its factory.  Failed runs
    stay stored as failed; ``retry_failed=True`` runs them again.
    """
    from joblib import Parallel, delayed

    from srtopt.datasets import load

    started = time.perf_counter()
    grid = build_grid(datasets, depths, methods, folds=folds, seeds=seeds,
                      split_seed=split_seed, params=params)
    known_backends = {"loky", "threading", "multiprocessing", "sequential", "dask", "ray"}
    if backend not in known_backends:
        from joblib.parallel import BACKENDS

        if backend not in BACKENDS:
            raise ValueError(f"unknown joblib backend {backend!r}; use one of {', '.join(sorted(known_backends))}")
    for name in dict.fromkeys(datasets):  # fail early, in the parent, on a missing or bad file
        load(name, data_home)
    factories = {name: get_method(name) for name in methods}
    versions = json.dumps(package_versions(), sort_keys=True)
    jobs = int(jobs)

    with ResultStore(store) as results:
        if retry_failed:
            results.delete_failed(grid)
        stored = results.keys()
        pending = [spec for spec in grid if spec.key not in stored]
        progress = _Progress(len(grid), len(grid) - len(pending), stream or sys.stderr, quiet)
        ran = failed = 0
        if pending:
            progress.show(force=True)
            with _backend(backend, jobs):
                outputs = Parallel(n_jobs=jobs, return_as="generator_unordered")(
                    delayed(_run)(spec, factories[spec.method], data_home) for spec in pending
                )
                for spec, result in outputs:
                    results.add(spec, result, versions)
                    ran += 1
                    failed += result["status"] != "ok"
                    progress.update(result["status"] != "ok")
        progress.close()
    return BenchmarkResult(Path(store), len(grid), len(grid) - len(pending), ran, failed,
                           time.perf_counter() - started)


def _run(spec: RunSpec, factory, data_home):
    return spec, execute_run(spec, factory, data_home)
