"""
Quickstart: soft trees on the diabetes data
===========================================

Quickstart (same as ``srtopt demo``): SRTs on the bundled diabetes data vs CART and a linear model.

    python examples/quickstart.py
"""

from srtopt.cli._quickstart import main

if __name__ == "__main__":
    main()
