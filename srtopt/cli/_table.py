"""Reading the CSV file of ``srtopt fit`` and ``srtopt predict`` as the user wrote it.

* The separator is the one given (``--sep``) or sniffed; a header that names a column twice is refused.
* A classifier's target is read as text, byte for byte: ``1``, ``01`` and ``1.0`` are three classes,
  ``007`` stays ``007``, and ``NA``, ``None`` or ``null`` are labels like any other; only an empty cell
  is missing (:meth:`CsvTable.labels`).
* Other columns are numbers.  pandas' strings for a missing value (``NA``, ``null``, ``None``, ...)
  mean missing, or only those of ``--na-values`` (an empty cell always); ``--thousands`` and
  ``--decimal`` read numbers written as ``1,234`` or ``1,5``.  When text was read as missing, the line
  about the missing values says which (:meth:`CsvTable.missing_note`).
* A feature column of text is categories, and a missing cell of a feature is a missing value
  (:meth:`CsvTable.table`; the soft trees encode both, :mod:`srtopt.encoding`); text read as missing is
  reported in one line.  A column that is neither numbers nor categories gets one line that says what
  it holds and what to do (:func:`column_refusal`): a mix of numbers and text, numbers written as text,
  dates, an identifier.  An empty column is left out of the features, and a column of whole numbers
  that differ in every row is pointed out, each in a warning of one line (:meth:`CsvTable.features`).

What is done with each kind of column is decided here alone: :data:`TEXT_KINDS` names the kinds
:func:`column_kind` tells apart, :data:`CATEGORIES` the one read as categories, and
:func:`column_refusal` says what the others get.
"""

from __future__ import annotations

import csv
import re
import warnings
from collections import Counter
from pathlib import Path

from .._io import exact_csv_options, regular_file
from ..encoding import IDENTIFIER_ROWS, shown_values, text_kind

SEP_HELP = ("field separator of the CSV file, e.g. ';' or 'tab' (default: detected from the first lines "
            "among , ; tab |)")
SEPARATORS = ",;\t|"
#: the values of a text column shown in a message
SHOWN = 3
#: what to do with a feature column that is not numbers, besides what :func:`column_refusal` says
FEATURE_REMEDY = "leave it out with --features"
#: the kind a feature table reads as categories (:meth:`CsvTable.table`)
CATEGORIES = "text"
#: the flags that read numbers written with a (thousands, decimal) mark of :data:`srtopt.encoding.WRITINGS`
FLAGS = {(",", "."): "--thousands ','", ("", ","): "--decimal ','", (".", ","): "--thousands '.' --decimal ','",
         (" ", "."): "--thousands ' '"}


def add_reading_flags(parser) -> None:
    """The flags that say how to read the CSV file: --sep, --na-values, --thousands, --decimal."""
    parser.add_argument("--sep", default=None, help=SEP_HELP)
    parser.add_argument("--na-values", nargs="+", default=None, metavar="TEXT",
                        help="the strings that mean a missing value outside a class target (default: pandas' "
                             "'NA', 'N/A', 'NaN', 'null', 'None', ...; an empty cell is always missing)")
    parser.add_argument("--thousands", default=None, metavar="CHAR",
                        help="the character between the thousands of a number, e.g. ',' for 1,234")
    parser.add_argument("--decimal", default=None, metavar="CHAR",
                        help="the decimal mark of the numbers, e.g. ',' for 1,5 (default '.')")


def read_table(path, args) -> "CsvTable":
    """The CSV file ``path`` read with the reading flags of ``args`` (:func:`add_reading_flags`)."""
    return CsvTable.read(path, args.sep, args.na_values, getattr(args, "thousands", None),
                         getattr(args, "decimal", None))


class CsvTable:
    """A CSV file read by pandas (``frame``, column names as strings) and what is needed to read a
    column of it again as the text it holds."""

    def __init__(self, path: str, frame, options: dict):
        """``path`` as the user gave it (messages name it so), the ``frame`` read, the read_csv ``options``."""
        self.path, self.frame, self.options = path, frame, options

    @classmethod
    def read(cls, path, sep=None, na_values=None, thousands=None, decimal=None) -> "CsvTable":
        """Read ``path``: ``na_values`` replace pandas' strings for a missing value (an empty cell is
        always missing); ``thousands`` and ``decimal`` as pandas takes them."""
        import pandas as pd

        given, path = str(path), regular_file(path, "data file")
        options = {"sep": separator(path, sep), **_number_options(thousands, decimal)}
        check_header(path, options["sep"])
        missing = {} if na_values is None else {"na_values": ["", *na_values], "keep_default_na": False}
        try:
            frame = pd.read_csv(path, **options, **missing, **exact_csv_options())
        except pd.errors.EmptyDataError:
            raise ValueError(f"data file {str(path)!r} is empty") from None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise ValueError(f"data file {str(path)!r} is not a readable CSV: {str(exc).splitlines()[0]}") from None
        if frame.empty:
            raise ValueError(f"data file {str(path)!r} has no data rows")
        frame.columns = [str(c) for c in frame.columns]
        return cls(given, frame, options)

    @property
    def columns(self) -> list:
        return list(self.frame.columns)

    def text(self, column):
        """The column as the file writes it: strings, an empty cell None."""
        import pandas as pd

        position = self.columns.index(column)
        raw = pd.read_csv(self.path, sep=self.options["sep"], usecols=[position], dtype=str, keep_default_na=False,
                          na_values=[""])
        return raw.iloc[:, 0].astype(object).where(raw.iloc[:, 0].notna(), None)

    def labels(self, column, flag="--target"):
        """The class labels of ``column``, as written (numpy array of str); an empty cell is refused."""
        import numpy as np

        values = self.text(column)
        if values.isna().any():
            raise ValueError(f"column {column!r} of {self.path!r} ({flag}) has missing values: "
                             f"{int(values.isna().sum())} empty cell(s), the first in row "
                             f"{_row(values.isna().to_numpy().argmax())}; give every row a class, or drop those rows")
        return np.asarray(values.tolist(), dtype=object)

    def features(self, columns, chosen: bool) -> list:
        """``columns`` without those empty in every row (a warning; refused when ``chosen``: named by
        --features); unless ``chosen``, a column without a header or of whole numbers that differ in every
        row pointed out (a warning)."""
        empty = [c for c in columns if self.frame[c].isna().all()]
        if empty and chosen:
            raise ValueError(f"--features: column(s) {_names(empty)} of {self.path!r} are empty in every row; "
                             f"leave them out")
        for column in empty:
            warnings.warn(f"column {column!r} of {self.path!r} is empty in every row: it is left out of the features")
        kept = [c for c in columns if c not in empty]
        for column in [] if chosen else kept:
            if re.fullmatch(r"Unnamed: \d+", column):
                warnings.warn(f"column {column!r} of {self.path!r} has no header (a saved row index?) and is used as a "
                              "feature; drop it from the file or choose the columns with --features")
            elif _counts_rows(self.frame[column]):
                warnings.warn(f"column {column!r} of {self.path!r} holds a different whole number in every row, like "
                              f"an identifier; it is a feature: leave it out with --features if it is one")
        return kept

    def numbers(self, columns, flag="", remedy=FEATURE_REMEDY):
        """The frame of ``columns``, refused in one line unless each holds finite numbers in every row:
        what a column that is not numbers holds and what to do (:func:`column_refusal`, ending with
        ``remedy``), which text was read as missing (:meth:`missing_note`)."""
        import numpy as np
        import pandas as pd

        about = f" ({flag})" if flag else ""
        for column in columns:
            if not pd.api.types.is_numeric_dtype(self.frame[column]):
                refusal = column_refusal(self.frame[column], remedy)
                raise ValueError(f"column {column!r} of {self.path!r}{about} {refusal}")
        empty = [c for c in columns if self.frame[c].isna().all()]
        if empty:
            raise ValueError(f"column(s) {_names(empty)} of {self.path!r}{about} are empty in every row")
        missing = [c for c in columns if self.frame[c].isna().any()]
        if missing:
            raise ValueError(f"column(s) {_names(missing)} of {self.path!r}{about} have missing values"
                             f"{self.missing_note(missing)}: fill or drop those rows"
                             + (f", or {remedy}" if remedy else ""))
        infinite = [c for c in columns if np.isinf(self.frame[c].to_numpy(dtype=float)).any()]
        if infinite:
            raise ValueError(f"column(s) {_names(infinite)} of {self.path!r}{about} hold infinite values")
        return self.frame[columns]

    def table(self, columns, flag="", remedy=FEATURE_REMEDY):
        """The frame of the feature ``columns`` as the soft trees take it: numbers, with missing cells, and
        columns of text as categories; any other column refused in one line (:func:`column_refusal`), an
        infinite value refused, and the text read as missing reported in a warning of one line."""
        import numpy as np
        import pandas as pd

        about = f" ({flag})" if flag else ""
        for column in columns:
            numeric = pd.api.types.is_numeric_dtype(self.frame[column])
            if not numeric and column_kind(self.frame[column])[0] != CATEGORIES:
                raise ValueError(f"column {column!r} of {self.path!r}{about} {column_refusal(self.frame[column], remedy)}")
            if numeric and np.isinf(self.frame[column].to_numpy(dtype=float)).any():
                raise ValueError(f"column {column!r} of {self.path!r}{about} holds infinite values")
        missing = [c for c in columns if self.frame[c].isna().any()]
        note = self.missing_note(missing)
        if note:
            warnings.warn(f"column(s) {_names(missing)} of {self.path!r} have missing values{note}: the tree takes "
                          f"them as missing")
        return self.frame[columns]

    def missing_note(self, columns) -> str:
        """" (text read as missing: 'NA' in 2 cells of 'a', ...; --na-values ...)" for the cells of
        ``columns`` that pandas read as missing but hold text; "" when every such cell is empty."""
        found = Counter()
        for column in columns:
            values = self.text(column)
            read_missing = self.frame[column].isna().to_numpy() & values.notna().to_numpy()
            found.update((text, column) for text in values[read_missing])
        if not found:
            return ""
        listed = ", ".join(f"{text!r} in {count} cell{'s' if count > 1 else ''} of {column!r}"
                           for (text, column), count in found.most_common(SHOWN))
        more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
        return f" (text read as missing: {listed}{more}; --na-values sets which strings mean missing)"


def column_kind(series) -> tuple[str, str]:
    """(kind, detail) of a column that is not numbers: a kind of :data:`srtopt.encoding.TEXT_KINDS` and what
    shows it (a value, the flags that read it)."""
    kind, detail = text_kind(series)
    if kind == "written numbers":
        return kind, " or ".join(FLAGS[writing] for writing in detail if writing in FLAGS)
    if kind == "mixed":
        count, value, index = detail
        return kind, f"{count} cell(s) of text among numbers, the first {value!r} in row {_row(index)}"
    return kind, detail


def column_refusal(series, remedy: str) -> str:
    """What the line refusing a column that is not numbers says after its name: what it holds and
    what to do, or else ``remedy`` ("" for none)."""
    kind, detail = column_kind(series)
    other = f"; or {remedy}" if remedy else ""
    return {
        "written numbers": f"holds numbers written as text ({shown_values(series.dropna().astype(str))}): give {detail} to "
                           f"read them as numbers",
        "dates": f"holds dates ({detail}), not numbers: make numeric columns of them (a day count, the month){other}",
        "identifier": f"holds a different text in every row ({detail}), like an identifier, not numbers"
                      + (f": {remedy}" if remedy else ""),
        "mixed": f"holds {detail}: correct those cells{other}",
        "text": f"holds text ({detail}), not numbers: encode it as numbers (one 0/1 column per category){other}",
    }[kind]


def separator(path, sep):
    """The field separator: ``sep`` as given ('tab' or '\\t' for a tab), else sniffed from the file's
    first lines among , ; tab | (a comma when nothing else fits, e.g. a single column)."""
    if sep is not None:
        sep = "\t" if sep in ("tab", "\\t") else sep
        if len(sep) != 1:
            raise ValueError(f"--sep takes one character (or 'tab'), got {sep!r}")
        return sep
    with open(path, newline="", errors="replace") as handle:
        sample = handle.read(64 * 1024)
    try:
        return csv.Sniffer().sniff(sample, delimiters=SEPARATORS).delimiter
    except csv.Error:
        return ","


def check_header(path, sep) -> None:
    """Refuse a header that names a column twice (pandas would rename the second ``x.1`` silently)."""
    with open(path, newline="", errors="replace") as handle:
        header = next(csv.reader(handle, delimiter=sep), [])
    repeated = [name for name, count in Counter(name.strip() for name in header).items() if count > 1 and name]
    if repeated:
        raise ValueError(f"data file {str(Path(path))!r} names column(s) {_names(repeated)} more than once in its "
                         f"header; rename them")


def _number_options(thousands, decimal) -> dict:
    """pandas' ``thousands`` and ``decimal`` of the flags, each one character."""
    options = {}
    for flag, value in (("--thousands", thousands), ("--decimal", decimal)):
        if value is not None:
            if len(value) != 1:
                raise ValueError(f"{flag} takes one character, got {value!r}")
            options[flag[2:]] = value
    if thousands is not None and thousands == decimal:
        raise ValueError(f"--thousands and --decimal must differ, both are {thousands!r}")
    return options


def _counts_rows(series) -> bool:
    """Whether a numeric column holds whole numbers that differ in every row (of enough rows)."""
    import pandas as pd

    if len(series) < IDENTIFIER_ROWS or not pd.api.types.is_integer_dtype(series) or \
            pd.api.types.is_bool_dtype(series):
        return False
    return bool(series.is_unique)


def _row(index) -> int:
    """The number of data row ``index`` counted from 1, as a spreadsheet shows it below the header."""
    return int(index) + 1


def _names(columns) -> str:
    return ", ".join(map(repr, columns))


__all__ = ["CATEGORIES", "CsvTable", "SEP_HELP", "add_reading_flags", "check_header", "column_kind", "column_refusal",
           "read_table", "separator"]
