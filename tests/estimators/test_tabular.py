"""Tables as people have them: both soft trees and the CV search take a DataFrame with text, categorical and
boolean columns and missing cells as it is, predict raw rows, keep the encoding in their files, and refuse
what cannot be learned from in one line."""

import numpy as np
import pandas as pd
import pytest

from srtopt import (SoftClassificationTree, SoftClassificationTreeCV, SoftRegressionTree, SoftRegressionTreeCV,
                    load)
from srtopt.encoding import TableEncoder
from srtopt.persistence import read_view


@pytest.fixture(scope="module")
def frame():
    """y depends on a category and on a number, some numbers missing (and missing rows shifted up)."""
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"size": rng.random(n), "home": np.array(["owner", "rent", "parents"])[rng.integers(0, 3, n)],
                      "member": rng.random(n) > 0.5, "band": pd.Categorical(rng.choice(["a", "b"], n))})
    y = 2 * X["size"] + (X["home"] == "owner") * 1.5 + 0.1 * rng.standard_normal(n)
    missing = rng.random(n) < 0.15
    y = np.where(missing, y + 1.0, y)
    X.loc[missing, "size"] = np.nan
    return X, np.asarray(y)


def test_a_regressor_fits_and_predicts_a_raw_table(frame, tmp_path):
    X, y = frame
    tree = SoftRegressionTree(depth=2, random_state=0).fit(X, y)
    assert tree.n_features_in_ == 4 and list(tree.feature_names_in_) == ["size", "home", "member", "band"]
    assert sorted(tree.encoder_.names) == ["band = a", "band = b", "home = owner", "home = parents", "home = rent",
                                           "member", "size", "size (missing)"]
    assert tree.score(X, y) > 0.9  # the missing rows' shift is learned through the indicator
    tree.save(tmp_path / "t.json")
    np.testing.assert_array_equal(load(tmp_path / "t.json").predict(X), tree.predict(X))
    np.testing.assert_array_equal(read_view(tmp_path / "t.json").predict(X), tree.predict(X))
    assert "[home = owner]" in tree.summary().columns.tolist() or "home = owner" in tree.summary().columns.tolist()


def test_a_classifier_fits_a_raw_table_with_text_labels(frame):
    X, y = frame
    labels = np.where(y > np.median(y), "high", "low")
    tree = SoftClassificationTree(depth=2, random_state=0).fit(X, labels)
    assert tree.score(X, labels) > 0.85 and tree.predict_proba(X.iloc[:5]).shape == (5, 2)


def test_the_search_takes_a_table(frame):
    X, y = frame
    search = SoftRegressionTreeCV(SoftRegressionTree(depth=1, random_state=0, max_iter=2), cv=2, random_state=0,
                                  split_weights=(1.0,)).fit(X, y)
    assert search.n_features_in_ == 4 and search.best_estimator_.encoder_ is not None


def test_a_category_the_fit_did_not_see_is_named_at_predict(frame):
    X, y = frame
    tree = SoftRegressionTree(depth=1, random_state=0, max_iter=2).fit(X, y)
    new = X.iloc[:3].copy()
    new.loc[new.index[0], "home"] = "boat"
    with pytest.warns(UserWarning, match="categories the fit did not keep: home: 'boat'"):
        tree.predict(new)


def test_the_folds_of_a_fit_keep_their_unseen_categories_to_themselves():
    """The leaf-ridge comparison and the CV search predict held-out folds that hold a category or an empty
    cell their fold's fit did not see: the user is not warned of it (a category new to the fitted tree is)."""
    import warnings

    from srtopt.encoding import TableWarning

    X = pd.DataFrame({"f0": ["a", "a", "a", "a", None, None, "a", "b", "a"], "f1": np.arange(9.0)})
    y = np.array([0.0, 1, 0, 1, 2, 0, 1, 0, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TableWarning)
        tree = SoftRegressionTree(depth=1, max_iter=1, n_init=1, random_state=0).fit(X, y)
        SoftRegressionTreeCV(SoftRegressionTree(depth=1, max_iter=1, random_state=0), cv=3).fit(X, y)
    assert tree.leaf_ridge_losses_  # the comparison ran, on folds without 'b' or without the empty cells
    with pytest.warns(TableWarning, match="categories the fit did not keep: f0: 'c'"):
        tree.predict(X.assign(f0="c"))


def test_one_empty_cell_reaches_the_guards_held_out_fold():
    """Found by Hypothesis: a numeric table whose one empty cell is in the leaf-ridge guard's held-out fold.  The
    fold's rows held none, so its fit built no encoder and refused the held-out row; the fold fits now encode
    their rows by the whole table's encoder."""
    X = pd.DataFrame({"f0": [0.0, 0, 0, np.nan, 0, 0]})
    y = np.array([0.5, 0.75, 0.25, 0, 0, 1])
    tree = SoftRegressionTree(depth=1, max_iter=1, n_init=1, random_state=0).fit(X, y)
    assert tree.leaf_ridge_losses_  # the guard ran its folds
    assert np.all(np.isfinite(tree.predict(X)))


def test_a_list_whose_empty_cells_fall_in_one_fold():
    """Found by Hypothesis: a list of rows whose two empty cells fell in the same held-out fold of the leaf-ridge
    guard; the fold's rows reached the encoder as objects, and a column of objects all missing was taken for
    text.  The inner fits now take a list as the encoder reads it (floats)."""
    X = [[0.0], [np.nan], [np.nan], [0.0], [0.0], [0.0], [1.0], [-1.0]]
    y = np.array([0.0, 0.0, 1.0, 0.0, 1.0, 0.5, 0.0, 0.0])
    tree = SoftRegressionTree(depth=1, max_iter=1, n_init=1, random_state=0).fit(X, y)
    assert np.all(np.isfinite(tree.predict(X)))


@pytest.mark.parametrize("search, as_array", [(SoftRegressionTreeCV, False), (SoftClassificationTreeCV, False),
                                              (SoftRegressionTreeCV, True)])
def test_the_searches_take_a_table_with_one_empty_cell(search, as_array):
    """Every inner fit of a search (candidates, probes, refit) encodes its rows by the whole table's encoder:
    the fold whose rows miss the one empty cell predicts it when held out."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    X.loc[5, "a"] = np.nan
    y = 2 * X["b"].to_numpy() + rng.normal(size=60)
    y = (y > 0).astype(int) if search is SoftClassificationTreeCV else y
    model = search(depths=(1,), cv=3, random_state=0).fit(X.to_numpy() if as_array else X, y)
    assert ("x0 (missing)" if as_array else "a (missing)") in model.best_estimator_.encoder_.names


def test_a_fit_given_the_tables_encoder_reads_its_columns():
    X = pd.DataFrame({"a": [0.1, 0.5, np.nan, 0.9, 0.3, 0.7, 0.2, 0.8], "b": list("xyxyxyxy")})
    y = np.arange(8.0)
    encoder = TableEncoder().fit(X)
    rows = X.iloc[[0, 1, 3, 4, 5, 6, 7]]  # no empty cell
    tree = SoftRegressionTree(depth=1, max_iter=1, leaf_ridge=1.0, random_state=0).fit(rows, y[[0, 1, 3, 4, 5, 6, 7]],
                                                                                      encoder=encoder)
    assert tree.encoder_ is encoder and "a (missing)" in tree.encoder_.names
    assert np.isfinite(tree.predict(X.iloc[[2]])).all()
    with pytest.raises(TypeError, match="encoder must be a fitted srtopt.encoding.TableEncoder or None, got dict"):
        SoftRegressionTree(depth=1).fit(rows, y[:7], encoder={})


def test_a_feature_budget_takes_a_table_with_one_empty_cell():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.random(80), "b": rng.random(80), "c": rng.random(80)})
    X.loc[7, "c"] = np.nan
    y = 3 * X["a"].to_numpy() + 0.1 * rng.standard_normal(80)
    tree = SoftRegressionTree(depth=1, max_features=1, random_state=0).fit(X, y)
    assert [name.split(" ")[0] for name in tree.selected_features_] == ["a"]


def test_a_monotone_column_by_position_or_by_name(frame):
    X, y = frame
    by_position = SoftRegressionTree(depth=1, random_state=0, monotonic_cst=[1, 0, 0, 0]).fit(X, y)
    by_name = SoftRegressionTree(depth=1, random_state=0, monotonic_cst={"size": 1}).fit(X, y)
    np.testing.assert_array_equal(by_position.predict(X), by_name.predict(X))
    grid = X.iloc[:50].copy()
    low, high = grid.assign(size=0.2), grid.assign(size=0.8)
    assert np.all(by_name.predict(high) >= by_name.predict(low) - 1e-9)
    with pytest.raises(ValueError, match="monotonic_cst: feature 'home' is not a column of X"):
        SoftRegressionTree(depth=1, monotonic_cst=[0, 1, 0, 0]).fit(X, y)


def test_a_feature_budget_keeps_whole_columns(frame):
    X, y = frame
    tree = SoftRegressionTree(depth=1, random_state=0, max_features=2).fit(X, y)
    kept = {name.split(" ")[0] for name in tree.selected_features_}
    assert len(kept) <= 2 and kept <= {"size", "home", "member", "band"}


@pytest.mark.parametrize("edit, message", [
    (lambda X, y: (X.assign(size=np.nan), y), "column 'size' of X is empty \\(every cell missing\\): drop it"),
    (lambda X, y: (X.assign(when=pd.Timestamp("2024-01-01")), y), "column 'when' of X holds dates"),
    (lambda X, y: (X, np.where(np.arange(len(y)) == 3, np.nan, y)), "y contains NaN"),
])
def test_refusals_in_one_line(frame, edit, message):
    X, y = edit(*frame)
    with pytest.raises(ValueError, match=message):
        SoftRegressionTree(depth=1).fit(X, y)


def test_missing_groups_are_refused(frame):
    X, y = frame
    groups = np.where(np.arange(len(y)) % 2 == 0, "a", None)
    with pytest.raises(ValueError, match="sensitive_features has 150 missing value"):
        SoftRegressionTree(depth=1, constraints="parity:gap=0.5").fit(X, y, sensitive_features=groups)
