"""srtopt._io: atomic writes that behave like open(path, "wb") for modes and links; reads of
regular files only, with a size cap; CSV reads that give back the floats written."""

import os
import stat

import numpy as np
import pandas as pd
import pytest

from srtopt._io import atomic_write, exact_csv_options, read_regular_file, regular_file


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_honours_the_umask(tmp_path, umask_022):
    atomic_write(tmp_path / "new.json", b"{}")
    assert _mode(tmp_path / "new.json") == 0o644
    os.umask(0o077)
    atomic_write(tmp_path / "private.json", b"{}")
    assert _mode(tmp_path / "private.json") == 0o600


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o664])
def test_overwrite_keeps_the_existing_mode(tmp_path, umask_022, mode):
    path = tmp_path / "model.json"
    path.write_bytes(b"old")
    os.chmod(path, mode)
    atomic_write(path, b"new")
    assert path.read_bytes() == b"new" and _mode(path) == mode


def test_symlink_is_followed_and_kept(tmp_path, umask_022):
    target = tmp_path / "models" / "model.json"
    target.parent.mkdir()
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = tmp_path / "current.json"
    link.symlink_to(os.path.relpath(target, tmp_path))
    atomic_write(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new" and _mode(target) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current.json", "models"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.json"]  # no temporary left


def test_dangling_symlink_creates_its_target(tmp_path, umask_022):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    atomic_write(link, b"new")
    assert link.is_symlink() and (tmp_path / "target.json").read_bytes() == b"new"
    assert _mode(tmp_path / "target.json") == 0o644


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "model.json"
    path.write_bytes(b"old")

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, b"new")
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["model.json"]


def test_reads_refuse_special_files_and_cap_the_size(tmp_path):
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"cannot read model file '.*model\.fifo': it is a FIFO, not a regular file"):
        read_regular_file(fifo, 100, "model file")  # returns at once instead of blocking
    with pytest.raises(ValueError, match="it is a character device, not a regular file"):
        read_regular_file("/dev/zero", 100, "model file")
    with pytest.raises(ValueError, match="it is a directory"):
        regular_file(tmp_path, "data file")
    with pytest.raises(FileNotFoundError, match=r"data file '.*nope\.csv' not found"):
        regular_file(tmp_path / "nope.csv", "data file")
    path = tmp_path / "model.json"
    path.write_bytes(b"x" * 101)
    with pytest.raises(ValueError, match="is larger than 100 bytes"):
        read_regular_file(path, 100, "model file")
    assert read_regular_file(path, 101, "model file") == b"x" * 101


def test_exact_csv_options_read_back_what_to_csv_wrote_bit_for_bit(tmp_path):
    values = np.random.default_rng(0).normal(scale=[1e-8, 1.0, 1e6], size=(2000, 3))
    pd.DataFrame(values, columns=["a", "b", "c"]).to_csv(tmp_path / "f.csv", index=False)
    back = pd.read_csv(tmp_path / "f.csv", **exact_csv_options()).to_numpy()
    assert np.array_equal(back, values)
