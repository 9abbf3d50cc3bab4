"""The inputs of the estimators: :class:`InputsMixin` holds an estimator's fitted input pipeline
(:class:`srtopt.inputs.InputSchema`, ``inputs_``: the table's columns, the protected group's column, the encoding
of a table with text or missing cells, the scaling) and reads scikit-learn's ``n_features_in_`` and
``feature_names_in_`` (the table's own columns) from it.  The tree's columns, which its splits and leaves weigh
and its readers name, are the encoder's (:func:`tree_columns`); the user's constraints name the table's columns
and are mapped to the tree's (:func:`by_column_name`)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..inputs import InputSchema


class InputsMixin:
    """The input pipeline of an estimator (:class:`srtopt.inputs.InputSchema`, ``inputs_``): fitted by
    :meth:`_fit_inputs` and :meth:`_scale_inputs` in ``fit``, applied to every X of the prediction methods by
    :meth:`_scaled`; the attributes scikit-learn and the readers know are read from it."""

    def _fit_inputs(self, X, sensitive_features=None, encoder=None, tables=True):
        """(the tree's columns of X, the group of each row or None, the table as inner fits take its rows again):
        ``inputs_`` fitted without its scaling."""
        self.inputs_, matrix, groups, table = InputSchema.fit(type(self).__name__, X, sensitive_features,
                                                              encoder=encoder, tables=tables)
        return matrix, groups, table

    def _scale_inputs(self, matrix, y=None, weights=None):
        """The scaled training columns; ``inputs_`` with the scaling of ``matrix`` (and y when given)."""
        self.inputs_, scaled = self.inputs_.scaled(matrix, y, weights)
        return scaled

    def _scaled(self, X):
        """The scaled columns of the rows X of a prediction method, checked against the fit."""
        check_is_fitted(self, "inputs_")
        return self.inputs_.transform(X)

    @property
    def n_features_in_(self) -> int:
        """Number of features seen in ``fit`` (the table's columns; the protected group's is not one)."""
        return self._inputs().n_columns

    @property
    def feature_names_in_(self):
        """The column names of a DataFrame X, when they were all strings; absent otherwise."""
        names = self._inputs().names
        if names is None:
            raise AttributeError(f"{type(self).__name__} was fitted on an X without feature names")
        return np.array(names, dtype=object)

    @property
    def scaler_(self):
        """The training statistics of the internal scaling (x_min, x_scale, y_mean, y_std)."""
        return self._inputs().scaling

    @property
    def encoder_(self):
        """The encoding of a table with text or missing cells (None for a table of numbers)."""
        return self._inputs().encoder

    @property
    def sensitive_feature_name_(self):
        """The column of X named by ``sensitive_features`` (not a feature), or None."""
        return self._inputs().group

    def _inputs(self) -> InputSchema:
        inputs = self.__dict__.get("inputs_")
        if inputs is None:
            raise AttributeError(f"{type(self).__name__} is not fitted yet (no inputs_)")
        return inputs


def tree_columns(estimator) -> list[str]:
    """The names of the tree's columns: the encoder's, else the feature names of the fit, else x0, x1, ..."""
    encoder = getattr(estimator, "encoder_", None)
    if encoder is not None:
        return encoder.names
    names = getattr(estimator, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else [f"x{j}" for j in range(estimator.n_features_in_)]


def by_column_name(terms, estimator) -> tuple:
    """The constraint terms in the tree's columns when an encoder makes them differ from the table's: a
    ``monotonic_cst`` of one sign per table column becomes signs by column name (a numeric column keeps its
    name; a sign on a text column is then refused by name), and a feature subset of table columns (names or
    positions; a feature budget's) keeps every encoded column of each."""
    from ..models.constraints import FeatureSubset, Monotone

    encoder = getattr(estimator, "encoder_", None)
    if encoder is None:
        return terms
    out = []
    for term in terms:
        if isinstance(term, Monotone) and not isinstance(term.signs, dict):
            if len(term.signs) != len(encoder.columns_):
                raise ValueError(f"monotonic_cst has {len(term.signs)} entries, but X has {len(encoder.columns_)} "
                                 f"columns: give one sign (-1, 0 or 1) per column, or a dict by column name")
            term = Monotone({name: sign for name, sign in zip(encoder.columns_, term.signs) if sign})
        elif type(term) is FeatureSubset:
            positions = [encoder.columns_.index(c) if isinstance(c, str) and c in encoder.columns_ else c
                         for c in term.keep]
            term = FeatureSubset(input_columns_to_tree(estimator, positions))
        out.append(term)
    return tuple(out)


def input_columns_to_tree(estimator, columns) -> list[int]:
    """The tree's columns of the input columns ``columns`` (indices): each input column's encoded ones."""
    encoder = getattr(estimator, "encoder_", None)
    if encoder is None:
        return list(columns)
    return [int(c) for c in np.flatnonzero(np.isin(encoder.groups, list(columns)))]
