"""Loading a dataset, of the registries or a file dataset: its entry (:func:`get_info`), its CSV found in
``data_home=``, the task's data directory (:data:`~srtopt.datasets.registry.DATA_ENV`) or the download
cache, checked against the registry's sha256 on every load."""

from __future__ import annotations

import io
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from .._io import read_regular_file
from .build import ChecksumError, _sha256
from .download import _task_cache, fetch
from .files import is_file_dataset, load_file_dataset
from .registry import _ALL, DATA_ENV, Dataset, DatasetInfo, registry_info

__all__ = ["get_info", "load"]


def get_info(slug: str) -> DatasetInfo:
    """The registry entry of dataset ``slug``.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS` or :data:`CLASSIFICATION_DATASETS`, or the name of a file
        dataset (:func:`~srtopt.datasets.files.file_dataset`: its file is read and checked).

    Returns
    -------
    DatasetInfo
        Its registry entry.

    Raises
    ------
    ValueError
        If ``slug`` is not a dataset of the registry nor a file dataset's name.
    """
    if is_file_dataset(slug):
        return load_file_dataset(slug).info
    return registry_info(slug)


def _explicit_home(data_home, info: DatasetInfo) -> Path | None:
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get(DATA_ENV[info.task])
    return Path(env).expanduser() if env else None


def load(slug: str, data_home=None, *, download: bool = True) -> Dataset:
    """Load dataset ``slug`` as a float array ``X`` (N, p) and ``y`` (N,): float for a regression
    dataset, the class labels as text (str) for a classification dataset.

    Raises :class:`ValueError` for an unknown slug, :class:`FileNotFoundError`
    when the file is missing (and cannot or may not be downloaded) and
    :class:`ChecksumError` (a ValueError) when its sha256 is not the
    registry's.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS` or :data:`CLASSIFICATION_DATASETS`, or the name of a file dataset
        (:func:`~srtopt.datasets.files.file_dataset`; ``data_home`` and ``download`` do not apply).
    data_home : str, path-like or None, default=None
        Directory holding ``<slug>.csv``; None: the directory in the task's environment variable
        (:data:`DATA_ENV`: ``$SRTOPT_DATA``, ``$SRTOPT_CLASSIFICATION_DATA``) when set, else the
        download cache.
    download : bool, default=True
        Whether a file missing from the cache is downloaded (:func:`fetch`); never for ``data_home``
        or the environment variable's directory.

    Returns
    -------
    Dataset
        X (N, p) and y (N,) as read-only arrays, the feature names, the registry entry and the path.

    Raises
    ------
    ValueError
        If ``slug`` is unknown, or the file is not a regular file, is larger than the registry's size or
        has an unexpected shape or header.
    FileNotFoundError
        If the file is missing from ``data_home`` or the environment variable's directory, or from the cache with
        ``download=False``; :class:`DatasetDownloadError` (a FileNotFoundError) if the download fails.
    ChecksumError
        If the file's (or the built CSV's) sha256 is not the registry's.
    DatasetCacheError
        If a download is needed and the cache is not a writable directory.
    """
    if is_file_dataset(slug):
        return load_file_dataset(slug)
    info = registry_info(slug)
    home = _explicit_home(data_home, info)
    if home is not None:
        path = home / info.filename
        if not path.is_file():
            raise FileNotFoundError(
                f"dataset {slug!r}: no file {path} (the data directory comes from "
                f"{'data_home=' if data_home is not None else DATA_ENV[info.task]}; "
                f"without it the file is downloaded into {_task_cache(info)})"
            )
    else:
        path = _task_cache(info) / info.filename
        if not path.is_file():
            if not download:
                raise FileNotFoundError(f"dataset {slug!r}: no file {path} and download=False")
            path = fetch(slug)
    return _load_file(str(path), info.sha256, slug, os.stat(path).st_mtime_ns)


@lru_cache(maxsize=32)
def _load_file(path: str, sha256: str, slug: str, mtime_ns: int) -> Dataset:
    info = _ALL[slug]
    data = read_regular_file(path, info.size, f"dataset {slug!r} file")
    got = _sha256(data)
    if got != sha256:
        raise ChecksumError(
            f"dataset {slug!r}: checksum mismatch for {path}: expected sha256 {sha256}, "
            f"got {got} (delete the file to download it again, or restore the original)"
        )
    header = data.split(b"\n", 1)[0].decode("utf-8").strip().split(",")
    if info.task == "classification":
        lines = data.decode("utf-8").split("\n")[1:]
        rows = [line.rsplit(",", 1) for line in lines if line]
        X = np.loadtxt([row[0] for row in rows], delimiter=",", dtype=float, ndmin=2)
        y = np.array([row[-1] for row in rows], dtype=str)
    else:
        values = np.loadtxt(io.BytesIO(data), delimiter=",", skiprows=1, dtype=float, ndmin=2)
        X = np.ascontiguousarray(values[:, :-1])
        y = np.ascontiguousarray(values[:, -1])
    X.setflags(write=False)
    y.setflags(write=False)
    if X.shape != (info.n_rows, info.n_features) or header[-1] != "target":
        raise ValueError(f"dataset {slug!r}: unexpected shape {X.shape} in {path}")
    return Dataset(X=X, y=y, feature_names=header[:-1], info=info, path=Path(path))
