"""time_limit as a wall-clock budget: each case in a fresh process, the seconds from ``fit``'s call
to its return (for the command line: from the command's start to its exit) against the bound
1.1 x time_limit + 1 s; and the seconds from a Ctrl-C (SIGINT) to the fit's KeyboardInterrupt
while IPOPT's solver for a wide ORRT is built, against 2 s.  Random data: y = x_0 + noise.

    PYTHONPATH=. python benchmarks/perf/time_limits.py
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import RESULTS, write_report

CHILD = r"""
import sys, time, warnings
import numpy as np
from srtopt import MILOTreeRegressor, ORRTRegressor, SoftRegressionTree
warnings.simplefilter("ignore")
kind, n, p, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
limit = None if sys.argv[5] == "none" else float(sys.argv[5])
rng = np.random.default_rng(0)
X = rng.normal(size=(n, p)); y = X[:, 0] + np.sin(X[:, 1 % p]) + 0.5 * rng.normal(size=n)
groups = (rng.random(n) < 0.3).astype(int)
model = {"srt": lambda: SoftRegressionTree(depth=depth, time_limit=limit),
         "srt-group-loss": lambda: SoftRegressionTree(depth=depth, constraints="group_loss:bound=0.2",
                                                      time_limit=limit),
         "milo": lambda: MILOTreeRegressor(depth=depth, method="milo", time_limit=limit),
         "milo-absolute": lambda: MILOTreeRegressor(depth=depth, method="milo", loss="absolute", time_limit=limit),
         "orrt": lambda: ORRTRegressor(depth=depth, time_limit=limit)}[kind]()
fit = {"sensitive_features": groups} if kind == "srt-group-loss" else {}
print("started", flush=True)
start = time.perf_counter()
try:
    model.fit(X, y, **fit)
except KeyboardInterrupt:
    sys.exit(print("interrupted", flush=True))
print(time.perf_counter() - start)
"""
#: (what, estimator, rows, features, depth, time_limit)
CASES = [("SRT, wide data", "srt", 3000, 600, 3, 3.0), ("SRT, small-data zone (leaf-ridge comparison)", "srt", 140, 50,
         3, 2.0), ("MILO tree, method='milo'", "milo", 5000, 8, 2, 1.0), ("MILO tree, method='milo'", "milo", 5000, 8,
         3, 1.0), ("MILO tree, method='milo', loss='absolute' (LAD leaf fits)", "milo-absolute", 5000, 6, 2, 1.0),
         *(("SRT, group_loss:bound=0.2 out of reach (restore and polish)", "srt-group-loss", 20000, 20, 3, limit)
           for limit in (1.0, 2.0, 5.0)),
         ("ORRT, wide data (IPOPT's exact Hessian built for minutes)", "orrt", 50, 300, 2, 3.0)]


def fit_seconds(kind, n, p, depth, limit) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(n), str(p), str(depth), str(limit)], check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def interrupt_seconds(kind, n, p, depth, wait=2.0) -> float:
    """Seconds from a SIGINT, ``wait`` s into the fit (no time limit), to the fit's KeyboardInterrupt."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, kind, str(n), str(p), str(depth), "none"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout.readline() == "started\n"
        time.sleep(wait)
        proc.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        assert proc.stdout.readline() == "interrupted\n"
        return time.perf_counter() - sent
    finally:
        proc.kill()
        proc.wait()


def cli_seconds(n, p, limit, *options) -> float:
    """Seconds of ``srtopt fit data.csv --time-limit limit [options]``, start to exit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "wide.csv"
        header = ",".join([f"x{j}" for j in range(p)] + ["target"])
        np.savetxt(data, np.c_[X, X[:, 0] + rng.normal(size=n)], delimiter=",", header=header, comments="")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "srtopt", "fit", str(data), "--target", "target", "--time-limit",
                        str(limit), *options, "--quiet", "--out", str(Path(folder) / "model.json")], check=True,
                       capture_output=True)
        return time.perf_counter() - start


def main():
    lines = ["# time_limit", "", f"Command: `python benchmarks/perf/time_limits.py`; {os.cpu_count()} cores, no thread "
             "variable set. Seconds from `fit`'s call to its return, each case in a fresh process; the command line's "
             "from its start to its exit (imports and reading the CSV included).", "",
             "| case | rows x features | depth | time_limit | seconds | bound 1.1 L + 1 | within |",
             "|---|---|---:|---:|---:|---:|---|"]
    rows = [(what, n, p, depth, limit, fit_seconds(kind, n, p, depth, limit))
            for what, kind, n, p, depth, limit in CASES]
    rows.append(("`srtopt fit --time-limit` (command line)", 300, 2000, 2, 20.0, cli_seconds(300, 2000, 20.0)))
    rows.append(("`srtopt fit --cv 3 --time-limit` (command line)", 20000, 50, 2, 3.0,
                 cli_seconds(20000, 50, 3.0, "--cv", "3")))
    for what, n, p, depth, limit, seconds in rows:
        bound = 1.1 * limit + 1
        lines.append(f"| {what} | {n} x {p} | {depth} | {limit:g} | {seconds:.2f} | {bound:.1f} | "
                     f"{'yes' if seconds <= bound else 'no'} |")
        print(lines[-1], flush=True)
    seconds = interrupt_seconds("orrt", 50, 300, 2)
    lines += ["", "Ctrl-C: a SIGINT 2 s into the fit (no time limit), seconds until `fit` raised KeyboardInterrupt.",
              "", "| case | rows x features | depth | seconds | bound | within |", "|---|---|---:|---:|---:|---|",
              f"| ORRT, wide data (IPOPT's exact Hessian built for minutes) | 50 x 300 | 2 | {seconds:.3f} | 2 | "
              f"{'yes' if seconds <= 2 else 'no'} |"]
    write_report(RESULTS / "time_limits.md", lines)


if __name__ == "__main__":
    main()
