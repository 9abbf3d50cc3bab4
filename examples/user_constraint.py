"""
Your own constraint: each group's mean residual, and each leaf's mean prediction
================================================================================

Write a constraint of your own in a few lines, fit with it, read the report, save and load the
model, and use the constraint from the command line; then measure it where it matters, on rows
the tree did not see.

    PYTHONPATH=. python examples/user_constraint.py     (SRTOPT_EXAMPLES_QUICK=1: a smaller run)

A constraint that averages a value of the prediction over the rows is a ``RowMean``: the value
v(yhat, y) is written once, like a user's loss (a CasADi callable, or "prediction", "residual",
"squared_error"), in y's units; the mean is over every row, each protected group, each pair of
groups or a mask of the rows, for the whole tree or for each leaf.  ``GroupBias`` below bounds
each group's mean residual (the tree neither over- nor under-predicts a group on average);
registered under a name, it is a spec like the built-in ones (``"group_bias:bound=5"``), in a
grid search, in a saved model and on the command line.  A cap on each leaf's mean prediction
needs no class at all.

The diabetes data (442 rows; the group is the patients' sex, not a feature): the constraint holds
on the training rows by construction; on the held-out rows its value is an estimate with an
interval (``srtopt.fairness``), which on 100 test rows is wide.
"""

import contextlib
import io
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

import srtopt
from srtopt import SoftRegressionTree
from srtopt.cli import main as srtopt_cli
from srtopt.export import export_constraints
from srtopt.fairness import constraint_report, group_means
from srtopt.models.constraints import RowMean, register_constraint

QUICK = bool(os.environ.get("SRTOPT_EXAMPLES_QUICK"))


class GroupBias(RowMean):
    """Each group's mean residual (prediction - y) within +-bound, in y's units."""

    name = "group_bias"

    def __init__(self, bound=1.0):
        self.bound = bound  # the parameters are the __init__ arguments, stored under their names
        super().__init__("residual", over="groups", lower=-bound, upper=bound)


register_constraint("group_bias", GroupBias)  # now "group_bias:bound=5" is a spec


def main():
    data = load_diabetes(as_frame=True)
    X, y = data.data, data.target.to_numpy()
    sex = (X.pop("sex") > 0).map({False: "f", True: "m"}).to_numpy()  # the group, not a feature
    X_train, X_test, y_train, y_test, sex_train, sex_test = train_test_split(X, y, sex, test_size=0.25,
                                                                             random_state=0)
    params = {"depth": 2, "random_state": 0, "max_iter": 3 if QUICK else 10}
    free = SoftRegressionTree(**params).fit(X_train, y_train)
    fair = SoftRegressionTree(**params, constraints="group_bias:bound=2").fit(X_train, y_train,
                                                                                sensitive_features=sex_train)
    prediction, leaves = free.predict(X_train), free.apply(X_train)
    cap = float(np.floor(0.97 * max(prediction[leaves == t].mean() for t in np.unique(leaves))))  # binds
    capped = SoftRegressionTree(**params, constraints=RowMean("prediction", upper=cap, per_leaf=True))
    capped.fit(X_train, y_train)

    print(export_constraints(fair))
    print(export_constraints(capped))
    print()
    print(f"{'model':<26}{'test R^2':>9}  mean residual by group on the test rows (95% interval)")
    residuals = {}
    for name, model in (("unconstrained", free), ("group_bias:bound=2", fair), (f"leaf means <= {cap:.0f}", capped)):
        residual = group_means(model.predict(X_test) - y_test, sex_test)
        residuals[name] = residual
        intervals = ", ".join(f"{r.group}: {r.mean:+.1f} [{r.low:+.1f}, {r.high:+.1f}]" for r in residual.itertuples())
        print(f"{name:<26}{model.score(X_test, y_test):9.3f}  {intervals}")
    held = constraint_report(fair, X_test, y_test, sensitive_features=sex_test)
    print("held out:", ", ".join(f"{row['row']} = {row['predict']:+.2f} ({'holds' if row['holds'] else 'does not hold'})"
                                 for row in held))

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        fair.save(folder / "fair.json")
        loaded = srtopt.load(folder / "fair.json")
        print(f"saved and loaded: constraints={loaded.constraints}, same predictions: "
              f"{np.array_equal(loaded.predict(X_test), fair.predict(X_test))}")
        X_train.assign(sex=sex_train, y=y_train).to_csv(folder / "train.csv", index=False)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            srtopt_cli(["fit", str(folder / "train.csv"), "--target", "y", "--sensitive", "sex", "--depth", "2",
                  "--constraint", "group_bias:bound=2", "--max-iter", str(params["max_iter"]),
                  "--out", str(folder / "cli.json"), "--quiet"])
        print("srtopt fit ... --constraint group_bias:bound=2:", out.getvalue().strip().replace(str(folder) + os.sep, ""))

    fig, ax = plt.subplots(figsize=(6, 3))
    for k, (name, residual) in enumerate(residuals.items()):
        centers = np.arange(len(residual)) + 0.25 * (k - 1)
        ax.errorbar(centers, residual["mean"], yerr=[residual["mean"] - residual["low"], residual["high"] -
                                                      residual["mean"]], fmt="o", capsize=3, label=name)
    ax.axhspan(-2, 2, color="0.9", label="the bound on the training rows")
    ax.set_xticks(range(len(residual)), [f"group {g}" for g in residual["group"]])
    ax.set(ylabel="mean residual on the test rows", title="A training-data bound, measured on new rows")
    ax.legend(fontsize=7)
    fig.tight_layout()


if __name__ == "__main__":
    main()
