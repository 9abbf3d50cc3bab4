"""The numbers of a report: the runs of a results store summarized per dataset, method and depth, and
their means over the datasets.

Regression (:func:`summarize`, :func:`averages`): per dataset, method and depth, the mean test R^2
with its standard deviation sigma (reported in units of 1e-2, as in the paper), the mean training
seconds and the number of runs with test R^2 < 0; over the datasets, the arithmetic and the
geometric means of those per-dataset numbers, which is how the paper's "Arithmetic avg" and
"Geometric avg" rows are computed (checked against its Table 3: e.g. the geometric mean of the SRT
l2 column's R^2 values is 0.853 and of its times 26.0).  A geometric mean over values of which one
is negative is undefined (NaN).

Classification (:func:`summarize_classification`, :func:`classification_averages`): per dataset
and per method and depth (a method that does not use the depth has none), the mean test accuracy,
test log loss, fit seconds and leaves over the folds and seeds, and their arithmetic means over the
datasets.

Runs written by different srtopt versions are not pooled unless asked (``mixed_versions=True``).
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np

__all__ = ["CLASSIFICATION_METRICS", "averages", "classification_averages", "geometric_mean", "srtopt_versions",
           "summarize", "summarize_classification"]

METRICS = ("r2_mean", "sigma_e2", "seconds_mean", "neg_r2")


#: summary column -> title of its classification table, and the format of its cells
CLASSIFICATION_METRICS = {"accuracy_mean": ("Test accuracy", ".3f"), "log_loss_mean": ("Test log loss", ".3f"),
                          "seconds_mean": ("Fit seconds", "time"), "leaves_mean": ("Leaves", ".1f")}


def geometric_mean(values) -> float:
    """exp(mean(log v)); 0 when a value is 0, NaN when one is negative or NaN.

    Parameters
    ----------
    values : iterable of float
        The values v.

    Returns
    -------
    float
        Their geometric mean (NaN also for no values).
    """
    values = np.asarray(list(values), dtype=float)
    if values.size == 0 or np.any(np.isnan(values)) or np.any(values < 0):
        return math.nan
    if np.any(values == 0):
        return 0.0
    return float(np.exp(np.mean(np.log(values))))


def _rows_frame(source):
    import pandas as pd

    from srtopt.experiments.store import ResultStore

    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(source, ResultStore):
        return source.dataframe()
    with ResultStore(source, readonly=True) as store:
        return store.dataframe()


def srtopt_versions(frame) -> dict[str, int]:
    """Runs per srtopt version that wrote them (the ``srtopt`` entry of each row's versions).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a results store (:meth:`ResultStore.dataframe`), with their ``versions`` column of JSON text.

    Returns
    -------
    dict of str to int
        Number of rows per srtopt version ("unknown" where the versions are unreadable or lack it); empty
        when ``frame`` has no ``versions`` column.
    """
    def version(text):
        try:
            return str(json.loads(text).get("srtopt", "unknown"))
        except (TypeError, ValueError, AttributeError):
            return "unknown"

    return dict(Counter(version(v) for v in frame["versions"])) if "versions" in frame else {}


def _check_versions(frame, mixed_versions: bool) -> None:
    versions = srtopt_versions(frame)
    if len(versions) > 1 and not mixed_versions:
        listing = ", ".join(f"{v} ({n} runs)" for v, n in sorted(versions.items()))
        raise ValueError(f"the store holds runs of different srtopt versions: {listing}; their results may "
                         f"differ, so they are not pooled: pass --mixed-versions (mixed_versions=True) to "
                         f"pool them anyway")


def _is_classification(frame):
    """Which rows of ``frame`` are runs on classification datasets (a file dataset's task is in its name)."""
    from srtopt.datasets import dataset_task

    if frame.empty:
        return np.zeros(len(frame), dtype=bool)
    return (frame["dataset"].map(dataset_task) == "classification").to_numpy()


def summarize(source, mixed_versions: bool = False):
    """One row per (dataset, depth, method, params) of the regression runs from a store, path or DataFrame.

    Raises ValueError when the rows were written by different srtopt versions,
    unless ``mixed_versions``.

    Columns: dataset, depth, method, params, label, runs (ok), errors,
    r2_mean, r2_std (population, ddof=0), sigma_e2 (= 100 r2_std), seconds_mean,
    neg_r2 (ok runs with test R^2 < 0), iterations_mean.

    Parameters
    ----------
    source : str, path-like, ResultStore or pandas.DataFrame
        A results store (a path is opened read-only) or its rows (:meth:`ResultStore.dataframe`).
    mixed_versions : bool, default=False
        Whether rows written by different srtopt versions may be pooled.

    Returns
    -------
    pandas.DataFrame
        The columns above; a method run with several parameter sets has them in its label.  Sorted by
        depth, then datasets in the registry's order.

    Raises
    ------
    ValueError
        If the rows come from different srtopt versions and ``mixed_versions`` is False, or the path
        cannot be opened as a results store.
    """
    import pandas as pd

    from srtopt.datasets import DATASETS

    frame = _rows_frame(source)
    _check_versions(frame, mixed_versions)
    frame = frame[~_is_classification(frame)]
    columns = ["dataset", "depth", "method", "params", "label", "runs", "errors", "r2_mean",
               "r2_std", "sigma_e2", "seconds_mean", "neg_r2", "iterations_mean"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    out = []
    keys = ["dataset", "depth", "method", "params"]
    for (dataset, depth, method, params), group in frame.groupby(keys, sort=False):
        ok = group[group["status"] == "ok"]
        r2 = ok["r2_test"].to_numpy(dtype=float)
        iterations = ok["iterations"].dropna().to_numpy(dtype=float) if "iterations" in ok else []
        out.append({
            "dataset": dataset, "depth": int(depth), "method": method, "params": params,
            "runs": len(ok), "errors": int((group["status"] != "ok").sum()),
            "r2_mean": float(np.mean(r2)) if len(r2) else math.nan,
            "r2_std": float(np.std(r2)) if len(r2) else math.nan,
            "seconds_mean": float(np.mean(ok["seconds"].to_numpy(dtype=float))) if len(r2) else math.nan,
            "neg_r2": int(np.sum(r2 < 0)),
            "iterations_mean": float(np.mean(iterations)) if len(iterations) else math.nan,
        })
    summary = pd.DataFrame(out)
    summary["sigma_e2"] = summary["r2_std"] * 100.0
    # a method run with several parameter sets gets them in its label
    n_params = summary.groupby("method")["params"].nunique()
    summary["label"] = [
        m if n_params[m] == 1 else f"{m} {p}" for m, p in zip(summary["method"], summary["params"])
    ]
    order = {slug: i for i, slug in enumerate(DATASETS)}
    summary["_order"] = summary["dataset"].map(lambda s: order.get(s, len(order)))
    summary = summary.sort_values(["depth", "_order", "dataset"], kind="stable").drop(columns="_order")
    return summary[columns].reset_index(drop=True)


def averages(summary):
    """Arithmetic and geometric means over datasets, per (depth, label).

    Only datasets where the method has at least one successful run count.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize`.

    Returns
    -------
    pandas.DataFrame
        One row per (depth, label): depth, label, method, datasets (how many counted), and
        ``arith_<metric>`` and ``geo_<metric>`` for each metric r2_mean, sigma_e2, seconds_mean, neg_r2.
    """
    import pandas as pd

    out = []
    for (depth, label), group in summary.groupby(["depth", "label"], sort=False):
        group = group[group["runs"] > 0]
        row = {"depth": depth, "label": label, "method": group["method"].iloc[0] if len(group) else None,
               "datasets": len(group)}
        for metric in METRICS:
            values = group[metric].to_numpy(dtype=float)
            row[f"arith_{metric}"] = float(np.mean(values)) if len(values) else math.nan
            row[f"geo_{metric}"] = geometric_mean(values) if len(values) else math.nan
        out.append(row)
    return pd.DataFrame(out)


def _mean(values) -> float:
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return float(np.mean(values)) if len(values) else math.nan


def summarize_classification(source, mixed_versions: bool = False):
    """One row per (dataset, depth, method, params) of the classification runs from a store, path or DataFrame.

    Raises ValueError when the rows were written by different srtopt versions, unless ``mixed_versions``.

    Parameters
    ----------
    source : str, path-like, ResultStore or pandas.DataFrame
        A results store (a path is opened read-only) or its rows (:meth:`ResultStore.dataframe`).
    mixed_versions : bool, default=False
        Whether rows written by different srtopt versions may be pooled.

    Returns
    -------
    pandas.DataFrame
        Columns dataset, depth, method, params, label (the method, its parameters when it was run with
        several sets, and "D=<depth>" unless the depth is 0), runs (ok), errors, accuracy_mean,
        accuracy_std (population), accuracy_train_mean, log_loss_mean, seconds_mean and leaves_mean (NaN for
        a model without leaves).  Sorted by method (first stored first), depth, then datasets in the
        registry's order.

    Raises
    ------
    ValueError
        If the rows come from different srtopt versions and ``mixed_versions`` is False, or the path
        cannot be opened as a results store.
    """
    import pandas as pd

    from srtopt.datasets import CLASSIFICATION_DATASETS

    frame = _rows_frame(source)
    _check_versions(frame, mixed_versions)
    frame = frame[_is_classification(frame)]
    columns = ["dataset", "depth", "method", "params", "label", "runs", "errors", "accuracy_mean",
               "accuracy_std", "accuracy_train_mean", "log_loss_mean", "seconds_mean", "leaves_mean"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    out = []
    for (dataset, depth, method, params), group in frame.groupby(["dataset", "depth", "method", "params"],
                                                                  sort=False):
        ok = group[group["status"] == "ok"]
        accuracy = ok["accuracy_test"].to_numpy(dtype=float)
        out.append({
            "dataset": dataset, "depth": int(depth), "method": method, "params": params,
            "runs": len(ok), "errors": int((group["status"] != "ok").sum()),
            "accuracy_mean": _mean(accuracy), "accuracy_std": float(np.std(accuracy)) if len(ok) else math.nan,
            "accuracy_train_mean": _mean(ok["accuracy_train"]), "log_loss_mean": _mean(ok["log_loss_test"]),
            "seconds_mean": _mean(ok["seconds"]), "leaves_mean": _mean(ok["leaves"]),
        })
    summary = pd.DataFrame(out)
    n_params = summary.groupby("method")["params"].nunique()
    summary["label"] = [
        (m if n_params[m] == 1 else f"{m} {p}") + (f" D={d}" if d else "")
        for m, p, d in zip(summary["method"], summary["params"], summary["depth"])
    ]
    method_order = {m: i for i, m in enumerate(dict.fromkeys(frame["method"]))}
    order = {slug: i for i, slug in enumerate(CLASSIFICATION_DATASETS)}
    summary["_method"] = summary["method"].map(method_order)
    summary["_order"] = summary["dataset"].map(order)
    summary = summary.sort_values(["_method", "params", "depth", "_order"], kind="stable")
    return summary[columns].reset_index(drop=True)


def classification_averages(summary):
    """Arithmetic means over datasets, per label, of the table of :func:`summarize_classification`.

    Only datasets where the label has at least one successful run count.

    Parameters
    ----------
    summary : pandas.DataFrame
        The table of :func:`summarize_classification`.

    Returns
    -------
    pandas.DataFrame
        One row per label, in the summary's order: label, method, depth, datasets (how many counted),
        runs, errors, and the mean of each metric of :data:`CLASSIFICATION_METRICS` (NaN where no dataset
        has a value).
    """
    import pandas as pd

    out = []
    for label, group in summary.groupby("label", sort=False):
        counted = group[group["runs"] > 0]
        row = {"label": label, "method": group["method"].iloc[0], "depth": int(group["depth"].iloc[0]),
               "datasets": len(counted), "runs": int(group["runs"].sum()), "errors": int(group["errors"].sum())}
        row.update({metric: _mean(counted[metric]) for metric in CLASSIFICATION_METRICS})
        out.append(row)
    return pd.DataFrame(out)
