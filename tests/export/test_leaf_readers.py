"""The reader of a tree's leaves is chosen by the class of its leaf model's link: Identity and every link
derived from it are read as value leaves, Softmax as class leaves, any other link is refused."""

import copy
import dataclasses

import pytest

from srtopt.export.leaf_readers import ClassReader, ValueReader, reader_of
from srtopt.export.nodes import as_view
from srtopt.leaf_model import Identity


def _with_link(view, link):
    leaves = copy.copy(view.leaf_model_)
    leaves.link = link
    return dataclasses.replace(view, leaf_model_=leaves)


class Log(Identity):
    """A researcher's own value link (as examples/own_leaf_model.py's Exp)."""

    def score_names(self, classes=None, scaled=False):
        return ["log y"]


def test_each_link_family_has_its_reader(srt, orrt, classifiers):
    assert type(reader_of(as_view(srt))) is ValueReader and type(reader_of(as_view(orrt))) is ValueReader
    assert all(type(reader_of(as_view(model))) is ClassReader for model in classifiers.values())


def test_a_link_derived_from_identity_is_read_as_value_leaves(srt):
    view = _with_link(as_view(srt), Log())
    reader = reader_of(view)
    assert type(reader) is ValueReader
    assert reader.label_lines(0, ["age", "dose", "z"], 2, "scaled")[0].startswith("log y = ")


def test_a_link_of_no_family_is_refused_in_one_line(srt):
    class Probit:
        pass

    with pytest.raises(ValueError, match=r"^the views read the leaves of a link derived from Identity or Softmax; "
                                         r"Probit is neither$"):
        reader_of(_with_link(as_view(srt), Probit()))
