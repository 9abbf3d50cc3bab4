"""``srtopt demo``: the quickstart on scikit-learn's bundled diabetes data (no download)."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo", help="fit SRTs on the bundled diabetes data and compare with CART and a linear model",
        description="Fit depth-2 and depth-3 soft regression trees on scikit-learn's diabetes data, "
                    "print test R^2 beside CART and linear regression, and print the depth-2 tree.")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ._quickstart import main

    main()
    return 0
