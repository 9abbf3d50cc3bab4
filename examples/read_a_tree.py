"""
Read a depth-3 tree of the auto_mpg data
========================================

Read a depth-3 soft regression tree of the auto_mpg data (fuel use of 392 cars, 7 features).

    SRTOPT_DATA=/path/to/datasets python examples/read_a_tree.py --out docs

Fits ``SoftRegressionTree(depth=3, random_state=0)`` on every row, prints the text tree
(both units), the feature importances and one row's leaf probabilities, and writes
``tree.png`` (plot_tree, the picture in the README) and ``tree.html`` (export_html) to
``--out``.  The data come from ``srtopt.datasets.load`` (``SRTOPT_DATA``, or a checksummed
download into the cache).
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from srtopt import SoftRegressionTree  # noqa: E402
from srtopt.datasets import load  # noqa: E402
from srtopt.export import export_html, export_text  # noqa: E402
from srtopt.plotting import plot_tree  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description="Read a depth-3 soft regression tree of the auto_mpg data.")
    parser.add_argument("--out", default=".", help="directory for tree.png and tree.html")
    out = Path(parser.parse_args().out)
    try:
        X, y, names = load("auto_mpg")
    except FileNotFoundError as exc:  # no SRTOPT_DATA and no network: say what to do, in one line
        raise SystemExit(f"read_a_tree.py: {exc}; set SRTOPT_DATA to a folder holding auto_mpg.csv") from None
    X = pd.DataFrame(X, columns=names)
    tree = SoftRegressionTree(depth=3, random_state=0).fit(X, y)
    print(f"training R^2 {tree.score(X, y):.3f}, depth {tree.get_depth()}, {tree.get_n_leaves()} leaves\n")
    print(export_text(tree, top=4))
    print("\nfeature importances (node share x |omega_jt|, summing to 1):")
    for name, value in sorted(zip(names, tree.feature_importances_), key=lambda item: -item[1]):
        print(f"  {name:<14}{value:.3f}")
    print("\nP_it of the first car over the leaves 8..15:", tree.leaf_probabilities(X.iloc[:1]).round(3)[0],
          f"HBP leaf {tree.apply(X.iloc[:1])[0]}")
    ax = plot_tree(tree)
    ax.figure.savefig(out / "tree.png", dpi=100)
    export_html(tree, out / "tree.html")
    print(f"\nwrote {out / 'tree.png'} and {out / 'tree.html'}")


if __name__ == "__main__":
    main()
