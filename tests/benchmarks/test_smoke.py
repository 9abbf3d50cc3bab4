"""The benchmark scripts' smoke mode and its runner (benchmarks/smoke.py, benchmarks/common/__init__.py): every script
takes ``--smoke`` and imports no other script (what they share is in benchmarks/common/); the runner runs each, says
which failed and exits non-zero then; the scripts the library broke unseen run again."""

import ast
import os

import pytest

from benchmarks import smoke
from benchmarks.common import BENCHMARKS, SMOKE_ENV


def _imported(tree) -> set:
    return ({node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
            | {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names})


def test_every_script_has_a_smoke_mode_and_imports_no_other_script():
    paths = smoke.scripts()
    assert len(paths) >= 40 and {p.parent.name for p in paths} == set(smoke.FOLDERS)
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        others = sorted(m for m in _imported(tree) if m.startswith("benchmarks.") and m.split(".")[1] != "common")
        assert not others, f"{path.relative_to(BENCHMARKS)} imports the scripts {others}: move what they share to " \
                           f"benchmarks/common/"
        assert "main" in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}, path
        called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        assert called & {"parse", "add_smoke"}, f"{path.relative_to(BENCHMARKS)} takes no --smoke"


@pytest.fixture
def fake_benchmarks(tmp_path, monkeypatch):
    """A benchmarks folder of two scripts, one failing, importable as the package ``fakebench``."""
    root = tmp_path / "fakebench"
    (root / "perf").mkdir(parents=True)
    (root / "perf" / "broken.py").write_text("def main(argv):\n    raise KeyError('no column named Plas')\n")
    (root / "perf" / "fine.py").write_text(
        "import os\n\ndef main(argv):\n    print('skipped: EBM (interpret is not installed)')\n"
        "    return 0 if argv == ['--smoke'] and os.environ['SRTOPT_BENCHMARK_SMOKE'] else 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    monkeypatch.setattr(smoke, "BENCHMARKS", root)
    return root


def test_the_runner_names_the_failing_script_runs_the_others_and_exits_non_zero(fake_benchmarks, capsys):
    assert smoke.main([]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[3] for line in out if " s  " in line] == ["perf/broken.py", "perf/fine.py"]
    assert any("FAILED  perf/broken.py" in line for line in out)
    assert any("KeyError: 'no column named Plas'" in line for line in out)
    assert any("ok      perf/fine.py  (skipped: EBM (interpret is not installed))" in line for line in out)
    assert out[-1].startswith("smoke: 2 scripts in ") and out[-1].endswith("1 failed: perf/broken.py")
    assert SMOKE_ENV not in os.environ


def test_the_runner_runs_the_scripts_named_and_refuses_an_unknown_name(fake_benchmarks, capsys):
    assert smoke.main(["fine"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("none failed")
    with pytest.raises(SystemExit, match="no benchmark script named nosuch"):
        smoke.main(["fine", "nosuch"])


@pytest.mark.slow
@pytest.mark.parametrize("script", ["decisions/search.py", "decisions/formulations.py"])
def test_the_scripts_the_library_broke_unseen_run_in_smoke_mode(script, tmp_path):
    """formulations ran IPOPT on split_l1's subproblems by a route that refuses them since its Hessian is exact;
    the searches' script follows their API."""
    passed, _, printed = smoke.run_one(BENCHMARKS / script, tmp_path)
    assert passed, printed
