"""Graphviz DOT source and its rendering."""

import re
import shutil

import pytest

from srtopt.export import export_graphviz, render_graphviz


def test_export_graphviz_is_valid_dot(srt, milo):
    for model in (srt, milo):
        dot = export_graphviz(model, feature_names=['a"q', "b", "c"])
        assert dot.startswith("digraph srt {") and dot.rstrip().endswith("}")
        leaves = model.get_n_leaves()  # a MILO node without a split is not drawn
        assert len(re.findall(r"^  n\d+ \[label=", dot, flags=re.M)) == 2 * leaves - 1
        assert len(re.findall(r"^  n\d+ -> n\d+", dot, flags=re.M)) == 2 * leaves - 2
        assert 'a\\"q' in dot and 'a"q' not in dot.replace('a\\"q', "")
    assert "n=60" in export_graphviz(srt)
    assert "(scaled units; terms in order of |raw coefficient| x training range" in export_graphviz(srt, units="scaled")


def test_render_graphviz(srt, tmp_path):
    dot = export_graphviz(srt)
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="'dot' executable was not found"):
            render_graphviz(dot, tmp_path / "t.png")
    else:
        render_graphviz(dot, tmp_path / "t.png")
        assert (tmp_path / "t.png").stat().st_size > 0
