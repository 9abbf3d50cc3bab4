"""The reader of a tree's leaves is chosen by its leaf model: a link of class probabilities (n_classes, as Softmax)
is read as class leaves, any other link as value leaves, whatever class it derives from; a link without the
methods the views ask is refused naming them."""

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


class Rate:
    """A value link written from scratch, derived from no link of srtopt's."""

    name, n_outputs = "rate", 1

    def __call__(self, U):
        return U[:, 0]

    def score_names(self, classes=None, scaled=False):
        return ["log rate"]

    def score_units(self, scaling):
        return 0.0, 1.0

    def leaf_name(self, basis_kind):
        return basis_kind


def test_a_link_of_no_srtopt_class_is_read_by_what_it_gives(srt, classifiers):
    reader = reader_of(_with_link(as_view(srt), Rate()))
    assert type(reader) is ValueReader
    assert reader.label_lines(0, ["age", "dose", "z"], 2, "scaled")[0].startswith("log rate = ")
    softmax = next(iter(classifiers.values())).leaf_model_.link

    class Probabilities(Rate):
        n_classes, n_outputs = softmax.n_classes, softmax.n_outputs
        score_names = softmax.score_names

    assert type(reader_of(_with_link(as_view(next(iter(classifiers.values()))), Probabilities()))) is ClassReader


def test_a_link_without_what_the_views_ask_is_refused_in_one_line(srt):
    class Probit:
        def score_names(self, classes=None, scaled=False):
            return ["z"]

    with pytest.raises(ValueError, match=r"^the views read a leaf model's link by score_names, score_units, leaf_name; "
                                         r"Probit has no score_units, leaf_name$"):
        reader_of(_with_link(as_view(srt), Probit()))
