"""Graphviz DOT source and its rendering."""

import re
import shutil

import numpy as np
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


def test_export_graphviz_of_classifiers(classifiers, binary):
    for model in (*classifiers.values(), binary):
        dot = export_graphviz(model)
        leaves = model.get_n_leaves()
        assert len(re.findall(r"^  n\d+ \[label=", dot, flags=re.M)) == 2 * leaves - 1
        assert len(re.findall(r"^  n\d+ -> n\d+", dot, flags=re.M)) == 2 * leaves - 2
        names = ", ".join(map(str, model.classes_))
        assert f"SoftClassificationTree depth 2, {model.leaf} leaves, {len(model.classes_)} classes: {names}" in dot
        labels = re.findall(r'^  n(\d+) \[label="(.*)", fillcolor', dot, flags=re.M)
        for t, label in labels:
            lines = label.split("\\n")
            if int(t) < 4:
                assert lines[1].startswith("left if ")
                continue
            mix = model.leaf_class_proba_[int(t) - 4]
            top = np.argsort(-mix, kind="stable")[:3]
            title = [f"class {c}" if model.classes_.dtype.kind in "iu" else str(c) for c in model.classes_]
            assert lines[1:1 + len(top)] == [f"{100 * mix[k]:.1f}% {title[k]}" for k in top]
            assert lines[1 + len(top)].startswith("rows: ")
            assert sum(line.startswith(("score(", "logit p(")) for line in lines) == (
                0 if model.leaf == "constant" else 1 if len(model.classes_) == 2 else 3)
