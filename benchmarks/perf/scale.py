"""How SRT training time and memory grow with N (synthetic Friedman #1, p = 10, depth 3, defaults).

    PYTHONPATH=. python benchmarks/perf/scale.py                      # N = 1e4, 1e5, 1e6
    PYTHONPATH=. python benchmarks/perf/scale.py --sizes 10000000     # the opt-in 1e7 run

Each size runs in its own process (so the peak RSS is that fit's): training data
from ``sklearn.datasets.make_friedman1(N, 10, noise=1)``, a test set of 10,000
rows, ``SoftRegressionTree(depth=3, random_state=0)`` with its defaults, one BLAS
thread.  Prints and writes ``benchmarks/results/scale.md`` (rows of earlier runs
of other sizes are kept): total fit seconds, seconds of the initialization,
seconds per macro iteration, peak RSS of the process, test R^2, and the growth
exponent of the per-macro time between consecutive sizes.  ``--smoke``: N = 1,000, its report in the smoke folder.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

from benchmarks.common import parse, results

HEADER = ("| N | fit s | init s | s per macro iteration | macro iterations | peak RSS GB | test R^2 | "
          "growth of s/macro vs previous N |")


def one_size(n: int) -> dict:
    """Fit at size n in this process; return the measurements."""
    import time

    from sklearn.datasets import make_friedman1
    from threadpoolctl import threadpool_limits

    from srtopt import SoftRegressionTree

    X, y = make_friedman1(n + 10_000, n_features=10, noise=1.0, random_state=0)
    marks = []
    model = SoftRegressionTree(depth=3, random_state=0, callbacks=[lambda record: marks.append(
        (record.macro, time.perf_counter()))])
    with threadpool_limits(1):
        start = time.perf_counter()
        model.fit(X[:n], y[:n])
        seconds = time.perf_counter() - start
    init = _init_seconds(model, start, marks)
    macros = model.n_iter_
    r2 = float(model.score(X[n:], y[n:]))
    rss = _peak_rss_gb()
    return dict(n=n, seconds=seconds, init=init, per_macro=(seconds - init) / max(macros, 1), macros=macros,
                rss=rss, r2=r2)


def _init_seconds(model, start, marks):
    """Seconds before the first inner iteration: initialization (and input checks)."""
    if not marks:
        return float("nan")
    first_record = model.history_[0]
    return marks[0][1] - start - first_record["seconds"]


def _peak_rss_gb() -> float:
    text = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", text).group(1)) / 2**20


def _read_rows() -> dict[int, dict]:
    """The measurements of the sizes already in the results file (kept when other sizes run)."""
    if not (results() / "scale.md").exists():
        return {}
    keys = ("n", "seconds", "init", "per_macro", "macros", "rss", "r2")
    rows = {}
    for line in (results() / "scale.md").read_text().splitlines():
        if re.match(r"\| [0-9,]+ \|", line):
            cells = [c.strip().replace(",", "") for c in line.strip("|").split("|")][:len(keys)]
            m = dict(zip(keys, map(float, cells)))
            m["n"], m["macros"] = int(m["n"]), int(m["macros"])
            rows[m["n"]] = m
    return rows


def _row(m: dict, previous: dict | None) -> str:
    growth = ""
    if previous is not None:
        growth = f"{math.log(m['per_macro'] / previous['per_macro']) / math.log(m['n'] / previous['n']):.2f}"
    return (f"| {m['n']:,} | {m['seconds']:.1f} | {m['init']:.1f} | {m['per_macro']:.2f} | {m['macros']} | "
            f"{m['rss']:.2f} | {m['r2']:.3f} | {growth} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process: one size
    args = parse(parser, argv, ["--sizes", "1000"])
    if args.one:
        print(json.dumps(one_size(args.one)))
        return 0
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    rows = _read_rows()
    for n in sorted(args.sizes):
        out = subprocess.run([sys.executable, __file__, "--one", str(n)], env=env, check=True,
                             capture_output=True, text=True)
        rows[n] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"N = {n:,}: {rows[n]['seconds']:.1f} s, peak RSS {rows[n]['rss']:.2f} GB", flush=True)
    sizes = sorted(rows)
    lines = [_row(rows[n], rows[sizes[i - 1]] if i else None) for i, n in enumerate(sizes)]
    table = "\n".join([HEADER, "|---:" * 8 + "|"] + lines)
    (results() / "scale.md").write_text("Command: `PYTHONPATH=. python benchmarks/perf/scale.py [--sizes ...]` (synthetic Friedman #1, "
                   "p = 10, depth 3, SoftRegressionTree defaults, one BLAS thread, 2-core machine)\n\n"
                   + table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
