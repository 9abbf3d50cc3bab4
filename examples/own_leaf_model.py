"""
A leaf model of your own: Poisson leaves for counts
===================================================

A soft tree whose leaves predict counts: leaf l gives row i the rate mu_il = exp(u_il), u_il = beta_l . [1, x_s],
and R_il = mu_il - y_i u_il, the Poisson deviance up to terms free of beta.  The splits and NODEC-DR are the
SRT's: they see a leaf model only through R_il (docs/leaves.md, "Writing a leaf model").

    PYTHONPATH=. python examples/own_leaf_model.py      (SRTOPT_EXAMPLES_QUICK=1: a smaller run)

Everything is written against the public contract of :mod:`srtopt.leaf_model`, in this one file:

* ``Exp``, the link: what the scores predict (the rate), how the views name the score ("log mu") and its
  units (none: no standardization);
* ``PoissonLeaves``, the leaf model: counts as they are (``standardizes = False``), R_il with its derivatives
  in the score, its CasADi and Pyomo forms, its start (the log of the mean count of its rows), the CART that
  starts the splits (scikit-learn's Poisson criterion), the fit it reports (``score_name``, the share of
  deviance explained).  It declares no ``residual_loss``: R_il is no loss of a residual, so the LN steps are
  Newton's on the Hessian ``losses`` gives, never least squares; and ``leaf_ridge="auto"`` scores its folds by
  this R_il and pulls leaves towards the Poisson fit of all rows (``center``, the contract's default).

It is registered (``register_leaf_model("poisson", PoissonLeaves)``): ``leaf="poisson"`` names it, in Python and
in ``srtopt fit --leaf poisson``, and a model file that holds it is read back by it.  The example fits it on
counts whose log rate is bent by a split, beside the same tree with linear leaves fitted to the counts, prints
the tree, saves and loads it, and fits it from the command line.
"""

import contextlib
import io
import os
import tempfile
from pathlib import Path

import casadi as ca
import numpy as np
import pandas as pd

import srtopt
from srtopt import SoftRegressionTree
from srtopt.bases import Basis, basis_from_json
from srtopt.cli import main as srtopt_cli
from srtopt.export import export_text
from srtopt.leaf_model import Identity, LeafModel, register_leaf_model
from srtopt.models.leaves import fit_basis

QUICK = bool(os.environ.get("SRTOPT_EXAMPLES_QUICK"))


class Exp(Identity):
    """The rate mu = exp(u) of a leaf's score u (the log link); counts need no standardization."""

    name = "exp"

    def __call__(self, U):
        return np.exp(np.minimum(U[:, 0], 700.0))  # exp overflows beyond 709

    def score_names(self, classes=None, scaled=False):
        return ["log mu"]

    def score_units(self, scaling):
        return 0.0, 1.0


class PoissonLeaves(LeafModel):
    """mu_il = exp(Xa_i . beta_l), R_il = mu_il - y_i log mu_il, on the basis ``basis`` ("linear", "spline")."""

    standardizes = False
    score_name = "deviance explained"

    def __init__(self, basis="linear"):
        super().__init__(basis, Exp())

    @classmethod
    def from_json(cls, doc):
        return cls(basis_from_json(doc["basis"]))

    def fitted(self, Xs, targets, weights, lambda_b):
        """The basis of its spec fitted on the scaled training rows (a spline's knots and smoothness)."""
        return self if isinstance(self.basis, Basis) else self.with_basis(
            fit_basis(self.basis, Xs, targets[:, None], weights, lambda_b))

    def start(self, problem, rows):
        w = problem.counts[rows]
        mean = np.average(problem.y[rows], weights=w) if w.sum() > 0 else np.average(problem.y, weights=problem.counts)
        return np.r_[np.log(max(mean, 1e-3)), np.zeros(problem.Xa.shape[1] - 1)]

    def losses(self, Xa, T, beta, order=0):
        U = np.minimum(Xa @ beta.T, 700.0)
        mu = np.exp(U)
        R = mu - T[:, None] * U
        if order == 0:
            return R
        D = (mu - T[:, None])[None]
        return (R, D) if order == 1 else (R, D, mu[None, None])

    def casadi(self, Xa, T, B):
        U = ca.mtimes(Xa, B.T)
        return ca.exp(U) - ca.repmat(T, 1, B.shape[0]) * U

    def pyomo(self, xa, t, b):
        import pyomo.environ as pyo

        u = sum(float(a) * v for a, v in zip(xa, b))
        return pyo.exp(u) - float(t) * u

    def partition_tree(self, **options):
        from sklearn.tree import DecisionTreeRegressor

        return DecisionTreeRegressor(criterion="poisson", **options)

    def score(self, outputs, y, s):
        def deviance(mu):
            return float(s @ (2 * (np.where(y > 0, y * np.log(np.where(y > 0, y, 1) / mu), 0.0) - (y - mu))))

        return 1.0 - deviance(outputs) / deviance(np.full_like(y, (s @ y) / s.sum()))


register_leaf_model("poisson", PoissonLeaves)


def counts(n, rng):
    """Counts whose log rate is 0.5 + 1.5 x0 where x1 < 0.5, and 2 - 2 x0 beyond."""
    X = rng.random((n, 3))
    log_rate = np.where(X[:, 1] < 0.5, 0.5 + 1.5 * X[:, 0], 2.0 - 2.0 * X[:, 0])
    return X, rng.poisson(np.exp(log_rate)).astype(float), np.exp(log_rate)


rng = np.random.default_rng(0)
X, y, _ = counts(800 if QUICK else 4000, rng)
X_test, _, rate_test = counts(2000, rng)
poisson = SoftRegressionTree(depth=1, leaf="poisson", random_state=0).fit(X, y)
linear = SoftRegressionTree(depth=1, random_state=0).fit(X, y)
for name, model in [("Poisson leaves", poisson), ("linear leaves", linear)]:
    error = np.mean((model.predict(X_test) - rate_test) ** 2)
    print(f"{name:15s} mean squared error of the rate on new rows: {error:.4f}")
print(export_text(poisson, feature_names=["x0", "x1", "x2"]))

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "poisson.json"
    poisson.save(path)
    again = srtopt.load(path)
    pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "x2": X[:, 2], "count": y}).to_csv(Path(folder) / "counts.csv",
                                                                                 index=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        srtopt_cli(["fit", str(Path(folder) / "counts.csv"), "--target", "count", "--depth", "1", "--leaf", "poisson",
                    "--out", str(Path(folder) / "cli.json"), "--quiet"])
    from_cli = srtopt.load(Path(folder) / "cli.json")
assert np.array_equal(again.predict(X_test), poisson.predict(X_test))
print(f"saved and loaded: {type(again.leaf_model_).__name__}, the same predictions")
same = np.allclose(from_cli.predict(pd.DataFrame(X_test, columns=["x0", "x1", "x2"])), poisson.predict(X_test))
print(f"srtopt fit ... --leaf poisson: {type(from_cli.leaf_model_).__name__}, the same predictions: {same}")
