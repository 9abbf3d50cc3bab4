"""The indented text of a tree (and the folding it shares with the DOT source)."""

import re

import numpy as np
import pytest

from srtopt import SoftClassificationTree, SoftRegressionTree
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


def _leaf_lines(text):
    """{leaf: (its head line, the lines below it)} of an export_text."""
    lines, out = text.splitlines(), {}
    for i, line in enumerate(lines):
        if match := re.match(r"(\s*)leaf (\d+) ", line):
            below = []
            for other in lines[i + 1:]:
                if len(other) - len(other.lstrip()) <= len(match[1]):
                    break
                below.append(other.strip())
            out[int(match[2])] = (line.strip(), below)
    return out


def test_export_text_of_a_constant_leaf_classifier(classifiers, iris):
    model = classifiers["constant"]
    text = export_text(model)
    assert text.splitlines()[0] == ("SoftClassificationTree(depth=2, leaf=constant), 4 features, 3 classes: setosa, "
                                    "versicolor, virginica")
    leaves = _leaf_lines(text)
    reached = [t for t in range(4, 8) if model.reachable_nodes()[t - 1]]
    assert sorted(leaves) == reached and len(reached) == model.get_n_leaves()
    probabilities = model.predict_proba(iris[0])
    for t in reached:
        head, below = leaves[t]
        p = probabilities[model.apply(iris[0]) == t][0]  # every row of a constant leaf gets its vector
        order = np.argsort(-p, kind="stable")
        shares = ", ".join(f"{100 * p[k]:.1f}% {model.classes_[k]}" for k in order)
        assert head == f"leaf {t} [{model.node_counts_[t - 1]} rows]: {shares}"
        counts = model.leaf_class_counts_[t - 4]
        shown = ", ".join(f"{counts[k]:g} {model.classes_[k]}" for k in np.argsort(-counts, kind="stable")
                          if counts[k] > 0)
        assert below == [f"training rows: {shown}"]
    assert "score(" not in text and "a row is predicted by the leaf of its HBP path" in text


def test_export_text_of_a_logistic_leaf_classifier(classifiers, binary, iris):
    model = classifiers["logistic"]
    _, scores = original_units(model)
    leaves = _leaf_lines(export_text(model, top=None))
    assert len(leaves) == model.get_n_leaves()
    for t, (head, below) in leaves.items():
        mix, b = model.leaf_class_proba_[t - 4], model.beta_[t - 4].reshape(3, 5)
        order = np.argsort(-mix, kind="stable")
        assert head.endswith(": " + ", ".join(f"{100 * mix[k]:.1f}% {model.classes_[k]}" for k in order))
        assert below[0].startswith("training rows: ")
        expected = []
        for k in order:  # each class score in both units, its intercept first, every feature (top=None)
            expected += [f"scaled:   score({model.classes_[k]}) = {b[k, 0]:+.4g} ",
                         f"original: score({model.classes_[k]}) = {scores[t - 4, k, 0]:+.4g} "]
        assert [line[:len(start)] for line, start in zip(below[1:], expected)] == expected
        assert len(below) == 1 + len(expected) and all(line.count("*") == 4 for line in below[1:])
    text = export_text(binary, units="original", top=2)
    assert "2 classes: 0, 1" in text and "logit p(1) = log(p(1) / p(0))" in text
    for t, (head, below) in _leaf_lines(text).items():
        assert re.fullmatch(rf"leaf {t} \[\d+ rows\]: \d+\.\d% class [01], \d+\.\d% class [01]", head)
        assert below[1].startswith("original: logit p(1) = ") and below[1].endswith("(28 more)")
    # with rows X, a logistic leaf's mix is over those rows, and the training counts are not shown
    on_X = _leaf_lines(export_text(model, X=iris[0].iloc[:60]))
    assert on_X and all(not below[0].startswith("training rows") for _, below in on_X.values())


def test_a_classifiers_leaf_lists_its_top_classes():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True, as_frame=True)
    model = SoftClassificationTree(depth=1, leaf="constant", random_state=0).fit(X, y)
    text = export_text(model, top=1)
    heads = [head for head, _ in _leaf_lines(text).values()]
    assert len(heads) == 2 and all(re.search(r": \d+\.\d% class \d, \.\.\. \(2 more\)$", head) for head in heads)
    assert "more)" not in "".join(head for head, _ in _leaf_lines(export_text(model, top=None)).values())
