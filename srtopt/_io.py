"""Files: atomic writes (nothing half-written is ever left at the destination) and
bounded reads of regular files only.

The atomic rename is for regular files only: a destination that is a FIFO, a device
(``/dev/null``) or a path under ``/dev`` or ``/proc`` (``/dev/stdout``) is written
*into*, as a Unix tool does, never replaced."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

NAME_PREFIX = 64  # characters of the destination's name in the temporary file's name


def atomic_write(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same directory
    (flushed and fsynced), then ``os.replace``; on any failure the temporary file
    is removed and the destination is untouched.

    Like ``open(path, "wb")``: a symlink is followed (its target is replaced, the
    link stays), an existing file keeps its permission bits, and a new file gets
    0666 minus the umask; an existing file that cannot be written, or has no write
    permission bit at all (read-only even to root, whom the rename would not stop),
    is refused with a PermissionError.  A special destination (see :func:`is_special`)
    is written into instead, in one pass: there is nothing to replace atomically.
    The temporary file's name is short whatever the destination's (a legal name of
    255 bytes still fits).
    """
    if is_special(path):
        write_into(path, data)
        return Path(path)
    target = Path(os.path.realpath(path))
    mode = check_replaceable(target)
    tmp = target.parent / f".{target.name[:NAME_PREFIX]}.{secrets.token_hex(6)}.part"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable
        dirfd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
    except OSError:
        pass
    return Path(path)


def check_replaceable(path) -> int | None:
    """The permission bits of the existing regular file ``path`` (None if there is none); a
    PermissionError if it cannot be written or has no write bit (read-only even to root)."""
    target = Path(os.path.realpath(path))
    if not target.is_file():
        return None
    mode = stat.S_IMODE(os.stat(target).st_mode)
    if not mode & 0o222 or not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, f"the file is read-only (mode {mode:o}): it is not replaced", str(path))
    return mode


def is_special(path) -> bool:
    """Whether ``path`` names a destination that is written into rather than replaced:
    an existing FIFO, device or socket (symlinks followed), or any path under
    ``/dev`` or ``/proc`` (``/dev/stdout`` and ``/dev/fd/N`` lead to a pipe or to a
    file the shell opened, which a rename would detach)."""
    absolute = Path(os.path.abspath(path))
    if absolute.parts[1:2] in (("dev",), ("proc",)):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_into(path, data: bytes) -> None:
    """Write ``data`` into the existing special file ``path`` (never created, never
    truncated: a regular file reached through ``/dev/stdout`` is appended to, as the
    shell's ``>`` or ``>>`` left it)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def regular_file(path, what: str) -> Path:
    """``path`` if it is a regular file (symlinks followed); else FileNotFoundError or
    ValueError naming ``what`` (a FIFO or a device is refused: reading one may block
    forever or never end)."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {str(path)!r} not found") from None
    except OSError as exc:
        raise ValueError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
    _check_regular(mode, path, what)
    return path


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _check_regular(mode, path, what):
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        raise ValueError(f"cannot read {what} {str(path)!r}: it is {kind}, not a regular file")


def read_regular_file(path, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`regular_file`), at most ``limit``
    of them: a longer file is refused with a ValueError, before more is read."""
    regular_file(path, what)
    try:  # O_NONBLOCK: a FIFO swapped in after the check does not block the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ValueError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        _check_regular(os.fstat(fd).st_mode, path, what)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{what} {str(path)!r} is larger than {limit} bytes, more than it can be")
    return data


def exact_csv_options() -> dict:
    """Options of ``pandas.read_csv`` that parse every decimal to the nearest float (so a value
    ``to_csv`` wrote comes back bit for bit): pandas before 3.0 needs ``float_precision="round_trip"``,
    which 3.0 deprecates, its default parser being exact."""
    import pandas as pd

    return {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
