"""The resumable store of the long benchmarks: one JSON line per finished run, appended as it ends, so an
interrupted benchmark picks up where it stopped."""

from __future__ import annotations

import json
from pathlib import Path

from . import pick


def stored(store) -> list[dict]:
    """The runs of a JSON-lines store (none when it does not exist yet)."""
    store = Path(store)
    return [json.loads(line) for line in store.open() if line.strip()] if store.exists() else []


def run_into_store(store, run, tasks, key, jobs, describe=None) -> None:
    """``run(*task)`` for every task not yet in ``store`` (a stored row stands for the task
    ``key(row)``) on ``jobs`` processes (one in smoke mode), each row appended to ``store`` (one JSON
    line, flushed) as it finishes, so an interrupted benchmark resumes; ``describe(row)``: a progress
    line per run (default: a count every 50 runs)."""
    from joblib import Parallel, delayed

    store = Path(store)
    done = {key(row) for row in stored(store)}
    tasks = [task for task in tasks if task not in done]
    print(f"{len(tasks)} runs to do", flush=True)
    store.parent.mkdir(parents=True, exist_ok=True)
    with store.open("a") as out:
        for i, row in enumerate(Parallel(n_jobs=pick(jobs, 1), return_as="generator_unordered")(
                delayed(run)(*task) for task in tasks), 1):
            out.write(json.dumps(row) + "\n")
            out.flush()
            if describe is not None:
                print(f"[{i}/{len(tasks)}] {describe(row)}", flush=True)
            elif i % 50 == 0:
                print(f"{i}/{len(tasks)}", flush=True)
