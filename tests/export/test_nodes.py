"""What the writers share: formulas in original units, the ranking of terms, the nodes drawn."""

import re

import numpy as np
import pytest

from srtopt import SoftRegressionTree
from srtopt.export import export_text, original_units


def _route_original(split, X, depth):
    node = np.ones(len(X), dtype=int)
    Xa = np.column_stack([np.ones(len(X)), X])
    for _ in range(depth):
        u = np.einsum("ij,ij->i", Xa, split[node - 1])
        node = 2 * node + (u < 0)
    return node


def test_original_units_reproduce_srt_routing_and_predictions(srt, frame):
    X = frame[0].to_numpy()
    split, leaf = original_units(srt)
    leaves = _route_original(split, X, 2)
    np.testing.assert_array_equal(leaves, srt.apply(frame[0]))
    pred = np.einsum("ij,ij->i", np.column_stack([np.ones(len(X)), X]), leaf[leaves - 4])
    np.testing.assert_allclose(pred, srt.predict(frame[0]), rtol=1e-9, atol=1e-9)


def test_original_units_of_orrt_leaves_and_splits(orrt, frame):
    X = frame[0].to_numpy()
    split, leaf = original_units(orrt)
    Xs = orrt.scaler_.transform(X)
    u_scaled = orrt.omega_[:, 0] + Xs @ orrt.omega_[:, 1:].T / X.shape[1]
    np.testing.assert_allclose(split[:, 0] + X @ split[:, 1:].T, u_scaled, rtol=1e-9, atol=1e-9)
    y_scaled = orrt.beta_[:, 0] + Xs @ orrt.beta_[:, 1:].T
    np.testing.assert_allclose(leaf[:, 0] + X @ leaf[:, 1:].T, orrt.scaler_.inverse_y(y_scaled), rtol=1e-9)
    # the soft prediction is the P-weighted sum of those leaf models
    P = orrt.leaf_probabilities(X)
    np.testing.assert_allclose(np.sum(P * (leaf[:, 0] + X @ leaf[:, 1:].T), axis=1), orrt.predict(X),
                               rtol=1e-9, atol=1e-9)


def _names_in(line, names):
    return re.findall(r"\*(" + "|".join(map(re.escape, names)) + r")\b", line)


def test_every_view_ranks_terms_by_the_scale_free_weight(frame):
    """Both lines of export_text and the DOT/plot labels list the features of a split or leaf in
    the order of |scaled coefficient|, whatever the features' units (dose is ~1000x age)."""
    from srtopt.export.dot import node_labels

    X, y = frame
    model = SoftRegressionTree(depth=2, max_iter=2, n_init=1, random_state=0).fit(X, y)
    names = list(X.columns)
    expected = {}
    for t in range(1, 8):
        row = model.omega_[t - 1, 1:] if t < 4 else model.beta_[t - 4, 1:]
        expected[t] = [names[j] for j in np.argsort(-np.abs(row), kind="stable") if row[j] != 0]
    split, leaf = original_units(model)
    assert any(  # the raw coefficients alone would rank differently somewhere
        [names[j] for j in np.argsort(-np.abs(r[1:]), kind="stable")] != expected[t]
        for t, r in enumerate(list(split) + list(leaf), start=1))
    text = export_text(model, top=None).splitlines()
    assert "terms in order of |raw coefficient| x training range" in "\n".join(text[:5])
    shown = [t for t in range(1, 8) if model.node_counts_[t - 1] > 0]  # a pruned subtree is not drawn
    shown = [t for t in shown if t > 3 or {2 * t, 2 * t + 1} <= set(shown)]  # nor a closed split
    assert len(shown) >= 3
    for t in shown:
        i = next(i for i, line in enumerate(text) if re.match(rf"\s*(node|leaf) {t} ", line))
        assert _names_in(text[i + 1], names) == expected[t]  # scaled line
        assert _names_in(text[i + 2], names) == expected[t]  # original line
    for units in ("original", "scaled"):
        labels = node_labels(model.tree_view(), None, None, None, units)
        for t in shown:
            assert _names_in("\n".join(labels[t]), names) == expected[t]
    top1 = export_text(model, top=1)
    assert all(f"*{expected[t][0]}" in top1 for t in shown)
    assert "(2 more)" in top1


def test_unfitted_model_is_refused():
    with pytest.raises(ValueError, match="not a fitted"):
        export_text(SoftRegressionTree())


def test_a_zero_slope_split_prunes_an_srt_subtree_but_no_orrt_leaf(srt, orrt):
    """SRT predicts with the HBP leaf: a split with zero slopes sends every input one way and the
    other subtree is unreachable; ORRT predicts with every leaf (sum_t P_it y_t), so none is."""
    import copy

    from srtopt.export import reachable_nodes

    for model in (srt, orrt):
        closed = copy.deepcopy(model)
        closed.omega_ = closed.omega_.copy()
        closed.omega_[0, 1:] = 0.0
        closed.omega_[0, 0] = 1.0  # every row left: the root's right subtree is cut off
        reach = reachable_nodes(closed)
        if model is orrt:
            assert reach.all() and closed.get_n_leaves() == 2 ** closed.get_depth()
        else:
            assert not reach[2] and closed.get_n_leaves() <= 2 ** (closed.get_depth() - 1)
            assert re.search(r"pruned: the subtrees? at nodes? 3\b", export_text(closed))


@pytest.mark.parametrize("leaf", ["constant", "logistic"])
def test_a_classifiers_scores_in_original_units_give_its_probabilities(classifiers, iris, leaf):
    """The class scores written in raw units are the model: routed by the splits in raw units, the
    softmax of the HBP leaf's scores is predict_proba, row for row."""
    from srtopt.routing import class_probabilities

    model, X = classifiers[leaf], iris[0].to_numpy()
    split, scores = original_units(model)
    assert scores.shape == (4, 3, 1 if leaf == "constant" else 5)
    leaves = _route_original(split, X, 2)
    np.testing.assert_array_equal(leaves, model.apply(iris[0]))
    Xa = np.column_stack([np.ones(len(X)), X])[:, : scores.shape[2]]
    U = np.einsum("iq,ikq->ik", Xa, scores[leaves - 4])
    np.testing.assert_allclose(class_probabilities(U, 3), model.predict_proba(iris[0]), rtol=1e-9, atol=1e-12)


def test_a_binary_classifier_has_one_logit_per_leaf(binary, cancer):
    from srtopt.routing import class_probabilities

    X = cancer[0].to_numpy()
    split, scores = original_units(binary)
    assert scores.shape == (4, 1, X.shape[1] + 1)
    leaves = _route_original(split, X, 2)
    logit = np.einsum("ij,ij->i", np.column_stack([np.ones(len(X)), X]), scores[leaves - 4, 0])
    np.testing.assert_allclose(class_probabilities(logit[:, None], 2), binary.predict_proba(cancer[0]), rtol=1e-7,
                               atol=1e-12)


def test_the_class_mix_a_leaf_shows_is_its_probabilities_on_its_rows(classifiers, iris):
    """A constant leaf shows its probability vector; a logistic leaf its probabilities averaged over
    the training rows HBP sends it (leaf_class_proba_), which are the rows' predict_proba; the rows
    by class are the labels of those rows."""
    from srtopt.export.leaf_readers import leaf_class_counts, leaf_class_mix
    from srtopt.export.nodes import as_view

    X, y = iris
    for model in classifiers.values():
        view, leaves, proba = as_view(model), model.apply(X), model.predict_proba(X)
        mix, counts = leaf_class_mix(view), leaf_class_counts(view)
        for t in range(4, 8):
            rows = leaves == t
            assert counts[t - 4].tolist() == [float(np.sum(y[rows] == c)) for c in model.classes_]
            if rows.any():
                np.testing.assert_allclose(mix[t - 4], proba[rows].mean(axis=0), rtol=1e-12)
                np.testing.assert_allclose(model.leaf_class_proba_[t - 4], proba[rows].mean(axis=0), rtol=1e-12)
        np.testing.assert_array_equal(leaf_class_counts(view, X, y), counts)  # the same rows again
        np.testing.assert_allclose(leaf_class_mix(view, X)[model.leaf_class_counts_.sum(axis=1) > 0],
                                   mix[model.leaf_class_counts_.sum(axis=1) > 0], rtol=1e-12)
        with pytest.raises(ValueError, match="y holds the label 'daisy', which is not a class of the model"):
            leaf_class_counts(view, X.iloc[:2], ["setosa", "daisy"])


def test_class_titles_say_class_for_a_label_that_reads_as_a_number(classifiers, binary):
    from srtopt.export.leaf_readers import class_titles
    from srtopt.export.nodes import as_view

    assert class_titles(as_view(classifiers["constant"])) == ["setosa", "versicolor", "virginica"]
    assert class_titles(as_view(binary)) == ["class 0", "class 1"]
