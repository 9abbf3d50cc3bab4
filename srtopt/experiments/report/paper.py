"""The paper's published values (``srtopt/data/paper_tables.json``), which the regression tables and
figures show beside ours: per dataset, method and depth, and the averages over its 15 datasets."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

import numpy as np

from srtopt.experiments.methods import PAPER_NAMES
from srtopt.experiments.report.summary import geometric_mean

__all__ = ["paper_tables"]


@lru_cache(maxsize=1)
def paper_tables() -> dict:
    text = resources.files("srtopt").joinpath("data/paper_tables.json").read_text("utf-8")
    return json.loads(text)


def _paper_entry(depth: int, method: str, dataset: str) -> dict | None:
    name = PAPER_NAMES.get(method)
    if name is None:
        return None
    tables = paper_tables()
    if method == "rf":
        entry = tables["random_forest"].get(dataset, {}).get("RF")
    else:
        entry = tables.get(f"depth{depth}", {}).get(dataset, {}).get(name)
    return entry


def _paper_averages(depth: int, method: str, datasets: list[str]) -> dict | None:
    """The paper's averages over ``datasets``: its published rows when all 15
    datasets are there, else recomputed from its per-dataset values."""
    from srtopt.datasets import DATASETS

    entries = [_paper_entry(depth, method, d) for d in datasets]
    if not entries or any(e is None for e in entries):
        return None
    out = {}
    for key, metric in (("r2", "r2_mean"), ("sigma_e2", "sigma_e2"), ("time", "seconds_mean"),
                        ("neg_r2_runs", "neg_r2")):
        values = [e.get(key) for e in entries]
        if any(v is None for v in values):
            continue
        out[f"arith_{metric}"] = float(np.mean(values))
        out[f"geo_{metric}"] = geometric_mean(values)
    if set(datasets) == set(DATASETS):
        published = paper_tables()["averages"]
        pub = published["random_forest"] if method == "rf" else published.get(f"depth{depth}", {}).get(PAPER_NAMES[method])
        if pub:
            for src, dst in (("arith_r2", "arith_r2_mean"), ("geo_r2", "geo_r2_mean"),
                             ("arith_time", "arith_seconds_mean"), ("geo_time", "geo_seconds_mean")):
                if src in pub:
                    out[dst] = pub[src]
    return out
