"""BLAS threads and fit time: a default fit as a user runs it (no thread variable set: the
estimators limit BLAS to one thread inside ``fit``), against the same fit with
``OPENBLAS_NUM_THREADS=1`` set and against the fit without the library's limit (BLAS threads left
as they are).  Each variant runs in its own process (best of 3 fits after one warm-up fit);
scikit-learn's diabetes at depth 3, and Friedman #1 with 200,000 rows at depth 3 (the large-N
path: its matrix products are the largest a fit does).

    PYTHONPATH=. python benchmarks/perf/threads.py

``--smoke``: Friedman #1 with 500 rows alone.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from benchmarks.common import parse, pick, results, write_report

CHILD = r"""
import sys, time
import numpy as np
from sklearn.datasets import load_diabetes, make_friedman1
import srtopt.estimators.threads as threads
from srtopt import SoftRegressionTree
data, limited = sys.argv[1], sys.argv[2] == "1"
if not limited:  # the library's limit off: BLAS threads as the environment leaves them
    import srtopt.estimators.srt as srt
    srt.SoftRegressionTree.fit = srt.SoftRegressionTree.fit.__wrapped__
X, y = load_diabetes(return_X_y=True) if data == "diabetes" else make_friedman1(int(data.split("-")[1]), 10,
                                                                                 random_state=0)
fit = lambda: SoftRegressionTree(depth=3, random_state=0, max_iter=10 if data == "diabetes" else 2).fit(X, y)
fit()
times = []
for _ in range(3):
    start = time.perf_counter(); fit(); times.append(time.perf_counter() - start)
print(min(times))
"""


def run(data, limited, env_threads):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                            "MKL_NUM_THREADS")}
    if env_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = str(env_threads)
    out = subprocess.run([sys.executable, "-c", CHILD, data, "1" if limited else "0"], env=env, check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parse(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter), argv)
    lines = ["# BLAS threads", "", f"Command: `python benchmarks/perf/threads.py`; {os.cpu_count()} cores. Seconds of the "
             "best of 3 fits (after a warm-up fit), each variant in its own process.", "",
             "| data | as a user runs it (the library's limit) | OPENBLAS_NUM_THREADS=1 | no limit, threads as they are | "
             "limit / one thread | no limit / one thread |", "|---|---:|---:|---:|---:|---:|"]
    for data in pick(("diabetes", "friedman-200000"), ("friedman-500",)):
        user, one, free = run(data, True, None), run(data, True, 1), run(data, False, None)
        lines.append(f"| {data} | {user:.3f} | {one:.3f} | {free:.3f} | {user / one:.2f} | {free / one:.2f} |")
        print(lines[-1], flush=True)
    write_report(results() / "threads.md", lines)


if __name__ == "__main__":
    main()
