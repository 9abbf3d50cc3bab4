"""The ``srtopt`` command line: one module per group of subcommands.

Each module in ``COMMANDS`` defines ``register(subparsers)``, which adds its
subcommands and sets ``func`` (and optionally ``on_interrupt``, a note for
Ctrl-C) on their parsers.  A user mistake (:class:`ValueError`,
:class:`FileNotFoundError`, :class:`KeyError`) prints one line on stderr and
exits with status 2; Ctrl-C prints one line and exits with status 130; a
warning is one line too; output piped into a reader that stops early (``srtopt demo |
head``) ends the command quietly with status 0, as for any Unix filter; a failure of the
machine (:class:`OSError`: disk full, a read-only directory; :class:`MemoryError`; a results store
that cannot be written) prints one line, ending with the command's ``on_interrupt`` note (below: what
was kept), and exits with status 1; SIGTERM and SIGHUP end the command like Ctrl-C
(files being written are removed, earlier files kept) with status 143 and 129.  None of them
shows a traceback.  The line ends with the command's ``on_interrupt`` note as it is when the
signal ends the command: a command changes it once its output is in place (``fit``: "the model was
saved to ..."), and replacing an output and changing the note is one step (:func:`signals_held`).  A signal whose exception Python swallowed (one that arrives while a module is
being imported) is not lost: it is remembered and ends the command before its next output is
written (:func:`check_signals`); one that surfaced as another error (a C extension whose import it
interrupted raises ImportError) ends the command as the signal does.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sqlite3
import sys
import threading
import time
import warnings

from .._announce import say


def _process_start() -> float:
    """When this process started, in ``time.perf_counter()`` seconds (Linux: its start time in /proc, which
    counts the interpreter's own start; elsewhere: now, as this module is imported)."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            ticks = int(stat.read().rpartition(")")[2].split()[19])  # field 22, after the command's name
            since_boot = float(uptime.read().split()[0])
        return now - max(since_boot - ticks / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError):
        return now


#: when the command started (perf_counter seconds): ``fit --time-limit`` counts from here
STARTED = _process_start()

COMMANDS = ("srtopt.cli.demo", "srtopt.cli.experiments", "srtopt.cli.models")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="srtopt",
        description="Soft Regression Trees trained by node-based decomposition (NODEC-DR).",
    )
    parser.add_argument("--version", action="version", version=f"srtopt {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(subparsers)
    return parser


class Terminated(BaseException):
    """SIGTERM, raised where the program is so that cleanups (``finally``) run as for Ctrl-C."""

    status, verb = 143, "terminated"


class HungUp(Terminated):
    """SIGHUP (the terminal went away), handled as SIGTERM."""

    status, verb = 129, "hung up"


_PENDING: list = []  # the exception of a signal handled since the command started
_HELD: list = []  # non-empty inside signals_held(): a signal is remembered, not raised


def check_signals() -> None:
    """Raise the exception of a signal that arrived and was swallowed (Python ignores an exception
    raised in some callbacks, e.g. while a module is imported): outputs are written after this."""
    if _PENDING:
        raise _PENDING[0]


@contextlib.contextmanager
def signals_held():
    """A step done whole (replacing an output file and saying so in the ``on_interrupt`` note): a
    signal that arrives inside is remembered and raised when the step ends, not in its middle."""
    _HELD.append(True)
    try:
        yield
    finally:
        _HELD.pop()
    check_signals()


def _raising(exception):
    """A signal handler that raises ``exception`` where the program is, except inside numba's
    Python helpers called from compiled code (unpickling a constant, typing an argument) or in
    the import system's own code (its module-lock callbacks): an exception raised there is lost
    ("Exception ignored in ...") or turned into numba's ``SystemError`` ("returned a result with an
    exception set").  There the signal is sent again 10 ms later, when the program is back in
    ordinary Python code."""

    def handler(signum, frame):
        if _inside_numba(frame) or _inside_import_system(frame):
            threading.Timer(0.01, os.kill, (os.getpid(), signum)).start()
            return
        _PENDING.append(exception)
        if not _HELD:
            raise exception

    return handler


def _inside_numba(frame) -> bool:
    """Whether a frame between ``frame`` and the nearest srtopt frame belongs to numba."""
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("srtopt"):
            return False
        if module.split(".")[0] == "numba":
            return True
        frame = frame.f_back
    return False


def _inside_import_system(frame) -> bool:
    """Whether ``frame`` is the import system's own code (a frozen ``importlib`` module)."""
    return frame is not None and frame.f_code.co_filename.startswith("<frozen importlib")


_SIGNALLED = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: Terminated, signal.SIGHUP: HungUp}


def _install_handlers() -> dict:
    """SIGTERM raises :class:`Terminated`, SIGINT KeyboardInterrupt (as Python's own handler
    does, but numba-safe; SIGINT only in place of Python's handler or the program's first one,
    :func:`srtopt.__main__.program`); returns the previous handlers.  Signals are handled in the main
    thread only: elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    wanted = {signal.SIGTERM: _raising(Terminated), signal.SIGHUP: _raising(HungUp)}
    current = signal.getsignal(signal.SIGINT)
    if current is signal.default_int_handler or getattr(current, "srtopt_startup", False):
        wanted[signal.SIGINT] = _raising(KeyboardInterrupt)
    return {signum: signal.signal(signum, handler) for signum, handler in wanted.items()}


#: the ``on_interrupt`` note of a command before its arguments are parsed (its parser sets the same)
FIRST_NOTES = {"fit": "--out was not written"}
#: the commands that end the process as soon as they are done (:func:`run`)
QUICK_EXIT = ("fit", "predict", "show")


def main(argv=None, early=(), program=False) -> int:
    """Run the command of ``argv`` (default: the command line's) and return its exit status (module
    docstring).  ``early``: the signals that came before this function was called (:func:`run`), each
    ending the command as if it came now; ``program``: the handlers are kept (signals held) after the
    command, for :func:`run`'s exit, instead of restored."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _before_parsing(argv)
    prefix = f"srtopt {args.command}" if args.command else "srtopt"
    _PENDING.clear()
    previous = _install_handlers()
    try:
        for signum in early:
            raise _SIGNALLED[signum]()
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        prefix = f"srtopt {args.command}"
        with warnings.catch_warnings():
            warnings.showwarning = lambda message, *_, **__: say(f"{prefix}: warning: {message}")
            status = int(args.func(args) or 0)
            check_signals()
            return status
    except Exception as exc:
        if not _PENDING:
            return _failure(exc, prefix, getattr(args, "on_interrupt", ""))
        signalled = _PENDING[0]  # the signal surfaced as another error (an extension failing its import)
        return _interrupted(signalled() if isinstance(signalled, type) else signalled, prefix, args)
    except (KeyboardInterrupt, Terminated) as exc:
        return _interrupted(exc, prefix, args)
    finally:
        if program:
            _HELD.append(True)  # the command has ended: a signal from now on is remembered, not raised
        else:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


def run(early=()):
    """The program ``srtopt``: :func:`main` on the command line, then the exit.  A command of
    :data:`QUICK_EXIT` ends the process at once (``os._exit``, its output flushed) instead of waiting
    for Python's teardown (a second or two of unloading CasADi, numba and scikit-learn), during which a
    signal would kill it without a word; a signal after its last line changes nothing.  The others
    exit as Python does, the handlers they replaced restored."""
    command = _before_parsing(sys.argv[1:]).command
    quick = command in QUICK_EXIT
    status = main(early=early, program=quick)
    if not quick:
        sys.exit(status)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone (`| head`) or a closed stream: nothing left to say
            pass
    os._exit(status)


def _before_parsing(argv) -> argparse.Namespace:
    """The command and its first ``on_interrupt`` note, read from ``argv`` before it is parsed (a signal
    may come while the parser is built)."""
    command = argv[0] if argv and not argv[0].startswith("-") else None
    return argparse.Namespace(command=command, on_interrupt=FIRST_NOTES.get(command, ""))


def _interrupted(exc, prefix, args) -> int:
    """One line for Ctrl-C, SIGTERM or SIGHUP, with the command's ``on_interrupt`` note as it is now,
    and the exit status; a second signal while it is written is remembered, not raised."""
    _HELD.append(True)
    try:
        note = getattr(args, "on_interrupt", "")
        verb, status = ("interrupted", 130) if isinstance(exc, KeyboardInterrupt) else (exc.verb, exc.status)
        print(f"{prefix}: {verb}{'; ' + note if note else ''}", file=sys.stderr, flush=True)
        return status
    finally:
        _HELD.pop()


def _failure(exc, prefix, note="") -> int:
    """One line for a user mistake (status 2) or a failure of the machine (status 1, the line ending with
    the command's ``note`` as it is now: what was kept, "the model was saved to ..."); any other
    exception is a bug and raised with its traceback."""
    if isinstance(exc, (ValueError, FileNotFoundError, KeyError)):
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"{prefix}: error: {message}", file=sys.stderr)
        return 2
    if isinstance(exc, BrokenPipeError):  # the reader of stdout went away (`| head`): not an error for a filter
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's flush at exit would fail again
        return 0
    if isinstance(exc, MemoryError):
        message = "out of memory"
    elif isinstance(exc, OSError):  # the machine's fault, not the user's: disk full, a read-only directory
        message = f"{exc.strerror or exc}" + (f": {exc.filename!r}" if exc.filename else "")
    elif isinstance(exc, sqlite3.Error):  # a results store that cannot be written (disk full, locked, damaged)
        message = f"results store: {exc}"
    else:
        raise exc
    print(f"{prefix}: error: {message}{'; ' + note if note else ''}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    run()
