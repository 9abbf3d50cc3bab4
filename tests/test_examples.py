"""The examples (scripts and doctests) run and leave nothing behind (no temporary folders)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


def test_inspect_subproblem_cleans_up_its_exports(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = subprocess.run([sys.executable, str(REPO / "examples" / "inspect_subproblem.py")], cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp)),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in done.stdout.splitlines() if line.startswith("exported ")] == [
        "bn_node2.nl", "bn_node2.gms", "bn_node2.casadi", "bn_node2.c"]
    assert list(tmp.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]


def test_doctests_leave_no_temporary_folder(tmp_path, monkeypatch):
    import doctest
    import tempfile

    import srtopt.persistence

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = doctest.testmod(srtopt.persistence, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
    assert list(tmp_path.iterdir()) == []


def _run_quick(name):
    done = subprocess.run([sys.executable, str(REPO / "examples" / f"{name}.py")], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO), SRTOPT_EXAMPLES_QUICK="1"), timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_custom_loss_example_huber_beats_squared_with_outliers():
    rows = {line[:28].strip(): float(line[28:37]) for line in _run_quick("custom_loss")[1:]}
    assert set(rows) == {"squared", "huber (delta 0.3)", "absolute (smoothed)", "log-cosh (CasADi callable)",
                         "cauchy (registered class)"}
    assert all(r2 > rows["squared"] + 0.2 for name, r2 in rows.items() if name != "squared")


def test_sparse_splits_example_removes_the_noise_columns():
    out = _run_quick("sparse_splits")
    per_split = [float(line.split("features per split")[1].split()[0]) for line in out if "features per split" in line]
    assert per_split[0] > 5 and per_split[-1] < per_split[0]
    noise = [int(line.split("noise columns used")[1].split("/")[0]) for line in out if "noise columns used" in line]
    assert noise[0] == 10 and noise[-1] == 0
    slopes = [line for line in out if "zero leaf slopes" in line]
    assert len(slopes) == 3 and all(int(line.split("zero leaf slopes")[1].split("/")[0]) > 0 for line in slopes)


def test_working_sets_example_compares_four_rules():
    out = _run_quick("working_sets")
    rows = {line.split()[0]: [float(v) for v in line.split()[1:5]] for line in out[1:]}
    assert set(rows) == {"subtree", "all", "paths", "bottom_up"}
    assert all(E_end <= E_start for _, E_start, E_end, _ in rows.values())


def test_custom_solver_example_trains_with_a_registered_solver():
    out = _run_quick("custom_solver")
    assert out[0].startswith("registered: AdamSolver(lr=0.02")
    rows = {line.split()[0]: float(line.split()[1]) for line in out[2:]}
    assert set(rows) == {"auto", "adam", "adam:lr=0.02"} and all(0 < E < 1 for E in rows.values())


def test_user_constraint_example_reports_saves_loads_and_runs_from_the_cli():
    out = _run_quick("user_constraint")
    rows = [line for line in out if line.startswith("  group_bias:bound=2 ")]
    assert len(rows) == 2 and all(line.rstrip().endswith("yes") for line in rows)
    capped = [line for line in out if "mean prediction of all rows at leaf" in line]
    assert len(capped) == 4 and all(line.rstrip().endswith("yes") for line in capped)
    assert any(line.startswith("held out: mean residual of group f = ") for line in out)
    assert "saved and loaded: constraints=group_bias:bound=2, same predictions: True" in out
    (cli,) = [line for line in out if line.startswith("srtopt fit ... --constraint group_bias:bound=2: saved cli.json")]
    assert cli.endswith("constraints: 2 of 2 rows hold on the training data)")


def test_own_leaf_model_example_fits_shows_saves_and_loads_poisson_leaves():
    """examples/own_leaf_model.py, in a fresh interpreter: a leaf model written against the public contract in
    one file, with no placeholder loss and no leaf_ridge of its own, fits by its registered name, reads as
    "log mu = ...", a saved model loads back as it, and ``srtopt fit --leaf poisson`` fits it too."""
    import ast

    tree = ast.parse((REPO / "examples" / "own_leaf_model.py").read_text())
    bases = {getattr(base, "id", getattr(base, "attr", None)) for node in ast.walk(tree)
             if isinstance(node, ast.ClassDef) for base in node.bases}
    assert bases == {"Identity", "LeafModel"}  # no Loss class
    assert not any(keyword.arg == "leaf_ridge" for node in ast.walk(tree) if isinstance(node, ast.Call)
                   for keyword in node.keywords)
    out = _run_quick("own_leaf_model")
    errors = {line.split()[0]: float(line.split(":")[1]) for line in out[:2]}
    assert set(errors) == {"Poisson", "linear"} and all(0 < e < 5 for e in errors.values())
    assert sum("log mu = " in line for line in out) >= 4
    assert out[-2:] == ["saved and loaded: PoissonLeaves, the same predictions",
                        "srtopt fit ... --leaf poisson: PoissonLeaves, the same predictions: True"]


def test_spline_leaves_example_fits_curves_linear_leaves_miss():
    out = _run_quick("spline_leaves")
    r2 = {line.split()[0]: float(line.split("test R^2 ")[1].split(",")[0]) for line in out[:2]}
    assert r2["spline"] > r2["linear"] + 0.1
    assert any("+f(dose)[" in line for line in out)
