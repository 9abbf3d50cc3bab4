"""SQLite results store: one row per run, keyed by what identifies the run, and the
claims of the runs in progress.

A runner claims a run before it starts it: a row of ``claims`` with its owner
(``host:pid:token``) and a lease that the owner renews while it works.  A claim
is free again once its lease has expired, or at once when its owner was a
process of this host that no longer exists; so concurrent runners, on one
machine or several sharing the file, split the grid, and the runs of a runner
that died are taken over.  Storing a run deletes its claim in the same
transaction.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from srtopt.experiments.protocol import RunSpec

__all__ = ["ResultStore", "KEY_COLUMNS"]

KEY_COLUMNS = ("dataset", "depth", "method", "params", "n_folds", "split_seed", "fold", "seed")
_KEY = ", ".join(KEY_COLUMNS)
_WHERE_KEY = " AND ".join(f"{c} = ?" for c in KEY_COLUMNS)

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
    accuracy_train REAL,           -- classification runs
    accuracy_test  REAL,
    log_loss_test  REAL,
    leaves     INTEGER,            -- of a tree classifier
    versions   TEXT    NOT NULL,   -- JSON
    timestamp  TEXT    NOT NULL,   -- UTC, ISO 8601
    UNIQUE (dataset, depth, method, params, n_folds, split_seed, fold, seed)
);
CREATE TABLE IF NOT EXISTS claims (
    dataset    TEXT    NOT NULL,
    depth      INTEGER NOT NULL,
    method     TEXT    NOT NULL,
    params     TEXT    NOT NULL,
    n_folds    INTEGER NOT NULL,
    split_seed INTEGER NOT NULL,
    fold       INTEGER NOT NULL,
    seed       INTEGER NOT NULL,
    owner      TEXT    NOT NULL,   -- host:pid:token of the runner
    expires    REAL    NOT NULL,   -- Unix time when the lease lapses unless renewed
    PRIMARY KEY (dataset, depth, method, params, n_folds, split_seed, fold, seed)
);
"""
#: the result columns of a classification run, added to a store of an srtopt without them when it is
#: opened for writing (such a store is read as it is)
_CLASSIFICATION_COLUMNS = {"accuracy_train": "REAL", "accuracy_test": "REAL", "log_loss_test": "REAL",
                           "leaves": "INTEGER"}
_RESULT_COLUMNS = ("r2_train", "r2_test", "seconds", "iterations", "status", "error", "n_train", "n_test",
                   *_CLASSIFICATION_COLUMNS)
_COLUMNS = {"runs": {"id", *KEY_COLUMNS, *_RESULT_COLUMNS, "versions", "timestamp"},
            "claims": {*KEY_COLUMNS, "owner", "expires"}}


def new_owner() -> str:
    """A claim owner for this process: ``host:pid:token``."""
    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"


def _owner_gone(owner: str) -> bool:
    """True when ``owner`` was a process of this host that no longer exists."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        pass
    return False


class ResultStore:
    """Append-only store of runs.  Each :meth:`add` is one transaction.

    ``readonly=True`` opens an existing store without changing it (reports).
    A file that is not an SQLite database, or holds tables of the same names
    that srtopt did not write, raises ValueError.  The methods may be called
    from several threads.

    Parameters
    ----------
    path : str or path-like
        The SQLite file; created, with its parent directories, unless ``readonly``.
    readonly : bool, default=False
        Whether to open an existing store read-only (it must hold a table ``runs``).

    Raises
    ------
    ValueError
        If the file cannot be opened (e.g. it does not exist and ``readonly``), is not an SQLite database,
        lacks the ``runs`` table when ``readonly``, or holds tables of srtopt's names with other columns.
    """

    def __init__(self, path: str | Path, readonly: bool = False):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            if readonly:
                self._conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                             timeout=60.0, check_same_thread=False)
            else:
                if self.path.parent and not self.path.parent.exists():
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                self._conn = sqlite3.connect(str(self.path), timeout=60.0, check_same_thread=False)
        except sqlite3.Error as exc:
            raise ValueError(f"cannot open the results store {self.path}: {exc}") from None
        self._conn.row_factory = sqlite3.Row
        try:
            self._check_tables(require_runs=readonly)  # before anything is written to the file
            if not readonly:
                self._conn.execute("PRAGMA synchronous=FULL")
                with self._conn:
                    self._conn.executescript(_SCHEMA)
                    for column, kind in self._missing.items():
                        self._conn.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")
                self._has_claims = True
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise ValueError(f"{self.path} is not a results store (an SQLite file written by "
                             f"'srtopt bench'): {exc}; if it is one that was truncated or damaged, "
                             f"'sqlite3 {self.path} .recover' may save its runs into a new file; else "
                             f"move it away and run the bench again (it starts a new store)") from None
        except ValueError:
            self._conn.close()
            raise

    def _check_tables(self, require_runs: bool) -> None:
        """The tables srtopt uses, where they exist, have exactly its columns (a store of an
        srtopt without claims or without the classification columns is read, and given them when
        opened for writing)."""
        tables = {table: {row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")}
                  for table in _COLUMNS}
        if require_runs and not tables["runs"]:
            raise ValueError(f"{self.path} holds no srtopt results (no table 'runs')")
        self._missing = {}
        if tables["runs"] == _COLUMNS["runs"] - set(_CLASSIFICATION_COLUMNS):
            self._missing = dict(_CLASSIFICATION_COLUMNS)
            tables["runs"] = _COLUMNS["runs"]
        for table, columns in tables.items():
            if columns and columns != _COLUMNS[table]:
                raise ValueError(f"{self.path} has a table {table!r} that srtopt did not write (columns "
                                 f"{', '.join(sorted(columns))}); use another store file")
        self._has_claims = bool(tables["claims"])

    # -- context manager --------------------------------------------------
    def close(self) -> None:
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- writing ------------------------------------------------------------
    def add(self, spec: RunSpec, result: dict[str, Any], versions: dict | str) -> bool:
        """Store one run and drop its claim; returns False when the run was already stored."""
        versions_text = versions if isinstance(versions, str) else json.dumps(versions, sort_keys=True)
        row = dict(zip(KEY_COLUMNS, spec.key))
        row.update({k: result.get(k) for k in _RESULT_COLUMNS})
        row["versions"] = versions_text
        row["timestamp"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        columns = ", ".join(row)
        marks = ", ".join(f":{k}" for k in row)
        with self._lock, self._conn:
            cursor = self._conn.execute(f"INSERT OR IGNORE INTO runs ({columns}) VALUES ({marks})", row)
            self._conn.execute(f"DELETE FROM claims WHERE {_WHERE_KEY}", spec.key)
        return cursor.rowcount == 1

    def delete_failed(self, specs: Iterable[RunSpec]) -> int:
        """Forget the failed runs among ``specs`` so they run again."""
        count = 0
        with self._lock, self._conn:
            for spec in specs:
                count += self._conn.execute(
                    f"DELETE FROM runs WHERE status = 'error' AND {_WHERE_KEY}", spec.key
                ).rowcount
        return count

    # -- claims -------------------------------------------------------------
    def claim(self, spec: RunSpec, owner: str, lease: float) -> bool:
        """Claim ``spec`` for ``owner`` for ``lease`` seconds; False when it is stored or
        another owner's claim on it is alive."""
        now = time.time()
        with self._lock, self._conn:
            self._conn.execute("BEGIN IMMEDIATE")  # check and claim as one step
            if self._conn.execute(f"SELECT 1 FROM runs WHERE {_WHERE_KEY}", spec.key).fetchone():
                return False
            held = self._conn.execute(f"SELECT owner, expires FROM claims WHERE {_WHERE_KEY}",
                                      spec.key).fetchone()
            if held is not None:
                if held["owner"] != owner and held["expires"] >= now and not _owner_gone(held["owner"]):
                    return False
                self._conn.execute(f"DELETE FROM claims WHERE {_WHERE_KEY}", spec.key)
            self._conn.execute(f"INSERT INTO claims ({_KEY}, owner, expires) VALUES "
                               f"({', '.join('?' * len(KEY_COLUMNS))}, ?, ?)", (*spec.key, owner, now + lease))
        return True

    def renew(self, owner: str, lease: float) -> None:
        """Extend every claim of ``owner`` to ``lease`` seconds from now."""
        with self._lock, self._conn:
            self._conn.execute("UPDATE claims SET expires = ? WHERE owner = ?", (time.time() + lease, owner))

    def release(self, owner: str) -> None:
        """Drop every claim of ``owner`` (its runs that were not stored become free)."""
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM claims WHERE owner = ?", (owner,))

    def claimed(self) -> int:
        """Runs claimed now (live leases of existing owners) and not stored yet."""
        if not self._has_claims:
            return 0
        with self._lock:
            rows = self._conn.execute("SELECT owner FROM claims WHERE expires >= ?", (time.time(),)).fetchall()
        return sum(not _owner_gone(row["owner"]) for row in rows)

    # -- reading ------------------------------------------------------------
    def keys(self, status: str | None = None) -> set[tuple]:
        sql = f"SELECT {_KEY} FROM runs"
        args: tuple = ()
        if status is not None:
            sql += " WHERE status = ?"
            args = (status,)
        with self._lock:
            return {tuple(r) for r in self._conn.execute(sql, args)}

    def rows(self, status: str | None = None) -> list[dict]:
        sql = "SELECT * FROM runs"
        args: tuple = ()
        if status is not None:
            sql += " WHERE status = ?"
            args = (status,)
        with self._lock:
            return [dict(r) for r in self._conn.execute(sql + " ORDER BY id", args)]

    def count(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def dataframe(self, status: str | None = None):
        import pandas as pd

        return pd.DataFrame(self.rows(status))
