"""The MILO tree's MIP stage against the local search alone, on the case of issue 40.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/milo_stage.py [--limits 10 100]

Absolute loss, depth 2, ``make_friedman1(5000, n_features=15, noise=1, random_state=0)``: 4,000
training rows, 1,000 test rows (the issue's own data were not given).  For each time limit, one fit
with ``method="milo"`` (the local search, then HiGHS on the MILP from its tree, when the model can be
built in the time left) and one with ``method="local-search"``, after a short fit that loads the
kernels and SciPy's HiGHS.  Prints, per fit, the training objective E after each stage, the MIP's
bound, the test R^2 and the seconds; writes ``benchmarks/results/milo_stage.md``.  ``--smoke``: 250 rows (200 to
train), the limit 1 s.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.common import parse, pick, results, write_report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limits", type=float, nargs="+", default=[10.0, 100.0])
    args = parse(parser, argv, ["--limits", "1"])
    from sklearn.datasets import make_friedman1

    from srtopt import MILOTreeRegressor

    rows = pick(5000, 250)
    X, y = make_friedman1(rows, n_features=15, noise=1.0, random_state=0)
    train, test = slice(0, rows * 4 // 5), slice(rows * 4 // 5, None)
    MILOTreeRegressor(depth=2, loss="absolute", method="local-search", time_limit=1.0,
                      random_state=0).fit(X[:pick(500, 100)], y[:pick(500, 100)])  # kernels and SciPy's HiGHS loaded
    lines = ["# The MILO tree's MIP stage against the local search alone (issue 40's case)", "",
             ("`benchmarks/decisions/milo_stage.py`: absolute loss, depth 2, make_friedman1 with 15 features, "
              "4,000 training and 1,000 test rows; E in scaled units."), "",
             ("| time limit s | method | E after the local search | E after HiGHS | MIP bound | E returned | "
              "test R^2 | seconds |"), "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for limit in args.limits:
        for method in ("milo", "local-search"):
            start = time.perf_counter()
            model = MILOTreeRegressor(depth=2, loss="absolute", method=method, time_limit=limit,
                                      random_state=0).fit(X[train], y[train])
            seconds = time.perf_counter() - start
            stages = {stage: value for _, stage, value, _ in model.mip_log_}
            after_mip = f"{stages['highs']:.5f}" if "highs" in stages else "no MIP stage"
            lines.append(f"| {limit:g} | {method} | {stages['local search']:.5f} | "
                         f"{after_mip if method == 'milo' else ''} | {model.mip_bound_:.3g} | "
                         f"{model.objective_:.5f} | {model.score(X[test], y[test]):.3f} | {seconds:.1f} |")
            print(lines[-1], flush=True)
    write_report(results() / "milo_stage.md", lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
