"""The CLI's signal handlers: SIGTERM and SIGINT raise where the program is, except inside
numba's Python helpers, where the signal is sent again a moment later (numba loses an
exception raised there, or turns it into a SystemError)."""

import signal
import sys
import time

import pytest

from srtopt import cli


def _frame_of_module(name):
    """A live frame whose module is ``name`` (called back from srtopt code, as numba's helpers are)."""
    namespace = {"__name__": name, "sys": sys}
    exec("def here():\n    return sys._getframe()", namespace)
    return namespace["here"]()


def test_a_frame_in_numba_is_recognised_up_to_the_nearest_srtopt_frame():
    assert cli._inside_numba(_frame_of_module("numba.core.serialize"))
    assert not cli._inside_numba(_frame_of_module("srtopt.kernels"))
    assert not cli._inside_numba(sys._getframe())  # pytest's and this test's frames only


def test_the_handler_raises_outside_numba_and_resends_inside(monkeypatch):
    handler = cli._raising(cli.Terminated)
    with pytest.raises(cli.Terminated):
        handler(signal.SIGTERM, sys._getframe())
    received = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(signum))
    try:
        handler(signal.SIGUSR1, _frame_of_module("numba.core.typing.typeof"))  # returns, sends again later
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
