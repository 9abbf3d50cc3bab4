"""
Quickstart: soft trees on the diabetes data
===========================================

Quickstart (same as ``srtopt demo``): SRTs on the bundled diabetes data vs CART and a linear model.

    python examples/quickstart.py
"""

from sklearn.datasets import load_diabetes

from srtopt import SoftRegressionTree
from srtopt.cli._quickstart import main
from srtopt.plotting import plot_tree

if __name__ == "__main__":
    main()
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    plot_tree(SoftRegressionTree(depth=2, random_state=0).fit(X, y), top=2)  # the tree, drawn
