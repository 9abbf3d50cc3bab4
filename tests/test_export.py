"""Reading a fitted tree: original-unit formulas, summary, decision_path, text and DOT exports."""

import re
import shutil

import numpy as np
import pandas as pd
import pytest

from srtopt import MILOTreeRegressor, ORRTRegressor, SoftRegressionTree
from srtopt.export import (decision_path, export_graphviz, export_text, original_units, render_graphviz,
                           summary)


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"age": 20 + 50 * rng.random(60), "dose": 1000 * rng.random(60), "z": rng.random(60) - 3})
    y = np.where(X["age"] > 45, 0.1 * X["dose"], -5 * X["z"]) + rng.standard_normal(60)
    return X, np.asarray(y, dtype=float)


@pytest.fixture(scope="module")
def srt(frame):
    # unclipped, so that predict is eq. (prediction_model), what the exported leaf models reproduce
    return SoftRegressionTree(depth=2, regularization=None, max_iter=2, n_init=1, random_state=0,
                              clip_predictions=False).fit(*frame)


@pytest.fixture(scope="module")
def orrt(frame):
    return ORRTRegressor(depth=2, mu=1.0, solver="slsqp", max_iter=15, random_state=0).fit(*frame)


@pytest.fixture(scope="module")
def milo(frame):
    X, y = frame
    return MILOTreeRegressor(depth=2, time_limit=2.0, random_state=0).fit(X.iloc[:12], y[:12])


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


def test_summary_rows_counts_and_leaf_scores(srt, frame):
    X, y = frame
    table = srt.summary()
    assert list(table.columns) == ["node", "kind", "depth", "parent", "n_samples", "intercept", "age", "dose",
                                   "z", "leaf_mse", "leaf_r2", "reachable"]
    assert table["node"].tolist() == list(range(1, 8))
    assert table["reachable"].tolist() == (table["n_samples"] > 0).tolist()  # empty subtrees are pruned
    assert table["kind"].tolist() == ["split"] * 3 + ["leaf"] * 4
    assert table["depth"].tolist() == [0, 1, 1, 2, 2, 2, 2]
    assert table["parent"].isna().tolist() == [True] + [False] * 6
    assert table["parent"].dropna().tolist() == [1, 1, 2, 2, 3, 3]
    counts = table.set_index("node")["n_samples"]
    leaves = srt.apply(X)
    assert [counts[t] for t in range(4, 8)] == np.bincount(leaves - 4, minlength=4).tolist()
    for t in (1, 2, 3):
        assert counts[t] == counts[2 * t] + counts[2 * t + 1]
    assert counts[1] == len(y)
    pred = srt.predict(X)
    for t in range(4, 8):
        row = table.set_index("node").loc[t]
        rows = leaves == t
        if rows.sum() == 0:
            assert np.isnan(row["leaf_mse"]) and np.isnan(row["leaf_r2"])
            continue
        mse = np.mean((y[rows] - pred[rows]) ** 2)
        assert row["leaf_mse"] == pytest.approx(mse, rel=1e-9)
        if rows.sum() > 1:
            assert row["leaf_r2"] == pytest.approx(1 - mse / np.var(y[rows]), rel=1e-9)
    # on the training data, summary(X, y) recomputes the same numbers
    again = summary(srt, X, y)
    pd.testing.assert_frame_equal(again, table, check_exact=False, rtol=1e-9)


def test_summary_units(srt, orrt, frame):
    scaled = srt.summary(units="scaled")
    np.testing.assert_array_equal(scaled[["intercept", "age", "dose", "z"]].to_numpy(),
                                  np.vstack([srt.omega_, srt.beta_]))
    table = summary(orrt, *frame)  # ORRT: counts and scores need the data
    assert table["n_samples"].iloc[0] == len(frame[1])
    assert summary(orrt)["n_samples"].isna().all()
    with pytest.raises(ValueError, match="units must be one of"):
        srt.summary(units="raw")
    with pytest.raises(ValueError, match="both X and y"):
        summary(srt, frame[0])


def test_decision_path_follows_sklearn_convention(srt, milo, frame):
    X = frame[0]
    for model in (srt, milo):
        path = model.decision_path(X) if hasattr(model, "decision_path") else decision_path(model, X)
        assert path.shape == (len(X), 7) and path.format == "csr"
        dense = path.toarray()
        assert np.all(dense.sum(axis=1) == 3)
        assert np.all(dense[:, 0] == 1)
        leaves = model.apply(X)
        np.testing.assert_array_equal(dense[:, 3:].argmax(axis=1) + 4, leaves)
        np.testing.assert_array_equal(dense[np.arange(len(X)), leaves // 2 - 1], 1)  # parent of the leaf
        assert all(np.all(np.diff(path.indices[a:b]) > 0) for a, b in zip(path.indptr, path.indptr[1:]))


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


def _names_in(line, names):
    return re.findall(r"\*(" + "|".join(map(re.escape, names)) + r")\b", line)


def test_every_view_ranks_terms_by_the_scale_free_weight(frame):
    """Both lines of export_text and the DOT/plot labels list the features of a split or leaf in
    the order of |scaled coefficient|, whatever the features' units (dose is ~1000x age)."""
    from srtopt.export import _node_labels

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
        labels = _node_labels(model.tree_view(), None, None, None, units)
        for t in shown:
            assert _names_in("\n".join(labels[t]), names) == expected[t]
    top1 = export_text(model, top=1)
    assert all(f"*{expected[t][0]}" in top1 for t in shown)
    assert "(2 more)" in top1


def test_render_graphviz(srt, tmp_path):
    dot = export_graphviz(srt)
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="'dot' executable was not found"):
            render_graphviz(dot, tmp_path / "t.png")
    else:
        render_graphviz(dot, tmp_path / "t.png")
        assert (tmp_path / "t.png").stat().st_size > 0


def test_unfitted_model_is_refused():
    with pytest.raises(ValueError, match="not a fitted"):
        export_text(SoftRegressionTree())


def test_export_html_escapes_feature_names_and_embeds_the_model(srt, frame, tmp_path):
    import json

    from srtopt.export import export_html

    names = ["<b>age</b>", "__MODEL__", 'dose "mg"']
    page = export_html(srt, tmp_path / "t.html", feature_names=names)
    assert (tmp_path / "t.html").read_text() == page
    assert "<b>age</b>" not in page and "&lt;b&gt;age&lt;/b&gt;" in page and "dose &quot;mg&quot;" in page
    model = json.loads(re.search(r'<script type="application/json" id="model-data">(.*?)</script>', page,
                                 flags=re.S)[1])
    assert model["features"] == names and model["prediction"] == "hbp"
    np.testing.assert_array_equal(model["omega"], srt.omega_)
    assert page.count('<details class="node') == 7 and "__TREE__" not in page and "*__MODEL__" in page
    with pytest.raises(ValueError, match="export_html applies to SoftRegressionTree and ORRTRegressor"):
        export_html(MILOTreeRegressor(depth=1, time_limit=1.0).fit(frame[0].iloc[:8], frame[1][:8]))
    with pytest.raises(ValueError, match="y needs X"):
        export_html(srt, y=frame[1])


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
