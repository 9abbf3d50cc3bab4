"""How long the CLI takes to answer what needs no work: help, version, a usage error, the
text of a saved model (``srtopt show``, a depth-3 tree on scikit-learn's diabetes data, fitted
once in the run) and its predictions of the 442 rows (``srtopt predict``).

    PYTHONPATH=. python benchmarks/perf/cli_latency.py [--repeats 7]

Each command runs ``repeats`` times in a fresh interpreter (``python -m srtopt ...``); the table
gives the median wall time beside a bare ``python -c pass`` of the same run, and is written to
``benchmarks/results/cli_latency.md``.  Target: under 1 s for each on a 2-core machine.  ``--smoke``: one run of
each command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from sklearn.datasets import load_diabetes

from benchmarks.common import ROOT, parse, results, write_report
from srtopt import SoftRegressionTree

COMMANDS = {
    "python -c pass (baseline)": ["-c", "pass"],
    "srtopt --help": ["-m", "srtopt", "--help"],
    "srtopt --version": ["-m", "srtopt", "--version"],
    "srtopt fit --help": ["-m", "srtopt", "fit", "--help"],
    "srtopt fit data.csv (usage error)": ["-m", "srtopt", "fit", "data.csv"],
    "srtopt bench --help": ["-m", "srtopt", "bench", "--help"],
    "srtopt show model.json (depth 3)": ["-m", "srtopt", "show", "{model}"],
    "srtopt predict model.json X.csv (442 rows)": ["-m", "srtopt", "predict", "{model}", "{data}", "--out", "{out}"],
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parse(parser, argv, ["--repeats", "1"])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    folder = tempfile.TemporaryDirectory()
    files = {name: os.path.join(folder.name, name) for name in ("model.json", "X.csv", "predictions.csv")}
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    SoftRegressionTree(depth=3, random_state=0).fit(X, y).save(files["model.json"])
    X.to_csv(files["X.csv"], index=False)
    rows = []
    for name, command in COMMANDS.items():
        command = [part.format(model=files["model.json"], data=files["X.csv"], out=files["predictions.csv"])
                   for part in command]
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, *command], env=env, capture_output=True, timeout=120)
            if name.startswith("srtopt show") or name.startswith("srtopt predict"):
                done.check_returncode()
            times.append(time.perf_counter() - start)
        rows.append((name, statistics.median(times), max(times)))
    base = rows[0][1]
    command = f"PYTHONPATH=. python benchmarks/perf/cli_latency.py --repeats {args.repeats}"
    lines = ["# CLI latency", "", f"Command: `{command}` (median of {args.repeats} fresh interpreters; machine: "
             f"{os.cpu_count()} cores, shared).", "",
             "| command | median s | max s | / python -c pass |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {median:.3f} | {worst:.3f} | {median / base:.1f} |" for name, median, worst in rows]
    write_report(results() / "cli_latency.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
