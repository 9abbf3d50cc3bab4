"""What the classifiers share about their targets: the class labels of y and the row weights."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import validate_data

from .scaling import _check_numeric_columns, _naming, check_sample_weight


class ClassTargetsMixin:
    """``_check_data`` (X as floats, y as class codes, ``classes_``) and ``_weights`` (sample and
    class weights) of a classifier with ``depth`` and ``class_weight``, each bad input stopped
    in one line."""

    def _check_data(self, X, y):
        """(X as floats, the class codes 0..K-1 of y); sets ``classes_``, ``n_classes_``."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        _check_numeric_columns(X)
        X, y = _naming("X or y", lambda: validate_data(self, X, y, dtype=np.float64, ensure_all_finite=True), X)
        if type_of_target(y) == "continuous":
            shown = ", ".join(f"{v:g}" for v in np.unique(y)[:3])
            raise ValueError(f"Unknown label type: y looks continuous ({len(np.unique(y))} distinct values such as "
                             f"{shown}): a classifier needs class labels; use SoftRegressionTree for a continuous "
                             f"target")
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        self.n_classes_ = len(self.classes_)
        if self.n_classes_ < 2:
            raise ValueError(f"y has one class ({_label(self.classes_[0])!r}): a classifier needs two classes or more")
        if X.shape[0] < 2**self.depth:
            raise ValueError(f"X has n_samples = {X.shape[0]}, fewer than the {2**self.depth} leaves of the tree; "
                             f"use a smaller depth or more data")
        return X, codes.astype(np.int64)

    def _weights(self, codes, sample_weight) -> np.ndarray:
        """s_i before normalization: ``sample_weight`` times the class weights; a class without a row of
        positive weight is refused, a class of one such row warned about."""
        weights = check_sample_weight(sample_weight, len(codes), 2**int(self.depth))
        if self.class_weight is not None:
            if isinstance(self.class_weight, dict):
                unknown = [label for label in self.class_weight if label not in self.classes_]
                if unknown:
                    raise ValueError(f"class_weight names the class {unknown[0]!r}, which y does not have (classes: "
                                     f"{', '.join(map(repr, self.classes_.tolist()))})")
            weights = weights * compute_sample_weight(self.class_weight, self.classes_[codes])
        counts = np.bincount(codes, weights=(weights > 0).astype(float), minlength=self.n_classes_)
        k = int(np.argmin(counts))
        if counts[k] == 0:
            raise ValueError(f"class {_label(self.classes_[k])!r} has no row of positive weight: give it a weight, or drop "
                             f"its rows")
        if counts[k] == 1:
            warnings.warn(f"class {_label(self.classes_[k])!r} has one row (of positive weight): the tree can hardly learn "
                          f"it; give it more rows or merge it with another class", UserWarning, stacklevel=3)
        return weights


def _label(value):
    """A class label as the user wrote it (a numpy scalar as its Python value)."""
    return value.item() if hasattr(value, "item") else value
