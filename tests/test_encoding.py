"""The table encoder: numeric columns with a median and a missing indicator, text and categorical columns as one
indicator per category with rare ones pooled and a missing category, warnings for what the fit did not see, and
the file form."""

import warnings

import numpy as np
import pandas as pd
import pytest

from srtopt.encoding import MISSING, OTHER, TableEncoder, needs_encoding


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame({
        "age": rng.integers(20, 70, n).astype(float),
        "home": np.array(["owner", "rent", "parents"])[np.arange(n) % 3],
        "rare": ["common"] * 55 + ["odd1", "odd2", "odd3", "odd4", "odd5"],
        "member": np.arange(n) % 2 == 0,
        "score": pd.Categorical(np.array(["low", "high"])[np.arange(n) % 2]),
    })
    frame.loc[[1, 4], "age"] = np.nan
    frame.loc[7, "home"] = None
    return frame


@pytest.mark.parametrize("dtype", ["string", "category"])
def test_a_text_column_encodes_alike_whatever_its_dtype(table, dtype):
    """Object, pandas string and categorical columns of the same cells (a missing one among them) give the same
    encoding; a column of strings is read as it is, others cast to str."""
    typed = table.assign(home=table["home"].astype(dtype), rare=table["rare"].astype(dtype))
    encoder = TableEncoder().fit(table)
    np.testing.assert_array_equal(TableEncoder().fit(typed).transform(typed), encoder.transform(table))
    np.testing.assert_array_equal(encoder.transform(typed), encoder.transform(table))


def test_rows_of_numbers_and_text_keep_their_number_columns():
    """A list of rows mixing text and numbers: numpy would write every cell as text (and the numbers would be
    refused as numbers written as text); each cell is read as it is, a numeric column stays numeric."""
    rows = [["a", 0.5, 1], ["b", 0.0, 2], ["a", 0.25, None], ["b", 1.0, 4]] * 3
    encoder = TableEncoder(min_frequency=1).fit(rows)
    assert encoder.names == ["x0 = a", "x0 = b", "x1", "x2", f"x2 {MISSING}"]
    np.testing.assert_array_equal(encoder.transform(rows[:3])[:, 2:], [[0.5, 1, 0], [0.0, 2, 0], [0.25, 2, 1]])
    with pytest.raises(ValueError, match="column 'x1' of X holds numbers written as text"):
        TableEncoder().fit(np.array(rows, dtype=str))  # an array of strings is its strings


def test_the_encoded_columns_and_their_groups(table):
    encoder = TableEncoder().fit(table)
    assert encoder.names == ["age", f"age {MISSING}", "home = owner", "home = parents", "home = rent",
                             f"home = {MISSING}", "rare = common", f"rare = {OTHER}", "member",
                             "score = high", "score = low"]
    assert encoder.groups.tolist() == [0, 0, 1, 1, 1, 1, 2, 2, 3, 4, 4]
    Z = encoder.transform(table)
    assert Z.shape == (60, 11) and np.isfinite(Z).all()
    median = float(np.nanmedian(table["age"]))
    assert Z[1, 0] == median and Z[1, 1] == 1.0 and Z[0, 1] == 0.0
    assert Z[7, 5] == 1.0 and Z[7, 2:5].sum() == 0.0  # missing text: the (missing) category alone
    assert Z[57, 7] == 1.0 and Z[57, 6] == 0.0  # a rare category pooled into (other)
    assert Z[:, 8].tolist() == table["member"].astype(float).tolist()


def test_what_the_fit_did_not_see_is_named(table):
    encoder = TableEncoder().fit(table)
    new = table.iloc[:3].copy()
    new.loc[0, "rare"] = "odd1"  # seen and pooled at fit: not new
    new.loc[1, "rare"] = "brand-new"
    new.loc[2, "home"] = "castle"
    new["member"] = new["member"].astype(object)
    new.loc[0, "member"] = None  # a missing cell in a column that had none
    with pytest.warns(UserWarning) as record:
        Z = encoder.transform(new)
    messages = " | ".join(str(w.message) for w in record)
    assert "rare: 'brand-new'" in messages and "home: 'castle'" in messages and "odd1" not in messages
    assert "column(s) 'member', which had none at fit: they take the training median" in messages
    assert Z[2, 2:6].sum() == 0.0  # home has no (other): the new category is in none of its columns
    assert Z[1, 7] == 1.0  # rare has one: the new category goes there


@pytest.mark.parametrize("column, message", [
    ([np.nan] * 4, "column 'c' of X is empty \\(every cell missing\\): drop it"),
    (pd.to_datetime(["2024-01-01"] * 4), "column 'c' of X holds dates: convert it to numbers"),
])
def test_refusals_name_the_column(column, message):
    with pytest.raises(ValueError, match=message):
        TableEncoder().fit(pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "c": column}))


def test_the_columns_must_be_the_fits(table):
    """Their number and kinds; their names are the input pipeline's to check (tests/test_inputs.py)."""
    encoder = TableEncoder().fit(table)
    with pytest.raises(ValueError, match="X has 4 columns, the model was fitted on 5"):
        encoder.transform(table.drop(columns="home"))
    with pytest.raises(ValueError, match="column 'age' of X was numeric at fit and holds text now"):
        encoder.transform(table.assign(age="old"))


def test_an_array_with_missing_cells_is_encoded_by_position():
    X = np.array([[1.0, np.nan], [2.0, 3.0], [np.nan, 4.0]] * 5)
    assert needs_encoding(X) and not needs_encoding(np.nan_to_num(X))
    encoder = TableEncoder().fit(X)
    assert encoder.names == ["x0", f"x0 {MISSING}", "x1", f"x1 {MISSING}"] and not encoder.named_


def test_rows_missing_a_numeric_column_of_objects_take_its_median():
    """A numeric column held as objects (numbers and None), every cell of it missing in the rows encoded: the
    median and the indicator (it was an IndexError: no cell to tell number from text)."""
    frame = pd.DataFrame({"a": pd.Series([1.0, 2.0, None, 4.0, 5.0], dtype=object)})
    encoder = TableEncoder().fit(frame)
    rows = pd.DataFrame({"a": pd.Series([None, None], dtype=object)})
    np.testing.assert_array_equal(encoder.transform(rows), [[3.0, 1.0], [3.0, 1.0]])


def test_the_file_form_gives_the_same_encoding(table):
    encoder = TableEncoder().fit(table)
    again = TableEncoder.from_json(encoder.to_json())
    assert again.names == encoder.names
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(again.transform(table), encoder.transform(table))
    bad = encoder.to_json()
    bad["columns"][1]["categories"].append(bad["columns"][1]["categories"][0])
    with pytest.raises(ValueError, match="malformed categorical column 'home'"):
        TableEncoder.from_json(bad)


@pytest.mark.parametrize("frame, named", [
    (pd.DataFrame({"cat": ["x", "y"] * 10, "cat = x": np.arange(20.0)}), "'cat = x'"),
    (pd.DataFrame({"num": np.r_[np.nan, np.arange(19.0)], "num (missing)": np.arange(20.0)}), "'num \\(missing\\)'"),
    (pd.DataFrame({"c": ["(missing)"] * 10 + ["a"] * 9 + [None]}), "'c = \\(missing\\)'"),
])
def test_encoded_names_that_collide_are_refused(frame, named):
    """Every encoded column has its own name, so that a constraint by name (monotonic_cst) binds the column meant."""
    with pytest.raises(ValueError, match=f"^two encoded columns of columns? .* would both be named {named}: rename"):
        TableEncoder().fit(frame)


@pytest.mark.parametrize("column, message", [
    (["1,234", "2,500", "10,000"] * 8, "holds numbers written as text \\('1,234', '2,500', '10,000'\\): read them as "
                                       "numbers \\(pandas.read_csv\\(..., thousands=','\\)\\)"),
    (["1.5", "2", "3.25"] * 8, "holds numbers written as text .*pd.to_numeric\\(X\\['c'\\]\\).*astype\\('category'\\)"),
    (["2024-01-05", "2023-12-31", "2022-06-01"] * 8, "holds dates \\('2024-01-05'\\): convert it to numbers"),
    (pd.period_range("2020-01", periods=24, freq="M"), "holds dates: convert it to numbers"),
    (pd.to_timedelta(np.arange(24), unit="h"), "holds durations: convert it to numbers"),
    ([f"id{i:03d}" for i in range(24)], "holds a different text in every row \\('id000', 'id001', 'id002', ...\\), "
                                         "like an identifier: drop it"),
])
def test_columns_that_are_neither_numbers_nor_categories_are_refused(column, message):
    """The command line refuses them too (srtopt/cli/_table.py takes the kinds from srtopt.encoding.text_kind)."""
    with pytest.raises(ValueError, match=f"^column 'c' of X {message}"):
        TableEncoder().fit(pd.DataFrame({"a": np.arange(24.0), "c": column}))


def test_text_columns_of_categories_are_still_categories():
    frame = pd.DataFrame({"c": ["red", "blue", "3"] * 8, "d": pd.Categorical(["1", "2"] * 12)})
    assert sorted(TableEncoder(min_frequency=1).fit(frame).names) == ["c = 3", "c = blue", "c = red", "d = 1", "d = 2"]


def test_missing_cells_in_a_text_column_that_had_none_are_warned_about(table):
    encoder = TableEncoder().fit(table.drop(index=7))
    with pytest.warns(UserWarning, match="missing values in column\\(s\\) 'home', which had none at fit: they go to "
                                         "none of the column's categories"):
        Z = encoder.transform(table.iloc[[7]])
    assert Z[0, 2:5].sum() == 0.0
