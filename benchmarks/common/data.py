"""The datasets the benchmarks read, and their tiny stand-ins in smoke mode: the paper's and the
classification registries' (:func:`load`), the real tables (:func:`load_table`) and the fairness data
(:func:`fairness_data`).  A stand-in has the dataset's columns (names, count), classes and task, and
:data:`SMOKE_ROWS` rows of a noisy oblique rule, drawn from a seed of its name: the scripts read it as they
read the dataset, and need no data folder."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import numpy as np

from . import results, smoke

#: the rows of a smoke-mode stand-in
SMOKE_ROWS = 96
FAIRNESS_ENV = "SRTOPT_FAIRNESS_DATA"


def load(slug, data_home=None):
    """``srtopt.datasets.load(slug, data_home)``; in smoke mode a stand-in with the same registry entry."""
    from srtopt.datasets import get_info
    from srtopt.datasets import load as load_dataset
    from srtopt.datasets.registry import Dataset

    if not smoke():
        return load_dataset(slug, data_home=data_home)
    info = get_info(slug)
    X, signal = tiny(slug, info.n_features)
    y = np.asarray(info.classes)[levels(signal, len(info.classes))] if info.task == "classification" else signal
    return Dataset(X=X, y=y, feature_names=list(info.feature_names), info=info, path=Path(f"(smoke: {slug})"))


def bench_datasets(slugs) -> list[str]:
    """The dataset names ``srtopt.experiments.run_benchmark`` takes for ``slugs``: the slugs, or in smoke mode
    file datasets (``srtopt.datasets.file_dataset``) of their stand-ins, written to the smoke folder (a class
    label prefixed by "class " so that the file's target reads as text)."""
    import pandas as pd

    from srtopt.datasets import file_dataset

    if not smoke():
        return list(slugs)
    names = []
    for slug in slugs:
        data = load(slug)
        y = np.char.add("class ", data.y) if data.info.task == "classification" else data.y
        path = results() / f"{slug}.csv"
        pd.DataFrame(data.X, columns=data.feature_names).assign(target=y).to_csv(path, index=False)
        names.append(file_dataset(path))
    return names


def bench_slug(name) -> str:
    """The slug of a name of :func:`bench_datasets` (a smoke file dataset's: its file's stem)."""
    from srtopt.datasets import is_file_dataset

    return Path(name.rpartition("?")[0]).stem if is_file_dataset(name) else name


def load_table(name):
    """(X as a DataFrame, y, task) of a table of ``srtopt.datasets.TABULAR_DATASETS`` or ``PANEL_DATASETS``, read
    from ``$SRTOPT_TABULAR_DATA`` or ``$SRTOPT_PANEL_DATA``; in smoke mode a stand-in of the task with a text column
    and empty cells."""
    import pandas as pd

    from srtopt.datasets import PANEL_DATASETS, TABULAR_DATASETS, load_table as load_real

    if not smoke():
        return load_real(name)
    task = {**TABULAR_DATASETS, **PANEL_DATASETS}[name].task
    X, signal = tiny(name, 3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["kind"] = np.array(["red", "green", "blue"])[levels(X[:, 2], 3)]
    frame.loc[::7, "b"] = np.nan
    frame.loc[::11, "kind"] = None
    y = np.array(["no", "yes"])[levels(signal, 2)] if task == "classification" else signal
    return frame, y, task


def fairness_data(name, folder=None):
    """(X, y, group) of a fairness dataset ``<name>.csv`` in ``folder`` (default ``$SRTOPT_FAIRNESS_DATA``): the
    columns besides ``group`` and ``target``, the target, the protected group (0 or 1); in smoke mode a
    stand-in."""
    import pandas as pd

    if smoke():
        X, y = tiny(name, 5)
        return X, y, (X[:, 0] > 30).astype(int)
    folder = folder or os.environ.get(FAIRNESS_ENV)
    if not folder:
        raise SystemExit(f"set {FAIRNESS_ENV} (or --fairness-data) to the folder of the fairness datasets")
    frame = pd.read_csv(Path(folder) / f"{name}.csv")
    return (frame.drop(columns=["group", "target"]).to_numpy(float), frame["target"].to_numpy(float),
            frame["group"].to_numpy(int))


def tiny(name, n_features, rows=SMOKE_ROWS):
    """(X, signal): ``rows`` x ``n_features`` features uniform on [0, 60) (where a threshold of the scripts, an
    age of 30 say, cuts the rows) and a noisy oblique rule of them, the same for the same name."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    U = rng.random((rows, n_features))
    signal = U @ rng.normal(size=n_features) + np.sin(3 * U[:, 0]) + 0.3 * rng.normal(size=rows)
    return 60 * U, signal


def levels(values, k) -> np.ndarray:
    """``values`` cut at their quantiles into codes 0..k-1 (as many rows each, about)."""
    return np.digitize(values, np.quantile(values, np.linspace(0, 1, k + 1)[1:-1]))


def small_regression(name, fairness=None):
    """(X, y) of the leaf-ridge benchmarks' datasets: generated (``noise-140x50``, ``linear-300x60``,
    ``friedman-200x10``), scikit-learn's ``diabetes``, the fairness data's ``communities_crime`` (from the folder
    ``fairness``) or a paper dataset; in smoke mode a stand-in."""
    from sklearn.datasets import load_diabetes, make_friedman1

    if smoke():
        return tiny(name, 5)
    rng = np.random.default_rng(0)
    if name == "noise-140x50":
        return rng.random((140, 50)), rng.standard_normal(140)
    if name == "linear-300x60":
        X = rng.random((300, 60))
        return X, X @ rng.standard_normal(60) + 2.0 * rng.standard_normal(300)
    if name == "friedman-200x10":
        return make_friedman1(200, 10, noise=1.0, random_state=0)
    if name == "diabetes":
        return load_diabetes(return_X_y=True)
    if name == "communities_crime":
        return fairness_data(name, fairness)[:2]
    X, y, _ = load(name)
    return X, y


def pipeline(estimator, X):
    """``estimator`` behind the usual pipeline for the columns of the table X: one-hot (``min_frequency=10``, a
    "(missing)" category) for text columns, median imputation with indicators for numeric ones."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    text = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numbers = [c for c in X.columns if c not in text]
    encode = ColumnTransformer([
        ("text", make_pipeline(SimpleImputer(strategy="constant", fill_value="(missing)"),
                               OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=10,
                                             sparse_output=False)), text),
        ("numbers", SimpleImputer(strategy="median", add_indicator=True), numbers)])
    return make_pipeline(encode, estimator)


def table_fold(name, folder=None):
    """(X_train, X_test, y_train, y_test, task) of fold 0 of KFold / StratifiedKFold(4, shuffle=True, random_state=0)
    of the table ``name``: of ``TABULAR_DATASETS`` or ``PANEL_DATASETS`` (:func:`load_table`), or of the tables of
    one's own in ``folder`` (:func:`folder_table`)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    X, y, task = load_table(name) if folder is None else folder_table(folder, name)
    splitter = (StratifiedKFold if task == "classification" else KFold)(4, shuffle=True, random_state=0)
    train, test = next(splitter.split(X, y))
    return X.iloc[train], X.iloc[test], y[train], y[test], task


#: the tasks a table of one's own may have (:func:`folder_tables`)
TASKS = ("regression", "classification")


def folder_tables(folder) -> dict:
    """{name: task} of a folder of tables of one's own (a script's ``--tables``), in the form of the shared
    collections: ``MANIFEST.json``, a JSON object {name: {"task": "regression" or "classification", ...}}, and
    beside it ``<name>.csv`` for each name, with the target in a column named ``target``.

    Raises
    ------
    ValueError
        If the manifest is missing or malformed, a task is not one of :data:`TASKS`, or a table's CSV is missing.
    """
    import json

    folder = Path(folder).expanduser()
    path = folder / "MANIFEST.json"
    if not path.is_file():
        raise ValueError(f"no MANIFEST.json in {str(folder)!r}: write one, a JSON object {{name: {{\"task\": "
                         f"\"regression\" or \"classification\"}}}}, beside <name>.csv for each table")
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{str(path)!r} is not JSON: {error}") from None
    if not isinstance(manifest, dict) or not manifest:
        raise ValueError(f"{str(path)!r} must be a non-empty JSON object {{name: {{\"task\": ...}}}}")
    tasks = {}
    for name, entry in manifest.items():
        task = entry.get("task") if isinstance(entry, dict) else None
        if task not in TASKS:
            raise ValueError(f"{str(path)!r}: table {name!r} needs a \"task\", \"regression\" or "
                             f"\"classification\", got {task!r}")
        if not (folder / f"{name}.csv").is_file():
            raise ValueError(f"{str(path)!r} names the table {name!r}, but {name}.csv is not in {str(folder)!r}")
        tasks[name] = task
    return tasks


def folder_table(folder, name):
    """(X as a DataFrame, y, task) of the table ``name`` of a folder of one's own (:func:`folder_tables`), read as
    the shared tables are (``srtopt.datasets.read_table``: empty cells missing, the rows of a missing target
    dropped, y's labels as text for a classification table; a text target of a regression table refused)."""
    from srtopt.datasets import read_table

    task = folder_tables(folder)[name]
    return (*read_table(Path(folder).expanduser() / f"{name}.csv", task), task)


def add_tables(parser) -> None:
    """The ``--tables`` and ``--out`` options of a script that also runs on a folder of one's own tables."""
    parser.add_argument("--tables", default=None, help="a folder of tables of your own instead of the shared ones: "
                        "MANIFEST.json {name: {\"task\": \"regression\" or \"classification\"}} beside "
                        "<name>.csv, the target in a column named target")
    parser.add_argument("--out", default=None, help="with --tables, the folder of the store and the report "
                        "(default: benchmarks/results/private/<the folder's name>, which git ignores)")


def tables_of(parser, args) -> tuple:
    """({name: task} of ``--tables``, the folder of the run's store and report: ``--out``, else
    ``benchmarks/results/private/<the folder's name>/``, which git ignores, or the smoke run's folder); (None,
    ``results()``) without ``--tables``.  A bad folder, and ``--out`` without ``--tables``, are refused as argparse
    refuses an argument."""
    if args.tables is None:
        if args.out:
            parser.error("--out goes with --tables (the shared data's reports are in benchmarks/results/)")
        return None, results()
    try:
        tables = folder_tables(args.tables)
    except ValueError as error:
        parser.error(f"--tables: {error}")
    private = results() / "private" / Path(args.tables).expanduser().resolve().name
    return tables, Path(args.out) if args.out else private
