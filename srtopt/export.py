"""Reading a fitted tree: an indented text rendering of its splits and leaf models."""

from __future__ import annotations

import numpy as np

from .tree import Tree


def _terms(coef, names, top):
    order = np.argsort(-np.abs(coef))[:top]
    return " ".join(f"{coef[j]:+.3g}*{names[j]}" for j in order if coef[j] != 0) or "0"


def export_text(model, feature_names=None, top=3, X=None) -> str:
    """Indented text tree of a fitted :class:`~srtopt.SoftRegressionTree`.

    Coefficients are in the scaled space the model works in (features min-max
    scaled to [0, 1], y standardized), which the header states; the ``top``
    largest weights of each split and leaf are shown.  With ``X``, each node
    also shows how many rows its HBP path routes there.
    """
    tree = Tree(int(model.depth))
    p = model.n_features_in_
    names = list(feature_names if feature_names is not None
                 else getattr(model, "feature_names_in_", [f"x{j}" for j in range(p)]))
    counts = {}
    if X is not None:
        leaves = model.apply(X)
        for t in tree.branch_nodes + tree.leaves:
            counts[t] = int(np.sum((leaves >> (tree.depth - tree.node_depth(t))) == t))
    lines = [f"SoftRegressionTree(depth={tree.depth}): coefficients in the scaled space "
             f"(x in [0,1], y standardized: y = {model.scaler_.y_mean:.4g} + {model.scaler_.y_std:.4g} * y_s)"]

    def walk(t, indent):
        pad = "  " * indent
        n = f" [{counts[t]} rows]" if counts else ""
        if tree.is_leaf(t):
            b = model.beta_[tree.leaf_index(t)]
            lines.append(f"{pad}leaf {t}{n}: y_s = {b[0]:+.3g} {_terms(b[1:], names, top)}")
            return
        w = model.omega_[tree.branch_index(t)]
        lines.append(f"{pad}node {t}{n}: left if {w[0]:+.3g} + (1/{p})({_terms(w[1:], names, top)} ...) >= 0")
        walk(2 * t, indent + 1)
        walk(2 * t + 1, indent + 1)

    walk(1, 0)
    return "\n".join(lines)
