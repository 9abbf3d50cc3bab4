"""The README's short tour runs as written: every name it uses is made in it (a fresh namespace, in a
temporary folder for the model file it saves)."""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def tour(text) -> str:
    """The Python block of the README's "A short tour"."""
    found = re.search(r"^## A short tour\n\n```python\n(.*?)^```$", text, re.M | re.S)
    assert found, "README.md has no Python block under '## A short tour'"
    return found.group(1)


@pytest.mark.slow
def test_the_short_tour_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    names, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(tour(README.read_text(encoding="utf-8")), "README.md (A short tour)", "exec"), names)
    assert (tmp_path / "model.json").is_file()
    assert names["tree"].predict(names["X_new"]).shape == (len(names["X_new"]),)
    assert "leaf" in printed.getvalue()  # export_text's tree
    assert names["milo"].mip_bound_ <= names["milo"].objective_  # the bound it proves
