"""Reference fits of the default SoftRegressionTree, for the "default model unchanged" test.

    PYTHONPATH=. SRTOPT_DATA=/path/to/datasets OPENBLAS_NUM_THREADS=1 python tests/data/make_reference_predictions.py

Fits every case of :data:`CASES` on the full dataset and writes predictions, omega_, beta_,
objective_ and the E after each inner iteration to
``tests/data/reference_predictions/<versions>.npz``, one file per combination of the
numerical libraries (floating-point results differ between their versions; the test compares
a fit with every file, within a tolerance that holds the differences between them).
The files in the repository were written in the newest and in the oldest dependency
environments of ``.ci/run`` when the default initialization became the model tree
(``init="model-tree"``; the cases with ``init="cluster"`` guard the paper's
initialization), re-recorded when the default BN solver became Newton with the exact
Hessian on the one-node subproblems of the SRT l2 model
(``"newton:max_blocks=1,needs_minimizer=True,penalties=l2"``, L-BFGS-B with tol 1e-6 on the others),
and re-recorded when the BN Hessian and the WLR loss became compiled kernels, Newton took the
subtree subproblems of at most 64 variables and 3000 rows too and the WLR Newton solve's tolerance became
1e-8 (the speed issue; docs/departures.md, "The BN step").  A change that is meant to leave the
default fits alone must leave these files valid.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "reference_predictions"

# (dataset, estimator parameters, fit options: "sample_weight": "ramp" fits with weights
# 0.5 + i/N; "chunk_rows": n runs the full-data kernels in blocks of n rows)
CASES = [(slug, dict(depth=depth, random_state=seed), {})
         for slug in ("yacht", "housing", "auto_mpg") for depth in (2, 3) for seed in (0, 1)]
CASES += [(slug, dict(depth=depth, random_state=0, k0=0), {}) for slug in ("yacht", "housing", "auto_mpg")
          for depth in (2, 3)]
CASES += [(slug, dict(depth=depth, random_state=3, n_restarts=2), {}) for slug in ("yacht", "auto_mpg")
          for depth in (2, 3)]
CASES += [("housing", dict(depth=2, random_state=0, regularization=None), {}),
          ("auto_mpg", dict(depth=2, random_state=0, bn_solver="ipopt:hessian=limited-memory,tol=1e-5"), {}),
          ("yacht", dict(depth=2, random_state=0, wlr_solver="sklearn", ln_solver="lsqr"), {}),
          ("housing", dict(depth=3, random_state=2), {"sample_weight": "ramp"}),
          ("housing", dict(depth=2, random_state=0, max_subproblem_rows=200), {}),
          ("auto_mpg", dict(depth=3, random_state=1, n_restarts=2, n_jobs=2, clip_predictions=False), {}),
          ("yacht", dict(depth=3, random_state=0), {"chunk_rows": 50})]
CASES += [(slug, dict(depth=depth, random_state=0, init="cluster"), {}) for slug in ("yacht", "housing")
          for depth in (2, 3)]  # the paper's initialization
CASES += [("auto_mpg", dict(depth=3, random_state=0, init=["model-tree", "cart"]), {})]


def versions_key() -> str:
    """The numerical libraries whose versions change floating-point results."""
    import casadi
    import numba
    import scipy
    import sklearn

    return (f"numpy{np.__version__}-scipy{scipy.__version__}-sklearn{sklearn.__version__}-casadi{casadi.__version__}"
            f"-numba{numba.__version__}")


def load_dataset(slug, data_dir):
    data = np.genfromtxt(Path(data_dir) / f"{slug}.csv", delimiter=",", skip_header=1)
    return data[:, :-1], data[:, -1]


def case_name(i, slug, params) -> str:
    return f"{i:02d}_{slug}_" + "_".join(f"{k}={v}" for k, v in sorted(params.items()))


def fit_case(slug, params, options, data_dir):
    """The fitted estimator and its training-set predictions."""
    from srtopt import SoftRegressionTree, kernels

    X, y = load_dataset(slug, data_dir)
    fit_kwargs = {}
    if options.get("sample_weight") == "ramp":
        fit_kwargs["sample_weight"] = 0.5 + np.arange(len(y)) / len(y)
    chunk_rows = kernels.CHUNK_ROWS
    kernels.CHUNK_ROWS = options.get("chunk_rows", chunk_rows)
    try:
        model = SoftRegressionTree(**params).fit(X, y, **fit_kwargs)
        return model, model.predict(X)
    finally:
        kernels.CHUNK_ROWS = chunk_rows


def main(data_dir) -> Path:
    arrays = {}
    for i, (slug, params, options) in enumerate(CASES):
        model, pred = fit_case(slug, params, options, data_dir)
        name = case_name(i, slug, params)
        arrays[f"{name}/pred"] = pred
        arrays[f"{name}/omega"] = model.omega_
        arrays[f"{name}/beta"] = model.beta_
        arrays[f"{name}/objective"] = np.array([model.objective_])
        arrays[f"{name}/E_after"] = np.array([r["E_after"] for r in model.history_])
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{versions_key()}.npz"
    np.savez_compressed(path, **arrays)
    return path


if __name__ == "__main__":
    import os

    print(main(sys.argv[1] if len(sys.argv) > 1 else os.environ["SRTOPT_DATA"]))
