"""Graphviz DOT source of a fitted tree (:func:`export_graphviz`), its rendering
(:func:`render_graphviz`), and the lines of its boxes (:func:`node_labels`), which
:func:`srtopt.plotting.plot_tree` draws too.
"""

from __future__ import annotations

from .leaf_readers import reader_of, title_note
from .nodes import (RANKING, UNITS, as_view, drawn_nodes, drawn_tree, feature_names_of, fmt, folded_text, node_counts,
                    original_splits, ranked_terms, tree_of)


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
    title = f"{model.estimator} depth {tree.depth}{title_note(model)} ({units} units; {RANKING})"
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


def node_labels(model, feature_names, top, X, units, folded=()):
    """{node: label lines} for DOT and matplotlib rendering: one coordinate system, one term
    per line, terms in the order :data:`~.nodes.RANKING` states; a soft tree's leaves as the
    reader of its leaves writes them (:func:`~.leaf_readers.reader_of`)."""
    tree, names, counts = tree_of(model), feature_names_of(model, feature_names), node_counts(model, X)
    lines_of = (_milo_lines(model, names, top, units) if model.kind == "milo" else
                _oblique_lines(model, names, top, X, units))
    labels = {}
    for t in range(1, 2 ** (tree.depth + 1)):
        head = f"{'leaf' if tree.is_leaf(t) else 'node'} {t}" + (f"  n={counts[t - 1]}" if counts is not None else "")
        labels[t] = [head] + ([folded_text(model, t)] if t in folded else lines_of(t))
    return labels


def _oblique_lines(model, names, top, X, units):
    """t -> the label lines of node t of a soft tree: its hyperplane, or its leaf as its reader writes it."""
    tree, reader = tree_of(model), reader_of(model, X)
    split = original_splits(model) if units == "original" else model.omega_

    def lines(t):
        if tree.is_leaf(t):
            return reader.label_lines(tree.leaf_index(t), names, top, units)
        i = tree.branch_index(t)
        head = "left if " + fmt(split[i][0]) + ("" if units == "original" else f" + (1/{model.n_features_in_}) *")
        terms = _term_lines(split[i][1:], model.omega_[i, 1:], names, top) or ["+0"]
        return [head] + (terms + [">= 0"] if terms[-1].endswith("more)") else terms[:-1] + [terms[-1] + " >= 0"])

    return lines


def _milo_lines(model, names, top, units):
    """t -> the label lines of node t of a MILO tree: its axis-aligned split, or its leaf's linear model."""
    tree, y_name = tree_of(model), "y" if units == "original" else "y_s"

    def lines(t):
        if tree.is_leaf(t):
            i = tree.leaf_index(t)
            scaled = model.leaf_coef_scaled_[i]
            b0, b = ((model.leaf_intercept_[i], model.leaf_coef_[i]) if units == "original"
                     else (model.leaf_intercept_scaled_[i], scaled))
            return [f"{y_name} = {fmt(b0)}"] + _term_lines(b, scaled, names, top)
        j = int(model.split_feature_[t - 1])
        threshold = model.split_threshold_ if units == "original" else model.split_threshold_scaled_
        return ["no split" if j < 0 else f"{names[j]} < {threshold[t - 1]:.4g}"]

    return lines


def _term_lines(coef, scaled, names, top) -> list[str]:
    """The ranked terms (:func:`~.nodes.ranked_terms`), one per line, "... (k more)" for those left out."""
    terms, rest = ranked_terms(coef, scaled, names, top)
    return terms + ([f"... ({rest} more)"] if rest else [])


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
