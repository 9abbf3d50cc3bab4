"""``srtopt fit`` / ``predict`` / ``show`` through the CLI dispatcher."""

import re

import numpy as np
import pandas as pd
import pytest

import srtopt
from srtopt.cli import main


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(7)
    X = rng.random((50, 3))
    frame = pd.DataFrame({"temp": 10 + 20 * X[:, 0], "load": 100 * X[:, 1], "speed": X[:, 2],
                          "y": np.where(X[:, 0] > 0.5, 3 * X[:, 1], -X[:, 2])})
    frame.to_csv(path / "data.csv", index=False)
    frame.drop(columns="y").iloc[::-1, ::-1].to_csv(path / "new.csv", index=False)  # other column order
    return path


@pytest.fixture(scope="module")
def fitted(workdir):
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
        code = main(["fit", str(workdir / "data.csv"), "--target", "y", "--depth", "2",
                     "--out", str(workdir / "model.json"), "--max-iter", "2", "--n-init", "1"])
    return code, out.getvalue(), err.getvalue()


def test_fit_saves_a_model_and_reports_progress(workdir, fitted):
    code, out, err = fitted
    assert code == 0
    assert re.search(r"saved .*model\.json \(training R\^2 -?\d\.\d{4}, stopped by max_iter\)", out)
    progress = [line for line in err.splitlines() if line.startswith("macro ")]
    assert len(progress) == 2
    assert all(re.fullmatch(r"macro \d: E = \S+, leaf share min \S+ max \S+, \S+ s", line) for line in progress)
    # the header says what "leaf share" is; the first line comes before the initialization
    assert "leaf share min/max = the smallest and largest fraction of the training rows that HBP routes" in err
    assert err.splitlines()[2].startswith("initialization: 1 x hierarchical 2-means into 4 leaves on 50 rows")
    model = srtopt.load(workdir / "model.json")
    assert model.depth == 2 and model.feature_names_in_.tolist() == ["temp", "load", "speed"]


def test_predict_takes_columns_by_name(workdir, fitted, capsys):
    assert main(["predict", str(workdir / "model.json"), str(workdir / "new.csv"),
                 "--out", str(workdir / "preds.csv")]) == 0
    preds = pd.read_csv(workdir / "preds.csv")
    model = srtopt.load(workdir / "model.json")
    expected = model.predict(pd.read_csv(workdir / "data.csv")[["temp", "load", "speed"]])[::-1]
    np.testing.assert_allclose(preds["prediction"].to_numpy(), expected, rtol=1e-12)
    assert main(["predict", str(workdir / "model.json"), str(workdir / "data.csv")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "prediction" and len(lines) == 51


def test_show_text_dot_png(workdir, fitted, capsys):
    model = str(workdir / "model.json")
    assert main(["show", model]) == 0
    text = capsys.readouterr().out
    assert "scaled:" in text and "original:" in text and "leaf 7" in text
    assert main(["show", model, "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph srt {")
    assert main(["show", model, "--format", "png", "--out", str(workdir / "tree.png")]) == 0
    assert (workdir / "tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["show", model, "--format", "dot", "--out", str(workdir / "tree.dot"), "--top", "1"]) == 0
    assert (workdir / "tree.dot").read_text().startswith("digraph")


@pytest.mark.parametrize("argv, message", [
    (["fit", "{d}/data.csv", "--target", "Y", "--out", "{d}/m.json"],
     "--target 'Y' is not a column of '{d}/data.csv'; columns: temp, load, speed, y"),
    (["fit", "{d}/missing.csv", "--target", "y", "--out", "{d}/m.json"], "data file '{d}/missing.csv' not found"),
    (["fit", "{d}/text.csv", "--target", "y", "--out", "{d}/m.json"], "column(s) 'name' of '{d}/text.csv' are not numeric"),
    (["fit", "{d}/holes.csv", "--target", "y", "--out", "{d}/m.json"], "column(s) 'a' of '{d}/holes.csv' have missing values"),
    (["fit", "{d}/empty.csv", "--target", "y", "--out", "{d}/m.json"], "data file '{d}/empty.csv' is empty"),
    (["fit", "{d}/data.csv", "--target", "y", "--out", "{d}/nodir/m.json"], "--out: directory '{d}/nodir' does not exist"),
    (["fit", "{d}/data.csv", "--target", "y", "--out", "{d}"], "--out '{d}' is a directory; give a file name"),
    (["fit", "{d}/data.csv", "--target", "y", "--out", "{d}/m.json", "--depth", "0"], "depth must be an integer >= 1, got 0"),
    (["fit", "{d}/data.csv", "--target", "y", "--out", "{d}/m.json", "--regularization", "lots"],
     "--regularization must be 'none', 'l2', 'l2-calibrated' or a number"),
    (["fit", "{d}/data.csv", "--target", "y", "--out", "{d}/m.json", "--features", "temp", "wind"],
     "--features: 'wind' not in '{d}/data.csv'"),
    (["predict", "{d}/missing.json", "{d}/data.csv"], "model file '{d}/missing.json' not found"),
    (["predict", "{d}/data.csv", "{d}/data.csv"], "model file '{d}/data.csv' is not valid JSON"),
    (["predict", "{d}/model.json", "{d}/text.csv"], "'{d}/text.csv' lacks the model's feature column(s) 'temp', 'load', 'speed'"),
    (["show", "{d}/model.json", "--format", "png"], "--format png needs --out FILE.png"),
    (["show", "{d}/model.json", "--top", "0"], "--top must be >= 1 or 'all', got 0"),
])
def test_user_mistakes_print_one_line(workdir, fitted, capsys, argv, message):
    d = str(workdir)
    (workdir / "text.csv").write_text("name,y\nfoo,1\nbar,2\n")
    (workdir / "holes.csv").write_text("a,y\n1,1\n,2\n3,3\n")
    (workdir / "empty.csv").write_text("")
    assert main([a.replace("{d}", d) for a in argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert lines[0].startswith(f"srtopt {argv[0]}: error: ")
    assert message.replace("{d}", d) in lines[0]


def test_help_lists_the_options(capsys):
    for command, options in (("fit", ["--target", "--depth", "--out", "--regularization", "--max-iter",
                                      "--n-init", "--time-limit", "--random-state", "--quiet", "--sep"]),
                             ("predict", ["--out", "--column", "--sep"]),
                             ("show", ["--format", "--out", "--top", "html"])):
        with pytest.raises(SystemExit) as exit_:
            main([command, "--help"])
        assert exit_.value.code == 0
        text = capsys.readouterr().out
        assert all(option in text for option in options)


def test_show_html_writes_one_self_contained_page(workdir, fitted, capsys):
    model = str(workdir / "model.json")
    assert main(["show", model, "--format", "html", "--out", str(workdir / "tree.html")]) == 0
    page = (workdir / "tree.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('<details class="node') == 7
    assert not re.search(r"(src|href)=|://|@import|url\(", page)  # nothing to fetch at view time
    assert main(["show", model, "--format", "html"]) == 0
    assert capsys.readouterr().out == page


def test_show_top_all_prints_every_term(workdir, fitted, capsys):
    assert main(["show", str(workdir / "model.json"), "--top", "all"]) == 0
    text = capsys.readouterr().out
    assert "more)" not in text
    assert main(["show", str(workdir / "model.json"), "--top", "1"]) == 0
    assert "(2 more)" in capsys.readouterr().out


@pytest.mark.parametrize("sep, option", [(";", []), ("\t", []), ("|", []), (";", ["--sep", ";"]),
                                         ("\t", ["--sep", "tab"])])
def test_fit_and_predict_read_other_separators(workdir, fitted, capsys, sep, option):
    frame = pd.read_csv(workdir / "data.csv")
    path = workdir / "other.csv"
    frame.to_csv(path, sep=sep, index=False)
    assert main(["predict", str(workdir / "model.json"), str(path), *option]) == 0
    preds = [float(v) for v in capsys.readouterr().out.splitlines()[1:]]
    np.testing.assert_allclose(preds, srtopt.load(workdir / "model.json").predict(frame.drop(columns="y")),
                               rtol=1e-12)
    assert main(["fit", str(path), "--target", "y", "--out", str(workdir / "m2.json"), "--max-iter", "1",
                 "--n-init", "1", "--quiet", *option]) == 0
    assert srtopt.load(workdir / "m2.json").feature_names_in_.tolist() == ["temp", "load", "speed"]


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"srtopt {srtopt.__version__}"


def test_bench_help_names_every_registered_method(capsys):
    from srtopt.experiments import method_names

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "srt-l2-literal" in method_names()
    assert f"methods: {', '.join(method_names())}," in text
