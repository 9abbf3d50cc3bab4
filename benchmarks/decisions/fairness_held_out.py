"""What a parity constraint that holds on the training rows is worth on new rows, by training size.

A tree fitted with ``constraints="parity:gap=d"`` meets |mean prediction of group 1 - of group 0|
<= d on its training rows (for the soft model and for ``predict()``); on other rows the gap is an
estimate, whose spread shrinks as 1/sqrt(rows).  Measured with ``srtopt.fairness.group_gaps`` (the
gap on the test rows and its 95% normal interval).  The group is never a feature.

Part ``folds`` -- 4-fold CV (KFold, shuffled, seed 0), the unconstrained tree and the constrained one:

* diabetes (scikit-learn's, 442 rows, group = sex), depth 3, gap 1 (y's units; y's sd is 77);
* communities_crime (1,993 rows, group of the fairness data), depth 2, gap 0.01 sd of the training y.

Per fold: the training gap of ``predict()``, the test gap with its interval, test R^2.

Part ``size`` -- law_school (21,791 rows): training on 400 and on 10,000 random rows, the test on
5,000 other rows, 4 seeds; depth 2, gap 0.01 sd of the training y: the training gap, the test
gap and its interval's half-width, per size (mean and range over the seeds).

    PYTHONPATH=. SRTOPT_FAIRNESS_DATA=/path/to/datasets_fairness OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/decisions/fairness_held_out.py

``--smoke``: tiny stand-ins (diabetes too), fold 0, the sizes 40 and 60 of 96 rows with one seed, the trees at
max_iter 2.
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import KFold

from benchmarks.common import budget, parse, pick, results, write_report
from benchmarks.common.data import fairness_data, tiny
from benchmarks.common.protocol import outer_folds
from srtopt import SoftRegressionTree
from srtopt.fairness import group_gaps

COMMAND = ("PYTHONPATH=. SRTOPT_FAIRNESS_DATA=/path/to/datasets_fairness OPENBLAS_NUM_THREADS=1 "
           "python benchmarks/decisions/fairness_held_out.py")


def diabetes():
    """scikit-learn's diabetes data: X without sex, y, the group sex (a tiny stand-in in smoke mode)."""
    X, y = pick(load_diabetes(return_X_y=True), tiny("diabetes", 10))
    return np.delete(X, 1, axis=1), y, (X[:, 1] > pick(0, 30)).astype(int)


def measure(X, y, group, train, test, depth, gap):
    """{constraint: (training gap, test gap, low, high, test R^2, seconds)} of the free and the constrained tree."""
    out = {}
    for name, constraints in (("none", None), ("parity", f"parity:gap={gap!r}")):
        tree = SoftRegressionTree(depth=depth, random_state=0, constraints=constraints, **budget())
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree.fit(X[train], y[train], sensitive_features=group[train])
        seconds = time.perf_counter() - start
        trained = group_gaps(tree.predict(X[train]), group[train])
        tested = group_gaps(tree.predict(X[test]), group[test])
        out[name] = (trained["gap"][0], tested["gap"][0], tested["low"][0], tested["high"][0],
                     tree.score(X[test], y[test]), seconds)
    return out


def folds_part(lines):
    lines += ["## Part folds: 4-fold CV", "",
              "| data | fold | training rows | gap allowed | training gap | test gap [95% interval] | "
              "unconstrained: training gap | test gap [95% interval] | test R^2 constrained / free |",
              "|---|---:|---:|---:|---:|---|---:|---|---|"]
    for name, (X, y, group), depth, relative in (("diabetes", diabetes(), 3, None),
                                                ("communities_crime", fairness_data("communities_crime"), 2, 0.01)):
        folds = KFold(4, shuffle=True, random_state=0).split(X)
        for k, (train, test) in itertools.islice(enumerate(folds), len(outer_folds())):
            gap = 1.0 if relative is None else relative * float(np.std(y[train]))
            m = measure(X, y, group, train, test, depth, gap)
            (tg, eg, lo, hi, r2, _), (tf, ef, lf, hf, rf, _) = m["parity"], m["none"]
            lines.append(f"| {name} (depth {depth}) | {k} | {len(train)} | {gap:.4g} | {tg:.3g} | {eg:.3g} "
                         f"[{lo:.3g}, {hi:.3g}] | {tf:.3g} | {ef:.3g} [{lf:.3g}, {hf:.3g}] | {r2:.3f} / {rf:.3f} |")
            print(lines[-1], flush=True)
    lines.append("")


def size_part(lines):
    X, y, group = fairness_data("law_school")
    lines += ["## Part size: law_school, 400 against 10,000 training rows (test: 5,000 other rows, 4 seeds)", "",
              "| training rows | gap allowed (mean) | training gap | test gap | test interval half-width | "
              "seeds whose test gap is within the bound | unconstrained test gap | test R^2 constrained / free |",
              "|---:|---:|---|---|---|---:|---|---|"]
    for n in pick((400, 10_000), (40, 60)):
        rows = []
        for seed in range(pick(4, 1)):
            order = np.random.default_rng(seed).permutation(len(y))
            train, test = order[:n], order[n:n + pick(5000, 30)]
            gap = 0.01 * float(np.std(y[train]))
            m = measure(X, y, group, train, test, 2, gap)
            rows.append((gap, *m["parity"], m["none"][1], m["none"][4]))
            print(n, seed, rows[-1], flush=True)
        gap, tg, eg, lo, hi, r2, _, ef, rf = (np.array(v) for v in zip(*rows))

        def span(v):
            return f"{v.mean():.3g} ({v.min():.3g} to {v.max():.3g})"

        lines.append(f"| {n} | {gap.mean():.3g} | {span(tg)} | {span(eg)} | {span((hi - lo) / 2)} | "
                     f"{int(np.sum(np.abs(eg) <= gap))} of 4 | {span(ef)} | {r2.mean():.3f} / {rf.mean():.3f} |")
    lines.append("")


def main(argv=None):
    parse(argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter), argv)
    started = time.perf_counter()
    lines = ["# A parity constraint on the training rows, measured on new rows", "", f"Command: `{COMMAND}`", "",
             "Gaps: mean prediction of group 1 minus group 0, y's units; intervals: 95%, normal "
             "(srtopt.fairness.group_gaps); the group is not a feature.", ""]
    folds_part(lines)
    size_part(lines)
    lines.append(f"Wall time: {time.perf_counter() - started:.0f} s (2 cores shared).")
    write_report(results() / "fairness_held_out.md", lines)


if __name__ == "__main__":
    main()
