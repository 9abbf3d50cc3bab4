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

from srtopt.experiments import build_grid

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
    isolated_methods.register_method("slow", lambda depth, seed, **p: None)  # for build_grid
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
