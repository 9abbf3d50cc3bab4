"""How the views read a spline leaf (srtopt.export.curves): its stated value is the leaf's at a typical row (the
training medians), inside the range of the training predictions even on skewed features, each curve read over
the 1-99% range of its feature, and the same facts in the text and on the web page; a basis saved before it kept
its quantiles reads at the middle of the range, as before."""

import re

import numpy as np
import pytest

from srtopt import SoftClassificationTree, SoftRegressionTree
from srtopt.bases import SplineBasis
from srtopt.export import export_html, export_text
from srtopt.export.curves import curve_effects, curve_frame
from srtopt.tree import Tree


@pytest.fixture(scope="module")
def skewed():
    """Four lognormal features (the median near 1, the 99th percentile near 10, a sparse tail beyond) and an
    additive target: the row of every feature at the middle of its range is far from every training row."""
    rng = np.random.default_rng(0)
    X = rng.lognormal(0.0, 1.0, (2000, 4))
    y = np.log1p(3 * X).sum(axis=1) + 0.2 * rng.standard_normal(2000)
    return X, y, SoftRegressionTree(depth=1, leaf="spline", random_state=0).fit(X, y)


def _baselines(text, head="y"):
    return [float(v) for v in re.findall(rf"original: {re.escape(head)} = ([-+0-9.e]+) \(median row\)", text)]


def test_a_spline_leafs_stated_value_is_at_the_median_row_within_the_training_predictions(skewed):
    X, _, tree = skewed
    text = export_text(tree, units="original")
    predictions = tree.predict(X)
    baselines = _baselines(text)
    assert len(baselines) == tree.get_n_leaves() and "mid-range" not in text
    assert all(predictions.min() <= value <= predictions.max() for value in baselines)  # mid-range: 14.58 > 11.4
    median_row = np.median(X, axis=0, keepdims=True)
    if tree.get_n_leaves() == 1:  # then every row's leaf is that leaf: the value is the median row's prediction
        assert baselines[0] == pytest.approx(tree.predict(median_row)[0], rel=1e-3)


def test_the_curves_are_read_over_the_1_to_99_percent_range_named_in_the_text(skewed):
    X, _, tree = skewed
    text = export_text(tree, units="original")
    line = next(line for line in text.splitlines() if line.strip().startswith("curve ranges"))
    for j in range(4):
        low, high, median = (float(v) for v in re.search(rf"x{j} ([0-9.e+-]+)\.\.([0-9.e+-]+) \(([0-9.e+-]+)\)",
                                                         line).groups())
        np.testing.assert_allclose([low, high, median], np.percentile(X[:, j], [1, 99, 50]), rtol=1e-3)
    basis = tree.leaf_model_.basis
    frame = curve_frame(basis, 4)
    coef = tree.beta_[Tree(1).leaf_index(tree.apply(X[:1])[0])]
    base, low, high = curve_effects(basis, coef, frame)
    grid = frame.grid(0)
    values = basis.curve(0, coef, grid) - basis.curve(0, coef, frame.center[:1])
    assert (low[0], high[0]) == (values.min(), values.max()) and low[0] <= 0 <= high[0]


def test_a_basis_without_quantiles_reads_at_the_middle_of_the_range(skewed):
    X, _, tree = skewed
    basis = tree.leaf_model_.basis
    old = SplineBasis(basis.n_features, basis.curves, basis.degree, basis.scale)  # as a file saved before
    frame = curve_frame(old, 4)
    assert frame.baseline == "mid-range" and np.all(frame.center == 0.5) and frame.deciles.size == 0
    np.testing.assert_array_equal(frame.bulk, np.tile([0.0, 1.0], (4, 1)))


def test_the_web_page_and_a_classifiers_text_state_the_same_facts(skewed):
    X, y, tree = skewed
    page = export_html(tree)
    assert "curve ranges, 1-99% of the training rows (median): x0" in page and "(median row)" in page
    labels = np.where(y > np.median(y), "high", "low")
    classifier = SoftClassificationTree(depth=1, leaf="spline", random_state=0).fit(X, labels)
    text = export_text(classifier, units="original")
    assert "curve ranges, 1-99% of the training rows (median): x0" in text
    assert _baselines(text, "logit p(low)")
