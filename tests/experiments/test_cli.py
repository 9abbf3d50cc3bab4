"""``srtopt bench`` and ``srtopt report`` through the CLI dispatcher."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from srtopt.cli import build_parser, main


def test_help_documents_every_option(capsys):
    parser = build_parser()
    for command, options in (
        ("bench", ["--datasets", "--depths", "--methods", "--folds", "--seeds", "--jobs",
                   "--backend", "--store", "--data-home", "--quiet", "--split-seed", "--params",
                   "--plugin", "--retry-failed"]),
        ("report", ["--out", "--no-plots"]),
    ):
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args([command, "--help"])
        assert exit_.value.code == 0
        text = capsys.readouterr().out
        for option in options:
            assert option in text


@pytest.mark.parametrize("argv, message", [
    (["bench", "--datasets", "yacht", "bostn"], "unknown dataset 'bostn'; valid datasets: abalone"),
    (["bench", "--datasets", "yacht", "--methods", "cart", "xgboost"], "unknown method 'xgboost'"),
    (["bench", "--datasets", "yacht", "--params", "cart={bad"], "--params cart: invalid JSON"),
    (["bench", "--datasets", "yacht", "--methods", "srt-l2", "--params", 'srt-l2={"max_iter": "10"}'],
     "--params srt-l2: max_iter must be an integer >= 1, got '10'"),
    (["bench", "--datasets", "yacht", "--methods", "cart", "--params", 'cart={"bogus": 1}'],
     "--params cart: DecisionTreeRegressor.__init__() got an unexpected keyword argument 'bogus'"),
    (["bench", "--datasets", "yacht", "--methods", "cart", "--params", 'rf={"n_estimators": 5}'],
     "--params rf: 'rf' is not among --methods (cart)"),
    (["report", "nowhere.db"], "no results store nowhere.db"),
])
def test_user_errors_print_one_line_and_exit_nonzero(argv, message, capsys, tmp_path, monkeypatch, data_home):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SRTOPT_DATA", str(data_home))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_bench_then_report(capsys, tmp_path, data_home):
    db = tmp_path / "cli.db"
    argv = ["bench", "--datasets", "yacht", "lpga2009", "--depths", "2", "--methods", "cart",
            "--folds", "4", "--seeds", "2", "--jobs", "1", "--store", str(db),
            "--data-home", str(data_home), "--params", 'cart={"min_samples_leaf": 2}']
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "16/16 runs" in err and "16 runs in the grid: 0 already stored, 16 run now" in err
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*), MIN(params) FROM runs WHERE status='ok'").fetchone() == (
        16, '{"min_samples_leaf":2}')
    conn.close()
    assert main(argv + ["--quiet"]) == 0
    assert capsys.readouterr().err == ""

    out_dir = tmp_path / "reports"
    assert main(["report", str(db), "--out", str(out_dir)]) == 0
    printed = capsys.readouterr().out
    assert "| Yacht hydrodynamics | 308 | 6 |" in printed and "Geometric avg" in printed
    assert {p.name for p in out_dir.iterdir()} >= {"report.md", "report.tex", "r2_vs_time_depth2.png",
                                                   "r2_by_dataset_depth2.png"}


@pytest.mark.parametrize("command", ["bench", "report"])
def test_a_store_srtopt_did_not_write_is_one_line(command, capsys, tmp_path, data_home):
    (tmp_path / "notes.db").write_text("not a database\n" * 200)
    conn = sqlite3.connect(tmp_path / "other.db")
    conn.execute("CREATE TABLE runs (x INTEGER)")
    conn.commit()
    conn.close()
    for name, message in (("notes.db", "is not a results store (an SQLite file written by 'srtopt bench')"),
                          ("other.db", "has a table 'runs' that srtopt did not write")):
        before = (tmp_path / name).read_bytes()
        argv = (["bench", "--datasets", "yacht", "--methods", "cart", "--seeds", "1", "--data-home",
                 str(data_home), "--store", str(tmp_path / name)] if command == "bench"
                else ["report", str(tmp_path / name), "--out", str(tmp_path / "rep")])
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"srtopt {command}: error: ") and message in err, err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert (tmp_path / name).read_bytes() == before  # not touched
    assert not (tmp_path / "rep").exists()


def test_report_refuses_to_pool_srtopt_versions_unless_asked(capsys, tmp_path, data_home):
    db = tmp_path / "mixed.db"
    argv = ["bench", "--datasets", "yacht", "--depths", "2", "--methods", "cart", "--folds", "2",
            "--seeds", "2", "--store", str(db), "--data-home", str(data_home), "--quiet"]
    assert main(argv) == 0
    conn = sqlite3.connect(db)
    conn.execute("UPDATE runs SET versions = json_set(versions, '$.srtopt', '0.0.9') WHERE seed = 1")
    conn.commit()
    conn.close()
    assert main(["report", str(db), "--out", str(tmp_path / "r"), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert err == (f"srtopt report: error: the store holds runs of different srtopt versions: 0.0.9 (2 runs), "
                   f"{_version()} (2 runs); their results may differ, so they are not pooled: pass "
                   f"--mixed-versions (mixed_versions=True) to pool them anyway\n")
    assert main(["report", str(db), "--out", str(tmp_path / "r"), "--no-plots", "--mixed-versions"]) == 0
    printed = capsys.readouterr().out
    assert f"srtopt versions: 0.0.9 (2 runs), {_version()} (2 runs)." in printed


def _version():
    from srtopt.experiments import package_versions

    return package_versions()["srtopt"]


def test_a_bench_whose_every_run_failed_exits_1_with_the_first_reason(capsys, tmp_path, data_home):
    argv = ["bench", "--datasets", "yacht", "--depths", "2", "--methods", "cart", "--folds", "2", "--seeds", "1",
            "--store", str(tmp_path / "failed.db"), "--data-home", str(data_home), "--quiet",
            "--params", 'cart={"max_features": "most"}']
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("srtopt bench: error: every run failed; the first: cart on yacht: InvalidParameterError")
    assert err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["bench", "--task", "classification", "--datasets", "pima", "yacht"],
     "--task classification: yacht is not a classification dataset"),
    (["bench", "--datasets", "pima", "yacht"], "the datasets mix tasks (classification: pima; regression: yacht)"),
    (["bench", "--datasets", "pima", "--methods", "cart"], "method 'cart' is a regression method and the datasets "
                                                           "are classification datasets"),
    (["bench", "--task", "classification", "--methods", "srt-l2"], "method 'srt-l2' is a regression method"),
])
def test_task_errors_are_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--store", str(tmp_path / "t.db")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "t.db").exists()


@pytest.mark.filterwarnings("ignore:The least populated class:UserWarning")
def test_classification_bench_then_report(capsys, tmp_path, class_data_home, monkeypatch):
    monkeypatch.setenv("SRTOPT_CLASSIFICATION_DATA", str(class_data_home))
    monkeypatch.setenv("SRTOPT_DATA", str(tmp_path))  # not where classification data is read
    db = tmp_path / "c.db"
    argv = ["bench", "--datasets", "bupa", "glass", "--depths", "2", "3", "--methods", "cart-clf", "rf-clf",
            "--seeds", "1", "--store", str(db), "--params", 'rf-clf={"n_estimators": 10}']
    assert main(argv) == 0
    assert "24 runs in the grid: 0 already stored, 24 run now (0 failed)" in capsys.readouterr().err
    assert main(argv) == 0
    assert "24 runs in the grid: 24 already stored, 0 run now" in capsys.readouterr().err
    assert main(["report", str(db), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    md = capsys.readouterr().out
    assert "| Method | datasets | runs | accuracy | log loss | fit s | leaves |" in md
    assert "| Dataset | N | p | K | cart-clf D=2 | cart-clf D=3 | rf-clf |" in md
    assert (tmp_path / "rep" / "summary_classification.csv").is_file()


def test_bench_runs_stores_and_reports_a_csv_file_beside_a_named_dataset(capsys, tmp_path, data_home, monkeypatch):
    import numpy as np
    import pandas as pd

    monkeypatch.setenv("SRTOPT_DATA", str(data_home))
    rng = np.random.default_rng(0)
    X = rng.random((120, 3))
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": np.sin(4 * X[:, 0]) + X[:, 1]})
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    db = tmp_path / "mine.db"
    argv = ["bench", "--datasets", str(path), "yacht", "--target", "y", "--depths", "2", "--methods", "cart",
            "--folds", "2", "--seeds", "1", "--store", str(db), "--quiet"]
    assert main(argv) == 0
    with sqlite3.connect(db) as con:
        names = sorted(row[0] for row in con.execute("SELECT DISTINCT dataset FROM runs"))
        ok = con.execute("SELECT COUNT(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert names == [f"{path.resolve()}?target=y&task=regression&sha256={digest}", "yacht"] and ok == 4
    assert main(argv) == 0  # the same file: its runs are stored
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 4
    frame.assign(y=frame["y"] + 1).to_csv(path, index=False)  # other data under the same path: other runs
    assert main(argv) == 0
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(DISTINCT dataset) FROM runs").fetchone()[0] == 3
    capsys.readouterr()
    assert main(["report", str(db), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    md = capsys.readouterr().out
    assert f"| mine.csv: y (sha256 {digest[:8]}) |" in md and "| Yacht hydrodynamics |" in md


def test_a_classification_bench_of_a_csv_file_runs_the_soft_tree_and_reports_its_shape(capsys, tmp_path):
    """--task classification's default methods include the soft tree (sct), and the report gives a CSV
    dataset's N, p and K."""
    import numpy as np
    import pandas as pd

    from srtopt.cli.experiments import DEFAULT_METHODS

    assert DEFAULT_METHODS["classification"][0] == "sct"
    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    path = tmp_path / "labels.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "label": np.where(X[:, 0] > X[:, 1], "u", "v")}).to_csv(
        path, index=False)
    db = tmp_path / "labels.db"
    assert main(["bench", "--task", "classification", "--datasets", str(path), "--target", "label", "--depths", "2",
                 "--methods", "sct", "--folds", "2", "--seeds", "1", "--store", str(db), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", str(db), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    md = capsys.readouterr().out
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"| labels.csv: label (sha256 {digest[:8]}) | 80 | 3 | 2 |" in md


@pytest.mark.parametrize("argv, message", [
    (["bench", "--datasets", "yacht", "--target", "y"], "--target applies to CSV files in --datasets"),
    (["bench", "--datasets", "missing.csv"], "dataset file"),
    (["bench", "--datasets", "mine.csv", "--target", "z"], "has no column 'z' (the target); columns: a, y"),
])
def test_csv_dataset_errors_are_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.csv").write_text("a,y\n1,2\n3,4\n")
    assert main(argv + ["--store", str(tmp_path / "t.db")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "t.db").exists()


def test_a_name_with_its_csv_file_in_data_home_is_a_file_dataset(tmp_path, monkeypatch):
    """Issue 40: `--datasets mydata --data-home DIR` said "unknown dataset"; DIR/mydata.csv is now run."""
    monkeypatch.chdir(tmp_path)
    rows = "\n".join(f"{i % 7},{(i * 3) % 5},{i % 7 + 0.5 * ((i * 3) % 5)}" for i in range(40))
    (tmp_path / "mydata.csv").write_text("a,b,y\n" + rows + "\n")
    db = tmp_path / "d.db"
    assert main(["bench", "--datasets", "mydata", "--data-home", str(tmp_path), "--target", "y", "--methods", "cart",
                 "--depths", "2", "--folds", "2", "--seeds", "1", "--store", str(db), "--quiet"]) == 0
    with sqlite3.connect(db) as con:
        (name,), = con.execute("SELECT DISTINCT dataset FROM runs").fetchall()
    assert name.startswith(f"{tmp_path / 'mydata.csv'}?target=y&task=regression&sha256=")
