"""The CLI's signal handlers: SIGTERM and SIGINT raise where the program is, except inside
numba's Python helpers or the import system's own code, where the signal is sent again a moment
later (an exception raised there is lost, or turned into a SystemError by numba)."""

import signal
import sys
import time

import pytest

from srtopt import cli


def _frame_of_module(name, filename="<string>"):
    """A live frame whose module is ``name`` (called back from srtopt code, as numba's helpers are),
    its code from ``filename``."""
    namespace = {"__name__": name, "sys": sys}
    exec(compile("def here():\n    return sys._getframe()", filename, "exec"), namespace)
    return namespace["here"]()


def _import_system_frame():
    """A frame of the import system's own code, as its module-lock callback ``cb`` runs in."""
    return _frame_of_module("importlib._bootstrap", "<frozen importlib._bootstrap>")


def test_a_frame_in_numba_is_recognised_up_to_the_nearest_srtopt_frame():
    assert cli._inside_numba(_frame_of_module("numba.core.serialize"))
    assert not cli._inside_numba(_frame_of_module("srtopt.kernels"))
    assert not cli._inside_numba(sys._getframe())  # pytest's and this test's frames only


def test_a_frame_of_the_import_system_is_recognised():
    assert cli._inside_import_system(_import_system_frame())
    assert not cli._inside_import_system(sys._getframe())


@pytest.mark.parametrize("frame", [lambda: _frame_of_module("numba.core.typing.typeof"), _import_system_frame],
                         ids=["numba", "import system"])
def test_the_handler_raises_in_ordinary_code_and_resends_inside(frame):
    handler = cli._raising(cli.Terminated)
    with pytest.raises(cli.Terminated):
        handler(signal.SIGTERM, sys._getframe())
    received = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(signum))
    try:
        handler(signal.SIGUSR1, frame())  # returns, sends again later
        for _ in range(500):
            if received:
                break
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert received == [signal.SIGUSR1]


def test_main_restores_the_handlers_it_replaced(capsys):
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_a_signal_that_surfaced_as_another_error_ends_the_command_as_the_signal(monkeypatch, capsys, tmp_path):
    """A C extension whose import is interrupted turns the KeyboardInterrupt into an ImportError
    (seen once in 80 tries: SciPy's HiGHS wrapper, "initialization failed"); the command then
    reports the Ctrl-C (status 130, one line), not a traceback of the ImportError."""
    import os

    import srtopt.cli.models as models

    def interrupted_import(args):
        try:
            os.kill(os.getpid(), signal.SIGINT)  # the CLI's handler raises KeyboardInterrupt here
            time.sleep(5)
        except KeyboardInterrupt:
            raise ImportError("initialization failed") from None
        return 0

    monkeypatch.setattr(models, "run_show", interrupted_import)
    assert cli.main(["show", str(tmp_path / "model.json")]) == 130
    assert capsys.readouterr().err.splitlines() == ["srtopt show: interrupted"]
    with pytest.raises(ImportError):  # without a signal, the same error is a bug and keeps its traceback
        monkeypatch.setattr(models, "run_show", lambda args: (_ for _ in ()).throw(ImportError("broken")))
        cli.main(["show", str(tmp_path / "model.json")])


def _small_fit_args(tmp_path):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    X = rng.random((40, 2))
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": X[:, 0] - X[:, 1]}).to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "model.json").write_text("the old model\n")
    return ["fit", str(tmp_path / "data.csv"), "--target", "y", "--depth", "1", "--max-iter", "1", "--quiet",
            "--out", str(tmp_path / "model.json")]


@pytest.mark.parametrize("signum, status, verb", [(signal.SIGINT, 130, "interrupted"),
                                                  (signal.SIGTERM, 143, "terminated")])
def test_a_signal_right_after_out_is_replaced_says_the_model_was_saved(tmp_path, monkeypatch, capsys, signum,
                                                                       status, verb):
    """The signal is sent by the rename that puts the new model in place (os.replace, hooked): the
    line says the model was saved, and it was; the replace and the note are one step."""
    import os

    import srtopt
    from srtopt import _io

    argv, replace = _small_fit_args(tmp_path), os.replace

    def replace_then_signal(source, target, **options):
        replace(source, target, **options)
        if os.path.basename(target) == "model.json":
            signal.raise_signal(signum)

    monkeypatch.setattr(_io.os, "replace", replace_then_signal)
    assert cli.main(argv) == status
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"srtopt fit: {verb}; the model was saved to {tmp_path / 'model.json'}"] and out == ""
    assert srtopt.load(tmp_path / "model.json").depth == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "model.json"]


def test_a_signal_before_the_save_leaves_out_untouched(tmp_path, monkeypatch, capsys):
    """A signal while the fitted model is written into text (sent by dumps, hooked) finds --out unwritten, and
    says so."""
    from srtopt import persistence

    argv, dumps = _small_fit_args(tmp_path), persistence.dumps

    def signal_then_dumps(model):
        signal.raise_signal(signal.SIGTERM)
        return dumps(model)

    monkeypatch.setattr(persistence, "dumps", signal_then_dumps)
    assert cli.main(argv) == 143
    assert capsys.readouterr().err.splitlines() == ["srtopt fit: terminated; --out was not written"]
    assert (tmp_path / "model.json").read_text() == "the old model\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "model.json"]


def test_a_signal_while_the_training_score_is_computed_finds_the_model_saved(tmp_path, monkeypatch, capsys):
    """The training R^2 of the last line is computed after the save (whatever fails after training keeps the
    model): a signal there (sent by score, hooked) says the model was saved, and it was."""
    import srtopt
    from srtopt import SoftRegressionTree

    argv, score = _small_fit_args(tmp_path), SoftRegressionTree.score

    def signal_then_score(self, X, y, sample_weight=None):
        signal.raise_signal(signal.SIGTERM)
        return score(self, X, y, sample_weight)

    monkeypatch.setattr(SoftRegressionTree, "score", signal_then_score)
    assert cli.main(argv) == 143
    assert capsys.readouterr().err.splitlines() == [
        f"srtopt fit: terminated; the model was saved to {tmp_path / 'model.json'}"]
    assert srtopt.load(tmp_path / "model.json").depth == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "model.json"]


def test_a_signal_while_out_is_probed_leaves_no_probe_behind(tmp_path, monkeypatch, capsys):
    """The check that --out's folder is writable creates and removes a temporary file: a signal right
    after its creation (sent by os.open, hooked) ends the command once the probe is gone."""
    import os

    from srtopt.cli import models

    argv, opened = _small_fit_args(tmp_path), os.open

    def open_then_signal(path, *args, **options):
        fd = opened(path, *args, **options)
        if ".srtopt-probe-" in str(path):
            signal.raise_signal(signal.SIGTERM)
        return fd

    monkeypatch.setattr(models.tempfile._os, "open", open_then_signal)
    assert cli.main(argv) == 143
    assert capsys.readouterr().err.splitlines() == ["srtopt fit: terminated; --out was not written"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "model.json"]


def test_signals_held_raises_the_signal_when_the_step_ends(monkeypatch):
    """Inside signals_held the handler only remembers the signal; the step ends, then it is raised."""
    steps = []
    monkeypatch.setattr(cli, "_PENDING", [])
    handler = cli._raising(cli.Terminated)
    with pytest.raises(cli.Terminated):
        with cli.signals_held():
            handler(signal.SIGTERM, sys._getframe())
            steps.append("done")
    assert steps == ["done"] and not cli._HELD


# ------------------------------------------------- signals at the edges of a command, in real processes
REPO = __import__("pathlib").Path(__file__).resolve().parents[2]


def _caught_signals(pid) -> int:
    """The mask of the signals process ``pid`` has handlers for (0 once it is gone): /proc's SigCgt."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return 0


def _srtopt(tmp_path, *argv):
    """``python -m srtopt ARGV`` started in ``tmp_path`` (this checkout first on the path)."""
    import os
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "srtopt", *argv], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _fit_argv(tmp_path, rows=40):
    import numpy as np
    import pandas as pd

    X = np.random.default_rng(0).random((rows, 3))
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2]}).to_csv(
        tmp_path / "data.csv", index=False)
    (tmp_path / "model.json").write_text("the old model\n")
    return ["fit", "data.csv", "--target", "y", "--out", "model.json"]


@pytest.mark.parametrize("signum, status, verb", [(signal.SIGINT, 130, "interrupted"),
                                                  (signal.SIGTERM, 143, "terminated"),
                                                  (signal.SIGHUP, 129, "hung up")])
@pytest.mark.parametrize("wait", [0.0, 0.4])
def test_a_signal_as_the_command_starts_is_one_line_and_leaves_out_alone(tmp_path, signum, status, verb, wait):
    """Sent as soon as the program has its handlers (its first statement; before it, Python's own
    start-up), or while its modules load: the one line of any signal, --out untouched.  (--quiet: on a
    quick machine 0.4 s can reach the fit, whose progress lines are not what this test is about.)"""
    proc = _srtopt(tmp_path, *_fit_argv(tmp_path), "--depth", "3", "--max-iter", "50", "--quiet")
    while not _caught_signals(proc.pid) & (1 << (signal.SIGHUP - 1)) and proc.poll() is None:
        time.sleep(0.001)
    time.sleep(wait)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err, out) == (status, f"srtopt fit: {verb}; --out was not written\n", "")
    assert (tmp_path / "model.json").read_text() == "the old model\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "model.json"]


@pytest.mark.slow  # a whole fit in a program of its own: 3-4 s each on a loaded 2-core machine
@pytest.mark.parametrize("signum, status, verb", [(signal.SIGINT, 130, "interrupted"),
                                                  (signal.SIGTERM, 143, "terminated")])
def test_a_signal_after_the_saved_line_never_kills_the_command_without_a_word(tmp_path, signum, status, verb):
    """Sent as soon as "saved" is read: the command has ended (Python's teardown, a second or two in
    which a signal killed it silently, is skipped), or it says the model was saved; the file loads."""
    import srtopt

    proc = _srtopt(tmp_path, *_fit_argv(tmp_path), "--depth", "1", "--max-iter", "1", "--quiet")
    saved = proc.stdout.readline()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert saved == "saved model.json (training R^2 " + saved.split("R^2 ")[1] and out == ""
    assert (proc.returncode, err) in [(0, ""), (status, f"srtopt fit: {verb}; the model was saved to model.json\n")]
    assert srtopt.load(tmp_path / "model.json").depth == 1


@pytest.mark.slow
def test_a_second_ctrl_c_after_the_first_line_adds_nothing(tmp_path):
    """The first Ctrl-C's line is written, then the command ends at once: a second Ctrl-C, sent as soon
    as that line is read, finds it gone or held (no second line, no traceback)."""
    proc = _srtopt(tmp_path, *_fit_argv(tmp_path, rows=3000), "--depth", "3", "--max-iter", "100")
    for line in proc.stderr:
        if line.startswith("macro 1:"):
            break
    proc.send_signal(signal.SIGINT)
    for line in proc.stderr:
        if "interrupted" in line:
            break
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=120)
    assert (proc.returncode, line, rest, out) == (130, "srtopt fit: interrupted; --out was not written\n", "", "")
    assert (tmp_path / "model.json").read_text() == "the old model\n"
