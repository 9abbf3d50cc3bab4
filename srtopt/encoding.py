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

A column that holds neither numbers nor categories is refused at fit in one line that says what it holds and what
to do (:func:`text_kind`): numbers written as text ("1,234"), dates, durations or periods, an identifier (a
different text in every row).  The encoded columns' names must differ from one another (a column named
``"a = x"`` beside the category ``x`` of a column ``a`` is refused).

``groups`` gives the input column of every encoded column (the indicators of one text column form a group);
``names`` are the encoded columns' names, which the readers of a tree show ("Home = owner: +0.8").  The columns
of the rows given to :meth:`TableEncoder.transform` are taken in the fit's order; :mod:`srtopt.inputs` checks
them against the fit's first.
"""

from __future__ import annotations

import contextlib
import re
import warnings

import numpy as np

#: categories with fewer training rows are pooled into "(other)"
MIN_FREQUENCY = 10
MISSING, OTHER = "(missing)", "(other)"
#: the kinds of a column of text :func:`text_kind` tells apart; only "text" is read as categories
TEXT_KINDS = ("written numbers", "dates", "identifier", "mixed", "text")
#: a column needs this many rows before one that differs in every row is taken for an identifier
IDENTIFIER_ROWS = 20
#: (thousands mark, decimal mark) of the ways of writing numbers as text that :func:`text_kind` knows
WRITINGS = ((",", "."), ("", ","), (".", ","), (" ", "."))
#: a date (three numbers joined by - / or .) or a time (hours:minutes)
DATE_LIKE = r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d:\d\d"
#: the values of a text column shown in a message
SHOWN = 3


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
        """The columns of the training table X (a DataFrame, or a 2-D array whose columns are x0, x1, ...); a
        column that is neither numbers nor categories is refused (:func:`text_kind`), and so are encoded names
        that collide."""
        frame = _frame(X)
        self.columns_ = [str(c) for c in frame.columns]
        self.named_ = hasattr(X, "columns")  # a DataFrame's names, not x0, x1, ...
        self.specs_ = [_fit_column(name, frame.iloc[:, j], self.min_frequency) for j, name in enumerate(self.columns_)]
        _check_unique(self.specs_)
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
        for j, spec in enumerate(self.specs_):
            block, news, new_missing = _transform_column(spec, frame.iloc[:, j])
            if news:
                unseen[spec["name"]] = news
            if new_missing:
                imputed.append(spec)
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
    as an array of objects (rows of numbers and text: each cell as it is, so that a column of numbers stays one;
    an array of strings: its strings)."""
    values = np.asarray(X)
    if values.dtype.kind in "US" and not isinstance(X, np.ndarray):
        values = np.asarray(X, dtype=object)  # numpy would have written every number as text
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
    if columns is not None and frame.shape[1] != len(columns):
        raise ValueError(f"X has {frame.shape[1]} columns, the model was fitted on {len(columns)}")
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
    _refuse_non_categories(name, column)
    counts = pd.Series(_text(column[~missing])).value_counts(sort=False)
    order = sorted(counts.index, key=lambda value: (-counts[value], value))
    kept = [value for value in order if counts[value] >= min_frequency]
    return {"name": name, "kind": "categories", "categories": kept, "pooled": order[len(kept):],
            "other": len(kept) < len(order), "missing": bool(missing.any())}


def _text(column) -> np.ndarray:
    """The column's cells as strings (a categorical column's too, without pandas' cast to str, which
    warns in pandas 2.0); a column of strings as it is, its missing cells too (their rows are masked)."""
    import pandas as pd

    cells = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(cells, skipna=True) == "string":
        return cells
    return cells.astype(str).astype(object)  # Python str, as pandas' cast gave


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


def _transform_column(spec, column) -> tuple[np.ndarray, list, bool]:
    """(the encoded columns of one input column, the categories the fit did not see, whether the column has
    missing cells and had none at fit)."""
    missing = column.isna().to_numpy()
    if spec["kind"] == "number":
        numbers = np.full(len(column), np.nan) if missing.all() else _numbers(column)  # rows missing it all
        if numbers is None:
            values = column[~missing].astype(str)
            raise ValueError(f"column {spec['name']!r} of X was numeric at fit and holds text now (values such as "
                             f"{values.iloc[0]!r})")
        filled = np.where(missing, spec["median"], numbers)
        block = np.column_stack([filled, missing.astype(float)]) if spec["indicator"] else filled[:, None]
        return block, [], bool(missing.any()) and not spec["indicator"]
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
    return block, [value for value in pd.unique(text[other]) if value not in pooled], bool(missing.any()) and \
        not spec["missing"]


def _warn_unseen(unseen: dict, imputed: list, encoder) -> None:
    if unseen:
        named = "; ".join(f"{column}: {', '.join(map(repr, values[:5]))}" + (" ..." if len(values) > 5 else "")
                          for column, values in unseen.items())
        warnings.warn(f"categories the fit did not keep: {named}; they go to the column's (other) category where "
                      f"it has one, else to none of its categories", TableWarning, stacklevel=4)
    numbers = [spec["name"] for spec in imputed if spec["kind"] == "number"]
    texts = [spec["name"] for spec in imputed if spec["kind"] == "categories"]
    if numbers:
        warnings.warn(f"missing values in column(s) {', '.join(map(repr, numbers))}, which had none at fit: they take "
                      f"the training median", TableWarning, stacklevel=4)
    if texts:
        warnings.warn(f"missing values in column(s) {', '.join(map(repr, texts))}, which had none at fit: they go to "
                      f"none of the column's categories", TableWarning, stacklevel=4)


def _check_unique(specs) -> None:
    """Refuse encoded columns whose names collide (a column named "a = x" beside the category x of a column a, a
    column "n (missing)" beside the indicator of n's empty cells, a category spelled "(missing)"), naming both."""
    owners = {}
    for spec in specs:
        for name in _names(spec):
            if name in owners:
                first, second = owners[name], spec["name"]
                where = f"of column {first!r}" if first == second else f"of columns {first!r} and {second!r}"
                raise ValueError(f"two encoded columns {where} would both be named {name!r}: rename a column or a "
                                 f"category so that the names differ")
            owners[name] = spec["name"]


def _refuse_non_categories(name, column) -> None:
    """Refuse in one line a column that holds neither numbers nor categories: dates, durations, periods, numbers
    written as text, an identifier (:func:`text_kind`)."""
    import pandas as pd

    dtype = column.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
        raise ValueError(f"column {name!r} of X holds dates: convert it to numbers (e.g. days since a date, the "
                         f"month) or drop it")
    if pd.api.types.is_timedelta64_dtype(dtype):
        raise ValueError(f"column {name!r} of X holds durations: convert it to numbers (e.g. "
                         f"X[{name!r}].dt.total_seconds()) or drop it")
    if isinstance(dtype, pd.CategoricalDtype):
        return
    kind, detail = text_kind(column)
    if kind == "written numbers":
        marks = ", ".join(f"{key}={mark!r}" for key, mark in zip(("thousands", "decimal"), detail[0])
                          if mark and mark != ".")
        how = f"pandas.read_csv(..., {marks})" if marks else f"pd.to_numeric(X[{name!r}])"
        raise ValueError(f"column {name!r} of X holds numbers written as text ({shown_values(column.dropna().astype(str))})"
                         f": read them as numbers ({how}), or as categories (X[{name!r}].astype('category'))")
    if kind == "dates":
        raise ValueError(f"column {name!r} of X holds dates ({detail}): convert it to numbers (e.g. days since a date, "
                         f"the month) or drop it")
    if kind == "identifier":
        raise ValueError(f"column {name!r} of X holds a different text in every row ({detail}), like an identifier: "
                         f"drop it")


def text_kind(series) -> tuple[str, object]:
    """(kind, detail) of a column of text: a kind of :data:`TEXT_KINDS` and what shows it: "written numbers" and
    the (thousands, decimal) marks of :data:`WRITINGS` that read every value as a number (numbers of pandas'
    own writing: ("", ".")); "dates" and a value; "identifier" (a different text in every row of
    :data:`IDENTIFIER_ROWS` or more) and some values; "mixed" and where the first text among numbers is;
    "text" and some values."""
    import pandas as pd

    values = series.dropna().astype(str)
    distinct = pd.Series(pd.unique(values.to_numpy()), dtype=object)  # the checks look at each value once
    numeric = pd.to_numeric(distinct, errors="coerce").notna()
    writings = [(thousands, decimal) for thousands, decimal in WRITINGS
                if all(distinct.str.contains(mark, regex=False).any() for mark in _marks(thousands, decimal))
                and distinct.str.fullmatch(_number(thousands, decimal)).all()]
    if len(distinct) and not writings and numeric.all():
        writings = [("", ".")]
    if len(distinct) and writings:
        return "written numbers", writings
    if _dates(distinct):
        return "dates", repr(distinct.iloc[0])
    if len(values) >= IDENTIFIER_ROWS and len(distinct) == len(values) == len(series):
        return "identifier", shown_values(distinct)
    if numeric.any():
        text = ~values.isin(set(distinct[numeric]))
        first = int(text.to_numpy().argmax())
        return "mixed", (int(text.sum()), values.iloc[first], values.index[first])
    return "text", shown_values(distinct)


def _marks(thousands: str, decimal: str) -> list:
    """The marks of a way of writing numbers that pandas' default reading does not know: its thousands mark, its
    decimal mark unless '.'."""
    return [mark for mark in (thousands, "" if decimal == "." else decimal) if mark]


def _number(thousands: str, decimal: str) -> str:
    """The pattern of a number with that thousands mark (digits grouped by three) and decimal mark."""
    digits = rf"\d{{1,3}}(?:{re.escape(thousands)}\d{{3}})+|\d+" if thousands else r"\d+"
    return rf"\s*[+-]?(?:{digits})(?:{re.escape(decimal)}\d+)?(?:[eE][+-]?\d+)?\s*"


def _dates(values) -> bool:
    """Whether the first of the distinct ``values`` (at most 50) are all dates or times."""
    import pandas as pd

    sample = values.iloc[:50]
    if sample.empty or not sample.str.contains(DATE_LIKE, regex=True).all():
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return bool(parsed.notna().all())


def shown_values(values) -> str:
    """The first distinct values, quoted: "'red', 'blue', ..." (at most :data:`SHOWN`)."""
    distinct = list(dict.fromkeys(values.tolist()))
    return ", ".join(map(repr, distinct[:SHOWN])) + (", ..." if len(distinct) > SHOWN else "")


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
