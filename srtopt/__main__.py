"""``python -m srtopt`` and the ``srtopt`` command: :func:`program`."""

import signal


def program():
    """Run the command line (:func:`srtopt.cli.run`).  Ctrl-C, SIGTERM and SIGHUP are caught from the
    first statement: one that comes while the command line's modules load is remembered, and ends the
    command with its one line once they have."""
    early = []

    def remember(signum, frame):
        early.append(signum)

    remember.srtopt_startup = True  # the command line's handlers replace it (srtopt.cli._install_handlers)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, remember)
    from srtopt.cli import run

    run(early)


if __name__ == "__main__":
    program()
