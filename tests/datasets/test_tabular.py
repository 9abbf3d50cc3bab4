"""A table's CSV in the collections' form (srtopt/datasets/tabular.py, ``read_table``): the target column, empty
cells as missing values, the rows of a missing target dropped, the labels as text; a file that breaks the form
refused with what is wrong."""

import numpy as np
import pandas as pd
import pytest

from srtopt.datasets import read_table


def test_a_table_is_read_with_its_empty_cells_missing_and_the_rows_of_a_missing_target_dropped(tmp_path):
    path = tmp_path / "homes.csv"
    path.write_text("area,kind,target\n1.5,flat,100\n,house,\n2.5,,300\n3.0,NA,400\n")
    X, y = read_table(path, "regression")
    assert list(X.columns) == ["area", "kind"] and len(X) == 3 and y.tolist() == [100.0, 300.0, 400.0]
    assert np.isnan(X["area"].iloc[0]) is np.False_ and X["kind"].isna().tolist() == [False, True, False]
    assert X["kind"].iloc[2] == "NA"  # only an empty cell is missing: "NA" is a category's text
    X, y = read_table(path, "classification")
    assert y.tolist() == ["100", "300", "400"] and y.dtype.kind in "UO"


def test_a_file_that_breaks_the_form_is_refused_with_what_is_wrong(tmp_path):
    path = tmp_path / "homes.csv"
    pd.DataFrame({"area": [1, 2], "price": [3, 4]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="homes.csv in .* has no column named target"):
        read_table(path, "regression")
    path.write_text("area,target\n1,5\n2,\n3,high\n")
    with pytest.raises(ValueError, match="must be numbers, and line 4 holds 'high'"):
        read_table(path, "regression")
    assert read_table(path, "classification")[1].tolist() == ["5", "high"]
