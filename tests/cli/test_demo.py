import contextlib
import io
import re
from pathlib import Path

import pytest

from srtopt.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: the documents that show the demo's table
SHOWN_IN = ("README.md", "docs/getting_started.md")
#: a row of the table: the model, CV R^2, (sd), split R^2 (the fit seconds, last, are not compared)
ROW = re.compile(r"^(\S.*?)\s{2,}(-?\d\.\d{3}) \((\d\.\d{3})\)\s+(-?\d\.\d{3})\s+\d+\.\d\d$", re.M)


@pytest.fixture(scope="module")
def demo_output() -> str:
    """What ``srtopt demo`` prints (the function the command line calls), run once for the module."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["demo"]) == 0
    return out.getvalue()


def table(text) -> dict:
    """{model: (CV R^2, sd, split R^2)} of the demo's table in ``text``, the cells as printed."""
    return {name: tuple(cells) for name, *cells in ROW.findall(text)}


def test_demo_prints_cross_validated_scores_and_the_tree(demo_output):
    out = demo_output
    cv = {name: float(cells[0]) for name, cells in table(out).items()}
    assert set(cv) == {"SRT l2, depth 2", "SRT l2, depth 3", "SRT CV search", "SRT (no l2), depth 2",
                      "CART, depth 3", "linear regression", "random forest (100)"}
    assert cv["SRT l2, depth 2"] > cv["CART, depth 3"] + 0.1
    assert cv["SRT l2, depth 2"] > cv["random forest (100)"]
    # the search's tree: well above CART, and level with linear regression on this nearly linear data
    assert cv["SRT CV search"] > cv["CART, depth 3"] + 0.1
    assert cv["SRT CV search"] >= cv["linear regression"] - 0.02
    assert re.search(r"SRT CV search: on the split's training rows, 4-fold CV repeated 3 times chose depth \d "
                     r"and [\w:=,]+ leaves", out)
    assert "The depth-2 SRT l2 of the split" in out and "leaf 4" in out


@pytest.mark.parametrize("document", SHOWN_IN)
def test_the_documents_show_the_table_the_demo_prints(demo_output, document):
    """The README's table (and the getting-started page's) is what ``srtopt demo`` prints, cell by cell, the
    fit seconds aside.  A cell may differ by one unit of its last digit: the fits of the oldest dependency
    versions pyproject.toml allows differ from the newest by up to 6e-5 relative (the plain SRT's;
    tests/estimators/test_default_unchanged.py), which can round the third decimal the other way."""
    printed, shown = table(demo_output), table((ROOT / document).read_text(encoding="utf-8"))
    assert list(shown) == list(printed), f"{document} shows the models {list(shown)}, the demo prints {list(printed)}"
    differ = {name: f"shown {' '.join(shown[name])}, printed {' '.join(printed[name])}" for name in printed
              if any(abs(float(a) - float(b)) > 0.001 + 1e-9 for a, b in zip(shown[name], printed[name]))}
    assert not differ, f"{document}'s demo table is not what `srtopt demo` prints (update it): {differ}"


def test_demo_piped_into_a_reader_that_stops_early_ends_quietly():
    """``srtopt demo | head -1``: the reader closes the pipe after one line; the command ends
    with status 0 (not an error for a Unix filter), quietly."""
    import os
    import subprocess
    import sys

    reader = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE)
    done = subprocess.run([sys.executable, "-m", "srtopt", "demo"], stdout=reader.stdin, stderr=subprocess.PIPE,
                          text=True, timeout=300, env=dict(os.environ, PYTHONWARNINGS="ignore"))
    reader.stdin.close()
    reader.wait(timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
