"""What the classifiers share about their targets: the class labels of y and the row weights.

Every bad target is stopped in one line that names what is wrong: y missing, a missing label (NaN,
None, ``pd.NA``), labels of mixed types (``'1'`` beside ``1``), a continuous target, one class, a class
without a row of positive weight, a ``class_weight`` naming no class of y or giving one a weight that
is not a finite number >= 0.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import column_or_1d

from .targets import check_rows, check_sample_weight


def check_labels(estimator, X, y, min_rows: int) -> np.ndarray:
    """y as a 1-D array of class labels, one per row of X (the tree's columns), at least ``min_rows`` of them; a
    missing, mixed or continuous target refused in one line (module docstring)."""
    check_rows(estimator, X, y, min_rows)
    labels = column_or_1d(checked_labels(y), warn=True)
    refuse_continuous(labels)
    check_classification_targets(labels)
    return labels


class ClassTargetsMixin:
    """``_check_data`` (X as floats, y as class codes, ``classes_``) and ``_weights`` (sample and
    class weights) of a classifier with ``depth`` and ``class_weight``, each bad input stopped
    in one line (module docstring); ``score`` warns about labels the fit never saw."""

    def _check_data(self, X, y):
        """The class codes 0..K-1 of y, one per row of X (the tree's columns); sets ``classes_``, ``n_classes_``."""
        y = check_labels(self, X, y, 2**self.depth)
        self.classes_, codes = np.unique(y, return_inverse=True)
        self.n_classes_ = len(self.classes_)
        if self.n_classes_ < 2:
            raise ValueError(f"y has one class ({_label(self.classes_[0])!r}): a classifier needs two classes or more")
        return codes.astype(np.int64)

    def _weights(self, codes, sample_weight) -> np.ndarray:
        """s_i before normalization: ``sample_weight`` times the class weights; a class without a row of
        positive weight is refused, a class of one such row warned about."""
        weights = check_sample_weight(sample_weight, len(codes), 2**int(self.depth))
        if self.class_weight is not None:
            _check_class_weight(self.class_weight, self.classes_)
            weights = weights * compute_sample_weight(self.class_weight, self.classes_[codes])
        counts = np.bincount(codes, weights=(weights > 0).astype(float), minlength=self.n_classes_)
        k = int(np.argmin(counts))
        label = _label(self.classes_[k])
        if counts[k] == 0:
            given = self.class_weight.get(label) if isinstance(self.class_weight, dict) else None
            why = f"class_weight gives it {given}" if given == 0 else "give it a weight, or drop its rows"
            raise ValueError(f"class {label!r} has no row of positive weight: {why}")
        if counts[k] == 1:
            warnings.warn(f"class {label!r} has one row (of positive weight): the tree can hardly learn "
                          f"it; give it more rows or merge it with another class", UserWarning, stacklevel=3)
        return weights

    def score(self, X, y, sample_weight=None):
        """Accuracy of :meth:`predict` on (X, y) (scikit-learn's ``score``); labels of y the tree was not
        fitted on count as errors, with a warning that names them."""
        known = set(np.asarray(self.classes_).tolist())
        unseen = [label for label in dict.fromkeys(np.asarray(checked_labels(y)).tolist()) if label not in known]
        if unseen:
            shown = ", ".join(map(repr, unseen[:3])) + (", ..." if len(unseen) > 3 else "")
            warnings.warn(f"y holds {len(unseen)} label(s) the tree was not fitted on ({shown}): their rows count as "
                          f"errors", UserWarning, stacklevel=2)
        return super().score(X, y, sample_weight=sample_weight)


def checked_labels(y):
    """y, refused in one line when it holds a missing label (NaN, None, ``pd.NA``) or labels of mixed
    types (``'1'`` beside ``1``), each named with the first such value."""
    import pandas as pd

    values = np.asarray(y, dtype=object) if isinstance(y, pd.Series) else np.asarray(y)
    if values.ndim != 1:
        return y  # scikit-learn names a y of another shape
    missing = np.asarray(pd.isna(values), dtype=bool)
    if missing.any():
        raise ValueError(f"y has {int(missing.sum())} missing label(s) (NaN, None or pd.NA), the first in row "
                         f"{int(np.argmax(missing))}: give every row a class, or drop those rows")
    kinds = sorted({_kind(t) for t in set(map(type, values))}) if values.dtype == object else []
    if len(kinds) > 1:
        first = {kind: next(v for v in values if _kind(type(v)) == kind) for kind in kinds[:2]}
        shown = " and ".join(f"{kind} {value!r}" for kind, value in first.items())
        raise ValueError(f"y mixes labels of different types ({shown}): give every label one type, e.g. strings "
                         f"(y.astype(str)) or numbers")
    return y


def refuse_continuous(y) -> None:
    """Refuse numeric labels that look continuous (scikit-learn's ``type_of_target``), in one line."""
    y = np.asarray(y)
    if y.dtype == object and len(y) and all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
                                            for v in y):
        y = y.astype(np.float64)  # numbers held as objects: judged as the numbers they are
    if y.dtype.kind in "fiu" and type_of_target(y) == "continuous":
        distinct = np.unique(y)
        shown = ", ".join(f"{v:g}" for v in distinct[:3])
        raise ValueError(f"Unknown label type: y looks continuous ({len(distinct)} distinct values such as {shown}): "
                         f"a classifier needs class labels; use SoftRegressionTree for a continuous target")


def _check_class_weight(class_weight, classes) -> None:
    """A dict ``class_weight`` names classes of y only, each weight a finite number >= 0."""
    if not isinstance(class_weight, dict):
        return
    unknown = [label for label in class_weight if label not in classes]
    if unknown:
        raise ValueError(f"class_weight names the class {unknown[0]!r}, which y does not have (classes: "
                         f"{', '.join(map(repr, classes.tolist()))})")
    for label, weight in class_weight.items():
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not 0 <= weight < np.inf:
            raise ValueError(f"class_weight gives class {label!r} the weight {weight!r}: a weight must be a finite "
                             f"number >= 0")


def _kind(kind: type) -> str:
    """The type of a label as a mix of labels is told: 'number', 'string', 'boolean' or the type's name."""
    if issubclass(kind, (bool, np.bool_)):
        return "boolean"
    if issubclass(kind, numbers.Number):
        return "number"
    if issubclass(kind, str):
        return "string"
    return kind.__name__


def _label(value):
    """A class label as the user wrote it (a numpy scalar as its Python value)."""
    return value.item() if hasattr(value, "item") else value
