"""The soft classification tree's speed against a random forest, and its scale.

    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python benchmarks/perf/classification.py           # both parts
    PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python benchmarks/perf/classification.py --part speed

* speed: on every classification dataset with more than 1,000 rows, 4-fold stratified CV (seed 0), the
  fit seconds of ``SoftClassificationTree(depth=3)`` (defaults) and of ``RandomForestClassifier(100)``
  on the same folds in the same run, as a user runs them (no thread variable set); the ratio of the
  mean fit seconds and both test accuracies.  Each estimator fits once on 200 rows first: the first
  fit in a process, reported apart, includes the one-time loading of the compiled kernels.  Where the
  soft tree's time goes: the share of its fit in the BN and LN solver calls (``history_``), and the fit
  seconds of one macro iteration (``max_iter=1``), below which no stopping rule brings the fit.
* scale: 10^6 rows x 10 features, two classes (a noisy oblique rule), depth 3, defaults, in its own
  process: fit seconds and the process's peak RSS.

Prints and writes ``benchmarks/results/classification_speed.md`` and ``classification_scale.md``.  ``--smoke``: one
tiny dataset, fold 0; the scale fit on 2,000 rows.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import parse, pick, results, write_report
from benchmarks.common.data import load
from benchmarks.common.protocol import outer_folds

MIN_ROWS = 1000
SCALE_ROWS = 1_000_000


def warm_up() -> tuple[float, float]:
    """The seconds of each estimator's first fit in this process (on 200 rows of two blobs): the soft tree's
    includes loading its compiled kernels from numba's cache, once per process."""
    from sklearn.datasets import make_blobs
    from sklearn.ensemble import RandomForestClassifier

    from srtopt import SoftClassificationTree

    X, y = make_blobs(200, centers=2, random_state=0)
    seconds = []
    for model in (SoftClassificationTree(depth=3, random_state=0), RandomForestClassifier(100, random_state=0)):
        start = time.perf_counter()
        model.fit(X, y)
        seconds.append(time.perf_counter() - start)
    return seconds[0], seconds[1]


def speed_rows() -> list[str]:
    """One table row per dataset with more than MIN_ROWS rows: mean fit seconds and accuracy of both (after
    :func:`warm_up`)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold

    from srtopt import SoftClassificationTree
    from srtopt.datasets import CLASSIFICATION_DATASETS, get_info

    rows = []
    for name in pick(CLASSIFICATION_DATASETS, ["satimage"]):
        if get_info(name).n_rows <= MIN_ROWS:
            continue
        data = load(name)
        X, y = np.asarray(data.X, float), np.asarray(data.y)
        seconds, accuracy = {"sct": [], "rf": [], "one": []}, {"sct": [], "rf": [], "one": []}
        solves = []
        folds = StratifiedKFold(4, shuffle=True, random_state=0).split(X, y)
        for train, test in itertools.islice(folds, len(outer_folds())):
            for key, model in (("sct", SoftClassificationTree(depth=3, random_state=0)),
                               ("rf", RandomForestClassifier(100, random_state=0)),
                               ("one", SoftClassificationTree(depth=3, max_iter=1, random_state=0))):
                start = time.perf_counter()
                model.fit(X[train], y[train])
                seconds[key].append(time.perf_counter() - start)
                accuracy[key].append(float(np.mean(model.predict(X[test]) == y[test])))
                if key == "sct":
                    solves.append(solve_seconds(model.history_) / seconds[key][-1])
        sct, rf, one = (np.mean(seconds[key]) for key in ("sct", "rf", "one"))
        bn, ln = np.mean(solves, axis=0)
        rows.append(f"| {name} | {len(y):,} | {X.shape[1]} | {len(np.unique(y))} | {sct:.2f} | {rf:.2f} | "
                    f"{sct / rf:.2f} | {bn:.0%} / {ln:.0%} | {one:.2f} | {one / rf:.2f} | "
                    f"{np.mean(accuracy['sct']):.3f} | {np.mean(accuracy['rf']):.3f} |")
        print(rows[-1], flush=True)
    return rows


def solve_seconds(history) -> np.ndarray:
    """The seconds a fit spent in its BN solver calls (the WLR proxy's included) and in its LN solver calls."""
    return np.array([sum(record[step].get("seconds", 0.0) for record in history) for step in ("bn", "ln")])


def one_scale_fit(rows) -> dict:
    """The scale fit on ``rows`` rows, in this process."""
    from srtopt import SoftClassificationTree

    rng = np.random.default_rng(0)
    X = rng.random((rows + rows // 10, 10))
    y = (X[:, 0] + X[:, 1] - X[:, 2] + 0.3 * rng.standard_normal(len(X)) > 0.5).astype(int)
    model = SoftClassificationTree(depth=3, random_state=0)
    start = time.perf_counter()
    model.fit(X[:rows], y[:rows])
    seconds = time.perf_counter() - start
    rss = int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) / 2**20
    return {"seconds": seconds, "rss": rss, "accuracy": float(model.score(X[rows:], y[rows:]))}


def command(part: str) -> list[str]:
    """The first lines of a part's report: the command that makes it."""
    return [f"Command: `PYTHONPATH=. SRTOPT_CLASSIFICATION_DATA=... python benchmarks/perf/classification.py "
            f"--part {part}` (2-core machine, no thread variable set)", ""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("speed", "scale", "both"), default="both")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process: the scale fit of that many rows
    args = parse(parser, argv)
    if args.one:
        print(json.dumps(one_scale_fit(args.one)))
        return 0
    if args.part in ("speed", "both"):
        first = warm_up()
        write_report(results() / "classification_speed.md", command("speed") + [
            "4-fold stratified CV (seed 0), mean fit seconds of `SoftClassificationTree(depth=3)` and "
            "`RandomForestClassifier(100)` on the same folds, in one run, after one fit of each on 200 rows: the "
            f"first fit in a process took {first[0]:.2f} s for the soft tree (its compiled kernels loaded from "
            f"numba's cache) and {first[1]:.2f} s for the forest. BN / LN: the share of the soft tree's fit in its BN "
            "solver calls (the WLR proxy's included) and its LN solver calls; one macro iteration: the fit with "
            "`max_iter=1`, and its ratio to the forest's.", "",
            "| dataset | N | p | K | soft tree s | forest s | ratio | BN / LN | one macro iteration s | its ratio "
            "| soft tree accuracy | forest accuracy |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|", *speed_rows()])
    if args.part in ("scale", "both"):
        rows = pick(SCALE_ROWS, 2000)
        out = subprocess.run([sys.executable, __file__, "--one", str(rows)], check=True, capture_output=True,
                             text=True)
        m = json.loads(out.stdout.strip().splitlines()[-1])
        write_report(results() / "classification_scale.md", command("scale") + [
            f"{rows:,} rows x 10 features, two classes (a noisy oblique rule), depth 3, defaults, in its own "
            f"process: fit {m['seconds']:.1f} s, peak RSS {m['rss']:.2f} GB, test accuracy {m['accuracy']:.3f} "
            f"({rows // 10:,} held-out rows)."])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
