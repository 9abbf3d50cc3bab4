"""The runner and the results store: failures, resuming, parallel workers."""

from __future__ import annotations

import io
import json
import sqlite3

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from srtopt.experiments import (
    ResultStore,
    available_methods,
    build_grid,
    method_names,
    register_method,
    run_benchmark,
)


def _failing(depth, seed, **params):
    if seed == 1:
        raise RuntimeError(f"boom at seed {seed}")
    return DecisionTreeRegressor(max_depth=depth, random_state=seed)


def test_builtin_methods_are_registered():
    assert {"srt", "srt-l2", "orrt", "milo", "cart", "rf"} <= set(method_names())
    available = available_methods()
    assert {"cart", "rf"} <= set(available)
    for name, attr in (("srt", "SoftRegressionTree"), ("orrt", "ORRTRegressor"),
                       ("milo", "MILOTreeRegressor")):
        try:
            import srtopt

            importable = hasattr(srtopt, attr)
        except ImportError:
            importable = False
        assert (name in available) == importable


def test_failing_runs_are_stored_and_do_not_stop_the_others(data_home, isolated_methods, tmp_path):
    register_method("flaky", _failing)
    store = tmp_path / "f.db"
    result = run_benchmark(["yacht"], [2], ["flaky", "cart"], folds=4, seeds=3, store=store,
                           jobs=1, quiet=True, data_home=data_home)
    assert (result.total, result.ran, result.failed, result.skipped) == (24, 24, 4, 0)
    with ResultStore(store) as s:
        rows = s.rows()
    failed = [r for r in rows if r["status"] == "error"]
    assert len(rows) == 24 and len(failed) == 4
    assert all(r["method"] == "flaky" and r["seed"] == 1 for r in failed)
    assert all("RuntimeError: boom at seed 1" in r["error"] for r in failed)
    assert all(r["r2_test"] is None and r["seconds"] is None for r in failed)
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(r["error"] is None and np.isfinite(r["r2_test"]) and r["seconds"] > 0 for r in ok)
    versions = json.loads(rows[0]["versions"])
    assert {"python", "numpy", "scikit-learn", "srtopt"} <= set(versions)

    # running again skips everything, failures included ...
    again = run_benchmark(["yacht"], [2], ["flaky", "cart"], folds=4, seeds=3, store=store,
                          jobs=1, quiet=True, data_home=data_home)
    assert (again.ran, again.skipped) == (0, 24)
    # ... unless asked to retry them: the fixed method now succeeds
    register_method("flaky", lambda depth, seed, **p: DecisionTreeRegressor(max_depth=depth))
    retry = run_benchmark(["yacht"], [2], ["flaky", "cart"], folds=4, seeds=3, store=store,
                          jobs=1, quiet=True, data_home=data_home, retry_failed=True)
    assert (retry.ran, retry.failed, retry.skipped) == (4, 0, 20)
    with ResultStore(store) as s:
        assert s.count() == 24 and not s.keys(status="error")


def test_unknown_names_are_clear_errors(data_home, tmp_path):
    with pytest.raises(ValueError, match="unknown dataset 'boston'.*housing"):
        run_benchmark(["boston"], [2], ["cart"], store=tmp_path / "x.db", data_home=data_home)
    with pytest.raises(ValueError, match="unknown method 'xgb'.*cart"):
        run_benchmark(["yacht"], [2], ["xgb"], store=tmp_path / "x.db", data_home=data_home)
    with pytest.raises(ValueError, match="unknown backend .nope.; use one of loky, multiprocessing, threading, dask, ray"):
        run_benchmark(["yacht"], [2], ["cart"], backend="nope", store=tmp_path / "x.db",
                      data_home=data_home)
    assert not (tmp_path / "x.db").exists()


def test_store_rejects_duplicate_runs(tmp_path):
    grid = build_grid(["yacht"], [2], ["cart"], folds=2, seeds=1)
    with ResultStore(tmp_path / "d.db") as store:
        assert store.add(grid[0], {"status": "ok", "r2_test": 0.5}, {})
        assert not store.add(grid[0], {"status": "ok", "r2_test": 0.9}, {})
        assert store.count() == 1
    conn = sqlite3.connect(tmp_path / "d.db")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO runs (dataset, depth, method, params, n_folds, split_seed, fold, seed, "
            "status, versions, timestamp) VALUES ('yacht', 2, 'cart', '{}', 2, 0, 0, 0, 'ok', '{}', 'x')"
        )


def test_parallel_loky_workers_with_a_user_method(data_home, isolated_methods, tmp_path):
    """A closure registered in the parent runs in loky workers; results equal
    the sequential ones (the runner is deterministic given the seeds)."""
    depth_offset = 0

    def closure(depth, seed, **params):
        return DecisionTreeRegressor(max_depth=depth + depth_offset, random_state=seed)

    register_method("mine", closure)
    stream = io.StringIO()
    kwargs = dict(folds=4, seeds=2, data_home=data_home)
    par = run_benchmark(["yacht"], [2], ["mine", "cart"], store=tmp_path / "par.db", jobs=2,
                        stream=stream, **kwargs)
    seq = run_benchmark(["yacht"], [2], ["mine", "cart"], store=tmp_path / "seq.db", jobs=1,
                        quiet=True, **kwargs)
    assert par.ran == seq.ran == 16 and par.failed == 0
    key = lambda r: (r["method"], r["fold"], r["seed"])  # noqa: E731
    with ResultStore(tmp_path / "par.db") as a, ResultStore(tmp_path / "seq.db") as b:
        ra, rb = sorted(a.rows(), key=key), sorted(b.rows(), key=key)
    assert [key(r) for r in ra] == [key(r) for r in rb]
    assert [r["r2_test"] for r in ra] == [r["r2_test"] for r in rb]
    text = stream.getvalue()
    assert "\r" in text and "16/16 runs" in text and "ETA" in text and text.endswith("\n")
