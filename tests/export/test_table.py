"""The node table (summary) and the HBP decision path."""

import numpy as np
import pandas as pd
import pytest

from srtopt.export import decision_path, original_units, summary


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


@pytest.mark.parametrize("leaf", ["constant", "logistic"])
def test_summary_of_a_classifier(classifiers, iris, leaf):
    model, (X, y) = classifiers[leaf], iris
    table = summary(model).set_index("node")
    classes = list(model.classes_)
    assert list(table.columns) == ["kind", "depth", "parent", "n_samples", "intercept", *X.columns,
                                   *(f"n({c})" for c in classes), *(f"p({c})" for c in classes), "reachable"]
    counts = table[[f"n({c})" for c in classes]].to_numpy()
    np.testing.assert_array_equal(counts[0], [50, 50, 50])  # the root: every training row
    for t in (1, 2, 3):
        np.testing.assert_array_equal(counts[t - 1], counts[2 * t - 1] + counts[2 * t])
    np.testing.assert_array_equal(counts[:, :].sum(axis=1), table["n_samples"].to_numpy())
    leaves, proba = model.apply(X), model.predict_proba(X)
    shares = table[[f"p({c})" for c in classes]].to_numpy()
    assert np.isnan(shares[:3]).all() and np.isnan(table.loc[4:, "intercept"]).all()  # no leaf coefficients
    for t in range(4, 8):
        if np.any(leaves == t):
            np.testing.assert_allclose(shares[t - 1], proba[leaves == t].mean(axis=0), rtol=1e-12)
    split, _ = original_units(model)
    np.testing.assert_array_equal(table.loc[1:3, ["intercept", *X.columns]].to_numpy(), split)
    again = summary(model, X, y)  # the training rows again: the same table
    pd.testing.assert_frame_equal(again.set_index("node"), table, check_exact=False, rtol=1e-12)
    other = summary(model, X.iloc[::2], y[::2])
    assert other.loc[0, [f"n({c})" for c in classes]].sum() == 75
    with pytest.raises(ValueError, match="both X and y"):
        summary(model, X)


def test_decision_path_of_a_classifier_is_the_path_of_its_prediction(classifiers, iris):
    """The HBP path: its leaf column is apply's, and that leaf's class probabilities are predict_proba."""
    from srtopt.routing import class_probabilities

    X = iris[0]
    for model in classifiers.values():
        dense = decision_path(model, X).toarray()
        assert dense.shape == (150, 7) and np.all(dense.sum(axis=1) == 3) and np.all(dense[:, 0] == 1)
        leaves = dense[:, 3:].argmax(axis=1) + 4
        np.testing.assert_array_equal(leaves, model.apply(X))
        _, scores = original_units(model)
        Xa = np.column_stack([np.ones(len(X)), X.to_numpy()])[:, : scores.shape[2]]
        proba = class_probabilities(np.einsum("iq,ikq->ik", Xa, scores[leaves - 4]), 3)
        np.testing.assert_allclose(proba, model.predict_proba(X), rtol=1e-9, atol=1e-12)
