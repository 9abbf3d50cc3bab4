"""The 15 regression datasets of the paper's experiments and 20 classification datasets.

The registries ship inside the package: :data:`DATASETS` (the paper's 15
regression datasets, ``srtopt/data/datasets.json``) and
:data:`CLASSIFICATION_DATASETS` (20 UCI/KEEL classification datasets,
``srtopt/data/datasets_classification.json``); an entry's ``task`` says which.
Every dataset is one CSV file ``<slug>.csv``: a header row, the numeric feature
columns, then the response (regression) or the class label as text
(classification) in the last column, ``target``.  :func:`load` finds that file in

1. ``data_home=`` when given, else the directory in the environment variable of
   the dataset's task when set: ``SRTOPT_DATA`` (regression),
   ``SRTOPT_CLASSIFICATION_DATA`` (classification) (the file must be there:
   nothing is downloaded into a directory you point to);
2. otherwise the cache directory (``SRTOPT_CACHE``, default
   ``~/.cache/srtopt``; classification files in its ``classification``
   folder).  A file missing from the cache is rebuilt from the original public
   source files: downloaded from ``SOURCE_BASE_URL`` (overridable with
   ``SRTOPT_SOURCE_URL``), streamed to a partial file in the cache (at most
   :func:`source_limit` bytes each, within ``DOWNLOAD_DEADLINE`` seconds),
   transformed as documented in the registry, checked against the CSV's sha256
   and only then moved into the cache atomically (temporary file in the same
   directory, fsync, ``os.replace``).

The sha256 of the CSV is checked on every load, so a result is never computed
on a file that differs from the paper's.

A CSV file of one's own runs beside them as a file dataset (:func:`file_dataset`: its path, target column,
task and sha256 make its name; ``srtopt bench --datasets my.csv --target y``).  :func:`make_piecewise`
makes the small synthetic data of the docstring examples, :func:`example_tree` the tree fitted on them.

Modules: :mod:`.registry` (the registries' entries), :mod:`.loading` (:func:`load`), :mod:`.files`
(file datasets), :mod:`.download` (the cache and :func:`fetch`), :mod:`.build` (the CSV built from the
source files, with the parsers of the private modules ``_regression_sources`` and
``_classification_sources``).
"""

from .build import ChecksumError, build_csv
from .download import (
    SOURCE_BASE_URL,
    DatasetCacheError,
    DatasetDownloadError,
    cache_dir,
    fetch,
    source_limit,
    source_url,
    source_urls,
)
from .files import dataset_label, dataset_task, file_dataset, is_file_dataset
from .loading import get_info, load
from .registry import CLASSIFICATION_DATASETS, DATA_ENV, DATASETS, Dataset, DatasetInfo, dataset_names
from .synthetic import example_tree, make_piecewise
from .tabular import (PANEL_DATASETS, PANEL_ENV, TABULAR_DATASETS, TABULAR_ENV, TableInfo, build_table, load_table,
                      read_table, table_csv, write_table)

__all__ = [
    "PANEL_DATASETS",
    "PANEL_ENV",
    "TABULAR_DATASETS",
    "TABULAR_ENV",
    "TableInfo",
    "build_table",
    "load_table",
    "read_table",
    "table_csv",
    "write_table",
    "CLASSIFICATION_DATASETS",
    "DATASETS",
    "DATA_ENV",
    "ChecksumError",
    "Dataset",
    "DatasetDownloadError",
    "DatasetInfo",
    "DatasetCacheError",
    "SOURCE_BASE_URL",
    "build_csv",
    "cache_dir",
    "dataset_label",
    "dataset_names",
    "dataset_task",
    "example_tree",
    "fetch",
    "file_dataset",
    "get_info",
    "is_file_dataset",
    "load",
    "make_piecewise",
    "source_limit",
    "source_url",
    "source_urls",
]
