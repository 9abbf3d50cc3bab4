"""The ``srtopt`` command line: one module per group of subcommands.

Each module in ``COMMANDS`` defines ``register(subparsers)``, which adds its
subcommands and sets ``func`` on their parsers.  A user mistake
(:class:`ValueError`, :class:`FileNotFoundError`, :class:`KeyError`) prints one
line on stderr and exits with status 2; it never shows a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

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


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"srtopt {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
