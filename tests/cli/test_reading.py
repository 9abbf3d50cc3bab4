"""``srtopt fit`` and ``predict`` read a CSV file as the user wrote it (srtopt/cli/_table.py): class labels
byte for byte, the strings that mean missing, and one line for every column that is not numbers."""

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import srtopt
from srtopt.cli import main

QUICK = ["--depth", "1", "--max-iter", "1", "--quiet"]


def _write(path, columns: dict):
    """A CSV file of the columns as written (strings, no quoting beyond what a comma needs)."""
    frame = pd.DataFrame(columns)
    path.write_text(frame.to_csv(index=False))
    return str(path)


def _features(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return {"a": rng.random(n).round(6).astype(str), "b": rng.random(n).round(6).astype(str)}


def _one_error(capsys, command="fit"):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"srtopt {command}: error: "), err
    return err[0]


def test_class_labels_come_back_byte_for_byte(tmp_path, capsys):
    """1, 01 and 1.0 are three classes; 007 stays 007; NA, None and null are labels like any other."""
    columns = _features()
    labels = ["1", "01", "1.0", "007", "NA", "None", "null"]
    columns["label"] = [labels[i % len(labels)] for i in range(60)]
    data, model = _write(tmp_path / "d.csv", columns), str(tmp_path / "m.json")
    assert main(["fit", data, "--target", "label", "--task", "classification", "--out", model, *QUICK]) == 0
    assert sorted(srtopt.load(model).classes_.tolist()) == sorted(labels)
    capsys.readouterr()
    assert main(["predict", model, data, "--proba"]) == 0
    assert sorted(capsys.readouterr().out.splitlines()[0].split(",")) == sorted(labels)
    assert main(["predict", model, data]) == 0
    predicted = capsys.readouterr().out.splitlines()
    assert predicted[0] == "prediction" and set(predicted[1:]) <= set(labels)
    assert pd.read_csv(io.StringIO("\n".join(predicted)), dtype=str, keep_default_na=False)["prediction"].isin(
        labels).all()


def test_an_empty_label_is_the_only_missing_one(tmp_path, capsys):
    columns = _features()
    columns["label"] = ["x", "NA"] * 29 + ["", "x"]
    data = _write(tmp_path / "d.csv", columns)
    assert main(["fit", data, "--target", "label", "--task", "classification", "--out", str(tmp_path / "m.json"),
                 *QUICK]) == 2
    assert _one_error(capsys).endswith(f"column 'label' of '{data}' (--target) has missing values: 1 empty cell(s), "
                                       f"the first in row 59; give every row a class, or drop those rows")


def test_numbers_as_labels_that_look_continuous_are_refused(tmp_path, capsys):
    columns = _features()
    columns["label"] = columns["a"]
    data = _write(tmp_path / "d.csv", columns)
    assert main(["fit", data, "--target", "label", "--task", "classification", "--out", str(tmp_path / "m.json"),
                 "--features", "b", *QUICK]) == 2
    assert "y looks continuous (60 distinct values" in _one_error(capsys)


def test_text_read_as_missing_in_a_feature_is_said_and_na_values_chooses_it(tmp_path, capsys):
    columns = _features()
    columns["b"][[3, 7]] = ["NA", "null"]
    columns["y"] = columns["a"]
    data, out = _write(tmp_path / "d.csv", columns), str(tmp_path / "m.json")
    assert main(["fit", data, "--target", "y", "--out", out, *QUICK]) == 0
    assert capsys.readouterr().err.strip().splitlines() == [
        f"srtopt fit: warning: column(s) 'b' of '{data}' have missing values (text read as missing: 'NA' in 1 cell of "
        f"'b', 'null' in 1 cell of 'b'; --na-values sets which strings mean missing): the tree takes them as missing"]
    assert main(["fit", data, "--target", "y", "--out", out, "--na-values", "null", *QUICK]) == 2
    assert _one_error(capsys).endswith(f"column 'b' of '{data}' holds 1 cell(s) of text among numbers, the first "
                                       f"'NA' in row 4: correct those cells; or leave it out with --features")
    columns["b"][[3, 7]] = ["?", "0.5"]
    data = _write(tmp_path / "d.csv", columns)
    assert main(["fit", data, "--target", "y", "--out", out, "--na-values", "?", *QUICK]) == 0
    assert "(text read as missing: '?' in 1 cell of 'b'; --na-values" in capsys.readouterr().err


def test_a_text_column_is_categories_and_empty_cells_are_missing_in_fit_predict_and_show(tmp_path, capsys):
    """A feature column of text is read as categories and an empty cell as a missing value: the model file keeps
    the encoding, predict reads the same columns (a category the fit did not see is named), show names the
    encoded columns."""
    columns = _features()
    columns["colour"] = np.array(["red", "blue", "green"])[np.arange(60) % 3]
    columns["y"] = columns["a"].astype(float) + (columns["colour"] == "red")
    columns["b"][[2, 5]] = ""
    data, model = _write(tmp_path / "d.csv", columns), str(tmp_path / "m.json")
    assert main(["fit", data, "--target", "y", "--out", model, *QUICK]) == 0
    fitted = srtopt.load(model)
    assert fitted.encoder_.names == ["a", "b", "b (missing)", "colour = blue", "colour = green", "colour = red"]
    columns["colour"][0] = "teal"
    new = _write(tmp_path / "new.csv", columns)
    capsys.readouterr()
    assert main(["predict", model, new, "--out", str(tmp_path / "p.csv")]) == 0
    assert "warning: categories the fit did not keep: colour: 'teal'" in capsys.readouterr().err
    assert len(pd.read_csv(tmp_path / "p.csv")) == 60
    assert main(["show", model]) == 0
    assert "[colour = red]" in capsys.readouterr().out


@pytest.mark.parametrize("values, says", [
    (["1,234", "12,345.5"], "holds numbers written as text ('1,234', '12,345.5'): give --thousands ',' to read "
                            "them as numbers"),
    (["1,5", "2,25"], "holds numbers written as text ('1,5', '2,25'): give --decimal ',' to read them as numbers"),
    (["1,000", "2,500"], "holds numbers written as text ('1,000', '2,500'): give --thousands ',' or --decimal ',' to "
                         "read them as numbers"),
    (["2024-01-05", "2024-02-11"], "holds dates ('2024-01-05'), not numbers: make numeric columns of them (a day "
                                   "count, the month); or leave it out with --features"),
    (["3", "abc"], "holds 30 cell(s) of text among numbers, the first 'abc' in row 2: correct those cells; or leave "
                   "it out with --features"),
    (None, "holds a different text in every row ('A-0', 'A-1', 'A-2', ...), like an identifier, not numbers: leave it "
           "out with --features"),
])
def test_a_column_that_is_not_numbers_gets_one_line_saying_what_to_do(tmp_path, capsys, values, says):
    columns = _features()
    columns["x"] = [f"A-{i}" for i in range(60)] if values is None else [values[i % 2] for i in range(60)]
    columns["y"] = columns["a"]
    data = _write(tmp_path / "d.csv", columns)
    assert main(["fit", data, "--target", "y", "--out", str(tmp_path / "m.json"), *QUICK]) == 2
    assert _one_error(capsys) == f"srtopt fit: error: column 'x' of '{data}' {says}"


def test_the_flags_read_numbers_written_as_text_in_fit_and_predict(tmp_path, capsys):
    rng = np.random.default_rng(1)
    price = rng.integers(1000, 90000, 60)
    frame = pd.DataFrame({"price": [f"{v:,}" for v in price], "y": price / 1000.0})
    data, model = str(tmp_path / "d.csv"), str(tmp_path / "m.json")
    frame.to_csv(data, index=False)
    assert main(["fit", data, "--target", "y", "--thousands", ",", "--out", model, *QUICK]) == 0
    assert srtopt.load(model).scaler_.x_min[0] == price.min()
    capsys.readouterr()
    assert main(["predict", model, data]) == 2
    assert "give --thousands ',' or --decimal ',' to read them as numbers" in _one_error(capsys, "predict")
    assert main(["predict", model, data, "--thousands", ","]) == 0
    expected = srtopt.load(model).predict(pd.DataFrame({"price": price.astype(float)}))
    written = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype=str)["prediction"]
    np.testing.assert_array_equal(  # parsed by Python's float (pandas 2.0's default parser may be 1 ulp off)
        np.array([float(text) for text in written]), expected)
    semicolons = tmp_path / "semi.csv"
    semicolons.write_text("a;y\n" + "".join(f"{i},5;{i}\n" for i in range(10)))
    assert main(["fit", str(semicolons), "--target", "y", "--decimal", ",", "--out", model, *QUICK]) == 0
    assert srtopt.load(model).scaler_.x_min[0] == 0.5


def test_an_empty_column_is_left_out_and_a_row_number_column_pointed_out(tmp_path, capsys):
    columns = _features()
    columns.update(notes=[""] * 60, id=[str(i) for i in range(60)], y=columns["a"])
    data, model = _write(tmp_path / "d.csv", columns), str(tmp_path / "m.json")
    assert main(["fit", data, "--target", "y", "--out", model, *QUICK]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"srtopt fit: warning: column 'notes' of '{data}' is empty in every row: it is left out of the features",
        f"srtopt fit: warning: column 'id' of '{data}' holds a different whole number in every row, like an "
        f"identifier; it is a feature: leave it out with --features if it is one"]
    assert srtopt.load(model).feature_names_in_.tolist() == ["a", "b", "id"]
    assert main(["fit", data, "--target", "y", "--features", "a", "notes", "--out", model, *QUICK]) == 2
    assert _one_error(capsys).endswith(f"--features: column(s) 'notes' of '{data}' are empty in every row; leave "
                                       f"them out")


@pytest.mark.parametrize("flags, message", [
    (["--thousands", ",,"], "--thousands takes one character, got ',,'"),
    (["--thousands", ",", "--decimal", ","], "--thousands and --decimal must differ, both are ','"),
])
def test_bad_reading_flags_are_one_line(tmp_path, capsys, flags, message):
    data = _write(tmp_path / "d.csv", {**_features(), "y": _features()["a"]})
    assert main(["fit", data, "--target", "y", "--out", str(tmp_path / "m.json"), *flags, *QUICK]) == 2
    assert _one_error(capsys).endswith(message)


# ---------------------------------------------------------------- docs/cli.md, "Reading the data"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _documented_rows() -> dict:
    """{what the column holds: what fit says or does} of the table under "Reading the data" in docs/cli.md."""
    section = DOCS.read_text(encoding="utf-8").split("## Reading the data", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return {holds.strip(): does.strip() for holds, does in rows[1:]}


def _column(holds: str) -> dict:
    """The columns of a CSV file whose column ``x`` (or target ``y``) holds what a row of the table names."""
    columns = {**_features(), "y": _features()["a"]}
    if holds.startswith("text"):
        columns["colour"] = np.array(["red", "blue"])[np.arange(60) % 2]
    elif holds.startswith("numbers and some text"):
        columns["x"] = ["3", "abc"] + ["3"] * 58
    elif holds.startswith("numbers written as text"):
        columns["x"] = ["1,234", "12,345.5"] * 30
    elif holds.startswith("dates"):
        columns["x"] = ["2024-01-05", "2024-02-11"] * 30
    elif holds.startswith("a different text"):
        columns["x"] = [f"A-{i}" for i in range(60)]
    elif holds.startswith("a different whole number"):
        columns["x"] = [str(i) for i in range(60)]
    elif holds.startswith("nothing"):
        columns["x"] = [""] * 60
    elif holds.startswith("missing values in a feature"):
        columns["b"][0] = "NA"
    elif holds.startswith("missing values in the target"):
        columns["y"][0] = ""
    else:
        raise AssertionError(f"docs/cli.md's reading table has a row this test does not know: {holds!r}")
    return columns


def test_the_reading_table_of_docs_cli_says_what_fit_does(tmp_path, capsys):
    """Each row of the table: ``fit`` refuses the column (status 2) where the table says "refused", else fits, and
    the line the table quotes (its first quote; "..." for any values) is what fit prints (or, for a feature of
    categories, what ``show`` names)."""
    rows = _documented_rows()
    assert len(rows) == 9, rows
    for holds, does in rows.items():
        data, model = _write(tmp_path / "d.csv", _column(holds)), str(tmp_path / "m.json")
        status = main(["fit", data, "--target", "y", "--out", model, *QUICK])
        said = capsys.readouterr().err
        if status == 0:
            assert main(["show", model]) == 0
            said += capsys.readouterr().out
        assert status == (2 if does.startswith("refused") else 0), (holds, said)
        quoted = re.escape(does.split("`")[1]).replace(re.escape("..."), ".*")
        assert re.search(quoted, said), (holds, does, said)
