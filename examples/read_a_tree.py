"""
Read a depth-3 tree of the diabetes data
========================================

Read a depth-3 soft regression tree of scikit-learn's diabetes data (disease progression of
442 patients, 10 features; bundled with scikit-learn: no download).

    python examples/read_a_tree.py --out /tmp/tree

Fits ``SoftRegressionTree(depth=3, random_state=0)`` on every row, prints the text tree
(both units), the feature importances and one row's leaf probabilities, and writes
``tree.png`` (plot_tree) and ``tree.html`` (export_html) to ``--out``.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from sklearn.datasets import load_diabetes  # noqa: E402

from srtopt import SoftRegressionTree  # noqa: E402
from srtopt.export import export_html, export_text  # noqa: E402
from srtopt.plotting import plot_tree  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description="Read a depth-3 soft regression tree of the diabetes data.")
    parser.add_argument("--out", default=".", help="directory for tree.png and tree.html")
    out = Path(parser.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    names = list(X.columns)
    tree = SoftRegressionTree(depth=3, random_state=0).fit(X, y)
    print(f"training R^2 {tree.score(X, y):.3f}, depth {tree.get_depth()}, {tree.get_n_leaves()} leaves\n")
    print(export_text(tree, top=4))
    print("\nfeature importances (node share x |omega_jt|, summing to 1):")
    for name, value in sorted(zip(names, tree.feature_importances_), key=lambda item: -item[1]):
        print(f"  {name:<14}{value:.3f}")
    print("\nP_it of the first patient over the leaves 8..15:", tree.leaf_probabilities(X.iloc[:1]).round(3)[0],
          f"HBP leaf {tree.apply(X.iloc[:1])[0]}")
    ax = plot_tree(tree)
    ax.figure.savefig(out / "tree.png", dpi=100)
    export_html(tree, out / "tree.html")
    print(f"\nwrote {out / 'tree.png'} and {out / 'tree.html'}")


if __name__ == "__main__":
    main()
