"""The runner and the results store: failures, resuming, parallel workers."""

from __future__ import annotations

import io
import json
import os
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


def test_srt_methods_differ_only_in_their_fixed_parameters():
    from srtopt.experiments import get_method

    l2, cluster, plain = (get_method(name)(3, 7) for name in ("srt-l2", "srt-l2-cluster", "srt"))
    assert (l2.depth, l2.random_state, l2.regularization, l2.init) == (3, 7, "l2", "model-tree")
    assert (cluster.regularization, cluster.init, cluster.bn_solver) == ("l2", "cluster", "l-bfgs-b:tol=1e-9")
    assert (plain.regularization, plain.init) == (None, "model-tree")
    assert get_method("srt-l2-cluster")(2, 0, init="cart").init == "cart"  # run parameters win
    cv = get_method("srt-l2-cv")(3, 7, max_iter=4)
    assert (cv.estimator.depth, cv.estimator.random_state, cv.estimator.max_iter, cv.random_state) == (3, 7, 4, 7)
    assert (cv.depths, cv.split_weights, cv.rule) == (None, (0.3, 1.0, 10.0), "best")
    search = get_method("srt-cv")(3, 7, cv=3)
    assert (search.depths, search.cv, search.random_state) == ((1, 2, 3, 4, 5), 3, 7)


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


# ---- every advertised backend, end to end ------------------------------------

def _needs(module, reason):
    import importlib.util

    return pytest.mark.skipif(importlib.util.find_spec(module) is None, reason=reason)


@pytest.mark.parametrize("backend", [
    "loky", "multiprocessing", "threading",
    # a local cluster of worker processes: 7 s of CPU and 10 s on a loaded 2-core machine
    pytest.param("dask", marks=[pytest.mark.slow, _needs("distributed", "dask.distributed is not installed "
                                                                        "(pip install 'srtopt[distributed]')")]),
    pytest.param("ray", marks=[pytest.mark.slow, _needs("ray", "ray is not installed (pip install 'srtopt[ray]')")]),
])
def test_every_advertised_backend_runs_the_grid(backend, data_home, isolated_methods, tmp_path):
    """Two workers, a closure registered in the parent and a built-in method; the stored
    results equal a sequential run's."""
    from srtopt.experiments.runner import BACKENDS

    assert backend in BACKENDS
    offset = 0

    def closure(depth, seed, **params):
        return DecisionTreeRegressor(max_depth=depth + offset, random_state=seed)

    register_method("mine", closure)
    kwargs = dict(folds=2, seeds=2, data_home=data_home, quiet=True)
    result = run_benchmark(["yacht"], [2], ["mine", "cart"], store=tmp_path / "b.db", jobs=2,
                           backend=backend, **kwargs)
    run_benchmark(["yacht"], [2], ["mine", "cart"], store=tmp_path / "s.db", jobs=1, **kwargs)
    assert (result.ran, result.failed, result.elsewhere) == (8, 0, 0)
    key = lambda r: (r["method"], r["fold"], r["seed"])  # noqa: E731
    with ResultStore(tmp_path / "b.db") as a, ResultStore(tmp_path / "s.db") as b:
        ra, rb = sorted(a.rows(), key=key), sorted(b.rows(), key=key)
    assert [(key(r), r["r2_test"]) for r in ra] == [(key(r), r["r2_test"]) for r in rb]


def test_help_advertises_exactly_the_tested_backends(capsys):
    from srtopt.cli import main
    from srtopt.experiments.runner import BACKENDS

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "where the runs execute: loky, multiprocessing, threading, dask (pip install " \
           "'srtopt[distributed]'), ray (pip install 'srtopt[ray]'), or a joblib backend" in text
    assert list(BACKENDS) == ["loky", "multiprocessing", "threading", "dask", "ray"]


# ---- claims ----------------------------------------------------------------------

@pytest.mark.slow
def test_claims_are_exclusive_until_stored_expired_or_their_owner_is_gone(tmp_path):
    import socket
    import subprocess
    import sys
    import time

    spec = build_grid(["yacht"], [2], ["cart"], folds=2, seeds=1)[0]
    host = socket.gethostname()
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout.strip()
    with ResultStore(tmp_path / "c.db") as store:
        assert store.claim(spec, "otherhost:1:a", lease=0.5)
        assert not store.claim(spec, "me", lease=60) and store.claimed() == 1
        time.sleep(0.6)  # the other machine's lease lapses
        assert store.claim(spec, f"{host}:{os.getpid()}:x", lease=60)  # a live process of this host
        assert not store.claim(spec, "me", lease=60)
        store.release(f"{host}:{os.getpid()}:x")
        assert store.claim(spec, f"{host}:{finished}:y", lease=60)  # a process that has ended
        assert store.claim(spec, "me", lease=60) and store.claimed() == 1
        assert store.add(spec, {"status": "ok", "r2_test": 0.5}, {}) and store.claimed() == 0
        assert not store.claim(spec, "someone", lease=60)  # stored runs are never claimed again


def test_runs_claimed_by_another_runner_are_left_to_it(data_home, tmp_path, monkeypatch):
    """Claims of another machine are skipped while their lease lives, taken after it lapses.  The
    store's clock is stopped and moved by the test: the first run cannot outlast the lease on a
    loaded machine."""
    from srtopt.experiments import store as store_module

    from ..conftest import StoppedClock

    clock = StoppedClock()
    monkeypatch.setattr(store_module, "time", clock)
    grid = build_grid(["yacht"], [2], ["cart"], folds=4, seeds=2)
    with ResultStore(tmp_path / "c.db") as store:
        for spec in grid[:3]:
            assert store.claim(spec, "otherhost:42:abcd", lease=1.5)
    kwargs = dict(folds=4, seeds=2, store=tmp_path / "c.db", data_home=data_home, quiet=True)
    first = run_benchmark(["yacht"], [2], ["cart"], **kwargs)
    assert (first.ran, first.elsewhere, first.skipped) == (5, 3, 0)
    clock.advance(1.6)
    second = run_benchmark(["yacht"], [2], ["cart"], **kwargs)
    assert (second.ran, second.elsewhere, second.skipped) == (3, 0, 5)


def test_store_that_is_not_an_srtopt_store_is_refused(tmp_path):
    (tmp_path / "text.db").write_text("just text, not SQLite\n" * 100)
    with pytest.raises(ValueError, match=r"text\.db is not a results store \(an SQLite file written by "
                                         r"'srtopt bench'\): file is not a database"):
        ResultStore(tmp_path / "text.db")
    conn = sqlite3.connect(tmp_path / "other.db")
    conn.execute("CREATE TABLE runs (name TEXT, when_ TEXT)")
    conn.commit()
    conn.close()
    for readonly in (False, True):
        with pytest.raises(ValueError, match=r"other\.db has a table 'runs' that srtopt did not write "
                                             r"\(columns name, when_\); use another store file"):
            ResultStore(tmp_path / "other.db", readonly=readonly)


def _nap(seconds):
    import time
    time.sleep(seconds)
    return seconds


def test_stopping_early_cancels_joblib_runs_without_a_warning(recwarn):
    """Ctrl-C in the middle of a grid closes joblib's generator with runs in flight: the runner
    says once that the store keeps what finished, joblib's cancellation warning is not shown."""
    from joblib import Parallel, delayed

    from srtopt.experiments.runner import _closed_quietly

    runs = _closed_quietly(Parallel(n_jobs=2, backend="threading", return_as="generator_unordered",
                                    batch_size=1)(delayed(_nap)(s) for s in (0.0, 0.5, 0.5, 0.5)))
    assert next(runs) == 0.0
    runs.close()
    assert [str(w.message) for w in recwarn] == []
    bare = Parallel(n_jobs=2, backend="threading", return_as="generator_unordered",
                    batch_size=1)(delayed(_nap)(s) for s in (0.0, 0.5, 0.5, 0.5))
    assert next(bare) == 0.0
    with pytest.warns(UserWarning, match="cancelled"):  # what the wrapper keeps from the user
        bare.close()


# ---- tasks ----------------------------------------------------------------------

def test_a_grid_is_of_one_task():
    with pytest.raises(ValueError, match=r"the datasets mix tasks \(regression: yacht; classification: pima, "
                                         r"glass\): run each task in a bench of its own"):
        build_grid(["yacht", "pima", "glass"], [2], ["cart"])
    with pytest.raises(ValueError, match=r"method 'cart' is a regression method and the datasets are "
                                         r"classification datasets; classification methods: sct, sct-cv, cart-clf, "):
        build_grid(["pima"], [2], ["cart"])
    with pytest.raises(ValueError, match="method 'rf-clf' is a classification method and the datasets are "
                                         "regression datasets"):
        build_grid(["yacht"], [2], ["rf-clf"])


def test_depth_free_methods_run_once_at_depth_0():
    grid = build_grid(["pima", "glass"], [3, 2, 4], ["cart-clf", "rf-clf", "logreg-clf"], folds=2, seeds=1)
    runs = {(s.dataset, s.depth, s.method) for s in grid}
    assert len(grid) == len(runs) * 2
    assert {(d, m) for _, d, m in runs} == {(3, "cart-clf"), (2, "cart-clf"), (4, "cart-clf"),
                                            (0, "rf-clf"), (0, "logreg-clf")}
    assert [(s.depth, s.method) for s in grid if s.dataset == "pima" and s.fold == 0] == [
        (3, "cart-clf"), (0, "rf-clf"), (0, "logreg-clf"), (2, "cart-clf"), (4, "cart-clf")]


@pytest.mark.filterwarnings("ignore:The least populated class:UserWarning")
def test_classification_bench_matches_a_direct_computation_and_resumes(class_data_home, tmp_path):
    from sklearn.model_selection import StratifiedKFold
    from sklearn.tree import DecisionTreeClassifier

    from srtopt.datasets import load

    store = tmp_path / "c.db"
    args = dict(folds=4, seeds=1, split_seed=0, store=store, jobs=1, quiet=True, data_home=class_data_home)
    result = run_benchmark(["bupa", "ecoli"], [2], ["cart-clf", "logreg-clf"], **args)
    assert (result.total, result.ran, result.failed) == (16, 16, 0)
    with ResultStore(store) as results:
        rows = {(r["dataset"], r["depth"], r["method"], r["fold"]): r for r in results.rows()}
    X, y, _ = load("ecoli", class_data_home)
    for fold, (train, test) in enumerate(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y)):
        tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X[train], y[train])
        row = rows["ecoli", 2, "cart-clf", fold]
        assert row["accuracy_test"] == np.mean(tree.predict(X[test]) == y[test])
        assert row["leaves"] == tree.get_n_leaves() and row["r2_test"] is None
        assert rows["ecoli", 0, "logreg-clf", fold]["leaves"] is None
    again = run_benchmark(["bupa", "ecoli"], [2, 3], ["cart-clf", "logreg-clf"], **args)
    assert (again.total, again.skipped, again.ran) == (24, 16, 8)  # only cart-clf at depth 3 is new


def test_a_store_without_the_classification_columns_is_read_and_upgraded(tmp_path):
    from srtopt.experiments.store import _SCHEMA

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    old = _SCHEMA
    for line in ("    accuracy_train REAL,           -- classification runs\n", "    accuracy_test  REAL,\n",
                 "    log_loss_test  REAL,\n", "    leaves     INTEGER,            -- of a tree classifier\n"):
        assert line in old
        old = old.replace(line, "")
    conn.executescript(old)
    conn.execute("INSERT INTO runs (dataset, depth, method, params, n_folds, split_seed, fold, seed, r2_test, status,"
                 " versions, timestamp) VALUES ('yacht', 2, 'cart', '{}', 4, 0, 0, 0, 0.5, 'ok', '{}', 'now')")
    conn.commit()
    conn.close()
    with ResultStore(path, readonly=True) as store:
        frame = store.dataframe()
        assert "leaves" not in frame and frame["r2_test"].tolist() == [0.5]
    with ResultStore(path) as store:
        frame = store.dataframe()
        assert frame["leaves"].isna().all() and frame["r2_test"].tolist() == [0.5]
    with ResultStore(path) as store:  # opened again: nothing left to add
        assert store.count() == 1
