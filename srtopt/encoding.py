"""Tables as people have them: text, categorical and boolean columns and empty cells, encoded into the numeric
columns a soft tree reads, in numpy and pandas alone (a saved tree predicts raw rows without scikit-learn).

A :class:`TableEncoder` is fitted on the training table and maps every table of the same columns to numbers:

* a numeric or boolean column stays one column; its missing cells take the training median, and when the
  training column has missing cells an indicator column ``"name (missing)"`` (1 where the cell was empty)
  follows it, so that a split can send the missing rows either way and a leaf can shift them (the soft
  tree's answer to HistGradientBoosting's learned direction);
* a text or categorical column becomes one indicator column per category ``"name = value"``: categories of
  fewer than ``min_frequency`` training rows are pooled into ``"name = (other)"``, empty cells are the
  category ``"(missing)"``; a category met only at predict time goes to ``(other)`` (or to none when no
  category was pooled), with a warning that names it.

``groups`` gives the input column of every encoded column (the indicators of one text column form a group);
``names`` are the encoded columns' names, which the readers of a tree show ("Home = owner: +0.8").
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

#: categories with fewer training rows are pooled into "(other)"
MIN_FREQUENCY = 10
MISSING, OTHER = "(missing)", "(other)"


def needs_encoding(X) -> bool:
    """Whether X holds anything but finite-or-infinite numbers: a text, categorical, boolean or date column
    of a DataFrame, or a missing cell (NaN, None)."""
    import pandas as pd

    if hasattr(X, "dtypes") and hasattr(X.dtypes, "items"):
        if any(dtype.kind not in "fiu" for _, dtype in X.dtypes.items()):
            return True
        return bool(X.isna().to_numpy().any())
    if np.asarray(X).dtype.kind == "c":  # complex numbers: the numeric checks refuse them
        return False
    try:
        values = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return np.asarray(X).ndim == 2
    return values.ndim == 2 and bool(np.isnan(values).any()) and not bool(pd.isna(np.asarray(X)).all())


class TableWarning(UserWarning):
    """A table given to ``predict`` holds what the fit's table did not: categories the fit did not keep,
    or missing cells in a column that had none (both are encoded as the module docstring says)."""


@contextlib.contextmanager
def held_out_quietly():
    """A context in which :class:`TableWarning` is not shown: a fit's own held-out folds (its comparisons and
    searches) meet categories and empty cells their fold's fit did not see, which is not the user's concern."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TableWarning)
        yield


class TableEncoder:
    """The encoding of a table's columns (module docstring).

    Parameters
    ----------
    min_frequency : int, default=MIN_FREQUENCY
        Categories of fewer training rows are pooled into "(other)".
    """

    def __init__(self, min_frequency: int = MIN_FREQUENCY):
        self.min_frequency = int(min_frequency)

    def fit(self, X) -> "TableEncoder":
        """The columns of the training table X (a DataFrame, or a 2-D array whose columns are x0, x1, ...)."""
        frame = _frame(X)
        self.columns_ = [str(c) for c in frame.columns]
        self.named_ = hasattr(X, "columns")  # a DataFrame's names, not x0, x1, ...
        self.specs_ = [_fit_column(name, frame[column], self.min_frequency)
                       for name, column in zip(self.columns_, frame.columns)]
        return self

    @property
    def names(self) -> list[str]:
        """The encoded columns' names."""
        return [name for spec in self.specs_ for name in _names(spec)]

    @property
    def groups(self) -> np.ndarray:
        """The input column (index) of every encoded column."""
        return np.array([j for j, spec in enumerate(self.specs_) for _ in _names(spec)], dtype=int)

    def categorical(self) -> np.ndarray:
        """Boolean per encoded column: an indicator of a text column's category."""
        return np.array([spec["kind"] == "categories" for spec in self.specs_ for _ in _names(spec)])

    def transform(self, X) -> np.ndarray:
        """The encoded rows (n, encoded columns) of a table with the training columns, in their order; a
        category or a missing cell the training column did not have is warned about by name."""
        frame = _frame(X, self.columns_)
        unseen, imputed, blocks = {}, [], []
        for spec, column in zip(self.specs_, frame.columns):
            block, news = _transform_column(spec, frame[column])
            if news and spec["kind"] == "categories":
                unseen[spec["name"]] = news
            elif news:
                imputed.append(spec["name"])
            blocks.append(block)
        _warn_unseen(unseen, imputed, self)
        return np.column_stack(blocks) if blocks else np.zeros((len(frame), 0))

    def to_json(self) -> dict:
        return {"min_frequency": self.min_frequency, "named": self.named_, "columns": self.specs_}

    @classmethod
    def from_json(cls, doc: dict) -> "TableEncoder":
        """The encoder of its file form, checked (ValueError naming the first part that is wrong)."""
        out = cls(doc["min_frequency"])
        out.specs_ = [_checked_spec(spec) for spec in doc["columns"]]
        out.columns_ = [spec["name"] for spec in out.specs_]
        out.named_ = bool(doc["named"])
        return out


def as_values(X) -> np.ndarray:
    """X (not a DataFrame) as the array the encoder reads: numbers as they are, anything holding text or objects
    as an array of objects (a list of numbers and text: every cell as text)."""
    values = np.asarray(X)
    return values.astype(object) if values.dtype.kind in "OUS" else values


def _frame(X, columns=None):
    """X as a DataFrame of object or numeric columns (an array's columns named x0, x1, ...)."""
    import pandas as pd

    if hasattr(X, "columns"):
        frame = X
    else:
        values = as_values(X)
        if values.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got an array of shape {values.shape}")
        frame = pd.DataFrame(values, columns=[f"x{j}" for j in range(values.shape[1])])
    if columns is not None:
        named = [str(c) for c in frame.columns]
        if len(named) != len(columns):
            raise ValueError(f"X has {len(named)} columns, the model was fitted on {len(columns)}")
        if hasattr(X, "columns") and named != columns:
            missing = [c for c in columns if c not in named]
            raise ValueError(f"X lacks the column(s) {', '.join(map(repr, missing))} of the fit" if missing else
                             "X has the columns of the fit in another order: give them in the order of the fit")
    return frame


def _fit_column(name, column, min_frequency) -> dict:
    """The spec of one training column: numeric (its median; an indicator if it has missing cells) or
    categories (the kept ones, most frequent first; whether some were pooled; whether it had missing cells)."""
    import pandas as pd

    missing = column.isna().to_numpy()
    if missing.all():
        raise ValueError(f"column {name!r} of X is empty (every cell missing): drop it")
    numbers = _numbers(column)
    if numbers is not None:
        return {"name": name, "kind": "number", "median": float(np.median(numbers[~missing])),
                "indicator": bool(missing.any())}
    if pd.api.types.is_datetime64_any_dtype(column):
        raise ValueError(f"column {name!r} of X holds dates: convert it to numbers (e.g. days since a date) or "
                         f"drop it")
    counts = pd.Series(_text(column[~missing])).value_counts(sort=False)
    order = sorted(counts.index, key=lambda value: (-counts[value], value))
    kept = [value for value in order if counts[value] >= min_frequency]
    return {"name": name, "kind": "categories", "categories": kept, "pooled": order[len(kept):],
            "other": len(kept) < len(order), "missing": bool(missing.any())}


def _text(column) -> np.ndarray:
    """The column's cells as strings (a categorical column's too, without pandas' cast to str, which
    warns in pandas 2.0)."""
    return column.to_numpy(dtype=object).astype(str).astype(object)  # Python str, as pandas' cast gave


def _numbers(column):
    """The column as floats when it is numeric or boolean (object columns of numbers too), else None."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(column) or pd.api.types.is_numeric_dtype(column):
        return column.astype(float).to_numpy()
    if isinstance(column.dtype, pd.CategoricalDtype) or pd.api.types.is_datetime64_any_dtype(column):
        return None
    values = column.dropna()
    if len(values) and all(isinstance(v, (bool, int, float, np.number, np.bool_)) for v in values):
        return pd.to_numeric(column.astype(object).where(column.notna(), np.nan), errors="coerce").to_numpy(float)
    return None


def _names(spec) -> list[str]:
    name = spec["name"]
    if spec["kind"] == "number":
        return [name] + ([f"{name} {MISSING}"] if spec["indicator"] else [])
    return ([f"{name} = {value}" for value in spec["categories"]] + ([f"{name} = {OTHER}"] if spec["other"] else [])
            + ([f"{name} = {MISSING}"] if spec["missing"] else []))


def _transform_column(spec, column) -> tuple[np.ndarray, list]:
    """(the encoded columns of one input column, what the fit did not see: its new categories, or [True] for
    missing cells of a numeric column fitted without any)."""
    missing = column.isna().to_numpy()
    if spec["kind"] == "number":
        numbers = np.full(len(column), np.nan) if missing.all() else _numbers(column)  # rows missing it all
        if numbers is None:
            values = column[~missing].astype(str)
            raise ValueError(f"column {spec['name']!r} of X was numeric at fit and holds text now (values such as "
                             f"{values.iloc[0]!r})")
        filled = np.where(missing, spec["median"], numbers)
        block = np.column_stack([filled, missing.astype(float)]) if spec["indicator"] else filled[:, None]
        return block, [True] if missing.any() and not spec["indicator"] else []
    import pandas as pd

    text = _text(column)
    codes = pd.Index(spec["categories"], dtype=object).get_indexer(text)  # -1: not a kept category
    block = np.zeros((len(column), len(_names(spec))))
    kept, other = (codes >= 0) & ~missing, (codes < 0) & ~missing
    block[kept, codes[kept]] = 1.0
    if spec["other"]:
        block[other, len(spec["categories"])] = 1.0
    if spec["missing"]:
        block[missing, -1] = 1.0
    pooled = set(spec["pooled"])  # pooled at fit: seen, not new
    return block, [value for value in pd.unique(text[other]) if value not in pooled]


def _warn_unseen(unseen: dict, imputed: list, encoder) -> None:
    if unseen:
        named = "; ".join(f"{column}: {', '.join(map(repr, values[:5]))}" + (" ..." if len(values) > 5 else "")
                          for column, values in unseen.items())
        warnings.warn(f"categories the fit did not keep: {named}; they go to the column's (other) category where "
                      f"it has one, else to none of its categories", TableWarning, stacklevel=4)
    if imputed:
        warnings.warn(f"missing values in column(s) {', '.join(map(repr, imputed))}, which had none at fit: they take "
                      f"the training median", TableWarning, stacklevel=4)


def _checked_spec(spec) -> dict:
    if not isinstance(spec, dict) or spec.get("kind") not in ("number", "categories") or not isinstance(
            spec.get("name"), str):
        raise ValueError(f"malformed encoded column {str(spec)[:80]!r}")
    if spec["kind"] == "number":
        if not isinstance(spec.get("median"), float) or not np.isfinite(spec["median"]) or not isinstance(
                spec.get("indicator"), bool):
            raise ValueError(f"malformed numeric column {spec['name']!r}")
        return spec
    categories, pooled = spec.get("categories"), spec.get("pooled")
    if (not isinstance(categories, list) or not isinstance(pooled, list)
            or not all(isinstance(c, str) for c in categories + pooled)
            or len(set(categories + pooled)) != len(categories) + len(pooled)
            or not isinstance(spec.get("other"), bool) or not isinstance(spec.get("missing"), bool)):
        raise ValueError(f"malformed categorical column {spec['name']!r}")
    return spec
