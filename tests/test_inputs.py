"""The input pipeline (srtopt/inputs.py): one schema fitted at fit and applied at predict, by the estimators and by
a model file's view alike; its checks, once, in one line that names the column."""

import warnings

import numpy as np
import pandas as pd
import pytest

from srtopt import SoftClassificationTree, SoftRegressionTree
from srtopt.persistence import read_view
from srtopt.inputs import InputSchema


def _frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.random(n), "b": rng.random(n), "c": rng.random(n)})


def test_the_schema_of_a_table_of_numbers():
    frame = _frame()
    schema, matrix, groups, table = InputSchema.fit("T", frame)
    assert schema.names == ("a", "b", "c") and schema.n_columns == 3 and schema.encoder is None and groups is None
    assert table is frame and matrix.dtype == np.float64 and matrix.shape == (60, 3)
    schema, scaled = schema.scaled(matrix)
    assert scaled.min() == 0.0 and scaled.max() == 1.0
    np.testing.assert_array_equal(schema.transform(frame), scaled)


def test_the_protected_groups_column_is_not_a_feature():
    frame = _frame().assign(g=["x", "y"] * 30)
    schema, matrix, groups, _ = InputSchema.fit("T", frame, "g")
    assert schema.group == "g" and schema.names == ("a", "b", "c") and list(groups[:2]) == ["x", "y"]
    schema, scaled = schema.scaled(matrix)
    np.testing.assert_array_equal(schema.transform(frame), scaled)  # dropped at predict too
    np.testing.assert_array_equal(schema.transform(frame.drop(columns="g")), scaled)


@pytest.mark.parametrize("given, message", [
    (lambda f: f[["b", "a", "c"]], "Feature names must be in the same order as they were in fit"),
    (lambda f: f.rename(columns={"a": "z"}), "Feature names unseen at fit time:\n- z\nFeature names seen at fit time, "
                                             "yet now missing:\n- a"),
    (lambda f: f[["a", "b"]], "Feature names seen at fit time, yet now missing:\n- c"),
    (lambda f: f.to_numpy()[:, :2], "X has 2 features, but T is expecting 3 features as input"),
])
def test_the_columns_are_checked_against_the_fit_in_scikit_learns_words(given, message):
    frame = _frame()
    schema = InputSchema.fit("T", frame)[0]
    schema = schema.scaled(schema.rows(frame))[0]
    with pytest.raises(ValueError, match=message):
        schema.transform(given(frame))


def test_names_seen_or_not_are_warned_about_as_scikit_learn_does():
    frame = _frame()
    named = InputSchema.fit("T", frame)[0]
    named = named.scaled(named.rows(frame))[0]
    with pytest.warns(UserWarning, match="X does not have valid feature names, but T was fitted with feature names"):
        named.transform(frame.to_numpy())
    bare = InputSchema.fit("T", frame.to_numpy())[0]
    bare = bare.scaled(bare.rows(frame.to_numpy()))[0]
    with pytest.warns(UserWarning, match="X has feature names, but T was fitted without feature names"):
        bare.transform(frame)


def test_integer_column_names_are_no_feature_names_and_predict_without_a_warning():
    """A table whose column names are integers (a text column and an empty cell among them) has no feature names
    (scikit-learn's rule: names that are all strings); predicting the same table says nothing."""
    frame = pd.DataFrame({0: np.arange(40.0), 1: ["u", "v"] * 20, 2: np.r_[np.nan, np.arange(39.0)]})
    tree = SoftRegressionTree(depth=1, max_iter=1, random_state=0).fit(frame, np.arange(40.0))
    assert not hasattr(tree, "feature_names_in_") and tree.n_features_in_ == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree.predict(frame)


def test_duplicate_column_names_are_refused_in_one_line():
    frame = pd.DataFrame(np.random.default_rng(0).random((30, 3)), columns=["a", "b", "a"]).assign(t=["x", "y"] * 15)
    for given in (frame, frame.drop(columns="t")):
        with pytest.raises(ValueError, match=r"^X names the column\(s\) 'a' more than once: rename them$"):
            SoftRegressionTree(depth=1).fit(given, np.arange(30.0))


def test_a_missing_cell_at_predict_on_a_tree_of_a_complete_table_is_named_by_its_column(tmp_path):
    """One line naming the column (not scikit-learn's advice to use another estimator), in the estimator and in
    the model file's view."""
    frame = _frame()
    tree = SoftRegressionTree(depth=1, max_iter=1, random_state=0).fit(frame, frame["a"] + frame["b"])
    tree.save(tmp_path / "m.json")
    rows = frame.head(3).assign(b=[1.0, np.nan, 2.0])
    message = (r"^X contains NaN \(first in column 'b'\), and the model was fitted on a table without missing values "
               r"in that column: fill those cells, or fit on a table that has them$")
    for model in (tree, read_view(tmp_path / "m.json")):
        with pytest.raises(ValueError, match=message):
            model.predict(rows)


def test_a_single_row_given_as_a_series_says_so():
    frame = _frame()
    tree = SoftRegressionTree(depth=1, max_iter=1, random_state=0).fit(frame, frame["a"])
    with pytest.raises(ValueError, match=r"^X is a single row \(a pandas Series\): pass it as a one-row DataFrame"):
        tree.predict(frame.iloc[0])
    with pytest.raises(ValueError, match=r"X\.reshape\(1, -1\) for a single row$"):
        tree.predict(frame.to_numpy()[0])
    tree.predict(frame.iloc[[0]])


def test_a_list_of_records_is_a_table(tmp_path):
    frame = _frame().assign(t=["x", "y", "z"] * 20)
    y = np.where(frame["t"] == "x", 1.0, 0.0) + frame["a"]
    tree = SoftRegressionTree(depth=1, max_iter=2, random_state=0).fit(frame, y)
    tree.save(tmp_path / "m.json")
    records = frame.head(4).to_dict("records")
    np.testing.assert_array_equal(read_view(tmp_path / "m.json").predict(records), tree.predict(frame.head(4)))
    np.testing.assert_array_equal(tree.predict(records), tree.predict(frame.head(4)))


@pytest.mark.parametrize("estimator", [SoftRegressionTree, SoftClassificationTree])
def test_the_estimators_keep_the_schema_of_their_fit(estimator):
    frame = _frame().assign(t=["x", "y", "z"] * 20)
    y = (frame["a"] > 0.5).astype(int) if estimator is SoftClassificationTree else frame["a"]
    tree = estimator(depth=1, max_iter=1, random_state=0).fit(frame, y)
    assert tree.inputs_.owner == estimator.__name__ and tree.inputs_.encoder is tree.encoder_
    assert tree.scaler_ is tree.inputs_.scaling and list(tree.feature_names_in_) == ["a", "b", "c", "t"]
    assert tree.n_features_in_ == 4 and tree.sensitive_feature_name_ is None


def test_a_sparse_matrix_is_refused_with_scikit_learns_type_error():
    """scikit-learn's estimators that take dense rows alone raise TypeError on sparse X; so do the trees."""
    from scipy import sparse

    X = sparse.csr_matrix(np.eye(6))
    with pytest.raises(TypeError, match=r"X is a sparse matrix; the trees take dense rows: pass X.toarray\(\)"):
        SoftRegressionTree(depth=1, max_iter=1).fit(X, np.arange(6.0))
