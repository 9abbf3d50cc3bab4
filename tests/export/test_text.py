"""The indented text of a tree (and the folding it shares with the DOT source)."""

import re

import pytest

from srtopt import SoftRegressionTree
from srtopt.export import export_graphviz, export_text, original_units, summary


def test_export_text_labels_both_coordinate_systems(srt, frame):
    text = export_text(srt)
    assert "scaled:" in text and "original:" in text
    assert text.count("scaled:   y_s =") == 4 and text.count("original: y =") == 4
    assert text.count("go left") == 3
    for t in range(1, 8):
        assert re.search(rf"\b(node|leaf) {t} \[\d+ rows\]", text)
    assert "(1/3)" in text  # the 1/p factor of the scaled split
    assert "x_s = (x - min) / (max - min)" in text and f"{srt.scaler_.y_std:.6g}" in text
    # top=None shows every feature; units restrict the lines
    full = export_text(srt, top=None, units="original")
    assert "scaled:" not in full.split("\n", 2)[2] and "more)" not in full
    split, _ = original_units(srt)
    assert f"{split[0, 0]:+.4g}" in full
    assert "more)" in export_text(srt, top=1)
    with pytest.raises(ValueError, match="units must be"):
        export_text(srt, units="metric")
    with pytest.raises(ValueError, match="feature_names has 2 names"):
        export_text(srt, feature_names=["a", "b"])


def test_export_text_orrt_and_milo(orrt, milo, frame):
    text = export_text(orrt, X=frame[0])
    assert "ORRT predicts sum_t P_t(x) yhat_t(x)" in text and "[60 rows]" in text
    text = export_text(milo, X=frame[0])
    assert "axis-aligned" in text and "[60 rows]" in text
    for t in range(1, 4):
        j = milo.split_feature_[t - 1]
        if j >= 0:
            assert f"{frame[0].columns[j]} < {milo.split_threshold_[t - 1]:.6g}" in text
    with pytest.raises(ValueError, match="summary applies to"):
        summary(milo)


def test_max_depth_folds_the_deeper_subtrees_in_text_and_dot(frame):
    X, y = frame
    model = SoftRegressionTree(depth=3, max_iter=2, n_init=1, random_state=0).fit(X, y)
    full, folded = export_text(model), export_text(model, max_depth=1)
    nodes = re.findall(r"^\s*(node|leaf) (\d+)", folded, flags=re.M)
    assert all(int(t) < 8 for _, t in nodes) and len(folded) < len(full)
    folded_lines = [line for line in folded.splitlines() if "folded" in line]
    assert folded_lines and all(re.search(r"subtree of \d+ leaves, folded", line) for line in folded_lines)
    assert sum(int(re.search(r"of (\d+) leaves", line).group(1)) for line in folded_lines) + \
        len(re.findall(r"^\s*leaf ", folded, flags=re.M)) == model.get_n_leaves()
    assert export_text(model, max_depth=3) == full
    dot = export_graphviz(model, max_depth=0)
    assert len(re.findall(r"^  n\d+ \[label=", dot, flags=re.M)) == 1 and "->" not in dot
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="max_depth must be None or an int >= 0"):
            export_text(model, max_depth=bad)
