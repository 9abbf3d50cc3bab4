"""A dataset's CSV built from the bytes of its public source files: parsed (the regression parsers of
:mod:`._regression_sources`, the classification parsers of :mod:`._classification_sources`), written
as the shipped files are and checked against the registry's sha256."""

from __future__ import annotations

import hashlib

import numpy as np

from . import _classification_sources, _regression_sources
from .registry import CLASSIFICATION_DATASETS, DATASETS, DatasetInfo, registry_info

__all__ = ["ChecksumError", "build_csv"]


class ChecksumError(ValueError):
    """A dataset file (or the file built from a download) has the wrong sha256."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
    info = registry_info(slug)
    raws = [raw] if isinstance(raw, (bytes, bytearray)) else list(raw)
    if len(raws) != len(info.source_files):
        raise ValueError(f"dataset {slug!r} has {len(info.source_files)} source files, {len(raws)} given")
    names = list(info.feature_names) + ["target"]
    if info.task == "classification":
        frame = _classification_sources.PARSERS[slug](raws, info)
        if list(frame.columns) != names:
            raise ValueError(f"the columns parsed ({', '.join(map(str, frame.columns))}) are not the "
                             f"registry's ({', '.join(names)})")
        csv_bytes = frame.to_csv(index=False, lineterminator="\n").encode("utf-8")  # integer columns stay integer
    else:
        frame = _regression_sources.PARSERS[slug](raws[0], info)
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


def _source_note(info: DatasetInfo, raws) -> str:
    """Whether the source files match the registry's sha256, for an error message."""
    wrong = [f"{path} has sha256 {_sha256(raw)}, the registry's is {sha256}"
             for (path, sha256), raw in zip(info.source_files, raws) if _sha256(raw) != sha256]
    if not wrong:
        return f"the source {'file matches' if len(raws) == 1 else 'files match'} the registry's source sha256"
    return "the source file " + "; ".join(wrong)


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


assert set(_regression_sources.PARSERS) == set(DATASETS)
assert set(_classification_sources.PARSERS) == set(CLASSIFICATION_DATASETS)
