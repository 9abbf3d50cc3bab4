"""``srtopt demo``: the quickstart on scikit-learn's bundled diabetes data (no download)."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo", help="fit SRTs on the bundled diabetes data and compare with CART, a linear model and a forest",
        description="Fit depth-2 and depth-3 soft regression trees on scikit-learn's diabetes data, "
                    "print their 4-fold cross-validated and one-split test R^2 beside CART, linear "
                    "regression and a random forest, and print the depth-2 tree.")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ._quickstart import main

    main()
    return 0
