"""``srtopt fit`` / ``predict`` / ``show`` through the CLI dispatcher."""

import io
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import srtopt
from srtopt._io import exact_csv_options
from srtopt.cli import main
from srtopt.export import export_text

REPO = Path(__file__).resolve().parents[2]


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
    assert all(re.fullmatch(r"macro \d: E = \S+, best \S+, training R\^2 \S+, leaf share min \S+ max \S+, \S+ s", line)
               for line in progress)
    # the header says what "leaf share" is; the first line comes before the initialization
    assert "leaf share min/max = the smallest and largest fraction of the training rows that HBP routes" in err
    assert err.splitlines()[0] == "fitting SoftRegressionTree(depth=2, leaf=linear) on 50 rows x 3 features"
    assert err.splitlines()[2].startswith("initialization: softened model-tree splits into 4 leaves on 50 rows")
    model = srtopt.load(workdir / "model.json")
    assert model.depth == 2 and model.feature_names_in_.tolist() == ["temp", "load", "speed"]


def test_fit_cv_runs_pythons_search_and_saves_the_refit_tree(workdir, capsys):
    """--cv runs SoftRegressionTreeCV with its Python defaults (4 folds without a number, repeated 3 times on these
    50 rows), shows a line per round, and saves the tree it refit."""
    from srtopt.cli.models import CV_FOLDS
    from srtopt.estimators.cv import SoftRegressionTreeCV

    assert CV_FOLDS == SoftRegressionTreeCV().cv  # the command line's default is Python's
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--max-iter", "2",
                 "--out", str(workdir / "cv.json"), "--cv"]) == 0
    out, err = capsys.readouterr()
    assert ("choosing the depth (1, 2, 3, 4, 5) and the leaves (linear, spline, spline:steps=64,pairs=4) of "
            "SoftRegressionTree by 4-fold cross-validation, the deeper trees while they predict the held-out rows "
            f"better: at most {SoftRegressionTreeCV().max_fits(50)} fits, the refit included, on 50 rows") in err
    rounds = re.findall(r"SoftRegressionTreeCV: depth (\d): 3 candidate\(s\) x 12 fold\(s\) of 37 training rows", err)
    chosen = re.search(r"SoftRegressionTreeCV: refit depth (\d), ([\w:=,]+) leaves on 50 rows", err)
    assert rounds and chosen and not re.search(r"^macro ", err, re.MULTILINE)  # no progress lines of the fits
    model = srtopt.load(workdir / "cv.json")
    assert (model.depth, model.leaf) == (int(chosen[1]), chosen[2]) and "saved" in out


def test_fit_cv_model_keeps_the_column_names(workdir, capsys):
    """The tree chosen by --cv predicts by column name and shows the names, as a plain fit does."""
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--depth", "1", "--max-iter", "2",
                 "--out", str(workdir / "cv_names.json"), "--cv", "2", "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err
    model = srtopt.load(workdir / "cv_names.json")
    assert model.feature_names_in_.tolist() == ["temp", "load", "speed"]
    assert main(["predict", str(workdir / "cv_names.json"), str(workdir / "new.csv")]) == 0  # other order
    preds = [float(v) for v in capsys.readouterr().out.split()[1:]]
    expected = model.predict(pd.read_csv(workdir / "data.csv")[["temp", "load", "speed"]])[::-1]
    np.testing.assert_allclose(preds, expected, rtol=1e-9)
    assert main(["show", str(workdir / "cv_names.json")]) == 0
    text = capsys.readouterr().out
    assert "temp" in text and "x0" not in text


def test_out_writes_into_fifos_devices_and_stdout(workdir, fitted, capsys):
    """--out naming a FIFO, a device or '-' is written into, never replaced by a regular file."""
    import threading

    model, data = str(workdir / "model.json"), str(workdir / "data.csv")
    fifo = workdir / "preds.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(["predict", model, data, "--out", str(fifo)]) == 0
    reader.join(timeout=60)
    assert received and received[0].decode().splitlines()[0] == "prediction" and len(received[0].splitlines()) == 51
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    if os.geteuid() == 0:  # a character device of our own: the null device's numbers
        device = workdir / "mynull"
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        device = Path("/dev/null")
    for argv in (["predict", model, data], ["show", model], ["fit", data, "--target", "y", "--depth", "1",
                                                             "--max-iter", "1", "--quiet"]):
        assert main([*argv, "--out", str(device)]) == 0
        assert stat.S_ISCHR(os.stat(device).st_mode)
    capsys.readouterr()
    assert main(["predict", model, data, "--out", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "prediction" and len(out.splitlines()) == 51 and "wrote" not in err


@pytest.mark.slow
def test_out_dev_stdout_on_a_pipe(workdir, fitted):
    """``--out /dev/stdout`` when stdout is a pipe (it resolves to a /proc path of no file)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for argv in (["predict", str(workdir / "model.json"), str(workdir / "data.csv")],
                 ["fit", str(workdir / "data.csv"), "--target", "y", "--depth", "1", "--max-iter", "1", "--quiet"]):
        done = subprocess.run([sys.executable, "-m", "srtopt", *argv, "--out", "/dev/stdout"], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("prediction\n") or done.stdout.startswith("{"), done.stdout[:200]


def test_unwritable_out_is_refused_before_the_fit(workdir, capsys, monkeypatch):
    """A dangling --out symlink into a missing directory fails at once, before any fitting."""
    import srtopt.estimators.srt as srt_module

    link = workdir / "dangling.json"
    link.unlink(missing_ok=True)
    link.symlink_to(workdir / "gone" / "m.json")
    monkeypatch.setattr(srt_module.SoftRegressionTree, "fit", lambda *a, **k: pytest.fail("fit ran"))
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--out", str(link)]) == 2
    assert f"directory '{workdir}/gone' does not exist" in _one_error_line(capsys, "fit")


def test_a_failed_final_write_keeps_the_fitted_model(workdir, capsys, monkeypatch, tmp_path):
    """Disk full at the very end: one line, status 1, and the model saved elsewhere, said where."""
    import errno

    import srtopt.cli.models as cli_models

    def disk_full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cli_models, "atomic_write", disk_full)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--depth", "1", "--max-iter", "1", "--quiet",
                 "--out", str(workdir / "full.json")]) == 1
    line = _one_error_line(capsys, "fit")
    kept = re.search(r"saved to (\S+) instead", line).group(1)
    assert "No space left on device" in line and Path(kept).parent == tmp_path
    assert srtopt.load(kept).depth == 1 and not (workdir / "full.json").exists()


def _out_of_memory(*args, **kwargs):
    raise MemoryError("Unable to allocate 76.3 MiB for an array with shape (1000000, 10)")


def test_out_of_memory_in_the_statistics_step_keeps_the_fitted_model(workdir, capsys, monkeypatch):
    """The statistics step runs out of memory after training (a MemoryError where the node shares are
    computed): the model is complete, written to --out without the statistics, and the last line says where."""
    import srtopt.kernels as kernels

    monkeypatch.setattr(kernels, "node_shares", _out_of_memory)
    out = workdir / "oom.json"
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--max-iter", "2", "--quiet",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "srtopt fit: warning: out of memory while computing the training statistics" in captured.err
    assert re.fullmatch(rf"saved {re.escape(str(out))} \(training R\^2 \d\.\d{{4}}, stopped by max_iter\)\n",
                        captured.out)
    model, frame = srtopt.load(out), pd.read_csv(workdir / "data.csv")
    assert not hasattr(model, "feature_importances_")  # left out, as the leaves' statistics
    with pytest.warns(UserWarning, match="out of memory while computing the training statistics"):
        direct = srtopt.SoftRegressionTree(depth=2, max_iter=2, random_state=0).fit(frame.drop(columns="y"),
                                                                                    frame["y"])
    np.testing.assert_allclose(model.predict(frame.drop(columns="y")), direct.predict(frame.drop(columns="y")),
                               rtol=1e-12, atol=1e-12)  # the last bits differ with the oldest dependencies


def test_out_of_memory_after_the_save_says_the_model_is_saved(workdir, capsys, monkeypatch):
    """Predicting every training row for the last line's score runs out of memory: the model is written first,
    the line says the score was not computed; a failure past that names the file in its one line."""
    import srtopt.cli.models as cli_models
    from srtopt.estimators import srt as srt_module

    out = workdir / "oom_score.json"
    monkeypatch.setattr(srt_module.SoftRegressionTree, "score", _out_of_memory)
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--max-iter", "1", "--quiet",
                 "--out", str(out)]) == 0
    assert capsys.readouterr().out == (f"saved {out} (training R^2 not computed: out of memory, stopped by "
                                       f"max_iter)\n")
    assert srtopt.load(out).n_iter_ == 1
    out.unlink()
    monkeypatch.setattr(cli_models, "_constraints_note", _out_of_memory)
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--max-iter", "1", "--quiet",
                 "--out", str(out)]) == 1
    assert _one_error_line(capsys, "fit") == f"srtopt fit: error: out of memory; the model was saved to {out}"
    assert srtopt.load(out).n_iter_ == 1


#: ``srtopt fit`` whose statistics step starts with the address space limited to what the process holds and
#: MARGIN bytes more (RLIMIT_AS, as ``ulimit -v``): that step's split design, larger, is refused by the system
LIMITED_FIT = """
import resource, sys
from srtopt.cli import main
from srtopt.estimators.soft_tree import SoftTree

MARGIN = 16 * 2**20
statistics = SoftTree._store_training_statistics

def held():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))

def limited(self, *args):
    resource.setrlimit(resource.RLIMIT_AS, (held() + MARGIN, resource.getrlimit(resource.RLIMIT_AS)[1]))
    return statistics(self, *args)

SoftTree._store_training_statistics = limited
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_fit_out_of_memory_after_training_is_saved(tmp_path):
    """The probe's case for real, smaller: after training, the statistics step runs out of the address space
    (its N x (p + 1) split design, 42 MB, is more than the 16 MB left) and so does the score's prediction; the
    model is written to --out all the same and predicts as the fit without a limit (measured: 29 s in all)."""
    rng = np.random.default_rng(5)
    X = rng.random((200_000, 25))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(25)]).assign(y=np.sin(4 * X[:, 0]) + X[:, 1])
    frame.to_csv(tmp_path / "big.csv", index=False, float_format="%.6g")
    out = tmp_path / "big.json"
    done = subprocess.run([sys.executable, "-c", LIMITED_FIT, "fit", str(tmp_path / "big.csv"), "--target", "y",
                           "--depth", "1", "--max-iter", "1", "--quiet", "--out", str(out)],
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "warning: out of memory while computing the training statistics" in done.stderr
    assert done.stdout == f"saved {out} (training R^2 not computed: out of memory, stopped by max_iter)\n"
    read = pd.read_csv(tmp_path / "big.csv")
    direct = srtopt.SoftRegressionTree(depth=1, max_iter=1, random_state=0).fit(read.drop(columns="y"), read["y"])
    np.testing.assert_array_equal(srtopt.load(out).predict(read.head(1000).drop(columns="y")),
                                  direct.predict(read.head(1000).drop(columns="y")))


def test_fit_cv_refuses_one_fold(workdir, capsys):
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--out", str(workdir / "cv1.json"),
                 "--cv", "1"]) == 2
    assert "cv must be an integer >= 2" in capsys.readouterr().err
    assert not (workdir / "cv1.json").exists()


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
    leaves = srtopt.load(model).get_n_leaves()  # y has two linear pieces: subtrees without rows are pruned
    assert "scaled:" in text and "original:" in text
    assert len(re.findall(r"^\s*leaf \d+ \[", text, flags=re.MULTILINE)) == leaves
    assert main(["show", model, "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph srt {")
    assert main(["show", model, "--format", "png", "--out", str(workdir / "tree.png")]) == 0
    assert (workdir / "tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["show", model, "--format", "dot", "--out", str(workdir / "tree.dot"), "--top", "1"]) == 0
    assert (workdir / "tree.dot").read_text().startswith("digraph")


def _one_error_line(capsys, command):
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert lines[0].startswith(f"srtopt {command}: error: ")
    return lines[0]


#: the start of a fit of the test data (``{d}``: the folder of ``refused``)
FIT = ["fit", "{d}/data.csv", "--target", "y", "--out", "{d}/m.json"]


@pytest.fixture
def refused(capsys):
    """``refused(argv, folder)``: the one line ``srtopt argv`` prints when it refuses them ("{d}" in argv
    standing for ``folder``), once checked that it exits with status 2, no traceback and nothing else."""

    def run(argv, folder):
        d = str(folder)
        capsys.readouterr()
        assert main([a.replace("{d}", d) for a in argv]) == 2
        return _one_error_line(capsys, argv[0])

    return run


@pytest.mark.parametrize("argv, message", [
    (["fit", "{d}/data.csv", "--target", "Y", "--out", "{d}/m.json"],
     "--target 'Y' is not a column of '{d}/data.csv'; columns: temp, load, speed, y"),
    (["fit", "{d}/missing.csv", "--target", "y", "--out", "{d}/m.json"], "data file '{d}/missing.csv' not found"),
    (["fit", "{d}/text.csv", "--target", "y", "--out", "{d}/m.json"],
     "column 'name' of '{d}/text.csv' holds 1 cell(s) of text among numbers, the first 'bar' in row 2"),
    (["fit", "{d}/empty.csv", "--target", "y", "--out", "{d}/m.json"], "data file '{d}/empty.csv' is empty"),
    (["fit", "{d}/data.csv", "--target", "y", "--out", "{d}/nodir/m.json"], "--out: directory '{d}/nodir' does not exist"),
    (["fit", "{d}/data.csv", "--target", "y", "--out", "{d}"], "--out '{d}' is a directory; give a file name"),
    ([*FIT, "--depth", "0"], "depth must be an integer >= 1, got 0"),
    ([*FIT, "--regularization", "lots"],
     "--regularization must be 'none', 'l2', 'l2-slopes', 'l2-mean', 'l2-calibrated' (optionally with "
     "':split=FACTOR') or a number"),
    ([*FIT, "--features", "temp", "wind"], "--features: 'wind' not in '{d}/data.csv'"),
    ([*FIT, "--max-features", "0"], "--max-features must be a whole number >= 1 or 'none', got '0'"),
    ([*FIT, "--max-features", "4"], "--max-features 4 is more than the 3 feature column(s)"),
    ([*FIT, "--tol", "-1"], "--tol must be a number >= 0 or 'none', got '-1'"),
    ([*FIT, "--tol", "small"], "--tol must be a number >= 0 or 'none', got 'small'"),
    ([*FIT, "--max-iter", "0"], "--max-iter must be a whole number >= 1, got 0"),
    ([*FIT, "--sample-weight", "w"],
     "--sample-weight 'w' is not a column of '{d}/data.csv'; columns: temp, load, speed, y"),
    ([*FIT, "--sample-weight", "y"], "--sample-weight must name another column than --target"),
    ([*FIT, "--sample-weight", "speed", "--features", "temp", "speed"],
     "--features must not contain the --sample-weight column 'speed' (it is not a feature)"),
    (["fit", "{d}/weights.csv", "--target", "y", "--out", "{d}/m.json", "--sample-weight", "w"],
     "column 'w' of '{d}/weights.csv' (--sample-weight) has negative weights"),
    (["predict", "{d}/missing.json", "{d}/data.csv"], "model file '{d}/missing.json' not found"),
    (["predict", "{d}/data.csv", "{d}/data.csv"], "model file '{d}/data.csv' is not valid JSON"),
    (["predict", "{d}/model.json", "{d}/text.csv"], "'{d}/text.csv' lacks the model's feature column(s) 'temp', 'load', 'speed'"),
    (["show", "{d}/model.json", "--format", "png"], "--format png needs --out FILE.png"),
    (["show", "{d}/model.json", "--top", "0"], "--top must be >= 1 or 'all', got 0"),
    ([*FIT, "--leaf", "spline:n_knots=0"], "leaf spec 'spline:n_knots=0': n_knots must be an integer >= 3, got 0"),
    ([*FIT, "--leaf", "spline:n_knots=8,n_knots=9"],
     "leaf: option 'n_knots' is given twice in 'spline:n_knots=8,n_knots=9'; give it once"),
    ([*FIT, "--leaf", "spline", "--penalty", "feature_l1"],
     "penalty feature_l1 groups each feature's split weights and linear leaf weights; spline leaves carry more"),
    ([*FIT, "--sep", "ab"], "--sep takes one character (or 'tab'), got 'ab'"),
    ([*FIT, "--sep", ""], "--sep takes one character"),
    (["predict", "{d}/model.json", "{d}/data.csv", "--sep", ",,"], "--sep takes one character (or 'tab'), got ',,'"),
])
def test_user_mistakes_print_one_line(workdir, fitted, refused, argv, message):
    (workdir / "text.csv").write_text("name,y\n1,1\nbar,2\n")
    (workdir / "empty.csv").write_text("")
    (workdir / "weights.csv").write_text("a,w,y\n1,1,1\n2,-1,2\n3,1,3\n4,1,4\n5,1,5\n")
    assert message.replace("{d}", str(workdir)) in refused(argv, workdir)


def test_a_weight_column_weighs_the_rows_as_the_estimators_sample_weight_and_is_no_feature(workdir, capsys):
    frame = pd.read_csv(workdir / "data.csv")
    weights = np.random.default_rng(3).integers(0, 4, len(frame)).astype(float)
    frame.assign(w=weights).to_csv(workdir / "weighted.csv", index=False)
    out = workdir / "weighted.json"
    assert main(["fit", str(workdir / "weighted.csv"), "--target", "y", "--sample-weight", "w", "--out", str(out),
                 "--max-iter", "2", "--quiet"]) == 0
    model = srtopt.load(out)
    X, y = frame[["temp", "load", "speed"]], frame["y"].to_numpy()
    assert model.feature_names_in_.tolist() == ["temp", "load", "speed"]
    reference = srtopt.SoftRegressionTree(depth=2, max_iter=2, random_state=0).fit(X, y, sample_weight=weights)
    assert model.objective_ == pytest.approx(reference.objective_, rel=1e-9)
    assert f"(training R^2 {reference.score(X, y, sample_weight=weights):.4f}," in capsys.readouterr().out


def test_max_features_keeps_that_many_features_and_none_spells_every_one(workdir, capsys):
    out = workdir / "sparse.json"
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--max-features", "2", "--out", str(out),
                 "--max-iter", "2", "--quiet"]) == 0
    model = srtopt.load(out)
    assert model.max_features == 2 and 1 <= len(model.selected_features_) <= 2
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--max-features", "none", "--regularization",
                 "none", "--out", str(out), "--max-iter", "2", "--quiet"]) == 0
    model = srtopt.load(out)
    assert model.max_features is None and model.regularization == "none" and model.lambda_w_ == 0.0


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


def test_fit_help_says_what_it_reads_and_what_the_time_limit_covers(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "numeric columns" not in text and "numbers, text as categories, an empty cell as a missing value" in text
    assert "for each fit" not in text and "each with --time-limit" not in text
    assert "(with --cv: the whole search and the refit)" in text


def test_show_html_writes_one_self_contained_page(workdir, fitted, capsys):
    model = str(workdir / "model.json")
    assert main(["show", model, "--format", "html", "--out", str(workdir / "tree.html")]) == 0
    page = (workdir / "tree.html").read_text()
    leaves = srtopt.load(model).get_n_leaves()
    assert page.startswith("<!DOCTYPE html>") and page.count('<details class="node') == 2 * leaves - 1
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


def test_fit_init_option_chooses_the_initial_tree(workdir, capsys):
    from srtopt import load

    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--out", str(workdir / "cluster.json"),
                 "--max-iter", "1", "--init", "cluster", "--n-init", "2"]) == 0
    assert "initialization: 2 x hierarchical 2-means into 4 leaves" in capsys.readouterr().err
    assert load(workdir / "cluster.json").init == "cluster"
    with pytest.raises(SystemExit):
        main(["fit", str(workdir / "data.csv"), "--target", "y", "--out", str(workdir / "x.json"), "--init", "kmeans"])
    assert "invalid choice: 'kmeans'" in capsys.readouterr().err


def test_fit_leaf_option_gives_the_regression_spline_leaves(workdir, capsys):
    from srtopt import load

    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--depth", "1", "--max-iter", "1",
                 "--leaf", "spline:n_knots=4", "--out", str(workdir / "spline.json")]) == 0
    model = load(workdir / "spline.json")
    assert model.leaf == "spline:n_knots=4"
    assert [len(knots) for knots, _ in model.leaf_model_.basis.curves.values()] == [4, 4, 4]
    frame = pd.read_csv(workdir / "data.csv")
    assert np.isfinite(model.predict(frame.drop(columns="y"))).all()


def test_bench_help_names_every_registered_method(capsys):
    from srtopt.experiments import method_names

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = re.sub(r"-\s+", "-", " ".join(capsys.readouterr().out.split()))  # argparse wraps after hyphens
    assert "srt-l2-literal" in method_names() and "cart-clf" in method_names()
    assert f"regression: {', '.join(method_names('regression'))};" in text
    assert f"classification: {', '.join(method_names('classification'))};" in text


def test_out_that_resolves_to_an_input_is_refused(workdir, fitted, capsys, monkeypatch):
    monkeypatch.chdir(workdir)
    data, model = workdir / "data.csv", workdir / "model.json"
    before = data.read_bytes(), model.read_bytes()
    (workdir / "alias.csv").unlink(missing_ok=True)
    (workdir / "alias.csv").symlink_to("data.csv")
    (workdir / "hard.json").unlink(missing_ok=True)
    os.link(model, workdir / "hard.json")
    (workdir / "sub").mkdir(exist_ok=True)
    for argv in (["fit", "data.csv", "--target", "y", "--out", "data.csv"],
                 ["fit", str(data), "--target", "y", "--out", "sub/../alias.csv"],
                 ["predict", "model.json", "data.csv", "--out", "./data.csv"],
                 ["predict", "model.json", "data.csv", "--out", str(model)],
                 ["predict", "model.json", "alias.csv", "--out", "data.csv"],
                 ["show", "model.json", "--out", "hard.json"]):
        assert main(argv) == 2
        line = _one_error_line(capsys, argv[0])
        assert f"--out {argv[-1]!r} is the input file" in line and "choose another output file" in line
    assert (data.read_bytes(), model.read_bytes()) == before


def test_show_takes_the_format_from_the_extension(workdir, fitted, capsys):
    model = str(workdir / "model.json")
    assert main(["show", model, "--out", str(workdir / "t.png")]) == 0
    assert (workdir / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["show", model, "--out", str(workdir / "t.gv")]) == 0
    assert (workdir / "t.gv").read_text().startswith("digraph srt {")
    assert main(["show", model, "--out", str(workdir / "t.out")]) == 0
    assert "scaled:" in (workdir / "t.out").read_text()
    capsys.readouterr()
    assert main(["show", model, "--format", "text", "--out", str(workdir / "u.png")]) == 2
    assert "--format text contradicts --out" in _one_error_line(capsys, "show")
    assert not (workdir / "u.png").exists()


def test_outputs_get_normal_modes(workdir, fitted):
    previous = os.umask(0o022)
    try:
        for name in ("p.csv", "p.txt"):
            (workdir / name).unlink(missing_ok=True)
        assert main(["predict", str(workdir / "model.json"), str(workdir / "data.csv"),
                     "--out", str(workdir / "p.csv")]) == 0
        assert main(["show", str(workdir / "model.json"), "--out", str(workdir / "p.txt")]) == 0
    finally:
        os.umask(previous)
    assert [os.stat(workdir / n).st_mode & 0o777 for n in ("p.csv", "p.txt")] == [0o644, 0o644]


@pytest.mark.slow
def test_special_files_are_refused(workdir, fitted, capsys):
    fifo = workdir / "model.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    assert main(["predict", str(fifo), str(workdir / "data.csv")]) == 2  # does not hang
    assert "it is a FIFO, not a regular file" in _one_error_line(capsys, "predict")
    assert main(["predict", "/dev/zero", str(workdir / "data.csv")]) == 2
    assert "it is a character device" in _one_error_line(capsys, "predict")
    assert main(["fit", str(fifo), "--target", "y", "--out", str(workdir / "m.json")]) == 2
    assert "data file" in _one_error_line(capsys, "fit")


def _interrupt_after(args, marker, cwd, delay=0.3, signum=signal.SIGINT):
    """Start ``python -m srtopt ARGS``, send ``signum`` once ``marker`` is on stderr; return
    (exit code, seconds from the signal to the exit, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "srtopt", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = []
    for line in proc.stderr:
        err.append(line)
        if marker in line:
            break
    time.sleep(delay)
    assert proc.poll() is None, "".join(err)
    proc.send_signal(signum)
    sent = time.monotonic()
    out, rest = proc.communicate(timeout=60)
    return proc.returncode, time.monotonic() - sent, out, "".join(err) + rest


@pytest.mark.slow
def test_ctrl_c_ends_fit_with_one_line_and_leaves_out_alone(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((3000, 6))
    pd.DataFrame(np.c_[X, np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2]], columns=[*"abcdef", "y"]).to_csv(
        tmp_path / "big.csv", index=False)
    (tmp_path / "model.json").write_text("the old model\n")
    before = os.stat(tmp_path / "model.json").st_mtime_ns
    code, seconds, out, err = _interrupt_after(
        ["fit", "big.csv", "--target", "y", "--depth", "3", "--max-iter", "100", "--out", "model.json"],
        "macro 1:", tmp_path)
    assert code == 130 and seconds < 20.0, (code, seconds, err)  # 0.3-2 s measured: 10x for a loaded machine
    assert out == "" and "Traceback" not in err and "CasADi" not in err, err
    assert err.splitlines()[-1] == "srtopt fit: interrupted; --out was not written"
    assert (tmp_path / "model.json").read_text() == "the old model\n"
    assert os.stat(tmp_path / "model.json").st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.csv", "model.json"]


def test_warnings_are_one_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.random((120, 2))
    y = X @ [1.0, 2.0]
    y[7] = 1e12
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(tmp_path / "outlier.csv", index=False)
    assert main(["fit", str(tmp_path / "outlier.csv"), "--target", "y", "--out", str(tmp_path / "m.json"),
                 "--max-iter", "1", "--n-init", "1", "--quiet"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [line for line in err if line.startswith("srtopt fit: warning: y is dominated by 1 extreme")]
    assert len(err) == 1


def _imported(argv, heavy=("sklearn", "pyomo", "casadi", "numba"), cwd=None):
    """(stdout, the ``heavy`` packages imported) of ``python -X importtime -m srtopt ARGV``: Python itself
    lists every module it imports."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "srtopt", *map(str, argv)], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120, cwd=cwd)
    modules = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done.stdout, sorted(name for name in heavy if name in modules)


@pytest.mark.slow
def test_help_and_usage_errors_import_nothing_heavy():
    """``srtopt --help`` and an argparse usage error answer before scikit-learn, Pyomo or CasADi
    are imported (they cost seconds: the CLI imports what a subcommand needs when it runs)."""
    for argv in (["--help"], ["fit", "--help"], ["fit", "data.csv"], ["bench", "--help"]):
        assert _imported(argv, ("sklearn", "pyomo", "casadi", "scipy", "numba"))[1] == [], argv


@pytest.mark.slow
def test_show_reads_the_file_without_the_estimator_stack(workdir, fitted):
    """``srtopt show`` answers from the saved file alone: scikit-learn, Pyomo, CasADi and numba
    are never imported (they cost seconds), and the text is the loaded estimator's."""
    model = workdir / "model.json"
    text, heavy = _imported(["show", model])
    assert heavy == [] and text.strip() == export_text(srtopt.load(model))


@pytest.mark.slow
def test_predict_reads_the_file_without_the_estimator_stack(workdir, fitted):
    """``srtopt predict`` of a saved SoftRegressionTree predicts from the file alone (no scikit-learn,
    Pyomo, CasADi or numba: they cost seconds), as the loaded estimator does."""
    model, out = workdir / "model.json", workdir / "quick.csv"
    assert _imported(["predict", model, workdir / "new.csv", "--out", out])[1] == []
    new = pd.read_csv(workdir / "new.csv")
    loaded = srtopt.load(model)
    # equal up to the CSV's printing of the floats (the oldest pandas allowed drops the last bit)
    np.testing.assert_allclose(pd.read_csv(out)["prediction"], loaded.predict(new[loaded.feature_names_in_]),
                               rtol=1e-13, atol=1e-13)


def test_formulation_and_solver_flags_reach_the_estimator(workdir, capsys):
    out = str(workdir / "flags.json")
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--depth", "1", "--max-iter", "1", "--quiet",
                 "--out", out, "--loss", "huber", "--penalty", "split_l1:strength=0.01", "--working-sets", "all",
                 "--bn-solver", "l-bfgs-b", "--ln-solver", "newton", "--wlr-solver", "newton"]) == 0
    model = srtopt.load(out)
    assert (model.loss, model.penalty, model.working_sets) == ("huber", ["split_l1:strength=0.01"], "all")
    assert (model.bn_solver, model.ln_solver, model.wlr_solver) == ("l-bfgs-b", "newton", "newton")
    for flag, value in (("--bn-solver", "nope"), ("--loss", "hubber"), ("--working-sets", "xx")):
        assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--out", out, flag, value]) == 2
        assert _one_error_line(capsys, "fit").startswith(f"srtopt fit: error: {flag}: unknown")


def test_an_unnamed_index_column_is_pointed_out(workdir, capsys):
    frame = pd.read_csv(workdir / "data.csv")
    frame.to_csv(workdir / "indexed.csv")  # pandas' default: the index as a first, unnamed column
    assert main(["fit", str(workdir / "indexed.csv"), "--target", "y", "--depth", "1", "--max-iter", "1", "--quiet",
                 "--out", str(workdir / "indexed.json")]) == 0
    err = capsys.readouterr().err
    assert "warning: column 'Unnamed: 0' of" in err and "--features" in err


@pytest.mark.slow
def test_sigterm_ends_fit_like_ctrl_c(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((3000, 6))
    pd.DataFrame(np.c_[X, np.sin(6 * X[:, 0])], columns=[*"abcdef", "y"]).to_csv(tmp_path / "big.csv", index=False)
    (tmp_path / "model.json").write_text("the old model\n")
    code, seconds, out, err = _interrupt_after(
        ["fit", "big.csv", "--target", "y", "--depth", "3", "--max-iter", "100", "--out", "model.json"],
        "macro 1:", tmp_path, signum=signal.SIGTERM)
    assert code == 143 and seconds < 20.0, (code, seconds, err)  # 0.3-2 s measured: 10x for a loaded machine
    assert err.splitlines()[-1] == "srtopt fit: terminated; --out was not written" and "Traceback" not in err
    assert (tmp_path / "model.json").read_text() == "the old model\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.csv", "model.json"]


def test_a_symlink_loop_as_out_is_one_line(workdir, capsys):
    loop = workdir / "loop.json"
    if not loop.is_symlink():
        os.symlink(workdir / "loop2.json", loop)
        os.symlink(loop, workdir / "loop2.json")
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--out", str(loop)]) == 2
    assert "cannot be resolved: Too many levels of symbolic links" in _one_error_line(capsys, "fit")


DISK_FULL_CHILD = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
from srtopt.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_loses_nothing(tmp_path):
    """Writes past a file-size limit (the portable stand-in for a full disk): one line, status 1, the
    old output intact and no temporary file left."""
    rng = np.random.default_rng(0)
    X = rng.random((3000, 3))
    pd.DataFrame(np.c_[X, X[:, 0]], columns=["a", "b", "c", "y"]).to_csv(tmp_path / "data.csv", index=False)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = lambda limit, *argv: subprocess.run([sys.executable, "-c", DISK_FULL_CHILD, str(limit), *argv], cwd=tmp_path,
                                              env=env, capture_output=True, text=True, timeout=300)
    assert run(10**9, "fit", "data.csv", "--target", "y", "--depth", "1", "--max-iter", "1", "--quiet",
               "--out", "model.json").returncode == 0
    (tmp_path / "preds.csv").write_text("old\n")
    done = run(20_000, "predict", "model.json", "data.csv", "--out", "preds.csv")  # ~60 KB of predictions
    assert done.returncode == 1 and done.stderr.strip() == "srtopt predict: error: File too large", done.stderr
    assert (tmp_path / "preds.csv").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "model.json", "preds.csv"]


def test_show_max_depth_folds_deep_subtrees(workdir, fitted, capsys):
    model = str(workdir / "model.json")
    assert main(["show", model, "--max-depth", "0"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^node \d+ \[50 rows\]: subtree of \d+ leaves, folded$", text, flags=re.MULTILINE)
    assert main(["show", model, "--max-depth", "-1"]) == 2
    assert capsys.readouterr().err.strip() == "srtopt show: error: --max-depth must be >= 0, got -1"
    assert main(["show", model, "--format", "html", "--max-depth", "1"]) == 2
    assert "the HTML page folds its nodes by clicking" in capsys.readouterr().err


def test_fit_leaf_ridge_flag(workdir, capsys):
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--depth", "1", "--max-iter", "1",
                 "--leaf-ridge", "100", "--out", str(workdir / "ridge.json"), "--quiet"]) == 0
    model = srtopt.load(workdir / "ridge.json")
    assert model.leaf_ridge == 100.0 and model.leaf_ridge_ == 100.0
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", str(workdir / "data.csv"), "--target", "y", "--leaf-ridge", "lots",
              "--out", str(workdir / "bad.json")])
    assert exit_info.value.code == 2
    assert "--leaf-ridge: must be 'auto' or a number > 0, got 'lots'" in capsys.readouterr().err


def test_fit_cv_flags_set_the_searchs_depths_leaves_and_rule(workdir, capsys):
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--max-iter", "1", "--cv", "2",
                 "--cv-depths", "1", "2", "--cv-leaves", "linear", "--cv-rule", "best",
                 "--out", str(workdir / "cvd.json")]) == 0
    err = capsys.readouterr().err
    assert "choosing the depth (1, 2) and the leaves (linear) of SoftRegressionTree by 2-fold" in err
    chosen = re.search(r"refit depth (\d), linear leaves", err)
    assert srtopt.load(workdir / "cvd.json").depth == int(chosen[1])


def test_fit_cv_depths_without_cv_is_refused(workdir, capsys):
    assert main(["fit", str(workdir / "data.csv"), "--target", "y", "--cv-depths", "1", "2",
                 "--out", str(workdir / "x.json")]) != 0
    assert "--cv-depths needs --cv (the candidates are compared by K-fold cross-validation)" in capsys.readouterr().err


@pytest.fixture
def grouped(tmp_path):
    """(tmp_path, the frame it holds as data.csv): 120 rows of features age, load, speed, a protected column
    group ("a", "b") that shows in age, and y, shifted by 1 in group "b"."""
    rng = np.random.default_rng(3)
    X = rng.random((120, 3))
    group = np.where(X[:, 0] + 0.3 * rng.random(120) > 0.6, "b", "a")
    frame = pd.DataFrame({"age": X[:, 0], "load": X[:, 1], "speed": X[:, 2], "group": group,
                          "y": 2 * X[:, 0] - X[:, 2] + (group == "b")})
    frame.to_csv(tmp_path / "data.csv", index=False)
    return tmp_path, frame


def test_fit_with_constraints_and_show_what_holds(grouped, capsys):
    folder, frame = grouped
    code = main(["fit", str(folder / "data.csv"), "--target", "y", "--sensitive", "group", "--parity", "0.05",
                 "--monotone", "speed=-1", "--leaf-bounds", "load=:0.5", "--out", str(folder / "m.json"),
                 "--quiet"])
    assert code == 0
    model = srtopt.load(folder / "m.json")
    assert model.feature_names_in_.tolist() == ["age", "load", "speed"] and model.groups_ == ["a", "b"]
    prediction, group = model.predict(frame[["age", "load", "speed"]]), frame["group"].to_numpy()
    assert abs(prediction[group == "b"].mean() - prediction[group == "a"].mean()) <= 0.05 + 1e-9
    capsys.readouterr()
    assert main(["show", str(folder / "m.json")]) == 0
    table = capsys.readouterr().out.split("constraints (training data):")[1]
    assert re.search(r"parity:gap=0.05\s+mean\(b\) - mean\(a\)\s+within \+-0.05 .* yes", table)
    assert re.search(r"speed: splits using it\s+= 0\s+0\s+0\s+yes", table)
    assert "largest leaf slope" in table and "NO" not in table


@pytest.mark.parametrize("flags, message", [
    (["--parity", "0.1"], "the parity constraint needs --sensitive COLUMN"),
    (["--sensitive", "nope", "--parity", "0.1"], "--sensitive 'nope' is not a column"),
    (["--monotone", "temp=2"], "--monotone takes NAME=1 or NAME=-1"),
    (["--leaf-bounds", "temp=1"], "--leaf-bounds takes NAME=LOW:HIGH"),
    (["--constraint", "parity:gap=-1", "--sensitive", "temp"], "--constraint: parity gap must be a number >= 0"),
    (["--monotone", "temp=1", "--monotone", "temp=-1"], "--monotone: 'temp' is given the contradictory signs 1 and -1"),
    (["--sensitive", "temp", "--parity", "nan"], "--parity: parity gap must be a number >= 0"),
    (["--sensitive", "temp", "--constraint", "parity:gap=abc"], "got 'abc': not a number"),
    (["--leaf-bounds", "load=0:1", "--leaf-bounds", "load=-5:-4"],
     "contradictory constraints on feature 'load': leaf_bounds:feature=load,lower=0,upper=1 needs its leaf slopes "
     ">= 0 and leaf_bounds:feature=load,lower=-5,upper=-4 needs them <= -4 (y's units per unit of 'load')"),
])
def test_constraint_flags_are_checked_before_the_fit(workdir, flags, message, capsys):
    code = main(["fit", str(workdir / "data.csv"), "--target", "y", "--out", str(workdir / "never.json"), *flags])
    assert code == 2 and message in capsys.readouterr().err
    assert not (workdir / "never.json").exists()


# ---------------------------------------------------------------- classification
@pytest.fixture(scope="module")
def irisdir(tmp_path_factory):
    """scikit-learn's iris as CSV files: the species as text (iris.csv), as integers (codes.csv), new
    rows without the target in another column order (new.csv)."""
    from sklearn.datasets import load_iris

    path = tmp_path_factory.mktemp("iris")
    data = load_iris(as_frame=True)
    frame = data.data.rename(columns=lambda c: c.removesuffix(" (cm)").replace(" ", "_"))
    frame.assign(species=data.target_names[data.target]).to_csv(path / "iris.csv", index=False)
    frame.assign(code=data.target).to_csv(path / "codes.csv", index=False)
    frame.iloc[::10, ::-1].to_csv(path / "new.csv", index=False)
    return path


@pytest.fixture(scope="module")
def classifier_file(irisdir):
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
        code = main(["fit", str(irisdir / "iris.csv"), "--target", "species", "--out", str(irisdir / "m.json"),
                     "--max-iter", "3", "--tol", "none"])
    return code, out.getvalue(), err.getvalue()


def test_fit_a_text_target_fits_a_classifier(irisdir, classifier_file):
    code, out, err = classifier_file
    assert code == 0
    assert re.fullmatch(r"saved .*m\.json \(training accuracy 0\.9\d{3}, stopped by max_iter\)\n", out)
    lines = err.splitlines()
    assert lines[0] == "fitting SoftClassificationTree(depth=2, leaf=logistic) on 150 rows x 4 features, 3 classes"
    assert lines[2].startswith("initialization: ") and sum(line.startswith("macro ") for line in lines) == 3
    model = srtopt.load(irisdir / "m.json")
    assert type(model).__name__ == "SoftClassificationTree" and model.classes_.tolist() == [
        "setosa", "versicolor", "virginica"] and model.tol is None
    assert model.feature_names_in_.tolist() == ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def test_predict_classes_and_their_probabilities(irisdir, classifier_file, capsys):
    model = srtopt.load(irisdir / "m.json")
    new = pd.read_csv(irisdir / "new.csv")[model.feature_names_in_]
    assert main(["predict", str(irisdir / "m.json"), str(irisdir / "new.csv"), "--out", str(irisdir / "p.csv")]) == 0
    assert pd.read_csv(irisdir / "p.csv")["prediction"].tolist() == model.predict(new).tolist()
    assert main(["predict", str(irisdir / "m.json"), str(irisdir / "new.csv"), "--proba"]) == 0
    proba = pd.read_csv(io.StringIO(capsys.readouterr().out), **exact_csv_options())
    assert list(proba.columns) == ["setosa", "versicolor", "virginica"]
    np.testing.assert_allclose(proba.to_numpy(), model.predict_proba(new), rtol=1e-15)


def test_fit_integer_labels_with_task_classification_and_constant_leaves(irisdir, capsys):
    out = irisdir / "codes.json"
    assert main(["fit", str(irisdir / "codes.csv"), "--target", "code", "--task", "classification", "--leaf",
                 "constant", "--class-weight", "balanced", "--quiet", "--out", str(out)]) == 0
    assert "training accuracy" in capsys.readouterr().out
    model = srtopt.load(out)
    assert model.leaf == "constant" and model.class_weight == "balanced" and model.classes_.tolist() == ["0", "1", "2"]
    assert (model.max_iter, model.tol) == (5, 1e-3)  # the estimator's defaults, not the regression tree's
    assert main(["predict", str(out), str(irisdir / "new.csv"), "--proba"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "0,1,2"
    assert main(["show", str(out), "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert "SoftClassificationTree(depth=2, leaf=constant), 4 features, 3 classes: 0, 1, 2" in text
    assert re.search(r"leaf \d \[\d+ rows\]: \d+\.\d% class \d, \d+\.\d% class \d, \.\.\. \(1 more\)", text)


def test_the_iris_line_of_the_docs_is_what_runs(irisdir, capsys, monkeypatch):
    """docs/cli.md quotes the last line of 'srtopt fit iris.csv --target species --out model.json'."""
    quoted = re.search(r'it ends with "(saved model\.json \(.*?\))"', (REPO / "docs" / "cli.md").read_text(),
                       re.S)[1]
    monkeypatch.chdir(irisdir)
    assert main(["fit", "iris.csv", "--target", "species", "--out", "model.json"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == " ".join(quoted.split())
    assert "training accuracy = the share of the training rows predict() classifies right" in err
    assert "R^2" not in err  # the legend of a classifier's progress lines


def test_an_integer_class_column_is_fitted_as_a_regression_with_a_hint(irisdir, capsys):
    assert main(["fit", str(irisdir / "codes.csv"), "--target", "code", "--max-iter", "1",
                 "--out", str(irisdir / "codes.json")]) == 0
    err = capsys.readouterr().err
    assert "srtopt fit: warning: the target 'code' holds 3 distinct whole numbers (0, 1, 2): fitted as a " \
           "regression; give --task classification if they are class codes" in err
    assert "training R^2 = the tree's own fit" in err and "accuracy" not in err
    assert main(["fit", str(irisdir / "codes.csv"), "--target", "code", "--task", "regression", "--quiet",
                 "--max-iter", "1", "--out", str(irisdir / "codes.json")]) == 0
    assert "warning" not in capsys.readouterr().err  # --task regression says it is one


def test_a_classifiers_depth_and_leaves_chosen_by_cv(irisdir, capsys):
    out = irisdir / "cv.json"
    assert main(["fit", str(irisdir / "iris.csv"), "--target", "species", "--cv", "3", "--cv-depths", "1", "2",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert ("choosing the depth (1, 2) and the leaves (logistic, spline) of SoftClassificationTree by 3-fold "
            "cross-validation") in err
    chosen = re.search(r"SoftClassificationTreeCV: refit depth (\d), (\w+) leaves on 150 rows", err)
    model = srtopt.load(out)
    assert (model.depth, model.leaf) == (int(chosen[1]), chosen[2])
    assert main(["fit", str(irisdir / "iris.csv"), "--target", "species", "--cv", "2", "--cv-depths", "1",
                 "--leaf", "constant", "--out", str(out)]) == 0
    assert "the depth (1) and the leaves (constant)" in capsys.readouterr().err
    assert srtopt.load(out).leaf == "constant"


def test_show_a_classifier_as_text_dot_png_and_html(irisdir, classifier_file, capsys):
    from srtopt.export import export_graphviz

    path = str(irisdir / "m.json")
    model = srtopt.load(path)
    assert main(["show", path]) == 0
    assert capsys.readouterr().out == export_text(model) + "\n"
    assert main(["show", path, "--format", "dot"]) == 0
    assert capsys.readouterr().out == export_graphviz(model)
    assert main(["show", path, "--out", str(irisdir / "tree.png")]) == 0
    assert (irisdir / "tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["show", path, "--out", str(irisdir / "tree.html")]) == 0
    page = (irisdir / "tree.html").read_text()
    assert page.count('<details class="node') == 2 * model.get_n_leaves() - 1 and "mixture sum_t P_it p_t" in page


@pytest.mark.parametrize("argv, message", [
    (["fit", "{d}/codes.csv", "--target", "sepal_length", "--task", "classification", "--out", "{d}/x.json"],
     "Unknown label type: y looks continuous (35 distinct values such as 4.3, 4.4, 4.5)"),
    (["fit", "{d}/iris.csv", "--target", "species", "--task", "regression", "--out", "{d}/x.json"],
     "column 'species' of '{d}/iris.csv' (--target) holds text ('setosa', 'versicolor', 'virginica'), not numbers: "
     "encode it as numbers (one 0/1 column per category); or give --task classification if it holds class labels"),
    (["fit", "{d}/codes.csv", "--target", "code", "--leaf", "constant", "--out", "{d}/x.json"],
     "leaf must be 'linear', 'spline' (options n_knots, smoothing, steps, pairs), a registered leaf model's name (none yet: "
     "register_leaf_model) or a LeafModel, got 'constant'"),
    (["fit", "{d}/iris.csv", "--target", "species", "--cv-depths", "2", "--out", "{d}/x.json"],
     "--cv-depths needs --cv (the candidates"),
    (["fit", "{d}/iris.csv", "--target", "species", "--cv-leaves", "spline", "--out", "{d}/x.json"],
     "--cv-leaves needs --cv (the candidates"),
    (["fit", "{d}/codes.csv", "--target", "sepal_length", "--cv-rule", "one-se", "--out", "{d}/x.json"],
     "--cv-rule needs --cv (the candidates"),
    (["fit", "{d}/iris.csv", "--target", "species", "--init", "model-tree", "--out", "{d}/x.json"],
     "--init model-tree applies to regression; a SoftClassificationTree (--task classification) takes --init cart "
     "or cluster"),
    (["fit", "{d}/iris.csv", "--target", "species", "--loss", "huber", "--out", "{d}/x.json"],
     "--loss: unknown classification loss 'huber'"),
    (["fit", "{d}/one.csv", "--target", "species", "--out", "{d}/x.json"], "y has one class ('setosa')"),
    (["fit", "{d}/holes.csv", "--target", "species", "--out", "{d}/x.json"],
     "column 'species' of '{d}/holes.csv' (--target) has missing values"),
    (["predict", "{d}/regression.json", "{d}/new.csv", "--proba"],
     "--proba: '{d}/regression.json' holds a SoftRegressionTree, which predicts numbers, not classes; fit a "
     "classifier with 'srtopt fit --task classification'"),
    (["predict", "{d}/m.json", "{d}/new.csv", "--proba", "--column", "p"],
     "--column names the one prediction column; --proba writes one column per class"),
])
def test_classification_mistakes_print_one_line(irisdir, classifier_file, refused, argv, message):
    d = str(irisdir)
    frame = pd.read_csv(irisdir / "iris.csv")
    frame.iloc[:50].to_csv(irisdir / "one.csv", index=False)
    frame.assign(species=frame["species"].where(frame.index != 7)).to_csv(irisdir / "holes.csv", index=False)
    if not (irisdir / "regression.json").exists():
        assert main(["fit", d + "/codes.csv", "--target", "code", "--quiet", "--max-iter", "1", "--out",
                     d + "/regression.json"]) == 0
    assert message.replace("{d}", d) in refused(argv, irisdir)
    assert not (irisdir / "x.json").exists()


@pytest.mark.slow
def test_a_classifier_predicts_and_shows_without_the_estimator_stack(irisdir, classifier_file):
    """``srtopt predict --proba`` and ``srtopt show`` of a saved classifier answer from the file alone
    (no scikit-learn, Pyomo, CasADi or numba), as the loaded estimator does."""
    model, out = irisdir / "m.json", irisdir / "quick.csv"
    assert _imported(["predict", model, irisdir / "new.csv", "--proba", "--out", out])[1] == []
    text, heavy = _imported(["show", model])
    loaded = srtopt.load(model)
    new = pd.read_csv(irisdir / "new.csv")[loaded.feature_names_in_]
    np.testing.assert_allclose(pd.read_csv(out).to_numpy(), loaded.predict_proba(new), rtol=1e-13, atol=1e-15)
    assert heavy == [] and text.strip() == export_text(loaded)


# ---------------------------------------------------------------- a user's constraints
def test_fit_takes_a_declared_constraint_and_says_what_holds(grouped, capsys):
    folder, _ = grouped
    code = main(["fit", str(folder / "data.csv"), "--target", "y", "--sensitive", "group", "--depth", "1",
                 "--constraint", "row_mean:value='residual',over='groups',lower=-0.01,upper=0.01",
                 "--out", str(folder / "m.json"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "; constraints: 2 of 2 rows hold on the training data)" in out
    assert main(["show", str(folder / "m.json"), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert '<table id="constraints-table">' in page and "mean residual of group b" in page
    assert main(["fit", str(folder / "data.csv"), "--target", "y", "--sensitive", "group",
                 "--constraint", "group_bias:bound=1", "--out", str(folder / "never.json")]) == 2
    assert "--constraint: unknown constraint 'group_bias:bound=1'; use one of 'monotone'" in capsys.readouterr().err


def test_a_classifier_takes_a_row_mean_of_a_class_probability(grouped, capsys):
    """--constraint row_mean on a classifier: each group's mean probability of class "high" bounded, reported,
    saved and loaded."""
    folder, frame = grouped
    frame.assign(label=np.where(frame["y"] > frame["y"].median(), "high", "low")).drop(columns="y").to_csv(
        folder / "labels.csv", index=False)
    code = main(["fit", str(folder / "labels.csv"), "--target", "label", "--sensitive", "group", "--depth", "2",
                 "--constraint", "row_mean:over='groups',upper=0.6,pos_label='high'", "--out",
                 str(folder / "c.json"), "--quiet"])
    assert code == 0 and "constraints: 2 of 2 rows hold on the training data" in capsys.readouterr().out
    loaded = srtopt.load(folder / "c.json")
    assert loaded.constraints == ["row_mean:over='groups',upper=0.6,pos_label='high'"]
    assert [row["row"] for row in loaded.constraint_report_] == ["mean prediction of p(high) of group a",
                                                                "mean prediction of p(high) of group b"]


def _installed_package(tmp_path, name, source, group, entry, frame):
    """A package ``name`` of one module (``source``) that declares ``entry`` in the entry-point ``group``, on the
    path of fresh processes run in ``tmp_path`` with ``frame`` as data.csv: the function that runs one and checks
    its exit status."""
    plugin = tmp_path / "plugin"
    (plugin / f"{name}-0.1.dist-info").mkdir(parents=True)
    (plugin / f"{name}.py").write_text(source)
    (plugin / f"{name}-0.1.dist-info" / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (plugin / f"{name}-0.1.dist-info" / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")
    frame.to_csv(tmp_path / "data.csv", index=False)
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{plugin}")

    def run(*args):
        done = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done
    return run


@pytest.mark.slow
def test_an_installed_packages_constraint_fits_saves_loads_and_shows_in_fresh_processes(tmp_path):
    """A package declares its constraint by an entry point ("srtopt.constraints"): the command line finds
    it, the model saves it by its spec, and a fresh process loads the model without a warning."""
    rng = np.random.default_rng(3)
    X = rng.random((120, 2))
    group = (X[:, 0] + 0.3 * rng.random(120) > 0.6).astype(int)
    run = _installed_package(
        tmp_path, "mybias", "from srtopt.models.constraints import RowMean\n\n\n"
                            "class GroupBias(RowMean):\n    name = 'group_bias'\n\n"
                            "    def __init__(self, bound=1.0):\n        self.bound = bound\n"
                            "        super().__init__('residual', over='groups', lower=-bound, upper=bound)\n",
        "srtopt.constraints", "group_bias = mybias:GroupBias",
        pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "group": group, "y": 10 * X[:, 0] + 5 * group}))
    fit = run("-m", "srtopt", "fit", "data.csv", "--target", "y", "--sensitive", "group", "--depth", "2",
              "--constraint", "group_bias:bound=0.25", "--out", "m.json", "--quiet")
    assert "constraints: 2 of 2 rows hold on the training data" in fit.stdout.splitlines()[-1]
    load = run("-W", "error", "-c", "import srtopt; m = srtopt.load('m.json'); print(m.constraints, "
                                    "[r['holds'] for r in m.constraint_report_])")
    assert load.stdout.strip() == "['group_bias:bound=0.25'] [True, True]"
    show = run("-m", "srtopt", "show", "m.json")
    assert re.search(r"group_bias:bound=0.25\s+mean residual of group 1\s+within \+-0.25", show.stdout)


@pytest.mark.slow
def test_an_installed_packages_leaf_model_fits_by_its_name_saves_loads_and_shows_in_fresh_processes(tmp_path):
    """A package declares its leaf model by an entry point ("srtopt.leaf_models"): ``srtopt fit --leaf NAME`` fits
    it, and a fresh process loads the model with its class and shows its leaves without a warning."""
    X = np.random.default_rng(3).random((120, 2))
    run = _installed_package(
        tmp_path, "mylogcosh", "from tests.test_leaf_model import LogCoshLeaves\n\n\n"
                               "class LogCosh(LogCoshLeaves):\n    kind = 'logcosh'\n",
        "srtopt.leaf_models", "logcosh = mylogcosh:LogCosh",
        pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 1])}))
    fit = run("-m", "srtopt", "fit", "data.csv", "--target", "y", "--depth", "2", "--leaf", "logcosh", "--out",
              "m.json", "--quiet")
    assert re.fullmatch(r"saved m\.json \(training R\^2 0\.9\d+, stopped by max_iter\)", fit.stdout.strip())
    # warnings are errors, deprecations aside (the oldest matplotlib, which the plugin's test module imports,
    # warns of pyparsing's)
    load = run("-W", "error", "-W", "ignore::DeprecationWarning", "-c", "import srtopt; m = srtopt.load('m.json'); "
                                                                        "print(type(m.leaf_model_).__name__, m.leaf)")
    assert load.stdout.strip() == "LogCosh logcosh"
    show = run("-m", "srtopt", "show", "m.json")
    assert show.stdout.startswith("SoftRegressionTree(depth=2, leaf=log-cosh)") and "original: m = " in show.stdout
