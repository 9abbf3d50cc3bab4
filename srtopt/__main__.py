import sys

try:
    from srtopt.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python starts: one line, as later
    print("srtopt: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
