"""The classifier's bad inputs through ``srtopt fit`` (the table "Bad input to a classifier" of
docs/cli.md; the estimator's side: tests/estimators/test_class_inputs.py)."""

import numpy as np
import pandas as pd
import pytest

import srtopt
from srtopt.cli import main


@pytest.fixture(scope="module")
def twice(tmp_path_factory):
    """60 rows written twice, once labelled x and once y, and a column of groups."""
    path = tmp_path_factory.mktemp("twice")
    X = np.random.default_rng(0).random((60, 2))
    X = np.r_[X, X]
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "g": np.arange(120) % 2, "label": ["x"] * 60 + ["y"] * 60}).to_csv(
        path / "data.csv", index=False)
    return path


def _fit(path, *flags):
    return main(["fit", str(path / "data.csv"), "--target", "label", "--depth", "1", "--quiet", "--out",
                 str(path / "m.json"), *flags])


def test_group_loss_is_refused_before_any_fitting(twice, capsys):
    assert _fit(twice, "--sensitive", "g", "--group-loss", "0.5") == 2
    assert capsys.readouterr().err.splitlines() == [
        "srtopt fit: error: constraints: group_loss constrains a regression tree, not a SoftClassificationTree; a "
        "SoftClassificationTree takes class_recall, group_recall, parity, equalized_odds and probability_parity (two "
        "classes), row_mean, monotonic_cst and max_features"]


def test_recall_bounds_that_cannot_both_hold_are_a_warning_and_the_last_line_says_so(twice, capsys):
    assert _fit(twice, "--features", "a", "b", "--constraint", "class_recall:class=x,lower=0.9", "--constraint",
                "class_recall:class=y,lower=0.9", "--max-iter", "2") == 0  # they cannot hold at any iteration
    out, err = capsys.readouterr()
    assert out.endswith("; constraints: 0 of 2 rows hold on the training data; 'srtopt show' prints the table)\n")
    assert err.startswith("srtopt fit: warning: the constraints could not be met; the tree is the most feasible one "
                          "found: recall of class 'x' = 0.5 for the soft model") and len(err.splitlines()) == 1


def test_groups_without_a_group_constraint_are_a_warning(twice, capsys):
    assert _fit(twice, "--sensitive", "g") == 0
    assert capsys.readouterr().err.splitlines() == [
        "srtopt fit: warning: sensitive_features gives the protected groups, but no constraint compares groups "
        "(parity, group_loss, a row_mean over groups): they are not used"]
    assert srtopt.load(twice / "m.json").feature_names_in_.tolist() == ["a", "b"]
