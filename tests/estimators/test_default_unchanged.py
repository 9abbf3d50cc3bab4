"""The default model is unchanged: same parameters and seed give the fits recorded when the default
BN solver became Newton on the one-node subproblems and those of at most 64 variables
(tests/data/make_reference_predictions.py), up to rounding.  The fits were recorded with the newest
and with the oldest dependency versions pyproject.toml allows (the two environments of .ci/run),
and a fit is compared with each recording, whatever versions are installed: the tolerance holds the
rounding differences between those dependency sets and between CPUs.
The fitted tree closes the splits that send no training row to one side (pruning, recorded later
than these fits): the recorded omega is compared with those splits closed the same way."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from srtopt.kernels import close_unreached
from srtopt.tree import Tree

from ..conftest import DATA, load_csv

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("make_reference_predictions",
                                               ROOT / "tests" / "data" / "make_reference_predictions.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@pytest.fixture(scope="module")
def recordings():
    """{dependency versions: the recorded fits}, one per file of tests/data/reference_predictions."""
    files = sorted(reference.OUT.glob("*.npz"))
    assert len(files) >= 2, f"expected the newest and the oldest dependency sets' fits in {reference.OUT}"
    return {path.stem: np.load(path) for path in files}


@pytest.mark.parametrize("i", range(len(reference.CASES)),
                         ids=[reference.case_name(i, c[0], c[1]) for i, c in enumerate(reference.CASES)])
def test_fit_equals_the_recorded_ones_up_to_rounding(recordings, i):
    slug, params, options = reference.CASES[i]
    load_csv(slug)  # skips without the datasets
    model, pred = reference.fit_case(slug, params, options, DATA)
    name = reference.case_name(i, slug, params)
    # without regularization the objective is flat along some directions of omega: there the
    # parameters move by ~1e-3 while the objective and predictions agree to ~1e-9 (case 22)
    flat = "regularization" in params and params["regularization"] is None
    # Measured on the two recordings (|a - b| against the tolerance below, both ways): the oldest and
    # the newest dependency sets differ by at most 0.44 of it (case 22's E_after; 0.29 of its beta),
    # 0.018 on the other cases; another CPU moved predictions by 9e-11 relative (an AMD EPYC against
    # the recording machine).
    for versions, recorded in recordings.items():
        for actual, key in ((pred, "pred"), (model.omega_, "omega"), (model.beta_, "beta"),
                            ([model.objective_], "objective"), ([r["E_after"] for r in model.history_], "E_after")):
            expected = recorded[f"{name}/{key}"]
            if key == "omega":
                expected = close_unreached(expected, model.node_counts_, Tree(model.depth), model.mu)
            rtol = 1e-2 if flat and key in ("omega", "beta") else 1e-7
            np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * 1e-2 * np.max(np.abs(expected)),
                                       err_msg=f"{key}, against the fit recorded with {versions}")
