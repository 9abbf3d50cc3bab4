"""The default model is unchanged: same parameters and seed give bit-identical fits to those
recorded when the default BN solver became Newton on the one-node subproblems and those of at most 64
variables (benchmarks/reference_predictions.py)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ..conftest import DATA, load_csv

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("reference_predictions",
                                               ROOT / "benchmarks" / "reference_predictions.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


@pytest.fixture(scope="module")
def recorded():
    path = reference.OUT / f"{reference.versions_key()}.npz"
    if not path.exists():
        pytest.skip(f"no reference fits for these library versions ({reference.versions_key()}); "
                    f"recorded: {sorted(p.stem for p in reference.OUT.glob('*.npz'))}")
    return np.load(path)


@pytest.mark.parametrize("i", range(len(reference.CASES)),
                         ids=[reference.case_name(i, c[0], c[1]) for i, c in enumerate(reference.CASES)])
def test_fit_is_bit_identical_to_the_recorded_one(recorded, i):
    slug, params, options = reference.CASES[i]
    load_csv(slug)  # skips without the datasets
    model, pred = reference.fit_case(slug, params, options, DATA)
    name = reference.case_name(i, slug, params)
    np.testing.assert_array_equal(pred, recorded[f"{name}/pred"])
    np.testing.assert_array_equal(model.omega_, recorded[f"{name}/omega"])
    np.testing.assert_array_equal(model.beta_, recorded[f"{name}/beta"])
    assert model.objective_ == recorded[f"{name}/objective"][0]
    np.testing.assert_array_equal([r["E_after"] for r in model.history_], recorded[f"{name}/E_after"])
