"""Parsers of the regression datasets' source files (:func:`srtopt.datasets.build.build_csv`).

A parser turns the bytes of a dataset's source file into a DataFrame: the feature columns, then the
response, as the registry's ``transformations`` describe; the columns are named by
:func:`~srtopt.datasets.build.build_csv`.
"""

from __future__ import annotations

import io

import numpy as np

__all__ = ["PARSERS"]


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


PARSERS = {
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
