"""File datasets: a CSV file of one's own named by its path, target, task and sha256, loaded like the
registry's datasets, its content checked on every load."""

import hashlib
import re

import numpy as np
import pandas as pd
import pytest

from srtopt.datasets import (
    ChecksumError,
    dataset_label,
    dataset_task,
    file_dataset,
    get_info,
    load,
)


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.random(30), "b": rng.integers(0, 5, 30), "y": rng.standard_normal(30)})
    path = tmp_path / "mine.csv"
    frame.to_csv(path, sep=";", index=False)  # the separator is detected
    return path, frame


def test_a_file_dataset_is_named_by_its_path_target_task_and_sha256_and_loads_like_a_registry_one(csv):
    path, frame = csv
    name = file_dataset(path, "y")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert name == f"{path.resolve()}?target=y&task=regression&sha256={digest}"
    X, y, features = load(name)
    np.testing.assert_array_equal(X, frame[["a", "b"]].to_numpy(float))
    np.testing.assert_array_equal(y, frame["y"].to_numpy())
    assert features == ["a", "b"] and not X.flags.writeable
    info = get_info(name)
    assert (info.task, info.n_rows, info.n_features, info.target) == ("regression", 30, 2, "y")
    assert dataset_task(name) == "regression" and dataset_label(name) == f"mine.csv: y (sha256 {digest[:8]})"
    assert dataset_label("yacht") == "yacht" and dataset_task("pima") == "classification"


def test_a_text_target_is_a_classification_dataset(csv):
    path, frame = csv
    frame.assign(y=np.where(frame["y"] > 0, "up", "down")).to_csv(path, index=False)
    name = file_dataset(path, "y")
    assert dataset_task(name) == "classification"
    assert sorted(set(load(name).y)) == ["down", "up"] and get_info(name).classes == ("down", "up")


def test_a_changed_file_is_refused_under_its_old_name(csv):
    path, frame = csv
    name = file_dataset(path, "y")
    frame.assign(y=frame["y"] + 1).to_csv(path, index=False)
    with pytest.raises(ChecksumError, match="changed since it was named"):
        load(name)
    assert file_dataset(path, "y") != name


@pytest.mark.parametrize("edit, target, message", [
    (lambda f: f, "z", "has no column 'z' (the target); columns: a, b, y"),
    (lambda f: f.assign(y=np.where(np.arange(30) == 2, np.nan, f["y"])), "y", "the target 'y' has missing values"),
    (lambda f: f[["y"]], "y", "has no feature column"),
])
def test_bad_files_are_refused_in_one_line(csv, edit, target, message):
    path, frame = csv
    edit(frame).to_csv(path, index=False)
    with pytest.raises(ValueError, match=re.escape(message)):
        file_dataset(path, target)


def test_a_table_with_text_and_missing_cells_is_a_file_dataset(csv):
    """Text columns and empty cells make X a table; a run encodes it on each training fold."""
    from srtopt.experiments.protocol import RunSpec, execute_run
    from srtopt.experiments.methods import get_method

    path, frame = csv
    frame.assign(b=np.where(np.arange(30) % 2 == 0, "left", "right"), a=np.where(np.arange(30) == 4, np.nan,
                                                                                  frame["a"])).to_csv(path, index=False)
    name = file_dataset(path, "y")
    dataset = load(name)
    assert hasattr(dataset.X, "columns") and dataset.X["b"].tolist()[:2] == ["left", "right"]
    run = execute_run(RunSpec(name, 1, "srt-l2", "{}", 3, 0, 0, 0), get_method("srt-l2"))
    assert run["status"] == "ok", run["error"]
