"""How the views read a soft tree's leaves: one reader per family of the leaf model's link.

A leaf model (:mod:`srtopt.leaf_model`) predicts through its link: a link of class probabilities (one with
``n_classes``, as :class:`~srtopt.leaf_model.Softmax`) gives those, any other link one value per leaf (y in
its own units, as :class:`~srtopt.leaf_model.Identity`, or a researcher's own link such as the log rate of
``examples/own_leaf_model.py``).  The views of the two differ in these, and only these: the title's note, the
prediction rule, the target's scaling, a leaf's text, label and page lines, the node table's leaf columns, the
page's extra fields and the leaf statistics.  :class:`ValueReader` and :class:`ClassReader` give it, and
:func:`reader_of` chooses one by the leaf model's ``n_classes``, so the writers of :mod:`srtopt.export` and
:mod:`srtopt.plotting` ask the reader and never the task.  The MILO tree has no leaf
model: its writers keep their own path.

A reader is made for the rows its statistics are read on: none (the statistics stored at fit), ``X`` (the
rows routed by HBP) or ``X`` and ``y`` (a value leaf's R^2 and MSE, a class leaf's rows by class).
"""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np

from ..routing import class_probabilities
from .curves import curve_frame, curve_notes
from .nodes import (as_view, linear_in_original, original_splits, scaling_of, score_formula, score_terms,
                    shown_lines, tree_of)

#: what the views ask a leaf model's link (beside its call): how a score is named and unscaled, and the leaves'
#: name
LINK_READING = ("score_names", "score_units", "leaf_name")


def reader_of(model, X=None, y=None) -> "LeafReader":
    """The reader of a soft tree's leaves (a :class:`~srtopt.view.FittedTree` with a leaf model), for the rows
    ``X`` (with targets ``y``) or, without them, the statistics stored at fit: :class:`ClassReader` for a leaf
    model of class probabilities (``n_classes``), :class:`ValueReader` for any other.

    Raises
    ------
    ValueError
        If the link lacks a method of :data:`LINK_READING`.
    """
    link = model.leaf_model_.link
    missing = [name for name in LINK_READING if not callable(getattr(link, name, None))]
    if missing:
        raise ValueError(f"the views read a leaf model's link by {', '.join(LINK_READING)}; {type(link).__name__} has "
                         f"no {', '.join(missing)}")
    return (ValueReader if model.leaf_model_.n_classes is None else ClassReader)(model, X, y)


def original_units(model):
    """(split, leaf): the oblique splits and leaf models in raw feature units.

    ``split`` (2^D - 1, p + 1): row t-1 holds (a_0, a_1..a_p), node t goes left
    iff a_0 + a . x >= 0.  ``leaf`` (2^D, p + 1): row holds (c_0, c_1..c_p),
    y = c_0 + c . x; for a classifier, (2^D, K', q): leaf l's K' class scores, each
    (c_0, c_1..c_p) (logistic leaves) or (c_0,) (constant leaves).  See the module
    docstring of :mod:`.nodes` for the formulas.

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor or SoftClassificationTree
        A fitted oblique tree.

    Returns
    -------
    split : ndarray of shape (2^D - 1, p + 1)
        Row t - 1: (a_0, a_1..a_p) of branch node t.
    leaf : ndarray of shape (2^D, p + 1), or (2^D, K', q) for a classifier
        Row t - 2^D: (c_0, c_1..c_p) of leaf t, y in its own units; a classifier's class scores.

    Raises
    ------
    ValueError
        If ``model`` is a MILOTreeRegressor (already in original units) or not a fitted tree.
    """
    split = original_splits(model)
    return split, reader_of(as_view(model)).original_leaves()


def title_note(model) -> str:
    """What the DOT and plot titles add after the depth: ", logistic leaves, 3 classes: A, B, C" of class leaves;
    nothing for value leaves and the MILO tree."""
    return "" if model.kind == "milo" else reader_of(model).title_note()


class LeafReader:
    """What the readers of both link families share: the tree, its leaf model and the rows read.

    Parameters
    ----------
    model : FittedTree
        A fitted soft tree's view.
    X : array-like of shape (n_samples, p) or None
        Rows in original units whose HBP routing gives the leaf statistics; None: those stored at fit.
    y : array-like of shape (n_samples,) or None
        The targets of the rows of ``X``.
    """

    def __init__(self, model, X=None, y=None):
        self.model, self.X, self.y = model, X, y
        self.leaves = model.leaf_model_

    def original_scores(self) -> np.ndarray:
        """(2^D, K', 1 + p): the leaves' linear scores in raw feature units, the link's units."""
        x_min, span, _, _ = scaling_of(self.model)
        return linear_in_original(self.leaves.linear_part(self.model.beta_), x_min, span,
                                  *self.leaves.link.score_units(self.model.scaler_))

    def score_lines(self, coef, k, names, top, units) -> list[str]:
        """The "scaled:" and "original:" text lines of score k of the vector ``coef`` that ``units`` shows."""
        return shown_lines(units, scaled=f"scaled:   {score_formula(self.model, coef, k, names, top, 'scaled')}",
                           original=f"original: {score_formula(self.model, coef, k, names, top, 'original')}")

    def text_notes(self, names, units) -> list[str]:
        """The text lines after the ranking: how a leaf with curves reads, and where (:func:`~.curves.curve_notes`);
        none when no leaf bends."""
        curved = self.leaves.curved(self.model.beta_)
        if not curved:
            return []
        x_min, span, _, _ = scaling_of(self.model)
        frame = curve_frame(self.leaves.basis, self.model.n_features_in_)
        return [f"  {line}" for line in curve_notes(frame, curved, names, x_min, span, units,
                                                    bool(self.leaves.basis.pairs))]

    def units_lines(self, units) -> list[str]:
        """The text lines that name the units ``units`` shows, with the target's scaling."""
        return shown_lines(units, scaled=f"  scaled:   x_s = (x - min) / (max - min) of the training data"
                                         f"{self.target_note()}",
                           original=f"  original: raw feature units{self.target_units}")


class ValueReader(LeafReader):
    """The leaves of a value link (:class:`~srtopt.leaf_model.Identity`, a link of one's own): one score per leaf,
    written as its formula, with the leaf's R^2 and MSE on its rows."""

    #: what the page names the output of a routed row's leaf
    leaf_output = "leaf model y_t(x)"
    #: what the text adds to "original: raw feature units"
    target_units = ", y in its own units"

    def title_note(self) -> str:
        """Nothing: a value tree's title says all."""
        return ""

    def text_title_note(self) -> str:
        """Nothing: a value tree's text title says all."""
        return ""

    def text_rule(self) -> list[str]:
        """The text lines under the title saying how a row is predicted: ORRT's soft prediction only."""
        if self.model.estimator != "ORRTRegressor":
            return []
        return ["  note: ORRT predicts sum_t P_t(x) yhat_t(x) over all leaves; the routing and counts below follow "
                "the HBP path of its splits (display only)"]

    def page_rule(self) -> str:
        """The page's sentence saying how a row is predicted."""
        if self.model.estimator == "ORRTRegressor":
            return ("ORRT predicts sum_t P_it y_t(x) over all leaves; the routing and counts follow the HBP path of "
                    "its splits (display only).")
        return "A row is predicted by the linear model of the single leaf of its highest-branch-probability (HBP) path."

    def target_note(self) -> str:
        """The target's scaling: ", y_s = (y - mean) / std"."""
        _, _, y_mean, y_std = scaling_of(self.model)
        return f", y_s = (y - {y_mean:.6g}) / {y_std:.6g}"

    def text_leaf(self, i, names, top, units) -> list[str]:
        """The text lines of the leaf of row i: nothing after its head, then its formula in ``units``."""
        return [""] + self.score_lines(self.model.beta_[i], 0, names, top, units)

    def label_lines(self, i, names, top, units) -> list[str]:
        """The label lines of the leaf of row i (DOT, plot): its formula in ``units``, one term per line."""
        head, terms = score_terms(self.model, self.model.beta_[i], 0, names, top, units)
        return [head] + terms

    def page_leaf(self, i, names) -> tuple[str, list[tuple[str, str]]]:
        """(head, [(units, formula)]) of the leaf of row i on the page: its R^2 and MSE and its formula's first
        terms; in full its formula in both units."""
        b, (mse, r2) = self.model.beta_[i], self.statistics
        scores = [] if r2 is None else [f"{name} {value:.4g}" if np.isfinite(value) else f"{name} n/a"
                                        for name, value in (("leaf R^2", r2[i]), ("MSE", mse[i]))]
        head = " · ".join(scores + [score_formula(self.model, b, 0, names, 3, "original")])
        return head, [(units, score_formula(self.model, b, 0, names, None, units)) for units in ("original", "scaled")]

    def page_fields(self) -> dict:
        """Nothing to add to the page's model."""
        return {}

    def original_leaves(self) -> np.ndarray:
        """(2^D, p + 1): each leaf's (c_0, c_1..c_p) in raw units (:func:`original_units`)."""
        return self.original_scores()[:, 0]

    def table_leaves(self, units) -> np.ndarray:
        """The node table's leaf coefficient rows in ``units``: (intercept, one per feature)."""
        return self.original_leaves() if units == "original" else self.model.beta_

    def table_columns(self) -> dict:
        """{column: values at index t - 1}: each leaf's "leaf_mse" and "leaf_r2" (NaN at the splits)."""
        mse, r2 = self.statistics
        return {"leaf_mse": leaf_columns(mse, tree_of(self.model)), "leaf_r2": leaf_columns(r2, tree_of(self.model))}

    @cached_property
    def statistics(self) -> tuple:
        """(MSE, R^2) of each leaf: on the rows of X, y (:func:`leaf_scores`), else those stored at fit (None
        when unknown)."""
        if self.y is None:
            return getattr(self.model, "leaf_mse_", None), getattr(self.model, "leaf_r2_", None)
        return leaf_scores(self.model, self.X, np.asarray(self.y, dtype=float), tree_of(self.model))


class ClassReader(LeafReader):
    """The leaves of a link of class probabilities (:class:`~srtopt.leaf_model.Softmax`): shown as the class mix of each
    leaf, its rows by class and, unless the leaf is constant, its class scores."""

    leaf_output = "most probable class at x (p)"
    target_units = ""

    def __init__(self, model, X=None, y=None):
        super().__init__(model, X, y)
        self.titles, self.constant = class_titles(model), is_constant(model)

    def title_note(self) -> str:
        """The leaves and the classes: ", logistic leaves, 3 classes: A, B, C"."""
        return f", {self.leaves.describe()}{self.text_title_note()}"

    def text_title_note(self) -> str:
        """The classes: ", 3 classes: A, B, C"."""
        return f", {len(self.titles)} classes: {', '.join(class_names(self.model))}"

    def text_rule(self) -> list[str]:
        """The text lines under the title: how a row is predicted, and how the leaves give their classes."""
        if self.model.estimator == "ORCTClassifier":
            rule = ("  note: ORCT predicts the class of largest sum_t P_t(x) C_t over all leaves; the routing and "
                    "counts below follow the HBP path of its splits (display only)")
        else:
            rule = "  a row is predicted by the leaf of its HBP path: the class of largest probability there"
        return [rule, f"  {self.class_rule()}"]

    def page_rule(self) -> str:
        """The page's sentence saying how a row is predicted."""
        if self.model.estimator == "ORCTClassifier":
            return ("ORCT predicts the class of largest sum_t P_it C_t over all leaves; the routing and counts follow "
                    "the HBP path of its splits (display only).")
        return ("A row is predicted by the class of largest probability at the single leaf of its "
                f"highest-branch-probability (HBP) path; {self.class_rule()}.")

    def class_rule(self) -> str:
        """One sentence: how the leaves give the class probabilities and what a view shows."""
        names = class_names(self.model)
        scores = (f"the leaf's logit p({names[1]}) = log(p({names[1]}) / p({names[0]}))" if len(names) == 2 else
                  "p = softmax of the leaf's class scores")
        if self.constant:
            return (f"constant leaves: each leaf holds one class-probability vector ({scores}, a constant); each "
                    f"leaf shows it, then its training rows by class (HBP)")
        shape = "linear in x" if self.leaves.basis.kind == "linear" else "a curve per feature"
        return (f"{self.leaves.describe()}: {scores}, {shape}; each leaf shows its class probabilities averaged "
                f"over its training rows, its training rows by class (HBP), then its class scores")

    def target_note(self) -> str:
        """Nothing: a class target is not scaled."""
        return ""

    def text_leaf(self, i, names, top, units) -> list[str]:
        """The text lines of the leaf of row i: its ``top`` classes by share after its head, its training rows
        by class, and the formulas of its shown class scores (:meth:`shown_scores`) in ``units``."""
        mix = self.mix[i]
        lines = [" " + classes_text(mix, self.titles, top)]
        if self.counts is not None:
            lines.append("training rows: " + classes_text(self.counts[i], self.titles, top, count_text, nonzero=True))
        for k in self.shown_scores(mix, top):
            lines += self.score_lines(self.scores[i, k], k, names, top, units)
        return lines

    def label_lines(self, i, names, top, units) -> list[str]:
        """The label lines of the leaf of row i (DOT, plot): its ``top`` classes by share, one per line, its
        training rows by class (not with ``X``), and the terms of its shown class scores in ``units``, one per
        line, ranked as :data:`~.nodes.RANKING` says."""
        mix = self.mix[i]
        lines = ranked_classes(mix, self.titles, top)
        if self.counts is not None:
            lines.append("rows: " + classes_text(self.counts[i], self.titles, top, count_text, nonzero=True))
        for k in self.shown_scores(mix, top):
            head, terms = score_terms(self.model, self.scores[i, k], k, names, top, units)
            lines += [head] + [f"  {term}" for term in terms]
        return lines

    def page_leaf(self, i, names) -> tuple[str, list[tuple[str, str]]]:
        """(head, [(label, formula)]) of the leaf of row i on the page: its classes of largest share in the
        head; in full its class mix, its rows by class and (unless constant) every class score in both units."""
        mix = self.mix[i]
        formulas = [("p" if self.constant else "mean p", classes_text(mix, self.titles, None))]
        if self.counts is not None:
            formulas.append(("rows", classes_text(self.counts[i], self.titles, None, count_text, nonzero=True)))
        for k in [] if self.constant else range(self.leaves.n_outputs):
            formulas += [(units, score_formula(self.model, self.scores[i, k], k, names, None, units))
                         for units in ("original", "scaled")]
        return classes_text(mix, self.titles, 3), formulas

    def page_fields(self) -> dict:
        """The class labels, which the page's script names the probabilities by."""
        return {"classes": class_names(self.model)}

    def original_leaves(self) -> np.ndarray:
        """(2^D, K', q): each leaf's class scores in raw units (:func:`original_units`)."""
        return self.original_scores()

    def table_leaves(self, units) -> np.ndarray:
        """NaN: the node table has no coefficient columns for class leaves (their scores are
        :func:`original_units`' second array)."""
        return np.full((tree_of(self.model).n_leaves, self.model.n_features_in_ + 1), np.nan)

    def table_columns(self) -> dict:
        """{column: values at index t - 1}: the rows of each class at every node ("n(c)", a split's the sums
        over its leaves) and each leaf's class mix ("p(c)")."""
        tree, names = tree_of(self.model), class_names(self.model)
        at_nodes = leaf_columns(self.counts, tree)
        for t in reversed(tree.branch_nodes) if self.counts is not None else ():  # children before parents
            at_nodes[t - 1] = at_nodes[2 * t - 1] + at_nodes[2 * t]
        shares = leaf_columns(self.mix, tree)
        columns = {f"n({name})": None if at_nodes is None else at_nodes[:, k] for k, name in enumerate(names)}
        return columns | {f"p({name})": shares[:, k] for k, name in enumerate(names)}

    def shown_scores(self, mix_row, top) -> list[int]:
        """The class scores a view shows of a leaf with class mix ``mix_row``: none of a constant leaf, the one
        logit of two classes, else those of the ``top`` classes of largest share (None: all)."""
        if self.constant:
            return []
        if len(self.titles) == 2:
            return [0]
        order = np.argsort(-np.nan_to_num(mix_row, nan=-np.inf), kind="stable")
        return [int(k) for k in (order if top is None else order[:top])]

    @cached_property
    def scores(self) -> np.ndarray:
        """(2^D, K', q): the leaves' class scores in the scaled space."""
        return self.leaves.coefficients(self.model.beta_)

    @cached_property
    def mix(self) -> np.ndarray:
        """(2^D, K): the class mix of each leaf (:func:`leaf_class_mix`)."""
        return leaf_class_mix(self.model, self.X)

    @cached_property
    def counts(self):
        """(2^D, K) or None: the rows of each class each leaf receives (:func:`leaf_class_counts`)."""
        return leaf_class_counts(self.model, self.X, self.y)


def leaf_columns(values, tree):
    """Per-leaf ``values`` (2^D, ...) at index t - 1 of every node, NaN at the splits (None stays None)."""
    if values is None:
        return None
    values = np.asarray(values, dtype=float)
    return np.concatenate([np.full((tree.n_leaves - 1,) + values.shape[1:], np.nan), values])


# ------------------------------------------------------------------ value leaves
def leaf_scores(model, X, y, tree):
    """Per-leaf MSE and R^2 of the HBP leaf's own model on the rows routed there."""
    leaves = np.asarray(model.apply(X))
    pred = np.asarray(model.predict(X), dtype=float)
    mse, r2 = np.full(tree.n_leaves, np.nan), np.full(tree.n_leaves, np.nan)
    for t in tree.leaves:
        rows = leaves == t
        if not rows.any():
            continue
        sse = np.mean((y[rows] - pred[rows]) ** 2)
        sst = np.var(y[rows])
        mse[tree.leaf_index(t)] = sse
        if rows.sum() > 1 and sst > 0:
            r2[tree.leaf_index(t)] = 1 - sse / sst
    return mse, r2


# ------------------------------------------------------------------ class leaves
def class_names(model) -> list[str]:
    """A classifier's class labels as text (column names, formulas: "p(B)")."""
    return [str(c) for c in model.classes_]


def class_titles(model) -> list[str]:
    """A classifier's class labels as a list of shares or counts writes them: the label, or "class 1"
    for a label that reads as a number ("82.0% class 1", not "82.0% 1")."""
    return [f"class {name}" if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|True|False", name) else name
            for name in class_names(model)]


def is_constant(model) -> bool:
    """Whether a classifier's leaves are constant (one class-probability vector each)."""
    return model.leaf_model_.basis.kind == "constant"


def leaf_class_mix(model, X=None) -> np.ndarray:
    """(2^D, K): the class mix each leaf of a classifier shows: a constant leaf's probabilities, a
    logistic leaf's averaged over its training rows (``leaf_class_proba_``; NaN where unknown) or,
    with ``X``, over the rows of X it receives by HBP."""
    tree, K = tree_of(model), len(model.classes_)
    if is_constant(model):
        return class_probabilities(model.leaf_model_.coefficients(model.beta_)[..., 0], K)
    if X is not None:
        rows = tree.leaf_rows(np.asarray(model.apply(X)))
        mass = np.zeros((tree.n_leaves, K))
        np.add.at(mass, rows, model.predict_proba(X))
        with np.errstate(invalid="ignore"):
            return mass / np.bincount(rows, minlength=tree.n_leaves)[:, None]
    mix = model.leaf_class_proba_
    return np.full((tree.n_leaves, K), np.nan) if mix is None else np.asarray(mix)


def leaf_class_counts(model, X=None, y=None):
    """(2^D, K): the rows of each class each leaf receives by HBP: those stored at fit (weighted
    training rows), or those of ``X`` with labels ``y``; None if unknown (``X`` without ``y``)."""
    if X is None:
        counts = model.leaf_class_counts_
        return None if counts is None else np.asarray(counts)
    if y is None:
        return None
    tree, index = tree_of(model), {label: k for k, label in enumerate(model.classes_.tolist())}
    unknown = [label for label in np.asarray(y).tolist() if label not in index]
    if unknown:
        raise ValueError(f"y holds the label {unknown[0]!r}, which is not a class of the model (classes: "
                         f"{', '.join(class_names(model))})")
    codes = np.array([index[label] for label in np.asarray(y).tolist()], dtype=np.int64)
    counts = np.zeros((tree.n_leaves, len(index)))
    np.add.at(counts, (tree.leaf_rows(np.asarray(model.apply(X))), codes), 1.0)
    return counts


def share_text(v, name) -> str:
    """A class's share as the views write it: "82.0% B"."""
    return f"{100 * v:.1f}% {name}"


def count_text(v, name) -> str:
    """A class's rows as the views write them: "120 B"."""
    return f"{v:g} {name}"


def ranked_classes(values, names, top, text=share_text, nonzero=False) -> list[str]:
    """Entries text(value, name) of the classes in decreasing order of ``values``, the ``top`` first
    (None: all) and "... (k more)" for the rest; NaN values (a leaf without rows) and, if
    ``nonzero``, zero ones are left out; ["no rows"] when nothing is left."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable")
    order = order[~np.isnan(values[order]) & ((values[order] != 0) if nonzero else True)]
    shown = order if top is None else order[:top]
    rest = [f"... ({len(order) - len(shown)} more)"] if len(order) > len(shown) else []
    return [text(values[k], names[k]) for k in shown] + rest if len(order) else ["no rows"]


def classes_text(values, names, top, text=share_text, nonzero=False) -> str:
    """:func:`ranked_classes` on one line."""
    return ", ".join(ranked_classes(values, names, top, text, nonzero))


__all__ = ["LINK_READING", "ClassReader", "ValueReader", "original_units", "reader_of"]
