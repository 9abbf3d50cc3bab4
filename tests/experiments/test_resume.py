"""A benchmark killed with SIGKILL resumes: exactly one row per run at the end."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from srtopt.experiments import build_grid

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

PLUGIN = textwrap.dedent(
    """
    import time

    from sklearn.tree import DecisionTreeRegressor

    from srtopt.experiments import register_method


    class SlowTree(DecisionTreeRegressor):
        def fit(self, X, y, sample_weight=None, check_input=True):
            time.sleep(0.1)
            return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


    def slow(depth, seed, **params):
        return SlowTree(max_depth=depth, random_state=seed)


    register_method("slow", slow)
    """
)


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet
        return 0
    finally:
        conn.close()


def _rows(db: Path):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT id, dataset, depth, method, params, n_folds, split_seed, fold, seed, "
            "r2_test, status, timestamp FROM runs ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def test_sigkill_then_rerun_completes_the_grid_exactly_once(data_home, tmp_path, isolated_methods, monkeypatch):
    (tmp_path / "slowplug.py").write_text(PLUGIN)
    db = tmp_path / "bench.db"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path)]),
               SRTOPT_DATA=str(data_home))
    args = [sys.executable, "-m", "srtopt", "bench", "--plugin", "slowplug", "--datasets", "yacht",
            "--depths", "2", "--methods", "slow", "cart", "--folds", "4", "--seeds", "10",
            "--store", str(db), "--data-home", str(data_home), "--quiet"]
    from sklearn.tree import DecisionTreeRegressor

    # the plugin may be imported already (then it registers nothing): the same method, without the sleep
    isolated_methods.register_method("slow", lambda depth, seed, **p: DecisionTreeRegressor(max_depth=depth))  # for build_grid
    grid = {spec.key for spec in build_grid(["yacht"], [2], ["slow", "cart"], folds=4, seeds=10)}
    assert len(grid) == 80

    proc = subprocess.Popen(args + ["--jobs", "2"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _count(db) < 10:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no rows stored in time"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its loky workers
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = _rows(db)
    assert 10 <= len(before) < 80, "the kill must interrupt the grid"

    # the same command again, run in-process (starting Python again is slow here)
    from srtopt.cli import main

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(args[3:] + ["--jobs", "1"]) == 0
    after = _rows(db)
    keys = [tuple(r[1:9]) for r in after]
    assert len(after) == 80 and len(set(keys)) == 80 and set(keys) == grid
    assert all(r[10] == "ok" for r in after)
    assert after[: len(before)] == before  # nothing stored before the kill was redone

    assert main(args[3:] + ["--jobs", "1"]) == 0  # a complete grid: nothing to do
    assert _rows(db) == after


def _bench(tmp_path, data_home, *extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path)]),
               SRTOPT_DATA=str(data_home))
    args = [sys.executable, "-m", "srtopt", "bench", "--plugin", "slowplug", "--datasets", "yacht",
            "--depths", "2", "--methods", "slow", "--folds", "4", "--seeds", "10",
            "--store", str(tmp_path / "bench.db"), "--data-home", str(data_home), *extra]
    return subprocess.Popen(args, env=env, cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def _wait_for_rows(db, n, proc):
    deadline = time.monotonic() + 120
    while _count(db) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no rows stored in time"
        time.sleep(0.05)


def test_ctrl_c_prints_one_line_and_the_store_resumes(data_home, tmp_path, isolated_methods, monkeypatch):
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it."""
    (tmp_path / "slowplug.py").write_text(PLUGIN)
    proc = _bench(tmp_path, data_home, "--jobs", "2", "--quiet")
    try:
        _wait_for_rows(tmp_path / "bench.db", 6, proc)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130 and out == ""
    assert err == ("srtopt bench: interrupted; the runs stored so far are kept: the same command "
                   "finishes the grid\n")
    before = _rows(tmp_path / "bench.db")
    assert 6 <= len(before) < 40
    conn = sqlite3.connect(tmp_path / "bench.db")
    assert conn.execute("SELECT COUNT(*) FROM claims").fetchone() == (0,)  # released on the way out
    conn.close()

    from srtopt.cli import main

    from sklearn.tree import DecisionTreeRegressor

    # the plugin may be imported already (then it registers nothing): the same method, without the sleep
    isolated_methods.register_method("slow", lambda depth, seed, **p: DecisionTreeRegressor(max_depth=depth))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--plugin", "slowplug", "--datasets", "yacht", "--depths", "2", "--methods",
                 "slow", "--folds", "4", "--seeds", "10", "--store", str(tmp_path / "bench.db"),
                 "--data-home", str(data_home), "--quiet"]) == 0
    after = _rows(tmp_path / "bench.db")
    assert len(after) == 40 and len({r[1:9] for r in after}) == 40 and after[:len(before)] == before


LOGGING_PLUGIN = PLUGIN.replace("time.sleep(0.1)", "time.sleep(0.3); open('fits.log', 'a').write('fit\\n')")


def test_concurrent_runners_split_the_grid(data_home, tmp_path):
    """Two 'srtopt bench' on one store: every run is computed once, by one of them."""
    assert "fits.log" in LOGGING_PLUGIN
    (tmp_path / "slowplug.py").write_text(LOGGING_PLUGIN)
    procs = [_bench(tmp_path, data_home, "--jobs", "1") for _ in range(2)]
    try:
        outputs = [proc.communicate(timeout=300) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    rows = _rows(tmp_path / "bench.db")
    assert len(rows) == 40 and len({r[1:9] for r in rows}) == 40 and all(r[10] == "ok" for r in rows)
    assert len((tmp_path / "fits.log").read_text().splitlines()) == 40  # no run computed twice
    import re

    ran = []
    for _, err in outputs:
        summary = re.search(r"40 runs in the grid: (\d+) already stored, (\d+) run now \(0 failed\)"
                            r"(?:, (\d+) taken by other runners)?", err)
        assert summary, err
        ran.append(int(summary.group(2)))
    assert sum(ran) == 40 and min(ran) > 0, ran


def _children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(entry))
    return out


def _alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the workers")
@pytest.mark.parametrize("backend", ["loky", "multiprocessing"])
def test_workers_exit_soon_after_the_runner_is_killed(backend, data_home, tmp_path):
    (tmp_path / "slowplug.py").write_text(PLUGIN)
    proc = _bench(tmp_path, data_home, "--jobs", "2", "--quiet", "--backend", backend)
    workers = []
    try:
        _wait_for_rows(tmp_path / "bench.db", 4, proc)
        workers = _children(proc.pid)
        assert len(workers) >= 2
        proc.kill()  # the runner alone, not its process group
        proc.wait()
        deadline = time.monotonic() + 10
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [w for w in workers if _alive(w)], "workers outlived the runner by 10 s"
    finally:
        for pid in [proc.pid] + [w for w in workers if _alive(w)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.communicate()
