"""One self-contained HTML page of a fitted oblique tree (:func:`export_html`).
"""

from __future__ import annotations

import numpy as np

from .leaf_readers import reader_of
from .nodes import (RANKING, as_view, constraint_table, drawn_tree, feature_names_of, fmt, node_counts, original_splits,
                    pruned_note, scaling_of, terms_text, tree_of)


def export_html(model, path=None, feature_names=None, X=None, y=None) -> str:
    """One self-contained HTML page of a fitted SoftRegressionTree, ORRTRegressor or
    SoftClassificationTree; returns it and writes it to ``path`` when given.  Everything (style,
    script, model) is inside the file: it needs no network to be viewed.

    The page shows the tree as collapsible nodes (click a node to fold its subtree), each
    split and leaf formula in full in original and scaled units (terms ranked as
    :data:`RANKING` says), the rows routed to every node by HBP (training rows stored at
    fit, or the rows of ``X``), each leaf's R^2 and MSE on its rows (fit-time values, or on
    ``X``, ``y``), the feature importances, and a form that routes a row given in original
    units (or in the address, ``?name=value&...`` or ``?row=v1,v2,...``): its HBP path with
    the split value u, the branch probabilities p and their product along the path, the
    leaf probabilities P_it and the prediction.

    A classifier's page shows each leaf's class probabilities (a logistic leaf's averaged over its
    training rows, or over the rows of ``X``), its rows by class (training rows, or those of ``X``
    with labels ``y``) and a logistic leaf's class scores in full in both units; a routed row gets
    the class probabilities of its HBP leaf, the predicted class, and the soft mixture
    sum_t P_it p_t(x) over all leaves.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor or SoftClassificationTree
        A fitted oblique tree.
    path : str, path-like or None, default=None
        File to write the page to (UTF-8, replaced if it exists); None: only return it.
    feature_names : sequence of str or None, default=None
        Names of the p features; None: the model's ``feature_names_in_``, else x0, x1, ...
    X : array-like of shape (n_samples, p) or None, default=None
        Rows in original units for the node counts (and, with ``y``, the leaf scores); None: fit-time values.
    y : array-like of shape (n_samples,) or None, default=None
        Targets of the rows of ``X`` for the leaf R^2 and MSE (a classifier's labels: its rows by class).

    Returns
    -------
    str
        The HTML page.

    Raises
    ------
    ValueError
        If ``model`` is a MILOTreeRegressor or not a fitted tree, ``y`` is given without ``X``, or
        ``feature_names`` does not have p names.

    Examples
    --------
    >>> from srtopt.datasets import example_tree
    >>> tree, X, y = example_tree()  # depth 2, on 200 rows: y = 2 x1 where x0 > 0.5, else -x2
    >>> page = export_html(tree)
    >>> page.startswith("<!DOCTYPE html>"), page.count('<details class="node')
    (True, 7)
    """
    model = as_view(model)
    import html
    import json
    import re
    from importlib import resources

    if model.kind != "oblique":
        raise ValueError("export_html applies to SoftRegressionTree, ORRTRegressor and SoftClassificationTree; use "
                         "export_text for MILOTreeRegressor")
    if y is not None and X is None:
        raise ValueError("export_html: y needs X (the leaf scores are computed on the rows of X)")
    tree, names, p = tree_of(model), feature_names_of(model, feature_names), model.n_features_in_
    x_min, span, y_mean, y_std = scaling_of(model)
    counts, reader = node_counts(model, X), reader_of(model, X, y)
    soft = model.estimator in ("ORRTRegressor", "ORCTClassifier")
    page = resources.files("srtopt").joinpath("data/tree_page.html").read_text("utf-8")
    data = {"depth": tree.depth, "p": p, "n_leaves": tree.n_leaves, "mu": float(model.mu), "features": names,
            "x_min": x_min.tolist(), "x_scale": span.tolist(), "y_mean": float(y_mean), "y_std": float(y_std),
            "omega": model.omega_.tolist(), "beta": model.beta_.tolist(), "prediction": "soft" if soft else "hbp",
            "leaves": [t for t in tree.leaves if model.reach[t - 1]]}
    leaves = model.leaf_model_
    if model.encoder_ is not None:  # the form takes a row of the table, which the script encodes
        data["table"] = model.encoder_.to_json()["columns"]
    data.update(n_scores=leaves.n_outputs, q=leaves.basis.n_columns, basis=_page_basis(leaves.basis),
                score_names=leaves.link.score_names(model.classes_), **reader.page_fields())
    parts = {
        "__TITLE__": html.escape(f"{model.estimator}, depth {tree.depth}, {p} features{reader.title_note()}"),
        "__FACTS__": _html_facts(model, counts, reader, names),
        "__TREE__": _html_tree(model, names, counts, reader),
        "__LEAF_OUTPUT__": reader.leaf_output,
        "__FORM__": _html_form(model, names, x_min, span),
        "__IMPORTANCES__": _html_importances(model, names),
        "__CONSTRAINTS__": _html_constraints(model),
        "__MODEL__": json.dumps(data).replace("<", "\\u003c"),
    }
    page = re.sub("|".join(parts), lambda match: parts[match.group(0)], page)  # one pass: names stay as given
    if path is not None:
        from pathlib import Path

        Path(path).write_text(page, encoding="utf-8")
    return page


def _html_form(model, names, x_min, span) -> str:
    """The form's fields: one number per feature, at the middle of its training range; for a fit on a table
    (``encoder_``), one field per table column: a number (empty: missing) at its training median, or a choice
    among its categories ("(other)", "(missing)" where the fit had them)."""
    import html

    if model.encoder_ is None:
        return "\n".join(f'<label>{html.escape(name)} <input type="text" inputmode="decimal" id="x-{j}" '
                         f'name="{html.escape(name)}" value="{x_min[j] + span[j] / 2:.6g}"></label>'
                         for j, name in enumerate(names))
    fields = []
    for j, spec in enumerate(model.encoder_.to_json()["columns"]):
        name = html.escape(spec["name"])
        if spec["kind"] == "number":
            fields.append(f'<label>{name} <input type="text" inputmode="decimal" id="c-{j}" name="{name}" '
                          f'value="{spec["median"]:.6g}" placeholder="(missing)"></label>')
            continue
        options = [(c, c) for c in spec["categories"]] + ([("(other)", "(other)")] if spec["other"] else []) + (
            [("", "(missing)")] if spec["missing"] else [])
        choices = "".join(f'<option value="{html.escape(value)}">{html.escape(text)}</option>' for value, text in options)
        fields.append(f'<label>{name} <select id="c-{j}" name="{name}">{choices}</select></label>')
    return "\n".join(fields)


def _page_basis(basis) -> dict:
    """The leaf basis as the page's script evaluates it: its kind, and for a spline its curves' pieces
    (:meth:`srtopt.bases.SplineBasis.pieces`) and scale, its steps' thresholds and scale, its pairs' features and
    medians and scale."""
    medians = basis.medians() if basis.pairs else None
    return {"kind": basis.kind, "scale": float(basis.scale),
            "curves": [basis.pieces(j) for j in sorted(basis.curves)],
            "steps": [{"feature": j, "thresholds": basis.steps[j].tolist()} for j in sorted(basis.steps)],
            "step_scale": float(basis.step_scale),
            "pairs": [{"features": [j, k], "medians": [float(medians[j]), float(medians[k])]} for j, k in basis.pairs],
            "pair_scale": float(basis.pair_scale)}


def _html_facts(model, counts, reader, names):
    """The page's facts: how a row is predicted, the units (the target's as the leaves' ``reader`` scales
    it), the routing, the ranking, and how a leaf with curves reads (the text's notes)."""
    import html

    rows = "" if counts is None else f"{counts[0]} training rows routed by HBP. "
    return "\n".join(f'<p class="facts">{html.escape(text)}</p>' for text in (
        reader.page_rule(),
        f"{rows}Scaled units: x_s = (x - min) / (max - min) of the training data"
        f"{reader.target_note()}; split t goes left iff p_t = F(mu u_t) >= 0.5 with "
        f"u_t = omega_0t + (1/p) sum_j omega_jt x_s,j, F the logistic CDF, mu = {float(model.mu):g}.",
        f"Formulas in full; {RANKING}.", *(note.strip() + "." for note in reader.text_notes(names, "original"))))


def _html_tree(model, names, counts, reader):
    """Nested <details> of every node: its formulas, statistics (a leaf's as its ``reader`` writes them) and
    (for a split) its subtrees."""
    import html

    tree, p = tree_of(model), model.n_features_in_
    split = original_splits(model)
    root, structure, _ = drawn_tree(model)

    def node(t):
        share = "" if counts is None else (f" · {counts[t - 1]} rows"
                                           f" ({100 * counts[t - 1] / max(counts[0], 1):.1f} %)")
        if tree.is_leaf(t):
            head, formulas = reader.page_leaf(tree.leaf_index(t), names)
            head = f"leaf {t}{share} · {head}"
            children = ""
        else:
            w, a = model.omega_[tree.branch_index(t)], split[tree.branch_index(t)]
            left, right = structure[t]
            head = f"node {t}{share} · go left (to {left}) if {fmt(a[0])} {terms_text(a[1:], w[1:], names, 3)} >= 0"
            formulas = [("original", f"{fmt(a[0])} {terms_text(a[1:], w[1:], names, None)} >= 0"),
                        ("scaled", f"{fmt(w[0])} + (1/{p}) ({terms_text(w[1:], w[1:], names, None)}) >= 0")]
            children = node(left) + node(right)
        body = "".join(f'<div class="formula"><span class="units">{units}</span>{html.escape(text)}</div>'
                       for units, text in formulas)
        kind = "leaf" if tree.is_leaf(t) else "split"
        return (f'<details class="node {kind}" id="node-{t}" data-node="{t}" open><summary>{html.escape(head)}'
                f"</summary>{body}{children}</details>\n")

    note = pruned_note(model)
    return (f'<p class="note">{html.escape(note)}</p>\n' if note else "") + node(root)


def _html_importances(model, names):
    import html

    importances = getattr(model, "feature_importances_", None)
    if importances is None:
        return ""
    rows = "".join(f'<tr><td class="name">{html.escape(names[j])}</td><td>{importances[j]:.4f}</td>'
                   f'<td><span class="bar" style="width:{12 * importances[j] / max(importances.max(), 1e-300):.2f}em">'
                   f"</span></td></tr>" for j in np.argsort(-importances, kind="stable"))
    return ("<h2>Feature importances</h2>\n<p class=\"note\">sum over the splits t of m_t |omega_jt|, normalized "
            "to 1: m_t is the share of the training rows reaching t (soft routing), omega_jt the split weight "
            "in the scaled space.</p>\n<table><thead><tr><th>feature</th><th>importance</th><th></th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")


def _html_constraints(model):
    """The constraints' table (:func:`~.nodes.constraint_table`), "" without constraints."""
    import html

    header, *rows = constraint_table(model) or [None]
    if header is None:
        return ""
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f'<td class="{"bad" if cell == "NO" else "name" if k < 3 else ""}">'
                                    f"{html.escape(cell)}</td>" for k, cell in enumerate(row)) + "</tr>" for row in rows)
    return ("<h2>Constraints</h2>\n<p class=\"note\">Each constraint row on the training data: its value for the "
            "soft model the training objective is written on and for predict(), and whether it holds.</p>\n"
            f"<table id=\"constraints-table\"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


__all__ = ["export_html"]
