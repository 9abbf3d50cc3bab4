"""The examples (scripts and doctests) run and leave nothing behind (no temporary folders)."""

import os
import subprocess
import sys
from pathlib import Path

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
