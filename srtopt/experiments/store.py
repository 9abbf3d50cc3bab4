"""SQLite results store: one row per run, keyed by what identifies the run."""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable

from srtopt.experiments.protocol import RunSpec

__all__ = ["ResultStore", "KEY_COLUMNS"]

KEY_COLUMNS = ("dataset", "depth", "method", "params", "n_folds", "split_seed", "fold", "seed")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id         INTEGER PRIMARY KEY,
    dataset    TEXT    NOT NULL,
    depth      INTEGER NOT NULL,
    method     TEXT    NOT NULL,
    params     TEXT    NOT NULL,   -- canonical JSON of the method parameters
    n_folds    INTEGER NOT NULL,
    split_seed INTEGER NOT NULL,
    fold       INTEGER NOT NULL,
    seed       INTEGER NOT NULL,
    r2_train   REAL,
    r2_test    REAL,
    seconds    REAL,               -- fit only
    iterations INTEGER,            -- n_iter_ when the estimator has it
    status     TEXT    NOT NULL CHECK (status IN ('ok', 'error')),
    error      TEXT,
    n_train    INTEGER,
    n_test     INTEGER,
    versions   TEXT    NOT NULL,   -- JSON
    timestamp  TEXT    NOT NULL,   -- UTC, ISO 8601
    UNIQUE (dataset, depth, method, params, n_folds, split_seed, fold, seed)
);
"""


class ResultStore:
    """Append-only store of runs.  Each :meth:`add` is one transaction."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=60.0)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA synchronous=FULL")
        with self._conn:
            self._conn.executescript(_SCHEMA)

    # -- context manager --------------------------------------------------
    def close(self) -> None:
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- writing ------------------------------------------------------------
    def add(self, spec: RunSpec, result: dict[str, Any], versions: dict | str) -> bool:
        """Store one run; returns False when the run was already stored."""
        versions_text = versions if isinstance(versions, str) else json.dumps(versions, sort_keys=True)
        row = dict(zip(KEY_COLUMNS, spec.key))
        row.update({k: result.get(k) for k in (
            "r2_train", "r2_test", "seconds", "iterations", "status", "error", "n_train", "n_test")})
        row["versions"] = versions_text
        row["timestamp"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        columns = ", ".join(row)
        marks = ", ".join(f":{k}" for k in row)
        with self._conn:
            cursor = self._conn.execute(f"INSERT OR IGNORE INTO runs ({columns}) VALUES ({marks})", row)
        return cursor.rowcount == 1

    def delete_failed(self, specs: Iterable[RunSpec]) -> int:
        """Forget the failed runs among ``specs`` so they run again."""
        where = " AND ".join(f"{c} = ?" for c in KEY_COLUMNS)
        count = 0
        with self._conn:
            for spec in specs:
                count += self._conn.execute(
                    f"DELETE FROM runs WHERE status = 'error' AND {where}", spec.key
                ).rowcount
        return count

    # -- reading ------------------------------------------------------------
    def keys(self, status: str | None = None) -> set[tuple]:
        sql = f"SELECT {', '.join(KEY_COLUMNS)} FROM runs"
        args: tuple = ()
        if status is not None:
            sql += " WHERE status = ?"
            args = (status,)
        return {tuple(r) for r in self._conn.execute(sql, args)}

    def rows(self, status: str | None = None) -> list[dict]:
        sql = "SELECT * FROM runs"
        args: tuple = ()
        if status is not None:
            sql += " WHERE status = ?"
            args = (status,)
        return [dict(r) for r in self._conn.execute(sql + " ORDER BY id", args)]

    def count(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def dataframe(self, status: str | None = None):
        import pandas as pd

        return pd.DataFrame(self.rows(status))
