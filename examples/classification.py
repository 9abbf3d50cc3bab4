"""
A soft classification tree
==========================

Fit ``SoftClassificationTree`` on scikit-learn's bundled wine data (three classes): oblique soft
splits trained by the same NODEC-DR as the regression tree, and leaves that are either a
class-probability vector (``leaf="constant"``, the ORCT model) or a multinomial logistic regression
(``leaf="logistic"``, the default).  The tree predicts with the leaf of each row's
highest-branch-probability path; ``predict_proba(X, mixture=True)`` is the soft model of the training
loss.  A class-recall bound (``"class_recall:class=...,lower=..."``) holds for ``predict()`` on the
training data.

    PYTHONPATH=. python examples/classification.py

Prints each tree's 4-fold cross-validated accuracy beside CART and a random forest, the depth-2
tree, and the cost of a recall bound; plots each leaf kind's test accuracy by depth.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.tree import DecisionTreeClassifier

from srtopt import SoftClassificationTree
from srtopt.export import export_text


def main():
    X, y = load_wine(return_X_y=True, as_frame=True)
    folds = StratifiedKFold(4, shuffle=True, random_state=0)
    scores = {}
    for depth in (1, 2, 3):
        for leaf in ("constant", "logistic"):
            model = SoftClassificationTree(depth=depth, leaf=leaf, random_state=0)
            scores[leaf, depth] = cross_val_score(model, X, y, cv=folds).mean()
    cart = cross_val_score(DecisionTreeClassifier(max_depth=3, random_state=0), X, y, cv=folds).mean()
    forest = cross_val_score(RandomForestClassifier(100, random_state=0), X, y, cv=folds).mean()
    print(f"{'model':<28}{'CV accuracy':>12}")
    for (leaf, depth), score in scores.items():
        print(f"{f'soft tree, {leaf}, depth {depth}':<28}{score:12.3f}")
    print(f"{'CART, depth 3':<28}{cart:12.3f}\n{'random forest (100)':<28}{forest:12.3f}\n")

    tree = SoftClassificationTree(depth=2, leaf="constant", random_state=0).fit(X, y)
    print(export_text(tree, X=X, top=3))

    # a recall bound on the minority class of the breast cancer data (class 0, malignant)
    Xb, yb = load_breast_cancer(return_X_y=True)
    free = SoftClassificationTree(depth=2, random_state=0).fit(Xb, yb)
    bound = SoftClassificationTree(depth=2, constraints="class_recall:class=0,lower=0.99", random_state=0).fit(Xb, yb)
    for name, model in (("free", free), ("recall of class 0 >= 0.99", bound)):
        recall = np.mean(model.predict(Xb)[yb == 0] == 0)
        print(f"{name:<28} training recall of class 0 {recall:.3f}, accuracy {model.score(Xb, yb):.3f}")

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for leaf, marker in (("constant", "s"), ("logistic", "o")):
        ax.plot([1, 2, 3], [scores[leaf, d] for d in (1, 2, 3)], marker=marker, label=f"soft tree, {leaf} leaves")
    ax.axhline(forest, color="gray", linestyle="--", label="random forest (100)")
    ax.axhline(cart, color="gray", linestyle=":", label="CART, depth 3")
    ax.set_xlabel("depth")
    ax.set_ylabel("4-fold CV accuracy")
    ax.set_xticks([1, 2, 3])
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()


if __name__ == "__main__":
    main()
