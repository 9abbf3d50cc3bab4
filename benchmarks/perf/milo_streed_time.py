"""The MILO tree given at most 10x STreeD's time, against STreeD, on the paper's folds.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python benchmarks/perf/milo_streed_time.py
        [--factor 10] [--cap 60]

For every (dataset, depth, fold) where ``benchmarks/reproduce/milo.py`` ran STreeD, one fit of
``MILOTreeRegressor(depth, time_limit=min(cap, factor x STreeD's seconds), random_state=0)``
(its numba kernels loaded before the clock, as a fit does).  A cell whose limit is the cap
(60 s, the limit of ``benchmarks/reproduce/milo.py``'s runs) reuses the MILO run stored there.  Runs are
appended to ``benchmarks/results/milo/at_10x_streed.jsonl`` as they end (a rerun resumes);
the table goes to ``benchmarks/results/milo/at_10x_streed.md``.  ``--smoke``: the first cell of the committed
``runs.jsonl`` (read only), on a tiny stand-in, the cap 1 s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

from benchmarks.common import RESULTS, parse, pick, results, write_report


def fit(cell, limit):
    from sklearn.metrics import r2_score

    from benchmarks.common.data import load
    from srtopt import MILOTreeRegressor
    from srtopt.experiments.protocol import fold_indices, scale_fold

    dataset, depth, fold = cell
    X, y, _ = load(dataset)
    train, test = fold_indices(len(y), 4, 0, fold)
    X_train, X_test, y_train, y_test, _ = scale_fold(X[train], X[test], y[train], y[test])
    start = time.perf_counter()
    model = MILOTreeRegressor(depth=depth, time_limit=limit, random_state=0).fit(X_train, y_train)
    return {"seconds": time.perf_counter() - start, "r2_test": float(r2_score(y_test, model.predict(X_test)))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--factor", type=float, default=10.0)
    parser.add_argument("--cap", type=float, default=60.0)
    args = parse(parser, argv, ["--cap", "1"])
    runs = [json.loads(line) for line in (RESULTS / "milo" / "runs.jsonl").read_text().splitlines() if line.strip()]
    key = lambda r: (r["dataset"], r["depth"], r["fold"])  # noqa: E731
    streed = {key(r): r for r in runs if r["method"] == "streed"}
    stored = {key(r): r for r in runs if r["method"] == "milo"}
    out = results() / "milo" / "at_10x_streed.jsonl"
    out.parent.mkdir(exist_ok=True)
    done = {key(r): r for r in map(json.loads, out.read_text().splitlines())} if out.exists() else {}
    for cell in itertools.islice(sorted(streed), pick(None, 1)):
        if cell in done or cell not in stored:
            continue
        limit = min(args.cap, args.factor * streed[cell]["seconds"])
        result = (dict(seconds=stored[cell]["seconds"], r2_test=stored[cell]["r2_test"], reused=True)
                  if limit >= stored[cell]["time_limit"] else fit(cell, limit))
        row = {"dataset": cell[0], "depth": cell[1], "fold": cell[2], "time_limit": limit, **result}
        with out.open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        done[cell] = row
        print(row, flush=True)
    lines = ["# The MILO tree at most 10x STreeD's time", "",
             f"Command: `PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/perf/milo_streed_time.py --factor "
             f"{args.factor:g} --cap {args.cap:g}`. MILO: `MILOTreeRegressor(depth, time_limit=min({args.cap:g} s, "
             f"{args.factor:g} x STreeD's seconds on the same fold), random_state=0)`; STreeD as in `README.md` "
             "(its stored runs). Paper folds, seed 0; means over the folds. A cell at the cap reuses the 60-second "
             "MILO run of `runs.jsonl`.", ""]
    summary = {}
    for depth in (2, 3):
        lines += [f"## Depth {depth}", "", "| dataset | MILO R^2 | STreeD R^2 | diff | MILO s | STreeD s | limit s |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        cells = [c for c in sorted(done) if c[1] == depth]
        for dataset in sorted({c[0] for c in cells}):
            mine = [c for c in cells if c[0] == dataset]
            m = statistics.fmean(done[c]["r2_test"] for c in mine)
            s = statistics.fmean(streed[c]["r2_test"] for c in mine)
            summary.setdefault(depth, []).append((m, s))
            lines.append(f"| {dataset} | {m:.3f} | {s:.3f} | {m - s:+.3f} | "
                         f"{statistics.fmean(done[c]['seconds'] for c in mine):.2f} | "
                         f"{statistics.fmean(streed[c]['seconds'] for c in mine):.2f} | "
                         f"{statistics.fmean(done[c]['time_limit'] for c in mine):.2f} |")
        rows = summary.get(depth, [])
        if rows:
            lines += ["", f"Mean over {len(rows)} datasets: MILO {statistics.fmean(r[0] for r in rows):.3f}, "
                      f"STreeD {statistics.fmean(r[1] for r in rows):.3f}.", ""]
    write_report(results() / "milo" / "at_10x_streed.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
