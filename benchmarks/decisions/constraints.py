"""Constrained trees against the alternatives a user has.

Part ``frontier`` -- the accuracy-fairness frontier on law_school and communities_crime (the
protected group is not a feature): 4 folds (KFold, seed 0); the parity gap allowed is none, 0.1,
0.05, 0.02 and 0.01 times the standard deviation of the training targets.  Per method and gap:
test R^2, the test gap between the groups' mean predictions, the worst group's test MSE, fit
seconds.  Methods:

* ``srt-d2``, ``srt-d3``: SoftRegressionTree(depth 2 or 3, constraints="parity:gap=d");
* ``ls``: least squares with the same constraint, exact (its one linear constraint, active or not,
  in closed form);
* ``shift-ls``, ``shift-srt-d3``: the unconstrained least squares / depth-3 tree, post-processed:
  each group's predictions shifted so that the training gap is d (the group is used at prediction);
* ``eg-linear``, ``eg-tree3``: fairlearn's ExponentiatedGradient with BoundedGroupLoss around
  LinearRegression and DecisionTreeRegressor(max_depth=3), its bound on each group's squared loss
  (y scaled to [0, 1]) at 1, 0.9, 0.8 and 0.7 times the worst group's loss of the base model (these
  bound group losses, not the gap: each is placed at the gap it reaches).

Part ``monotone`` -- monotone trees against HistGradientBoostingRegressor(monotonic_cst) on
auto_mpg (horsepower and weight decreasing) and abalone (shell_weight and diameter increasing):
test R^2, fit seconds, and the test rows along which a prediction breaks the sign (each row's
feature moved over a grid of its training range).

Runs go to ``benchmarks/results/constraints.jsonl`` and are resumed; the report and the frontier
figure are rewritten from it.  The ``eg-*`` methods need fairlearn: skipped, saying so, without it.
``--smoke``: one tiny stand-in per part (communities_crime, auto_mpg), fold 0, the gaps none and 0.1 sd, the
bound 1.0, the soft trees at max_iter 2; the report and the figure go to the smoke folder.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets SRTOPT_FAIRNESS_DATA=/path/to/datasets_fairness \\
        OPENBLAS_NUM_THREADS=1 python benchmarks/decisions/constraints.py
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold
from sklearn.tree import DecisionTreeRegressor

from benchmarks.common import add_smoke, docs_figure, pick, regression_tree, results, skip, start, write_report
from benchmarks.common.data import fairness_data, load
from benchmarks.common.protocol import outer_folds

STORE = "constraints.jsonl"  # in benchmarks/results/
GAPS = (None, 0.1, 0.05, 0.02, 0.01)  # times sd(y_train); None: unconstrained
EG_BOUNDS = (1.0, 0.9, 0.8, 0.7)  # times the base model's worst group loss
MONOTONE = {"auto_mpg": {"horsepower": -1, "weight": -1}, "abalone": {"shell_weight": 1, "diameter": 1}}
FRONTIER = ("communities_crime", "law_school")



def folds(X):
    """The 4 folds (KFold, seed 0; fold 0 alone in smoke mode)."""
    return itertools.islice(enumerate(KFold(4, shuffle=True, random_state=0).split(X)), len(outer_folds()))


def gap_of(prediction, group):
    return float(prediction[group == 1].mean() - prediction[group == 0].mean())


def worst_mse(prediction, y, group):
    return float(max(np.mean((prediction - y)[group == k] ** 2) for k in (0, 1)))


def least_squares_parity(X, y, group, d):
    """(intercept, coefficients) of least squares with |mean over group 1 - over group 0| <= d: the
    unconstrained solution, or the one with the constraint active (closed form)."""
    Xa = np.hstack([np.ones((len(X), 1)), X])
    a = Xa[group == 1].mean(axis=0) - Xa[group == 0].mean(axis=0)
    b = np.linalg.lstsq(Xa, y, rcond=None)[0]
    if d is None or abs(a @ b) <= d:
        return b
    Ga = np.linalg.lstsq(Xa.T @ Xa, a, rcond=None)[0]
    return b - Ga * (a @ b - np.sign(a @ b) * d) / (a @ Ga)


def shift(train_prediction, test_prediction, group_train, group_test, d):
    """Post-processing: each group's predictions moved (the overall mean kept) so the training gap is d."""
    gap = gap_of(train_prediction, group_train)
    delta = np.sign(gap) * max(abs(gap) - d, 0.0)
    share = np.mean(group_train == 1)
    return test_prediction - np.where(group_test == 1, delta * (1 - share), -delta * share)


def frontier_runs(name, folder):
    """Every (method, setting, fold) of the frontier on one dataset, as a generator of result dicts."""
    X, y, group = fairness_data(name, folder)
    for fold, (train, test) in folds(X):
        sd = float(np.std(y[train]))
        for factor in pick(GAPS, GAPS[:2]):
            d = None if factor is None else factor * sd
            setting = "none" if factor is None else f"{factor} sd"
            for depth in (2, 3):
                yield (name, f"srt-d{depth}", setting, fold), lambda d=d, depth=depth, train=train, test=test: _srt(
                    X, y, group, train, test, depth, d)
            yield (name, "ls", setting, fold), lambda d=d, train=train, test=test: _ls(X, y, group, train, test, d)
            if d is not None:
                for base in ("ls", "srt-d3"):
                    yield (name, f"shift-{base}", setting, fold), lambda d=d, base=base, train=train, test=test: \
                        _shifted(X, y, group, train, test, base, d)
        for bound in pick(EG_BOUNDS, EG_BOUNDS[:1]) if importlib.util.find_spec("fairlearn") else ():
            for base in ("linear", "tree3"):
                yield (name, f"eg-{base}", f"{bound} x base", fold), lambda bound=bound, base=base, train=train, \
                    test=test: _eg(X, y, group, train, test, base, bound)


def _scores(y, group, prediction, train_gap, seconds):
    return {"r2": float(r2_score(y, prediction)), "gap": gap_of(prediction, group),
            "worst_mse": worst_mse(prediction, y, group), "train_gap": train_gap, "seconds": seconds}


def _srt(X, y, group, train, test, depth, d):
    constraints = None if d is None else f"parity:gap={d!r}"
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = regression_tree(depth=depth, random_state=0, constraints=constraints).fit(
            X[train], y[train], sensitive_features=group[train])
    seconds = time.process_time() - start
    return _scores(y[test], group[test], model.predict(X[test]), gap_of(model.predict(X[train]), group[train]),
                   seconds)


def _ls(X, y, group, train, test, d):
    start = time.process_time()
    b = least_squares_parity(X[train], y[train], group[train], d)
    seconds = time.process_time() - start
    predict = lambda rows: b[0] + X[rows] @ b[1:]  # noqa: E731
    return _scores(y[test], group[test], predict(test), gap_of(predict(train), group[train]), seconds)


def _shifted(X, y, group, train, test, base, d):
    start = time.process_time()
    if base == "ls":
        model = LinearRegression().fit(X[train], y[train])
    else:
        model = regression_tree(depth=3, random_state=0).fit(X[train], y[train])
    on_train = model.predict(X[train])
    prediction = shift(on_train, model.predict(X[test]), group[train], group[test], d)
    seconds = time.process_time() - start
    return _scores(y[test], group[test], prediction,
                   gap_of(shift(on_train, on_train, group[train], group[train], d), group[train]), seconds)


def _eg(X, y, group, train, test, base, bound):
    from fairlearn.reductions import BoundedGroupLoss, ExponentiatedGradient, SquareLoss

    make = (lambda: LinearRegression()) if base == "linear" else (lambda: DecisionTreeRegressor(max_depth=3,
                                                                                                random_state=0))
    start = time.process_time()
    lo, hi = float(y[train].min()), float(y[train].max())
    reference = make().fit(X[train], y[train]).predict(X[train])
    worst = max(np.mean(((reference - y[train]) / (hi - lo))[group[train] == k] ** 2) for k in (0, 1))
    model = ExponentiatedGradient(make(), BoundedGroupLoss(SquareLoss(lo, hi), upper_bound=bound * worst))
    model.fit(X[train], y[train], sensitive_features=group[train])
    seconds = time.process_time() - start
    return _scores(y[test], group[test], model.predict(X[test]), gap_of(model.predict(X[train]), group[train]),
                   seconds)


def monotone_runs(name):
    X, y, columns = load(name)
    signs = MONOTONE[name]
    vector = [signs.get(c, 0) for c in columns]
    frame = pd.DataFrame(X, columns=columns)
    for fold, (train, test) in folds(X):
        makers = {"srt-d2": lambda: regression_tree(depth=2, random_state=0),
                  "srt-d3": lambda: regression_tree(depth=3, random_state=0),
                  "srt-d2-monotone": lambda: regression_tree(depth=2, random_state=0, monotonic_cst=signs),
                  "srt-d3-monotone": lambda: regression_tree(depth=3, random_state=0, monotonic_cst=signs),
                  "hgb": lambda: HistGradientBoostingRegressor(random_state=0),
                  "hgb-monotone": lambda: HistGradientBoostingRegressor(random_state=0, monotonic_cst=vector)}
        for method, make in makers.items():
            yield (name, method, "monotone", fold), lambda make=make, train=train, test=test: _monotone(
                make(), frame, y, train, test, signs)


def _monotone(model, frame, y, train, test, signs):
    start = time.process_time()
    model.fit(frame.iloc[train], y[train])
    seconds = time.process_time() - start
    broken = 0
    for feature, sign in signs.items():
        grid = np.linspace(frame[feature].iloc[train].min(), frame[feature].iloc[train].max(), 25)
        rows = frame.iloc[test].loc[np.repeat(frame.index[test], len(grid))].copy()
        rows[feature] = np.tile(grid, len(test))
        along = model.predict(rows).reshape(len(test), len(grid))
        broken += int(np.sum(np.any(sign * np.diff(along, axis=1) < 0, axis=1)))
    return {"r2": float(r2_score(y[test], model.predict(frame.iloc[test]))), "seconds": seconds,
            "broken_rows": broken}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", choices=("frontier", "monotone"), default=["frontier", "monotone"])
    parser.add_argument("--fairness-data", default=os.environ.get("SRTOPT_FAIRNESS_DATA"),
                        help="folder of law_school.csv and communities_crime.csv")
    add_smoke(parser)
    args = parser.parse_args(argv)
    start(args)
    if not importlib.util.find_spec("fairlearn"):
        skip("the eg-linear and eg-tree3 methods", "fairlearn is not installed")
    store = results() / STORE
    done = {}
    if store.exists():
        for line in store.read_text().splitlines():
            row = json.loads(line)
            done[tuple(row["key"])] = row
    runs = []
    if "frontier" in args.parts:
        runs += [run for name in pick(FRONTIER, FRONTIER[:1]) for run in frontier_runs(name, args.fairness_data)]
    if "monotone" in args.parts:
        runs += [run for name in pick(list(MONOTONE), ["auto_mpg"]) for run in monotone_runs(name)]
    store.parent.mkdir(exist_ok=True)
    with store.open("a") as out:
        for key, run in runs:
            if key in done:
                continue
            done[key] = {"key": list(key), **run()}
            out.write(json.dumps(done[key]) + "\n")
            out.flush()
            print(key, {k: round(v, 4) for k, v in done[key].items() if isinstance(v, float)}, flush=True)
    report(done)


def _mean(rows, field):
    return float(np.mean([r[field] for r in rows]))


def report(done):
    lines = ["# Constrained trees", "",
             "Command: `python benchmarks/decisions/constraints.py` (module docstring: protocol and methods). Means over "
             "4 folds; the gap is mean prediction over group 1 minus over group 0, in y's units; seconds are CPU "
             "seconds per fit.", ""]
    groups: dict = {}
    for row in done.values():
        groups.setdefault(tuple(row["key"][:3]), []).append(row)
    for name in ("communities_crime", "law_school"):
        keys = [k for k in groups if k[0] == name]
        if not keys:
            continue
        lines += [f"## Parity frontier: {name}", "",
                  "| method | setting | test R^2 | test gap | worst group test MSE | training gap | seconds |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for key in sorted(keys, key=lambda k: (k[1], k[2])):
            rows = groups[key]
            lines.append(f"| {key[1]} | {key[2]} | {_mean(rows, 'r2'):.4f} | {_mean(rows, 'gap'):+.4f} | "
                         f"{_mean(rows, 'worst_mse'):.4f} | {_mean(rows, 'train_gap'):+.4f} | "
                         f"{_mean(rows, 'seconds'):.2f} |")
        lines += ["", _time_ratios(groups, name), ""]
    for name in MONOTONE:
        keys = [k for k in groups if k[0] == name]
        if not keys:
            continue
        lines += [f"## Monotone: {name} ({', '.join(f'{f} {s:+d}' for f, s in MONOTONE[name].items())})", "",
                  "| method | test R^2 | test rows whose prediction breaks the sign | seconds |", "|---|---:|---:|---:|"]
        for key in sorted(keys, key=lambda k: k[1]):
            rows = groups[key]
            lines.append(f"| {key[1]} | {_mean(rows, 'r2'):.4f} | {sum(r['broken_rows'] for r in rows)} | "
                         f"{_mean(rows, 'seconds'):.2f} |")
        lines.append("")
    write_report(results() / "constraints.md", lines)
    _figure(groups)


def _time_ratios(groups, name) -> str:
    ratios = []
    for depth in (2, 3):
        free = groups.get((name, f"srt-d{depth}", "none"))
        for factor in GAPS[1:]:
            rows = groups.get((name, f"srt-d{depth}", f"{factor} sd"))
            if free and rows:
                ratios.append(f"depth {depth}, gap {factor} sd: {_mean(rows, 'seconds') / _mean(free, 'seconds'):.1f}x")
    return "Constrained fit time against the unconstrained fit: " + "; ".join(ratios) + "."


def _figure(groups):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in ("communities_crime", "law_school") if any(k[0] == n for k in groups)]
    if not names:
        return
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        methods = sorted({k[1] for k in groups if k[0] == name})
        for method in methods:
            keys = sorted((k for k in groups if k[0] == name and k[1] == method), key=lambda k: k[2])
            points = sorted((abs(_mean(groups[k], "gap")), _mean(groups[k], "r2")) for k in keys)
            ax.plot(*zip(*points), marker="o", linestyle="-" if method.startswith("srt") else "--", label=method)
        ax.set(title=name, xlabel="|test gap between the groups' mean predictions|", ylabel="test R^2")
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(docs_figure("constraints_frontier.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
