"""Tables as the soft trees take them: a DataFrame with text, categorical or boolean columns, or any X with
missing cells, is encoded into numbers (:class:`srtopt.encoding.TableEncoder`, ``encoder_``) before the fit and
at every prediction.  ``feature_names_in_`` and ``n_features_in_`` stay the table's own columns (scikit-learn's
meaning); the tree's columns, which its splits and leaves weigh and its readers name, are the encoder's
(:func:`tree_columns`).  A table of finite numbers needs no encoder, and its fit is what it always was."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from ..encoding import TableEncoder, as_values, needs_encoding


def encoded_for_fit(X, encoder=None):
    """(X as the tree reads it, the fitted encoder or None when X needs none); with ``encoder``, a fitted
    :class:`~srtopt.encoding.TableEncoder` of the table the rows X were drawn from, X encoded by it whatever
    its own content (a fold whose rows hold no missing cell reads the columns of the whole table)."""
    if encoder is not None and not isinstance(encoder, TableEncoder):
        raise TypeError(f"encoder must be a fitted srtopt.encoding.TableEncoder or None, got "
                        f"{type(encoder).__name__}")
    if encoder is None and not needs_encoding(X):
        return X, None
    _check_two_dimensional(X)
    if encoder is None:
        encoder = TableEncoder().fit(X)
    encoded = encoder.transform(X)
    if encoded.shape[1] == 0:
        raise ValueError("X has no column left to learn from once encoded (each text column has one category)")
    return encoded, encoder


def as_table(X):
    """X as its rows are taken and encoded: a DataFrame or an array as it is, a list as the array the encoder
    reads it as (:func:`srtopt.encoding.as_values`)."""
    return X if hasattr(X, "columns") or isinstance(X, np.ndarray) else as_values(X)


def keep_input_columns(estimator, encoder) -> None:
    """``n_features_in_`` and ``feature_names_in_`` of the table the encoder was fitted on (the checks of the
    encoded numbers set them to the encoded columns')."""
    if encoder is None:
        return
    estimator.n_features_in_ = len(encoder.columns_)
    if encoder.named_:
        estimator.feature_names_in_ = np.array(encoder.columns_, dtype=object)
    else:
        estimator.__dict__.pop("feature_names_in_", None)


def encoded_for_predict(estimator, X):
    """X of predict/apply with the encoder of the fit applied: its columns checked against the fit's (by name
    for a DataFrame), then encoded; X itself when the fit had no encoder."""
    encoder = getattr(estimator, "encoder_", None)
    if encoder is None:
        return X
    _check_two_dimensional(X)
    validate_data(estimator, X, reset=False, skip_check_array=True)
    return encoder.transform(X)


def tree_columns(estimator) -> list[str]:
    """The names of the tree's columns: the encoder's, else the feature names of the fit, else x0, x1, ..."""
    encoder = getattr(estimator, "encoder_", None)
    if encoder is not None:
        return encoder.names
    names = getattr(estimator, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else [f"x{j}" for j in range(estimator.n_features_in_)]


def _check_two_dimensional(X) -> None:
    if not hasattr(X, "columns") and np.ndim(X) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got {np.ndim(X)}-D; reshape a single feature "
                         f"with X.reshape(-1, 1)")


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
