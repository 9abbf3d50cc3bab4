"""The registries of the datasets, shipped inside the package: :data:`DATASETS` (the paper's 15
regression datasets, ``srtopt/data/datasets.json``) and :data:`CLASSIFICATION_DATASETS` (20 UCI/KEEL
classification datasets, ``srtopt/data/datasets_classification.json``); an entry's ``task`` says
which.  A :class:`Dataset` is what :func:`~srtopt.datasets.loading.load` returns."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["CLASSIFICATION_DATASETS", "DATASETS", "DATA_ENV", "Dataset", "DatasetInfo", "dataset_names",
           "registry_info"]

#: task -> the environment variable naming the directory of its CSV files
DATA_ENV = {"regression": "SRTOPT_DATA", "classification": "SRTOPT_CLASSIFICATION_DATA"}


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """The registry entry of a dataset (one object of ``srtopt/data/datasets.json`` or
    ``srtopt/data/datasets_classification.json``).

    Parameters
    ----------
    slug : str
        Short name, e.g. "abalone"; the CSV file is ``<slug>.csv``.
    name : str
        Display name.
    n_rows : int
        Number of rows N of the CSV.
    n_features : int
        Number of feature columns p.
    target : str
        The source's name of the response or class (written as the column ``target``).
    sha256 : str
        sha256 hex digest of the CSV.
    size : int
        Bytes of the CSV.
    provenance : str
        Where the data come from.
    source_repo : str
        GitHub repository ("owner/name") holding the source file.
    source_path : str
        Path of the source file in that repository.
    source_commit : str
        Commit of ``source_repo`` the source file is taken from.
    source_sha256 : str
        sha256 hex digest of the source file.
    source_format : str
        Description of the source file's format.
    transformations : str
        How the source file becomes the CSV.
    feature_names : tuple of str
        Names of the p feature columns, in order.
    task : {"regression", "classification"}, default="regression"
        What the dataset's ``target`` is: a number or a class label.
    classes : tuple of str, default=()
        The class labels (classification), in sorted text order.
    extra_source_paths : tuple of str, default=()
        Further source files in ``source_repo`` whose rows follow those of ``source_path``.
    extra_source_sha256 : tuple of str, default=()
        Their sha256 hex digests.
    """

    slug: str
    name: str
    n_rows: int
    n_features: int
    target: str
    sha256: str
    size: int  # bytes of the CSV
    provenance: str
    source_repo: str
    source_path: str
    source_commit: str
    source_sha256: str
    source_format: str
    transformations: str
    feature_names: tuple[str, ...]
    task: str = "regression"
    classes: tuple[str, ...] = ()
    extra_source_paths: tuple[str, ...] = ()
    extra_source_sha256: tuple[str, ...] = ()

    @property
    def filename(self) -> str:
        return f"{self.slug}.csv"

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def source_files(self) -> tuple[tuple[str, str], ...]:
        """(path, sha256) of each source file, in the order their rows are joined."""
        return ((self.source_path, self.source_sha256), *zip(self.extra_source_paths, self.extra_source_sha256))


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A loaded dataset; unpacks as ``X, y, feature_names = load(slug)``.

    Parameters
    ----------
    X : ndarray of shape (N, p)
        The features, float, read-only.
    y : ndarray of shape (N,)
        The response, float (regression), or the class labels, str (classification); read-only.
    feature_names : list of str
        The p feature column names of the CSV header.
    info : DatasetInfo
        The dataset's registry entry.
    path : pathlib.Path
        The CSV file that was read.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    info: DatasetInfo
    path: Path

    def __iter__(self):
        return iter((self.X, self.y, self.feature_names))

    def __len__(self) -> int:
        return 3


def _read_registry(name: str) -> dict[str, DatasetInfo]:
    text = resources.files("srtopt").joinpath(f"data/{name}").read_text("utf-8")
    out = {}
    for entry in json.loads(text)["datasets"]:
        entry = {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}
        out[entry["slug"]] = DatasetInfo(**entry)
    return out


#: slug -> :class:`DatasetInfo` of the paper's 15 regression datasets, in its (alphabetical) order.
DATASETS: dict[str, DatasetInfo] = _read_registry("datasets.json")
#: slug -> :class:`DatasetInfo` of the 20 classification datasets, binary first, then by number of classes.
CLASSIFICATION_DATASETS: dict[str, DatasetInfo] = _read_registry("datasets_classification.json")
_ALL = {**DATASETS, **CLASSIFICATION_DATASETS}


def dataset_names(task: str = "regression") -> list[str]:
    """The slugs of the datasets of ``task`` ("regression" or "classification"), in registry order.

    Parameters
    ----------
    task : {"regression", "classification"}, default="regression"
        The task.

    Returns
    -------
    list of str
        The slugs.

    Raises
    ------
    ValueError
        If ``task`` is not a task of :data:`DATA_ENV`.
    """
    if task not in DATA_ENV:
        raise ValueError(f"unknown task {task!r}; use one of {', '.join(DATA_ENV)}")
    return [slug for slug, info in _ALL.items() if info.task == task]


def registry_info(slug: str) -> DatasetInfo:
    """The entry of dataset ``slug`` in the registries, :data:`DATASETS` or :data:`CLASSIFICATION_DATASETS`;
    a ValueError listing them when it is in neither.  :func:`~srtopt.datasets.loading.get_info` knows the
    file datasets too."""
    try:
        return _ALL[slug]
    except KeyError:
        raise ValueError(
            f"unknown dataset {slug!r}; valid datasets: {', '.join(DATASETS)}; classification: "
            f"{', '.join(CLASSIFICATION_DATASETS)}; or a CSV file's dataset (srtopt.datasets.file_dataset)"
        ) from None
