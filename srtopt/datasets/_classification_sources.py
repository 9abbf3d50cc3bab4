"""Parsers of the classification datasets' source files (:func:`srtopt.datasets.build.build_csv`).

A parser turns the bytes of a dataset's source files (one, or several whose rows
follow each other) into a DataFrame: the numeric feature columns, then the class
label as text in the column ``target``.  Two source formats:

* a KEEL ``.dat`` file: ``@attribute`` lines, then comma separated rows after
  ``@data``.  A row holding a missing value (``?``) is dropped; a nominal
  attribute (``{a, b, c}``) with more than two levels becomes one 0/1 column per
  level, named ``ATTR=LEVEL``, in the order the header lists the levels; every
  other attribute stays one column, its values read as numbers (a column of
  integers stays integer, one written with a decimal point is float);
* a UCI table: whitespace or comma separated rows, the label last, the first
  field optionally dropped (a row name or id); the feature names come from the
  registry.
"""

from __future__ import annotations

__all__ = ["PARSERS", "keel", "table"]


def _lines(raw: bytes) -> list[str]:
    return raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _numeric(values):
    """Text values as a number column: int64 when all are integers, else float64."""
    import pandas as pd

    return pd.to_numeric(pd.Series(values, dtype=object), errors="raise")


def _frame(names, rows):
    """The DataFrame of text ``rows`` (label last) with the features read as numbers."""
    import pandas as pd

    columns = {name: _numeric([row[j] for row in rows]) for j, name in enumerate(names)}
    columns["target"] = [row[-1] for row in rows]
    return pd.DataFrame(columns)


def _keel_header(lines):
    """[(name, levels or None)] of the ``@attribute`` lines and the index of the first data line."""
    attributes = []
    for index, line in enumerate(lines):
        text = line.strip()
        lower = text.lower()
        if lower.startswith("@attribute"):
            rest = text[len("@attribute"):].strip()
            if "{" in rest:
                levels = [v.strip() for v in rest[rest.index("{") + 1:rest.rindex("}")].split(",")]
                attributes.append((rest[:rest.index("{")].strip(), levels))
            else:
                attributes.append((rest.split()[0], None))
        elif lower.startswith("@data"):
            if len(attributes) < 2:
                raise ValueError("fewer than two @attribute lines before @data")
            return attributes, index + 1
    raise ValueError("no @data line: not a KEEL .dat file")


def keel(raws, info):
    """The DataFrame of a KEEL ``.dat`` file (``raws``: its bytes, alone in a list)."""
    import pandas as pd

    if len(raws) != 1:
        raise ValueError(f"a KEEL dataset has one source file, got {len(raws)}")
    lines = _lines(raws[0])
    attributes, start = _keel_header(lines)
    rows = []
    for line in lines[start:]:
        if not line.strip():
            continue
        row = [v.strip() for v in line.split(",")]
        if len(row) != len(attributes):
            raise ValueError(f"{len(row)} fields, {len(attributes)} attributes: {line[:80]!r}")
        if "?" not in row and "" not in row:  # rows with a missing value are dropped
            rows.append(row)
    parts = []
    for j, (name, levels) in enumerate(attributes[:-1]):
        values = [row[j] for row in rows]
        if levels is not None and len(levels) > 2:
            unknown = sorted(set(values) - set(levels))
            if unknown:
                raise ValueError(f"attribute {name}: values {unknown} not among its levels {levels}")
            parts.append(pd.DataFrame({f"{name}={level}": [int(v == level) for v in values] for level in levels}))
        else:
            parts.append(pd.DataFrame({name: _numeric(values)}))
    parts.append(pd.DataFrame({"target": [row[-1] for row in rows]}))
    return pd.concat(parts, axis=1)


def table(sep: str | None, *, drop_first: bool):
    """A parser of UCI tables (``sep`` None: whitespace), the label last, the first field dropped when
    ``drop_first``; the rows of several source files follow each other."""
    def parse(raws, info):
        width = info.n_features + 1 + int(drop_first)
        rows = []
        for raw in raws:
            for line in _lines(raw):
                if not line.strip():
                    continue
                row = [v.strip() for v in line.split(sep)]
                if len(row) != width:
                    raise ValueError(f"{len(row)} fields, {width} expected: {line[:80]!r}")
                rows.append(row[int(drop_first):])
        return _frame(list(info.feature_names), rows)

    return parse


#: slug -> parser of its source files
PARSERS = {
    **{slug: keel for slug in ("australian", "bupa", "ionosphere", "mammographic", "pima", "wdbc", "monk_2",
                               "balance", "car", "dermatology", "segment", "vowel", "page_blocks", "splice")},
    "ecoli": table(None, drop_first=True),
    "glass": table(",", drop_first=True),
    "yeast": table(None, drop_first=True),
    "satimage": table(None, drop_first=False),
    "german": table(None, drop_first=False),
    "vehicle": table(None, drop_first=False),
}
