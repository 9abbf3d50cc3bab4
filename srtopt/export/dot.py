"""Graphviz DOT source of a fitted tree (:func:`export_graphviz`) and its rendering
(:func:`render_graphviz`).
"""

from __future__ import annotations

from .nodes import RANKING, UNITS, as_view, classes_note, drawn_nodes, drawn_tree, node_labels, tree_of


def export_graphviz(model, feature_names=None, top=3, X=None, units="original", max_depth=None) -> str:
    """Graphviz DOT source of the tree (one box per node, "yes"/"no" edges for left/right).

    Splits show the hyperplane as its ``top`` largest-weight features (None:
    all; ranked as :data:`RANKING` says), leaves their linear model (a classifier's leaves:
    their ``top`` classes by probability, rows by class and, for logistic leaves, the class
    scores) and every node its row count; ``units`` "original" (raw feature units) or "scaled"
    (the model's space).  Render with
    :func:`render_graphviz` (needs the ``dot`` executable) or any Graphviz tool.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor, MILOTreeRegressor, SoftClassificationTree or FittedTree
        A fitted tree, or its view (:func:`srtopt.persistence.read_view` reads one from a file).
    feature_names : sequence of str or None, default=None
        Names of the p features; None: the model's ``feature_names_in_``, else x0, x1, ...
    top : int or None, default=3
        Terms shown per split or leaf, the largest-weight first; None: all.
    X : array-like of shape (n_samples, p) or None, default=None
        Rows in original units whose HBP routing gives the node counts; None: the fit-time counts.
    units : {"original", "scaled"}, default="original"
        Coordinate system of the coefficients shown.
    max_depth : int or None, default=None
        Levels drawn below the root; a split deeper down is one box, its subtree folded. None: every level.

    Returns
    -------
    str
        The DOT source of a ``digraph``, the reachable nodes only.

    Raises
    ------
    ValueError
        If ``units`` is unknown, ``feature_names`` does not have p names, ``model`` is not a fitted
        tree of these classes, or ``max_depth`` is not None or an int >= 0.
    """
    model = as_view(model)
    if units not in UNITS:
        raise ValueError(f"units must be 'original' or 'scaled', got {units!r}")
    tree = tree_of(model)
    root, children, folded = drawn_tree(model, max_depth)
    labels = node_labels(model, feature_names, top, X, units, folded)
    title = f"{model.estimator} depth {tree.depth}{classes_note(model)} ({units} units; {RANKING})"
    out = ["digraph srt {", f'  label="{_dot_escape(title)}"; labelloc=t;',
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=9];']
    for t in drawn_nodes(root, children):
        color = "#e8f4e8" if tree.is_leaf(t) else "#f0f0f0" if t in folded else "#e8eef8"
        label = "\\n".join(_dot_escape(line) for line in labels[t])
        out.append(f'  n{t} [label="{label}", fillcolor="{color}"];')
    for t, (left, right) in sorted(children.items()):
        out.append(f'  n{t} -> n{left} [label="yes"];')
        out.append(f'  n{t} -> n{right} [label="no"];')
    out.append("}")
    return "\n".join(out) + "\n"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def render_graphviz(dot_source: str, path, format: str = "png") -> None:
    """Render DOT source to ``path`` with the ``dot`` executable (RuntimeError if it is absent).

    Parameters
    ----------
    dot_source : str
        Graphviz DOT source, e.g. from :func:`export_graphviz`.
    path : str or path-like
        The output file.
    format : str, default="png"
        Output format of ``dot -T`` ("png", "svg", "pdf", ...).

    Raises
    ------
    RuntimeError
        If the ``dot`` executable is not on PATH.
    subprocess.CalledProcessError
        If ``dot`` fails (e.g. on invalid source or an unknown format).
    """
    import shutil
    import subprocess

    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError("the Graphviz 'dot' executable was not found on PATH; write the DOT source "
                           "instead or use srtopt.plotting.plot_tree")
    subprocess.run([dot, f"-T{format}", "-o", str(path)], input=dot_source.encode(), check=True)


__all__ = ["export_graphviz", "render_graphviz"]
