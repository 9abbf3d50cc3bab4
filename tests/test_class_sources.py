"""The parsers of the classification datasets' source files, on small hand-written files."""

from __future__ import annotations

import dataclasses

import pytest

from srtopt.datasets import CLASSIFICATION_DATASETS, _classification_sources

KEEL = b"""@relation toy
@attribute Size real [0.0, 9.5]
@attribute Color {red, green, blue}
@attribute Flag {0, 1}
@attribute Count integer [1, 7]
@attribute Class {yes, no}
@inputs Size, Color, Flag, Count
@outputs Class
@data
1.50, blue, 0, 3, yes
2.0,red,1,7,no
?, green, 1, 2, no
3.25, green, ?, 1, yes
0.0060, red, 0, 1, no
"""


def _csv(frame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


def test_keel_one_hot_encodes_nominal_attributes_in_the_header_order_and_drops_missing_rows():
    frame = _classification_sources.keel([KEEL], None)
    assert _csv(frame) == (
        "Size,Color=red,Color=green,Color=blue,Flag,Count,target\n"
        "1.5,0,0,1,0,3,yes\n"
        "2.0,1,0,0,1,7,no\n"
        "0.006,1,0,0,0,1,no\n"
    )
    assert [str(t) for t in frame.dtypes[:-1]] == ["float64", "int64", "int64", "int64", "int64", "int64"]


def test_keel_reads_windows_line_ends_and_a_byte_order_mark():
    raw = b"\xef\xbb\xbf" + KEEL.replace(b"\n", b"\r\n")
    assert _csv(_classification_sources.keel([raw], None)) == _csv(_classification_sources.keel([KEEL], None))


@pytest.mark.parametrize("raw, message", [
    (KEEL.replace(b"2.0,red,1,7,no", b"2.0,red,1,no"), "4 fields, 5 attributes"),
    (KEEL.replace(b"2.0,red,", b"2.0,pink,"), r"attribute Color: values \['pink'\] not among its levels"),
    (KEEL.replace(b"@data\n", b""), "no @data line"),
    (KEEL.replace(b"2.0,red,1,7", b"2.0,red,1,seven"), "Unable to parse string"),
])
def test_keel_rejects_a_broken_file(raw, message):
    with pytest.raises(ValueError, match=message):
        _classification_sources.keel([raw], None)


@dataclasses.dataclass
class _Info:
    n_features: int
    feature_names: tuple


def test_table_drops_the_row_name_and_joins_the_parts():
    parse = _classification_sources.table(None, drop_first=True)
    first = b"AAT_ECOLI   0.49  0.29   cp\nACEA_ECOLI  0.07  0.40   im \n"
    second = b"\nB_ECOLI  1  2   om\n"
    frame = parse([first, second], _Info(2, ("x0", "x1")))
    assert _csv(frame) == "x0,x1,target\n0.49,0.29,cp\n0.07,0.4,im\n1.0,2.0,om\n"


def test_table_keeps_integer_columns_integer_and_reads_commas():
    frame = _classification_sources.table(",", drop_first=False)([b"1,2.50,a\n3,4.0,b\n"], _Info(2, ("u", "v")))
    assert _csv(frame) == "u,v,target\n1,2.5,a\n3,4.0,b\n"


def test_table_rejects_a_row_of_the_wrong_width():
    with pytest.raises(ValueError, match="2 fields, 3 expected"):
        _classification_sources.table(None, drop_first=False)([b"1 2 a\n3 b\n"], _Info(2, ("u", "v")))


def test_every_classification_dataset_has_a_parser_of_its_source_kind():
    assert set(_classification_sources.PARSERS) == set(CLASSIFICATION_DATASETS)
    for slug, info in CLASSIFICATION_DATASETS.items():
        is_keel = _classification_sources.PARSERS[slug] is _classification_sources.keel
        assert is_keel == info.source_path.endswith(".dat"), slug
        assert is_keel == ("one-hot" in info.transformations), slug
