"""time_limit as a wall-clock budget: each case in a fresh process, the seconds from ``fit``'s call
to its return (for the command line: from the command's start to its exit) against the bound
1.1 x time_limit + 1 s, the median of ``RUNS`` runs (the machine is shared); and the seconds from a
Ctrl-C (SIGINT) to the fit's KeyboardInterrupt (to the command's exit), against 2 s.  Random data:
y = x_0 + noise for regression; for classification K classes cut from x_0 + x_1 / 2 + noise at its
quantiles.

    PYTHONPATH=. python benchmarks/perf/time_limits.py

``--smoke``: one small case of each kind (in Python, on the command line, its floor), each run once; the two Ctrl-C
cases sooner after the start, the command line's on 1,000 x 100.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import parse, pick, results, write_report

#: runs of each case: the table gives their median
RUNS = 3

CHILD = r"""
import signal, sys, time, warnings
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job inherits SIGINT ignored)
import numpy as np
from srtopt import MILOTreeRegressor, ORCTClassifier, ORRTRegressor, SoftClassificationTree, SoftRegressionTree
warnings.simplefilter("ignore")
kind, n, p, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
limit = None if sys.argv[5] == "none" else float(sys.argv[5])
classes = int(sys.argv[6])
rng = np.random.default_rng(0)
X = rng.normal(size=(n, p)); y = X[:, 0] + np.sin(X[:, 1 % p]) + 0.5 * rng.normal(size=n)
if classes:
    score = X[:, 0] + X[:, 1 % p] / 2 + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
groups = (rng.random(n) < 0.3).astype(int)
model = {"srt": lambda: SoftRegressionTree(depth=depth, time_limit=limit),
         "srt-group-loss": lambda: SoftRegressionTree(depth=depth, constraints="group_loss:bound=0.2",
                                                      time_limit=limit),
         "milo": lambda: MILOTreeRegressor(depth=depth, method="milo", time_limit=limit),
         "milo-absolute": lambda: MILOTreeRegressor(depth=depth, method="milo", loss="absolute", time_limit=limit),
         "orrt": lambda: ORRTRegressor(depth=depth, time_limit=limit),
         "sct": lambda: SoftClassificationTree(depth=depth, time_limit=limit),
         "sct-max-features": lambda: SoftClassificationTree(depth=depth, time_limit=limit, max_features=3),
         "sct-recall": lambda: SoftClassificationTree(depth=depth, time_limit=limit,
                                                      constraints="class_recall:class=0,lower=0.95"),
         "orct": lambda: ORCTClassifier(depth=depth, time_limit=limit)}[kind]()
fit = {"sensitive_features": groups} if kind == "srt-group-loss" else {}
print("started", flush=True)
start = time.perf_counter()
try:
    model.fit(X, y, **fit)
except KeyboardInterrupt:
    sys.exit(print("interrupted", flush=True))
print(time.perf_counter() - start)
"""
#: (what, estimator, rows, features, classes (0: regression), depth, time_limit)
CASES = [("SRT, wide data", "srt", 3000, 600, 0, 3, 3.0),
         ("SRT, small-data zone (leaf-ridge comparison)", "srt", 140, 50, 0, 3, 2.0),
         ("MILO tree, method='milo'", "milo", 5000, 8, 0, 2, 1.0),
         ("MILO tree, method='milo'", "milo", 5000, 8, 0, 3, 1.0),
         ("MILO tree, method='milo', loss='absolute' (LAD leaf fits)", "milo-absolute", 5000, 6, 0, 2, 1.0),
         *(("SRT, group_loss:bound=0.2 out of reach (restore and polish)", "srt-group-loss", 20000, 20, 0, 3, limit)
           for limit in (1.0, 2.0, 5.0)),
         ("ORRT, wide data (IPOPT's exact Hessian built for minutes)", "orrt", 50, 300, 0, 2, 3.0),
         ("SoftClassificationTree, max_features=3 (the selection's refits)", "sct-max-features", 100000, 20, 5, 2,
          1.0),
         ("SoftClassificationTree, max_features=3 (the selection's refits)", "sct-max-features", 3000, 300, 5, 2, 1.0),
         ("SoftClassificationTree, class_recall:class=0,lower=0.95 (restore: IPOPT on 12,040 coefficients)",
          "sct-recall", 3000, 300, 5, 3, 1.0),
         ("SoftClassificationTree, wide data", "sct", 50, 2000, 2, 2, 5.0),
         ("ORCTClassifier, wide data (20 starts, 6,011 variables)", "orct", 50, 2000, 2, 2, 5.0)]


def _median(measure, *args) -> float:
    """The median of ``RUNS`` measurements ``measure(*args)``."""
    return float(np.median([measure(*args) for _ in range(pick(RUNS, 1))]))


def fit_seconds(kind, n, p, classes, depth, limit) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(n), str(p), str(depth), str(limit), str(classes)],
                         check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


#: seconds a Ctrl-C measurement waits for the fit to answer (inf in the table: it did not)
PATIENCE = 60.0


def interrupt_seconds(kind, n, p, classes, depth, wait=2.0) -> float:
    """Seconds from a SIGINT, ``wait`` s into the fit (no time limit), to the fit's KeyboardInterrupt
    (inf: no answer within ``PATIENCE`` seconds)."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, kind, str(n), str(p), str(depth), "none", str(classes)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout.readline() == "started\n"
        time.sleep(wait)
        proc.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        out, _ = proc.communicate(timeout=PATIENCE)
        assert out.startswith("interrupted"), out
        return time.perf_counter() - sent
    except subprocess.TimeoutExpired:
        return float("inf")
    finally:
        proc.kill()
        proc.wait()


def write_data(folder, n, p, classes) -> Path:
    """A CSV file of ``n`` rows of ``p`` features and a target: numbers, or ``classes`` labels A, B, ..."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    path = Path(folder) / f"data_{n}_{p}_{classes}.csv"
    header = ",".join([f"x{j}" for j in range(p)] + ["target"])
    if not classes:
        np.savetxt(path, np.c_[X, X[:, 0] + rng.normal(size=n)], delimiter=",", header=header, comments="")
        return path
    signal_ = X[:, 0] + X[:, 1] / 2 + 0.3 * rng.normal(size=n)
    codes = np.digitize(signal_, np.quantile(signal_, np.linspace(0, 1, classes + 1)[1:-1]))
    rows = np.c_[np.char.mod("%.6g", X), np.array(list("ABCDEFGH"))[codes]]
    path.write_text(header + "\n" + "\n".join(",".join(row) for row in rows) + "\n")
    return path


def cli_seconds(folder, n, p, classes, limit, *options) -> float:
    """Seconds of ``srtopt fit data.csv --time-limit limit [options]``, start to exit."""
    data = write_data(folder, n, p, classes)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "srtopt", "fit", str(data), "--target", "target", "--time-limit",
                    str(limit), *options, "--quiet", "--out", str(Path(folder) / "model.json")], check=True,
                   capture_output=True)
    return time.perf_counter() - start


def cli_interrupt_seconds(folder, n, p, classes, *options, marker="initialization:", wait=1.0) -> float:
    """Seconds from a SIGINT, ``wait`` s after ``marker`` is on stderr, to the exit of ``srtopt fit``."""
    data = write_data(folder, n, p, classes)
    proc = subprocess.Popen([sys.executable, "-m", "srtopt", "fit", str(data), "--target", "target", *options,
                             "--out", str(Path(folder) / "model.json")], stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if line.startswith(marker):
            break
    time.sleep(wait)
    proc.send_signal(signal.SIGINT)
    sent = time.perf_counter()
    proc.communicate(timeout=600)
    assert proc.returncode == 130, proc.returncode
    return time.perf_counter() - sent


CLI_CASES = [("`srtopt fit --time-limit` (command line)", 300, 2000, 0, 2, 20.0, ()),
             ("`srtopt fit --cv 3 --time-limit` (command line)", 20000, 50, 0, 2, 3.0, ("--cv", "3")),
             ("`srtopt fit --task classification --time-limit` (command line, start-up to exit)", 100000, 20, 5, 2,
              2.0, ("--task", "classification")),
             ("`srtopt fit --max-features 3 --time-limit` (command line, a classifier)", 3000, 300, 5, 2, 5.0,
              ("--max-features", "3")),
             ("`srtopt fit --constraint class_recall:class=A,lower=0.95 --time-limit` (command line)", 3000, 300, 5,
              3, 5.0, ("--constraint", "class_recall:class=A,lower=0.95", "--depth", "3"))]


#: smoke mode's cases: (what, estimator, rows, features, classes, depth, time_limit), and the command line's
SMOKE_CASES = [("SRT (smoke)", "srt", 200, 5, 0, 2, 1.0)]
SMOKE_CLI_CASES = [("`srtopt fit --time-limit` (smoke)", 200, 5, 0, 2, 1.0, ())]


def main(argv=None):
    parse(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter), argv)
    floor_rows, interrupted = pick(100000, 200), pick((3000, 300), (1000, 100))  # rows (and features)
    lines = ["# time_limit", "", f"Command: `python benchmarks/perf/time_limits.py`; {os.cpu_count()} cores, no thread "
             "variable set. Seconds from `fit`'s call to its return, each case in a fresh process; the command line's "
             f"from its start to its exit (imports and reading the CSV included); the median of {RUNS} runs.", "",
             "| case | rows x features | classes | depth | time_limit | seconds | bound 1.1 L + 1 | within |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    load = os.getloadavg()[0]
    rows = [(what, n, p, classes, depth, limit, _median(fit_seconds, kind, n, p, classes, depth, limit))
            for what, kind, n, p, classes, depth, limit in pick(CASES, SMOKE_CASES)]
    with tempfile.TemporaryDirectory() as folder:
        rows += [(what, n, p, classes, depth, limit, _median(cli_seconds, folder, n, p, classes, limit, *options))
                 for what, n, p, classes, depth, limit, options in pick(CLI_CASES, SMOKE_CLI_CASES)]
        floor = _median(cli_seconds, folder, floor_rows, 20, 5, 0.01, "--task", "classification")
        interrupts = [("ORRT, wide data (IPOPT's exact Hessian built for minutes)", 50, 300, 0, 2,
                       _median(interrupt_seconds, "orrt", 50, 300, 0, 2, pick(2.0, 0.5))),
                      ("`srtopt fit --constraint class_recall:class=A,lower=0.95` (command line), 1 s after the "
                       "initialization began", *interrupted, 5, 3,
                       cli_interrupt_seconds(folder, *interrupted, 5, "--constraint", "class_recall:class=A,lower=0.95",
                                             "--depth", "3", wait=pick(1.0, 0.2)))]
    lines[2] += f" Load average (1 min) at the start: {load:.2f}, the machine shared with other work."
    for what, n, p, classes, depth, limit, seconds in rows:
        bound = 1.1 * limit + 1
        lines.append(f"| {what} | {n} x {p} | {classes or '-'} | {depth} | {limit:g} | {seconds:.2f} | {bound:.1f} | "
                     f"{'yes' if seconds <= bound else 'no'} |")
        print(lines[-1], flush=True)
    lines += ["", f"The command line's floor: `srtopt fit --task classification --time-limit 0.01` on the same {floor_rows} "
              f"rows took {floor:.2f} s from start to exit (starting Python, importing scikit-learn, reading the file, "
              f"loading the kernels, the initial tree, the training accuracy and the save).",
              "", f"Ctrl-C: a SIGINT during the fit (no time limit), seconds until `fit` raised KeyboardInterrupt (the "
              f"command exited); the ORRT case's median of {RUNS} (inf: no answer within {PATIENCE:g} s).", "", "| case | rows x features | classes | depth | seconds | bound | within |",
              "|---|---|---:|---:|---:|---:|---|"]
    lines += [f"| {what} | {n} x {p} | {classes or '-'} | {depth} | {seconds:.3f} | 2 | "
              f"{'yes' if seconds <= 2 else 'no'} |" for what, n, p, classes, depth, seconds in interrupts]
    write_report(results() / "time_limits.md", lines)


if __name__ == "__main__":
    main()
