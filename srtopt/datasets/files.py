"""Datasets of one's own: a CSV file with a header row, run in a bench beside the registry's datasets.

A file dataset's name (:func:`file_dataset`) is
``<absolute path>?target=<column>&task=<task>&sha256=<hex>``: the path and the target column say where
the data are and what is predicted, the task is the target's (numbers: regression; text or booleans:
classification), and the sha256 of the file's bytes pins its content.  The name is the dataset's key in a
results store, so the store says which data every run saw; :func:`load_file_dataset` (and
:func:`~srtopt.datasets.load` given such a name) checks the sha256 on every load, as for the registry's
files.  Every other column is a feature: numbers (X an array), or a table with text columns or empty cells
(X a DataFrame; a run encodes it on each training fold, :mod:`srtopt.encoding`); none infinite, the target
never missing.
"""

from __future__ import annotations

import io
import os
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, quote

import numpy as np

from .._io import exact_csv_options, read_regular_file
from .build import ChecksumError, _sha256
from .registry import CLASSIFICATION_DATASETS, Dataset, DatasetInfo

__all__ = ["dataset_label", "dataset_task", "file_dataset", "is_file_dataset", "load_file_dataset"]

MAX_BYTES = 2**31  # the largest CSV read
_FIELDS = ("target", "task", "sha256")


def is_file_dataset(name: str) -> bool:
    """Whether ``name`` is the name of a file dataset (:func:`file_dataset`), not a registry slug."""
    path, mark, query = str(name).rpartition("?")
    return bool(mark and path) and set(parse_qs(query)) == set(_FIELDS)


def file_dataset(path, target: str = "target") -> str:
    """The name of the dataset in the CSV file ``path`` that predicts the column ``target``.

    Parameters
    ----------
    path : str or path-like
        A CSV file with a header row (its separator is detected).
    target : str, default="target"
        The column to predict; every other column is a feature.

    Returns
    -------
    str
        ``<absolute path>?target=<column>&task=<task>&sha256=<hex>`` (module docstring).

    Raises
    ------
    ValueError
        If the file is not a readable CSV, lacks the column ``target``, has no other column, a feature
        column that is not numeric, or a missing or infinite value.
    FileNotFoundError
        If there is no file ``path``.
    """
    path = Path(path).expanduser().resolve()
    if not path.exists():
        raise FileNotFoundError(f"dataset file {str(path)!r} does not exist")
    data = read_regular_file(path, MAX_BYTES, "dataset file")
    task = _read(data, str(path), target)[3]
    return f"{path}?target={quote(target, safe='')}&task={task}&sha256={_sha256(data)}"


def _fields(name: str) -> tuple[Path, str, str, str]:
    """(path, target, task, sha256) of a file dataset's name."""
    path, _, query = str(name).rpartition("?")
    fields = {key: values[0] for key, values in parse_qs(query).items()}
    return Path(path), fields["target"], fields["task"], fields["sha256"]


def dataset_label(name: str) -> str:
    """How a report names a dataset: a registry slug as it is, a file dataset by its file name, target and
    the start of its sha256, e.g. ``"my.csv: y (sha256 1a2b3c4d)"``."""
    if not is_file_dataset(name):
        return name
    path, target, _, sha256 = _fields(name)
    return f"{path.name}: {target} (sha256 {sha256[:8]})"


def dataset_task(name: str) -> str:
    """The task ("regression" or "classification") of a dataset, from the registry or a file dataset's
    name (its file is not read); a name of neither counts as regression."""
    if is_file_dataset(name):
        return _fields(name)[2]
    return "classification" if name in CLASSIFICATION_DATASETS else "regression"


def load_file_dataset(name: str) -> Dataset:
    """Load the file dataset ``name`` (:func:`file_dataset`), its sha256 checked.

    Parameters
    ----------
    name : str
        A file dataset's name.

    Returns
    -------
    Dataset
        X (N, p) and y (N,) as read-only arrays (y: floats, or the class labels as text), the feature
        names, an info entry (slug: the name) and the path.

    Raises
    ------
    FileNotFoundError
        If the file is gone.
    ChecksumError
        If the file's bytes changed since the name was made (their sha256 is not the name's).
    """
    path = _fields(name)[0]
    if not path.is_file():
        raise FileNotFoundError(f"dataset {dataset_label(name)!r}: no file {path}")
    return _load(name, os.stat(path).st_mtime_ns)


@lru_cache(maxsize=8)
def _load(name: str, mtime_ns: int) -> Dataset:
    path, target, task, sha256 = _fields(name)
    data = read_regular_file(path, MAX_BYTES, "dataset file")
    got = _sha256(data)
    if got != sha256:
        raise ChecksumError(f"dataset file {str(path)!r} changed since it was named: sha256 {got}, expected "
                            f"{sha256}; name it again (a store keeps the runs of each content apart)")
    X, y, features, _ = _read(data, str(path), target)
    if isinstance(X, np.ndarray):
        X.setflags(write=False)
    y.setflags(write=False)
    classes = tuple(sorted(set(y.tolist()))) if task == "classification" else ()
    info = DatasetInfo(slug=name, name=path.name, n_rows=len(y), n_features=X.shape[1], target=target,
                       sha256=sha256, size=len(data), provenance=f"the file {path}", source_repo="",
                       source_path=str(path), source_commit="", source_sha256=sha256, source_format="CSV",
                       transformations="none", feature_names=tuple(features), task=task, classes=classes)
    return Dataset(X=X, y=y, feature_names=list(features), info=info, path=path)


def _read(data: bytes, path: str, target: str):
    """(X, y, feature names, task) of a CSV file's bytes, checked (one line per mistake); the separator is
    detected among , ; tab | (a comma when none fits, e.g. a single column)."""
    import csv

    import pandas as pd

    try:
        separator = csv.Sniffer().sniff(data[:65536].decode("utf-8", errors="replace"), delimiters=",;\t|").delimiter
    except csv.Error:
        separator = ","
    try:
        frame = pd.read_csv(io.BytesIO(data), sep=separator, **exact_csv_options())
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"dataset file {path!r} is not a readable CSV: {str(exc).splitlines()[0]}") from None
    frame.columns = [str(c) for c in frame.columns]
    if target not in frame.columns:
        raise ValueError(f"dataset file {path!r} has no column {target!r} (the target); columns: "
                         f"{', '.join(frame.columns)}")
    features = [c for c in frame.columns if c != target]
    if not features or frame.empty:
        raise ValueError(f"dataset file {path!r} has no {'feature column' if not features else 'data row'}")
    numeric = pd.api.types.is_numeric_dtype
    if frame[target].isna().any():
        raise ValueError(f"dataset file {path!r}: the target {target!r} has missing values")
    table = frame[features]
    plain = all(numeric(table[c]) and not pd.api.types.is_bool_dtype(table[c]) for c in features)
    if plain and not table.isna().any().any():
        X = np.ascontiguousarray(table.to_numpy(dtype=float))
    else:  # a table: text columns as text, empty cells missing
        X = table.reset_index(drop=True)
    numbers = [c for c in features if numeric(table[c]) and not pd.api.types.is_bool_dtype(table[c])]
    if numbers and np.isinf(table[numbers].to_numpy(dtype=float)).any():
        raise ValueError(f"dataset file {path!r} holds infinite values")
    column = frame[target]
    if numeric(column) and not pd.api.types.is_bool_dtype(column):
        y = column.to_numpy(dtype=float)
        if not np.isfinite(y).all():
            raise ValueError(f"dataset file {path!r}: the target {target!r} holds infinite values")
        return X, y, features, "regression"
    return X, column.astype(str).to_numpy(dtype=str), features, "classification"
