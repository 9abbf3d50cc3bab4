import sys

from srtopt.cli import main

sys.exit(main())
