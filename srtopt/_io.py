"""Atomic file writes: nothing half-written is ever left at the destination."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same directory
    (flushed and fsynced), then ``os.replace``; on any failure the temporary file
    is removed and the destination is untouched."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable
        dirfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
    except OSError:
        pass
    return path
