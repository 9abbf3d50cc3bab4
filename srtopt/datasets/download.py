"""The download cache: a dataset's CSV missing from the cache is rebuilt from the original public
source files, downloaded from ``SOURCE_BASE_URL`` (overridable with ``SRTOPT_SOURCE_URL``), streamed
to a partial file in the cache (at most :func:`source_limit` bytes each, within
``DOWNLOAD_DEADLINE`` seconds), transformed (:func:`~srtopt.datasets.build.build_csv`), checked
against the CSV's sha256 and only then moved into the cache atomically."""

from __future__ import annotations

import http.client
import os
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from .._io import atomic_write
from .build import ChecksumError, _source_note, build_csv
from .registry import DATA_ENV, DatasetInfo, registry_info

__all__ = ["SOURCE_BASE_URL", "DatasetCacheError", "DatasetDownloadError", "cache_dir", "fetch", "source_limit",
           "source_url", "source_urls"]

#: Base URL of the raw source files; ``{base}/{repo}/{commit}/{path}``.
#: Overridden by the ``SRTOPT_SOURCE_URL`` environment variable when set.
SOURCE_BASE_URL = "https://raw.githubusercontent.com"
DOWNLOAD_TIMEOUT = 60.0  # seconds, per network operation
DOWNLOAD_DEADLINE = 600.0  # seconds, for a whole download


class DatasetDownloadError(FileNotFoundError):
    """The source file of a dataset could not be downloaded."""


class DatasetCacheError(ValueError):
    """The download cache is not a writable directory."""


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
    info = registry_info(slug)
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
    return 4 * registry_info(slug).size + 2**16


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


def _writable_cache(directory: Path, info: DatasetInfo) -> Path:
    """``directory``, created if needed, once a file can be created in it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
    except OSError as exc:
        raise DatasetCacheError(
            f"dataset {info.slug!r}: the download cache {directory} is not a writable directory "
            f"({exc.strerror or exc}); set SRTOPT_CACHE to one, or {DATA_ENV[info.task]} to a directory "
            f"holding {info.filename}") from None
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
    info = registry_info(slug)
    target_dir = _writable_cache(Path(cache).expanduser() if cache is not None else _task_cache(info), info)
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
