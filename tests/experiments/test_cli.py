"""``srtopt bench`` and ``srtopt report`` through the CLI dispatcher."""

from __future__ import annotations

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
