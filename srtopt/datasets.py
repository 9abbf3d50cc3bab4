"""The 15 regression datasets of the paper's experiments.

The registry (:data:`DATASETS`) ships inside the package as
``srtopt/data/datasets.json``.  Every dataset is one CSV file ``<slug>.csv``:
a header row, the feature columns, then the response in the last column,
``target``.  :func:`load` finds that file in

1. ``data_home=`` when given, else the directory in the ``SRTOPT_DATA``
   environment variable when set (the file must be there: nothing is
   downloaded into a directory you point to);
2. otherwise the cache directory (``SRTOPT_CACHE``, default
   ``~/.cache/srtopt``).  A file missing from the cache is rebuilt from the
   original public source file: downloaded from ``SOURCE_BASE_URL``
   (overridable with ``SRTOPT_SOURCE_URL``), streamed to a partial file in the
   cache (at most :func:`source_limit` bytes, within ``DOWNLOAD_DEADLINE``
   seconds), transformed as documented in the registry, checked against the
   CSV's sha256 and only then moved into the cache atomically (temporary file
   in the same directory, fsync, ``os.replace``).

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

from ._io import atomic_write, read_regular_file

__all__ = [
    "DATASETS",
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
]

#: Base URL of the raw source files; ``{base}/{repo}/{commit}/{path}``.
#: Overridden by the ``SRTOPT_SOURCE_URL`` environment variable when set.
SOURCE_BASE_URL = "https://raw.githubusercontent.com"
DOWNLOAD_TIMEOUT = 60.0  # seconds, per network operation
DOWNLOAD_DEADLINE = 600.0  # seconds, for a whole download


class ChecksumError(ValueError):
    """A dataset file (or the file built from a download) has the wrong sha256."""


class DatasetDownloadError(FileNotFoundError):
    """The source file of a dataset could not be downloaded."""


class DatasetCacheError(ValueError):
    """The download cache is not a writable directory."""


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """The registry entry of a dataset (one object of ``srtopt/data/datasets.json``).

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
        The source's name of the response (written as the column ``target``).
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

    @property
    def filename(self) -> str:
        return f"{self.slug}.csv"


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A loaded dataset; unpacks as ``X, y, feature_names = load(slug)``.

    Parameters
    ----------
    X : ndarray of shape (N, p)
        The features, float, read-only.
    y : ndarray of shape (N,)
        The response, float, read-only.
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


def _read_registry() -> dict[str, DatasetInfo]:
    text = resources.files("srtopt").joinpath("data/datasets.json").read_text("utf-8")
    out = {}
    for entry in json.loads(text)["datasets"]:
        entry = dict(entry)
        entry["feature_names"] = tuple(entry["feature_names"])
        out[entry["slug"]] = DatasetInfo(**entry)
    return out


#: slug -> :class:`DatasetInfo`, in the paper's (alphabetical) order.
DATASETS: dict[str, DatasetInfo] = _read_registry()


def dataset_names() -> list[str]:
    return list(DATASETS)


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
        return DATASETS[slug]
    except KeyError:
        raise ValueError(
            f"unknown dataset {slug!r}; valid datasets: {', '.join(DATASETS)}"
        ) from None


def cache_dir() -> Path:
    """The download cache: ``$SRTOPT_CACHE`` or ``~/.cache/srtopt``."""
    env = os.environ.get("SRTOPT_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "srtopt"


def source_url(slug: str, base_url: str | None = None) -> str:
    """The URL of the source file of ``slug``: ``{base}/{source_repo}/{source_commit}/{source_path}``.

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
    info = get_info(slug)
    base = base_url or os.environ.get("SRTOPT_SOURCE_URL") or SOURCE_BASE_URL
    return f"{base.rstrip('/')}/{info.source_repo}/{info.source_commit}/{info.source_path}"


def source_limit(slug: str) -> int:
    """The most bytes a download of ``slug``'s source file may have: 4 times the CSV's size
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

def _explicit_home(data_home) -> Path | None:
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get("SRTOPT_DATA")
    return Path(env).expanduser() if env else None


def load(slug: str, data_home=None, *, download: bool = True) -> Dataset:
    """Load dataset ``slug`` as float arrays ``X`` (N, p) and ``y`` (N,).

    Raises :class:`ValueError` for an unknown slug, :class:`FileNotFoundError`
    when the file is missing (and cannot or may not be downloaded) and
    :class:`ChecksumError` (a ValueError) when its sha256 is not the
    registry's.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS`.
    data_home : str, path-like or None, default=None
        Directory holding ``<slug>.csv``; None: ``$SRTOPT_DATA`` when set, else the download cache.
    download : bool, default=True
        Whether a file missing from the cache is downloaded (:func:`fetch`); never for ``data_home``
        or ``$SRTOPT_DATA``.

    Returns
    -------
    Dataset
        X (N, p) and y (N,) as read-only float arrays, the feature names, the registry entry and the path.

    Raises
    ------
    ValueError
        If ``slug`` is unknown, or the file is not a regular file, is larger than the registry's size or
        has an unexpected shape or header.
    FileNotFoundError
        If the file is missing from ``data_home`` or ``$SRTOPT_DATA``, or from the cache with
        ``download=False``; :class:`DatasetDownloadError` (a FileNotFoundError) if the download fails.
    ChecksumError
        If the file's (or the built CSV's) sha256 is not the registry's.
    DatasetCacheError
        If a download is needed and the cache is not a writable directory.
    """
    info = get_info(slug)
    home = _explicit_home(data_home)
    if home is not None:
        path = home / info.filename
        if not path.is_file():
            raise FileNotFoundError(
                f"dataset {slug!r}: no file {path} (the data directory comes from "
                f"{'data_home=' if data_home is not None else 'SRTOPT_DATA'}; "
                f"without it the file is downloaded into {cache_dir()})"
            )
    else:
        path = cache_dir() / info.filename
        if not path.is_file():
            if not download:
                raise FileNotFoundError(f"dataset {slug!r}: no file {path} and download=False")
            path = fetch(slug)
    return _load_file(str(path), info.sha256, slug, os.stat(path).st_mtime_ns)


@lru_cache(maxsize=32)
def _load_file(path: str, sha256: str, slug: str, mtime_ns: int) -> Dataset:
    data = read_regular_file(path, DATASETS[slug].size, f"dataset {slug!r} file")
    got = _sha256(data)
    if got != sha256:
        raise ChecksumError(
            f"dataset {slug!r}: checksum mismatch for {path}: expected sha256 {sha256}, "
            f"got {got} (delete the file to download it again, or restore the original)"
        )
    info = DATASETS[slug]
    header = data.split(b"\n", 1)[0].decode("utf-8").strip().split(",")
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
    limit, deadline = source_limit(slug), time.monotonic() + DOWNLOAD_DEADLINE
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
                if time.monotonic() > deadline:
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
    """Download the source file of ``slug``, transform it, check and cache it.

    Returns the path of the cached CSV.  Nothing is left in the cache unless
    the built CSV has the registry's sha256.  The cache is checked to be a
    writable directory before anything is downloaded.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS`.
    cache : str, path-like or None, default=None
        The directory to write ``<slug>.csv`` to (created if needed); None: :func:`cache_dir`.
    base_url : str or None, default=None
        Base URL of the source file (see :func:`source_url`).

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
    target_dir = _writable_cache(Path(cache).expanduser() if cache is not None else cache_dir(), slug)
    url = source_url(slug, base_url)
    with tempfile.TemporaryFile(dir=target_dir) as partial:  # nameless: never left behind
        raw = _download(url, slug, partial)
    try:
        csv_bytes = build_csv(slug, raw)
    except ChecksumError:
        raise
    except Exception as exc:  # a truncated or foreign file fails to parse
        raise ChecksumError(
            f"dataset {slug!r}: the file downloaded from {url} could not be transformed "
            f"({type(exc).__name__}: {exc}); source sha256 expected {info.source_sha256}, "
            f"got {_sha256(raw)}"
        ) from exc
    return atomic_write(target_dir / info.filename, csv_bytes)


def build_csv(slug: str, raw: bytes) -> bytes:
    """Turn the bytes of the source file of ``slug`` into the dataset's CSV.

    Ends with the sha256 check: raises :class:`ChecksumError` when the result
    is not byte-identical to the registry's file.

    Parameters
    ----------
    slug : str
        A dataset name of :data:`DATASETS`.
    raw : bytes
        The content of the dataset's source file.

    Returns
    -------
    bytes
        The CSV: a header row, the feature columns and ``target`` last.

    Raises
    ------
    ValueError
        If ``slug`` is unknown or ``raw`` cannot be parsed (wrong number of columns, unknown codes, ...).
    ChecksumError
        If the CSV built is not byte-identical to the registry's file.
    """
    info = get_info(slug)
    frame = _PARSERS[slug](raw, info)
    names = list(info.feature_names) + ["target"]
    if frame.shape[1] != len(names):
        raise ValueError(f"{frame.shape[1]} columns parsed, {len(names)} expected")
    frame.columns = names
    csv_bytes = _to_csv_bytes(frame)
    got = _sha256(csv_bytes)
    if got != info.sha256:
        source_note = (
            "the source file matches the registry's source sha256"
            if _sha256(raw) == info.source_sha256
            else f"the source file's sha256 {_sha256(raw)} also differs from the "
            f"registry's {info.source_sha256}"
        )
        raise ChecksumError(
            f"dataset {slug!r}: checksum mismatch of the built CSV: expected sha256 "
            f"{info.sha256}, got {got} ({source_note}); nothing was cached"
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
assert set(_PARSERS) == set(DATASETS)
