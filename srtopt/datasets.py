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
"""

from __future__ import annotations

import dataclasses
import hashlib
import http.client
import io
import json
import os
import tempfile
import time
import urllib.error
import urllib.request
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from . import _class_sources
from ._io import atomic_write, read_regular_file

__all__ = [
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
    "dataset_names",
    "fetch",
    "get_info",
    "load",
    "source_limit",
    "source_url",
    "source_urls",
]

#: Base URL of the raw source files; ``{base}/{repo}/{commit}/{path}``.
#: Overridden by the ``SRTOPT_SOURCE_URL`` environment variable when set.
SOURCE_BASE_URL = "https://raw.githubusercontent.com"
DOWNLOAD_TIMEOUT = 60.0  # seconds, per network operation
DOWNLOAD_DEADLINE = 600.0  # seconds, for a whole download
#: task -> the environment variable naming the directory of its CSV files
DATA_ENV = {"regression": "SRTOPT_DATA", "classification": "SRTOPT_CLASSIFICATION_DATA"}


class ChecksumError(ValueError):
    """A dataset file (or the file built from a download) has the wrong sha256."""


class DatasetDownloadError(FileNotFoundError):
    """The source file of a dataset could not be downloaded."""


class DatasetCacheError(ValueError):
    """The download cache is not a writable directory."""


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


def get_info(slug: str) -> DatasetInfo:
    """The registry entry of dataset ``slug``.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS`.

    Returns
    -------
    DatasetInfo
        Its registry entry.

    Raises
    ------
    ValueError
        If ``slug`` is not a dataset of the registry.
    """
    try:
        return _ALL[slug]
    except KeyError:
        raise ValueError(
            f"unknown dataset {slug!r}; valid datasets: {', '.join(DATASETS)}; classification: "
            f"{', '.join(CLASSIFICATION_DATASETS)}"
        ) from None


def cache_dir() -> Path:
    """The download cache: ``$SRTOPT_CACHE`` or ``~/.cache/srtopt``."""
    env = os.environ.get("SRTOPT_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "srtopt"


def _task_cache(info: DatasetInfo) -> Path:
    """Where the cache keeps ``info``'s CSV: the classification files in a folder of their own."""
    return cache_dir() / "classification" if info.task == "classification" else cache_dir()


def source_url(slug: str, base_url: str | None = None) -> str:
    """The URL of the (first) source file of ``slug``: ``{base}/{source_repo}/{source_commit}/{source_path}``.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS`.
    base_url : str or None, default=None
        The base; None: ``$SRTOPT_SOURCE_URL`` when set, else :data:`SOURCE_BASE_URL`.

    Returns
    -------
    str
        The URL.

    Raises
    ------
    ValueError
        If ``slug`` is not a dataset of the registry.
    """
    return source_urls(slug, base_url)[0]


def source_urls(slug: str, base_url: str | None = None) -> list[str]:
    """The URLs of every source file of ``slug`` (see :func:`source_url`), in the order their rows are joined.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS` or :data:`CLASSIFICATION_DATASETS`.
    base_url : str or None, default=None
        The base; None: ``$SRTOPT_SOURCE_URL`` when set, else :data:`SOURCE_BASE_URL`.

    Returns
    -------
    list of str
        The URLs.

    Raises
    ------
    ValueError
        If ``slug`` is not a dataset of the registries.
    """
    info = get_info(slug)
    base = (base_url or os.environ.get("SRTOPT_SOURCE_URL") or SOURCE_BASE_URL).rstrip("/")
    return [f"{base}/{info.source_repo}/{info.source_commit}/{path}" for path, _ in info.source_files]


def source_limit(slug: str) -> int:
    """The most bytes a download of one of ``slug``'s source files may have: 4 times the CSV's size
    (the registry's) plus 64 KiB; every source format is less than 2.5 times its CSV.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS`.

    Returns
    -------
    int
        The limit in bytes.

    Raises
    ------
    ValueError
        If ``slug`` is not a dataset of the registry.
    """
    return 4 * get_info(slug).size + 2**16


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------

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
        A dataset name of :data:`DATASETS` or :data:`CLASSIFICATION_DATASETS`.
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
    info = get_info(slug)
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


# --------------------------------------------------------------------------
# Download + transformation
# --------------------------------------------------------------------------

def _download(url: str, slug: str, partial) -> bytes:
    """Stream ``url`` into the binary file ``partial`` and return its bytes: at most
    :func:`source_limit` of them, in at most ``DOWNLOAD_DEADLINE`` seconds."""
    limit, give_up = source_limit(slug), time.monotonic() + DOWNLOAD_DEADLINE
    failed = f"dataset {slug!r}: download of {url} failed"
    try:
        with urllib.request.urlopen(url, timeout=min(DOWNLOAD_TIMEOUT, DOWNLOAD_DEADLINE)) as response:
            length = _content_length(response.headers.get("Content-Length"), failed)
            if length is not None and length > limit:
                raise DatasetDownloadError(f"{failed}: the server announces {length} bytes, more than the "
                                           f"{limit} its source file can have")
            while chunk := response.read1(2**16):
                partial.write(chunk)
                if partial.tell() > limit:
                    raise DatasetDownloadError(f"{failed}: more than the {limit} bytes its source file can "
                                               f"have")
                if time.monotonic() > give_up:
                    raise DatasetDownloadError(f"{failed}: not finished after {DOWNLOAD_DEADLINE:g} s "
                                               f"({partial.tell()} bytes received)")
    except DatasetDownloadError:
        raise
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        raise DatasetDownloadError(f"{failed}: {exc}") from exc
    if length is not None and partial.tell() != length:
        raise DatasetDownloadError(f"{failed}: interrupted after {partial.tell()} of {length} bytes")
    partial.seek(0)
    return partial.read()


def _content_length(text, failed: str) -> int | None:
    if text is None:
        return None
    if not text.strip().isdigit():
        raise DatasetDownloadError(f"{failed}: the server sent an invalid Content-Length {text!r}")
    return int(text)


def _writable_cache(directory: Path, slug: str) -> Path:
    """``directory``, created if needed, once a file can be created in it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
    except OSError as exc:
        raise DatasetCacheError(
            f"dataset {slug!r}: the download cache {directory} is not a writable directory "
            f"({exc.strerror or exc}); set SRTOPT_CACHE to one, or SRTOPT_DATA to a directory "
            f"holding {DATASETS[slug].filename}") from None
    return directory


def fetch(slug: str, *, cache: Path | str | None = None, base_url: str | None = None) -> Path:
    """Download the source files of ``slug``, transform them, check and cache the CSV.

    Returns the path of the cached CSV.  Nothing is left in the cache unless
    the built CSV has the registry's sha256.  The cache is checked to be a
    writable directory before anything is downloaded.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS` or :data:`CLASSIFICATION_DATASETS`.
    cache : str, path-like or None, default=None
        The directory to write ``<slug>.csv`` to (created if needed); None: :func:`cache_dir` (its
        ``classification`` folder for a classification dataset).
    base_url : str or None, default=None
        Base URL of the source files (see :func:`source_url`).

    Returns
    -------
    pathlib.Path
        The path of the cached CSV.

    Raises
    ------
    ValueError
        If ``slug`` is not a dataset of the registry.
    DatasetCacheError
        If ``cache`` is not a writable directory.
    DatasetDownloadError
        If the download fails, is larger than :func:`source_limit` or takes longer than
        ``DOWNLOAD_DEADLINE`` seconds.
    ChecksumError
        If the downloaded file cannot be transformed or the built CSV has the wrong sha256.
    """
    info = get_info(slug)
    target_dir = _writable_cache(Path(cache).expanduser() if cache is not None else _task_cache(info), slug)
    urls = source_urls(slug, base_url)
    raws = []
    for url in urls:
        with tempfile.TemporaryFile(dir=target_dir) as partial:  # nameless: never left behind
            raws.append(_download(url, slug, partial))
    try:
        csv_bytes = build_csv(slug, raws[0] if len(raws) == 1 else raws)
    except ChecksumError:
        raise
    except Exception as exc:  # a truncated or foreign file fails to parse
        raise ChecksumError(
            f"dataset {slug!r}: the {'file' if len(urls) == 1 else 'files'} downloaded from "
            f"{', '.join(urls)} could not be transformed ({type(exc).__name__}: {exc}); "
            f"{_source_note(info, raws)}"
        ) from exc
    return atomic_write(target_dir / info.filename, csv_bytes)


def _source_note(info: DatasetInfo, raws) -> str:
    """Whether the source files match the registry's sha256, for an error message."""
    wrong = [f"{path} has sha256 {_sha256(raw)}, the registry's is {sha256}"
             for (path, sha256), raw in zip(info.source_files, raws) if _sha256(raw) != sha256]
    if not wrong:
        return f"the source {'file matches' if len(raws) == 1 else 'files match'} the registry's source sha256"
    return "the source file " + "; ".join(wrong)


def build_csv(slug: str, raw) -> bytes:
    """Turn the bytes of the source files of ``slug`` into the dataset's CSV.

    Ends with the sha256 check: raises :class:`ChecksumError` when the result
    is not byte-identical to the registry's file.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS` or :data:`CLASSIFICATION_DATASETS`.
    raw : bytes or sequence of bytes
        The content of the dataset's source file; for a dataset of several source files
        (:attr:`DatasetInfo.source_files`), the content of each, in that order.

    Returns
    -------
    bytes
        The CSV: a header row, the feature columns and ``target`` last.

    Raises
    ------
    ValueError
        If ``slug`` is unknown, the number of source files is wrong, or ``raw`` cannot be parsed
        (wrong number of columns, unknown codes, ...).
    ChecksumError
        If the CSV built is not byte-identical to the registry's file.
    """
    info = get_info(slug)
    raws = [raw] if isinstance(raw, (bytes, bytearray)) else list(raw)
    if len(raws) != len(info.source_files):
        raise ValueError(f"dataset {slug!r} has {len(info.source_files)} source files, {len(raws)} given")
    names = list(info.feature_names) + ["target"]
    if info.task == "classification":
        frame = _class_sources.PARSERS[slug](raws, info)
        if list(frame.columns) != names:
            raise ValueError(f"the columns parsed ({', '.join(map(str, frame.columns))}) are not the "
                             f"registry's ({', '.join(names)})")
        csv_bytes = frame.to_csv(index=False, lineterminator="\n").encode("utf-8")  # integer columns stay integer
    else:
        frame = _PARSERS[slug](raws[0], info)
        if frame.shape[1] != len(names):
            raise ValueError(f"{frame.shape[1]} columns parsed, {len(names)} expected")
        frame.columns = names
        csv_bytes = _to_csv_bytes(frame)
    got = _sha256(csv_bytes)
    if got != info.sha256:
        raise ChecksumError(
            f"dataset {slug!r}: checksum mismatch of the built CSV: expected sha256 "
            f"{info.sha256}, got {got} ({_source_note(info, raws)}); nothing was cached"
        )
    return csv_bytes


def _to_csv_bytes(frame) -> bytes:
    """Columns whose values are all integers are written as integers, the
    others with Python's shortest float repr (the shipped files' format)."""
    import pandas as pd

    out = {}
    for name in frame.columns:
        col = pd.to_numeric(frame[name], errors="raise").astype(float)
        values = col.to_numpy()
        if np.all(np.isfinite(values)) and np.all(values == np.round(values)):
            out[name] = col.astype(np.int64)
        else:
            out[name] = col
    return pd.DataFrame(out).to_csv(index=False, lineterminator="\n").encode("utf-8")


# ---- parsers: source bytes -> DataFrame (features..., target) --------------

def _text(raw: bytes) -> str:
    return raw.decode("utf-8-sig", errors="strict").replace("\r\n", "\n").replace("\r", "\n")


def _read_table(raw: bytes, sep, *, skiprows=0, na_values=None):
    import pandas as pd

    frame = pd.read_csv(
        io.StringIO(_text(raw)), sep=sep, header=None, skiprows=skiprows,
        na_values=na_values, skip_blank_lines=True, skipinitialspace=True,
        engine="python" if sep not in (",", "\t") else "c",
    )
    return frame.dropna(axis=1, how="all")  # trailing separators


def _parse_abalone(raw, info):
    frame = _read_table(raw, ",", skiprows=1)  # the header line added in the source repo
    if frame.shape[1] != 9:
        raise ValueError(f"{frame.shape[1]} columns, 9 expected")
    codes = {"M": 1, "F": 2, "I": 3}
    sex = frame[0].astype(str).str.strip().map(codes)
    if sex.isna().any():
        raise ValueError("unknown sex code")
    frame[0] = sex
    return frame


def _parse_plain(sep, n_columns):
    def parse(raw, info):
        frame = _read_table(raw, sep)
        if frame.shape[1] != n_columns:
            raise ValueError(f"{frame.shape[1]} columns, {n_columns} expected")
        return frame
    return parse


def _parse_auto_mpg(raw, info):
    import pandas as pd

    rows = []
    for line in _text(raw).split("\n"):
        numbers = line.partition('"')[0].split()  # the quoted car name is dropped
        if not numbers:
            continue
        if len(numbers) != 8:
            raise ValueError(f"{len(numbers)} numeric fields, 8 expected: {line!r}")
        rows.append([np.nan if v == "?" else float(v) for v in numbers])
    frame = pd.DataFrame(rows).dropna(axis=0, how="any")  # 6 rows lack horsepower
    # mpg first in the source; features cylinders..origin, then target mpg
    return frame[[1, 2, 3, 4, 5, 6, 7, 0]].reset_index(drop=True)


def _parse_header_format(raw, *, comment: str):
    """KEEL .dat and ARFF: '@' header lines, then comma separated data."""
    import pandas as pd

    lines = _text(raw).split("\n")
    attributes, start = [], None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith(comment):
            continue
        lower = stripped.lower()
        if lower.startswith("@attribute"):
            attributes.append(stripped.split()[1])
        elif lower.startswith("@data"):
            start = index + 1
            break
    if start is None or not attributes:
        raise ValueError("no @attribute/@data header")
    body = "\n".join(
        ln for ln in lines[start:] if ln.strip() and not ln.strip().startswith(comment)
    )
    frame = pd.read_csv(io.StringIO(body), header=None, skipinitialspace=True, na_values=["?"])
    frame = frame.dropna(axis=1, how="all")
    if frame.shape[1] != len(attributes):
        raise ValueError(f"{frame.shape[1]} data columns, {len(attributes)} attributes")
    return frame


def _parse_keel(raw, info):
    return _parse_header_format(raw, comment="%")


def _parse_arff(raw, info):
    return _parse_header_format(raw, comment="%")


def _parse_computer(raw, info):
    import pandas as pd

    frame = _read_table(raw, ",")
    if frame.shape[1] != 10:
        raise ValueError(f"{frame.shape[1]} columns, 10 expected")
    vendors = [n[len("vendor_"):] for n in info.feature_names if n.startswith("vendor_")]
    vendor = frame[0].astype(str).str.strip().str.lower()
    unknown = sorted(set(vendor) - set(vendors))
    if unknown:
        raise ValueError(f"unknown vendors {unknown}")
    onehot = pd.DataFrame({v: (vendor == v).astype(int) for v in vendors})
    numeric = frame[[2, 3, 4, 5, 6, 7, 8, 9]].reset_index(drop=True)  # ..., PRP, ERP
    return pd.concat([onehot, numeric], axis=1, ignore_index=True)


def _parse_lpga2009(raw, info):
    frame = _read_table(raw, ",")
    if frame.shape[1] != 14:
        raise ValueError(f"{frame.shape[1]} columns, 14 expected")
    frame.columns = range(1, 15)
    return frame[[2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 8]]


_PARSERS = {
    "abalone": _parse_abalone,
    "ailerons": _parse_plain(",", 41),
    "airfoil": _parse_plain("\t", 6),
    "auto_mpg": _parse_auto_mpg,
    "compactiv": _parse_keel,
    "computer": _parse_computer,
    "cpu_small": _parse_arff,
    "delta_ailerons": _parse_arff,
    "elevators": _parse_arff,
    "friedman": _parse_plain(r"\s+", 11),
    "housing": _parse_plain(r"\s+", 14),
    "kin8nm": _parse_plain(",", 9),
    "lpga2009": _parse_lpga2009,
    "puma": _parse_keel,
    "yacht": _parse_plain(r"\s+", 7),
}
assert set(_PARSERS) == set(DATASETS) and set(_class_sources.PARSERS) == set(CLASSIFICATION_DATASETS)
