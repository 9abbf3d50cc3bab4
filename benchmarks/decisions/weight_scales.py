"""Sample weights at the ends of the floats: the largest gap between the predictions of one tree fitted with
weights at two scales, and the fits that fail, before and after the weights were bounded once for the whole
fit (issue 62, docs/departures.md "Sample weights are repeated rows").

    # before: from outside this checkout, the srtopt package of the commit before the change (a folder
    # holding it) first on PYTHONPATH, then this checkout (for benchmarks/)
    cd /tmp && PYTHONPATH=/path/to/before:/path/to/checkout python /path/to/checkout/benchmarks/decisions/weight_scales.py
    PYTHONPATH=. python benchmarks/decisions/weight_scales.py

300 synthetic rows (3 features, y = sin(5 x0) + x1 + noise; the classifier's labels: y above its median),
depth 2, random_state 0; each tree with linear (logistic) and spline leaves.  Prints a markdown table
(benchmarks/results/weight_scales.md holds both runs).  ``--smoke``: the first two cases.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import srtopt
from benchmarks.common import parse, pick

N = 300
#: (name, base weights of the rows, the two scales compared)
CASES = [("equal", "ones", (1e6, 1e200)), ("integers 1-4", "integers", (1e6, 1e200)),
         ("integers 1-4", "integers", (1e6, 2.0**1020)), ("uniform(0, 1)", "uniform", (1e6, 1e200)),
         ("uniform(0, 1)", "uniform", (1e6, 2.0**600)), ("equal", "ones", (1 / N, 1e-300)),
         ("equal", "ones", (1 / N, 1e-320)), ("one row, the others 1e-308 of it", "one", (1e8, 1e308))]


def data():
    rng = np.random.default_rng(0)
    X = rng.random((N, 3))
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(N)
    base = {"ones": np.ones(N), "integers": rng.integers(1, 5, N).astype(float), "uniform": rng.random(N),
            "one": np.r_[1.0, np.full(N - 1, 1e-308)]}  # at 1e308: the one row at 1e308 among 1s
    return X, y, base


def weights(base, kind, scale):
    return base[kind] * scale


def predictions(estimator, leaf, X, y, w):
    """The predictions (a classifier's probabilities) and the number of warnings, or the error's name."""
    target = y if estimator is srtopt.SoftRegressionTree else (y > np.median(y)).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = estimator(depth=2, leaf=leaf, random_state=0).fit(X, target, sample_weight=w)
        except Exception as exc:  # noqa: BLE001 - what the fit raises is the measurement
            return type(exc).__name__, len(caught)
    out = model.predict(X) if estimator is srtopt.SoftRegressionTree else model.predict_proba(X)
    return out, len(caught)


def main(argv=None) -> int:
    parse(argparse.ArgumentParser(description=__doc__.splitlines()[0]), argv)
    X, y, base = data()
    print("| weights | scales | tree | leaves | max abs gap | warnings |\n|---|---|---|---|---:|---:|")
    for name, kind, scales in pick(CASES, CASES[:2]):
        for estimator, leaves in ((srtopt.SoftRegressionTree, ("linear", "spline")),
                                  (srtopt.SoftClassificationTree, ("logistic", "spline"))):
            for leaf in leaves:
                (a, wa), (b, wb) = (predictions(estimator, leaf, X, y, weights(base, kind, s)) for s in scales)
                gap = (f"{np.abs(a - b).max():.2g}" if not isinstance(a, str) and not isinstance(b, str)
                       else " / ".join(v if isinstance(v, str) else "fits" for v in (a, b)))
                print(f"| {name} | {scales[0]:.3g}, {scales[1]:.3g} | {estimator.__name__} | {leaf} | {gap} | "
                      f"{wa + wb} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
