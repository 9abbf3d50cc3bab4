import re

import pytest

from srtopt.cli import main

pytestmark = pytest.mark.slow


def test_demo_prints_cross_validated_scores_and_the_tree(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    rows = dict(re.findall(r"^(\S.*?)\s{2,}(-?\d\.\d{3}) \(\d\.\d{3}\)\s+-?\d\.\d{3}\s+\d+\.\d\d$", out, re.M))
    assert set(rows) == {"SRT l2, depth 2", "SRT l2, depth 3", "SRT l2 CV, depth 3", "SRT (no l2), depth 2",
                         "CART, depth 3", "linear regression", "random forest (100)"}
    cv = {name: float(value) for name, value in rows.items()}
    assert cv["SRT l2, depth 2"] > cv["CART, depth 3"] + 0.1
    assert cv["SRT l2, depth 2"] > cv["random forest (100)"]
    # the depth-3 tree with its split weight chosen by CV: well above CART, and level with linear
    # regression on this nearly linear data (0.488 and 0.493 from two initializations, against 0.489)
    assert cv["SRT l2 CV, depth 3"] > cv["CART, depth 3"] + 0.1
    assert cv["SRT l2 CV, depth 3"] >= cv["linear regression"] - 0.02
    assert re.search(r"SRT l2 CV: the weight on the splits chosen .*: \S+ x the default \(out of 0.3, 1, 10\)", out)
    assert "The depth-2 SRT l2 of the split" in out and "leaf 4" in out


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
