"""Versioned JSON save/load: exact round trips, refusal of corrupt or tampered files, atomic writes."""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

import srtopt
from srtopt import MILOTreeRegressor, ORRTRegressor, SoftClassificationTree, SoftRegressionTree
from srtopt.persistence import FORMAT_VERSION, _digest, from_dict, save, to_dict


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.random((40, 3)) * [1, 100, 1e-3], columns=["a", "b", "c"])
    y = np.where(X["a"] > 0.5, X["b"] / 50, -X["c"] * 1e3) + 0.01 * rng.standard_normal(40)
    return X, y


@pytest.fixture(scope="module")
def srt(data):
    return SoftRegressionTree(depth=2, regularization=(0.01, 0.02), max_iter=2, n_init=1,
                              random_state=0, callbacks=[lambda record: None]).fit(*data)


@pytest.fixture
def saved(srt, tmp_path):
    path = tmp_path / "model.json"
    srt.save(path)
    return path


def _rewrite(path, edit):
    """Apply ``edit`` to the document and write it back with a valid checksum."""
    doc = json.loads(path.read_text())
    edit(doc)
    doc["sha256"] = _digest({k: v for k, v in doc.items() if k != "sha256"})
    path.write_text(json.dumps(doc))


def test_srt_round_trip_is_exact(srt, data, saved):
    loaded = srtopt.load(saved)
    assert type(loaded) is SoftRegressionTree
    X = data[0]
    np.testing.assert_array_equal(loaded.predict(X), srt.predict(X))
    np.testing.assert_array_equal(loaded.apply(X), srt.apply(X))
    np.testing.assert_array_equal(loaded.omega_, srt.omega_)
    np.testing.assert_array_equal(loaded.beta_, srt.beta_)
    np.testing.assert_array_equal(loaded.node_counts_, srt.node_counts_)
    assert loaded.feature_names_in_.tolist() == ["a", "b", "c"] and loaded.n_features_in_ == 3
    params, expected = loaded.get_params(), srt.get_params()
    assert params.pop("callbacks") is None and expected.pop("callbacks") is not None  # not stored
    assert params == expected
    assert loaded.objective_ == srt.objective_ and loaded.stopped_by_ == srt.stopped_by_
    assert loaded.summary().equals(srt.summary())
    X_new = np.random.default_rng(9).random((25, 3)) * [3, 300, 3e-3] - 1
    np.testing.assert_array_equal(loaded.predict(pd.DataFrame(X_new, columns=list("abc"))),
                                  srt.predict(pd.DataFrame(X_new, columns=list("abc"))))


def test_orrt_and_milo_round_trip(data, tmp_path):
    X, y = data
    orrt = ORRTRegressor(depth=2, mu=1.0, solver="slsqp", max_iter=10, random_state=0).fit(X.to_numpy(), y)
    save(orrt, tmp_path / "orrt.json")
    loaded = srtopt.load(tmp_path / "orrt.json")
    np.testing.assert_array_equal(loaded.predict(X.to_numpy()), orrt.predict(X.to_numpy()))
    assert not hasattr(loaded, "feature_names_in_")
    milo = MILOTreeRegressor(depth=1, time_limit=2.0, random_state=0).fit(X.iloc[:12], y[:12])
    save(milo, tmp_path / "milo.json")
    loaded = srtopt.load(tmp_path / "milo.json")
    np.testing.assert_array_equal(loaded.predict(X), milo.predict(X))
    np.testing.assert_array_equal(loaded.apply(X), milo.apply(X))
    assert loaded.model_ is None


def test_file_is_versioned_strict_json(saved):
    doc = json.loads(saved.read_text(), parse_constant=lambda c: pytest.fail(f"non-standard {c}"))
    assert doc["format"] == "srtopt-model" and doc["format_version"] == FORMAT_VERSION
    assert doc["srtopt_version"] == srtopt.__version__ and doc["estimator"] == "SoftRegressionTree"
    assert doc["params"]["regularization"] == {"tuple": [0.01, 0.02]}
    assert "callbacks" not in doc["params"]
    assert doc["state"]["omega_"]["shape"] == [3, 4] and doc["state"]["beta_"]["shape"] == [4, 4]
    assert set(doc["state"]["scaler"]) == {"x_min", "x_scale", "y_mean", "y_std"}


def test_nan_statistics_survive(srt, tmp_path):
    doc = to_dict(srt)
    assert from_dict(doc).leaf_r2_.shape == (4,)
    model = SoftRegressionTree(depth=3, max_iter=1, n_init=1, random_state=0).fit(
        np.random.default_rng(0).random((8, 2)), np.arange(8.0))
    assert np.isnan(model.leaf_r2_).any()
    model.save(tmp_path / "m.json")
    np.testing.assert_array_equal(srtopt.load(tmp_path / "m.json").leaf_r2_, model.leaf_r2_)


def test_unserializable_parameter_falls_back_to_default(data, tmp_path):
    from srtopt.solvers import ScipyMinimize

    model = SoftRegressionTree(depth=1, max_iter=1, n_init=1, random_state=np.random.RandomState(0),
                               bn_solver=ScipyMinimize("L-BFGS-B")).fit(*data)
    save(model, tmp_path / "m.json")
    with pytest.warns(UserWarning, match="was not stored; using the default") as record:
        loaded = srtopt.load(tmp_path / "m.json")
    assert len(record) == 2
    assert loaded.bn_solver == SoftRegressionTree().bn_solver and loaded.random_state is None
    np.testing.assert_array_equal(loaded.predict(data[0]), model.predict(data[0]))


@pytest.mark.parametrize("corrupt, match", [
    (lambda text: text[: len(text) // 2], "not valid JSON"),
    (lambda text: "", "not valid JSON"),
    (lambda text: text.replace('"estimator": "SoftRegressionTree"', '"estimator": "ORRTRegressor"'),
     "checksum"),
    (lambda text: text.replace('"depth": 2', '"depth": 3'), "checksum"),
    (lambda text: "[1, 2]", "not an srtopt model file"),
    (lambda text: '{"format": "srtopt-model", "format_version": 2}', "checksum"),
    (lambda text: text.replace("{", "{\"x\": NaN, ", 1), "non-standard JSON constant NaN"),
])
def test_corrupt_or_tampered_files_are_refused(saved, corrupt, match):
    saved.write_text(corrupt(saved.read_text()))
    with pytest.raises(ValueError, match=match):
        srtopt.load(saved)


def test_tampered_number_is_refused(saved):
    doc = json.loads(saved.read_text())
    doc["state"]["omega_"]["data"][0] += 1e-9
    saved.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="failed its checksum"):
        srtopt.load(saved)


def _set(path, value):
    def edit(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


@pytest.mark.parametrize("edit, match", [
    (_set(["format_version"], 99), "format_version 99"),
    (_set(["estimator"], "RandomForestRegressor"), "unknown estimator 'RandomForestRegressor'"),
    (_set(["params", "depth"], 3), r"omega_ has shape \(3, 4\), expected \(7, 4\)"),
    (_set(["params", "nonsense"], 1), "has no parameter 'nonsense'"),
    (_set(["n_features_in"], 2), "state.leaf_model has a basis of 3 features, the model 2"),
    (_set(["state", "leaf_model", "basis", "kind"], "quadratic"), "unknown leaf basis"),
    (_set(["state", "leaf_model", "link", "name"], "exp"), "a 'regression' leaf model has the link \\{'name': 'identity'\\}"),
    (_set(["state", "beta_", "shape"], [2, 8]), r"beta_ has shape \(2, 8\), expected \(4, 4\)"),
    (_set(["state", "beta_", "shape"], [4, 5]), "has shape \\[4, 5\\] but 16 values"),
    (_set(["state", "omega_", "data", 0], "inf"), "omega_ holds non-finite values"),
    (_set(["state", "omega_", "data", 0], "oops"), "not a number"),
    (_set(["state", "scaler", "y_std"], 0.0), "scaler.y_std must be positive"),
    (_set(["state", "scaler", "x_min", "shape"], [2]), "has shape \\[2\\] but 3 values"),
    (_set(["feature_names"], ["a", "b"]), "feature_names must be 3 strings"),
    (lambda doc: doc["state"].pop("omega_"), "state lacks omega_"),
    (_set(["params", "depth"], "2"), "depth must be an integer"),
    (lambda doc: doc["state"]["y_range_"]["data"].reverse(), r"y_range_ must be \(low, high\)"),
])
def test_invalid_contents_are_refused_with_a_clear_message(saved, edit, match):
    _rewrite(saved, edit)
    with pytest.raises(ValueError, match=match):
        srtopt.load(saved)


def test_other_srtopt_version_warns(saved):
    _rewrite(saved, _set(["srtopt_version"], "0.0.1"))
    with pytest.warns(UserWarning, match="written by srtopt 0.0.1"):
        srtopt.load(saved)


def test_missing_file_and_unfitted_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        srtopt.load(tmp_path / "nope.json")
    with pytest.raises(ValueError, match="cannot read model file"):
        srtopt.load(tmp_path)
    with pytest.raises(NotFittedError):
        SoftRegressionTree().save(tmp_path / "m.json")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save(SoftRegressionTree(), tmp_path / "no" / "m.json")


def test_writes_are_atomic(srt, saved, monkeypatch):
    before = saved.read_bytes()

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        srt.save(saved)
    assert saved.read_bytes() == before  # the old file is intact
    assert sorted(p.name for p in saved.parent.iterdir()) == ["model.json"]  # no temporary left
    monkeypatch.undo()
    srt.save(saved)  # overwrite in place
    assert sorted(p.name for p in saved.parent.iterdir()) == ["model.json"]
    assert srtopt.load(saved).objective_ == srt.objective_


def test_a_format_1_file_names_the_version_that_reads_it():
    """Format 1 (a file srtopt 0.1.0 wrote) is no longer read: one line naming srtopt 0.2.0, which
    reads it and saves it as format 2."""
    path = Path(__file__).parent / "data" / "format1.json"
    assert json.loads(path.read_text())["format_version"] == 1
    with pytest.raises(ValueError) as error:
        srtopt.load(path)
    message = str(error.value)
    assert "\n" not in message
    assert message.endswith("has format_version 1, which srtopt 0.2.0 reads: load and save it there to "
                            "convert it to format_version 3")


def test_milo_keeps_its_scaling_in_scaler_like_the_soft_trees(data, tmp_path):
    X, y = data
    milo = MILOTreeRegressor(depth=1, time_limit=2.0, random_state=0).fit(X.iloc[:12], y[:12])
    assert not any(hasattr(milo, a) for a in ("x_min_", "x_scale_", "y_mean_", "y_scale_"))
    np.testing.assert_array_equal(milo.scaler_.x_min, X.iloc[:12].to_numpy().min(axis=0))
    doc = to_dict(milo)
    assert doc["state"]["scaler"]["y_std"] == milo.scaler_.y_std


def test_feature_importances_round_trip(srt, saved):
    loaded = srtopt.load(saved)
    np.testing.assert_array_equal(loaded.feature_importances_, srt.feature_importances_)


def test_saved_files_get_normal_modes_and_links_stay(srt, tmp_path):
    previous = os.umask(0o022)
    try:
        srt.save(tmp_path / "new.json")
        assert os.stat(tmp_path / "new.json").st_mode & 0o777 == 0o644
        shared = tmp_path / "shared.json"
        shared.write_text("{}")
        os.chmod(shared, 0o664)
        (tmp_path / "link.json").symlink_to(shared)
        srt.save(tmp_path / "link.json")
    finally:
        os.umask(previous)
    assert (tmp_path / "link.json").is_symlink() and os.stat(shared).st_mode & 0o777 == 0o664
    assert srtopt.load(tmp_path / "link.json").objective_ == srt.objective_


@pytest.mark.parametrize("replace, match", [
    (('"n_iter_": 2', '"n_iter_": ' + "1" + "0" * 400), r"holds the integer 10000.*\.\.\., outside the int64 range"),
    (('"n_iter_": 2', '"n_iter_": ' + "9" * 5000), "outside the int64 range"),
    (('"objective_": ', '"objective_": 1e400, "x": '), "holds the number 1e400, outside the float64 range"),
    (('"n_iter_": 2', '"n_iter_": ' + "[" * 100000 + "]" * 100000), "nested too deeply"),
])
def test_out_of_range_numbers_and_deep_nesting_name_the_file(saved, replace, match):
    text = saved.read_text()
    assert replace[0] in text
    saved.write_text(text.replace(*replace, 1))
    with pytest.raises(ValueError, match=match) as err:
        srtopt.load(saved)
    assert str(err.value).startswith(f"model file {str(saved)!r}")


def test_special_files_are_refused_at_once(tmp_path):
    fifo = tmp_path / "model.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="it is a FIFO, not a regular file"):
        srtopt.load(fifo)
    with pytest.raises(ValueError, match="'/dev/zero': it is a character device"):
        srtopt.load("/dev/zero")


def test_oversized_file_is_refused_before_it_is_read(saved, monkeypatch):
    from srtopt import persistence

    monkeypatch.setattr(persistence, "MAX_FILE_BYTES", saved.stat().st_size - 1)
    with pytest.raises(ValueError, match="is larger than"):
        srtopt.load(saved)


def test_the_checksum_is_no_signature(srt, data, saved):
    """An edit with a recomputed checksum loads (y_mean + 1000 shifts every prediction): the checksum
    guards against corruption and accidental edits, not against a deliberate one."""

    def shift(doc):
        doc["state"]["scaler"]["y_mean"] += 1000
        doc["state"]["y_range_"]["data"] = [v + 1000 for v in doc["state"]["y_range_"]["data"]]

    _rewrite(saved, shift)
    np.testing.assert_allclose(srtopt.load(saved).predict(data[0]), srt.predict(data[0]) + 1000)


def _load_a_file_far_larger_than_its_model(saved, numbers=2_000_000) -> float:
    """Seconds until ``load`` refuses an array of ``numbers`` floats (40 MB by default) in a depth-2,
    3-feature model from the header's sizes."""
    import time

    _rewrite(saved, _set(["state", "omega_", "data"], [0.123456789012345] * numbers))
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"holds \d+ bytes, more than a model of depth 2 on 3 features can"):
        srtopt.load(saved)
    return time.perf_counter() - start


def test_a_file_far_larger_than_its_declared_model_is_refused(saved):
    _load_a_file_far_larger_than_its_model(saved, 200_000)  # 4 MB: 4 x what the header allows


@pytest.mark.slow
def test_a_file_far_larger_than_its_declared_model_is_refused_before_parsing(saved):
    assert _load_a_file_far_larger_than_its_model(saved) < 5.0  # parsing it would take seconds and a gigabyte


@pytest.mark.parametrize("kind", ["srt", "orrt", "milo"])
def test_a_view_read_from_the_file_draws_what_the_estimator_draws(kind, tmp_path):
    """read_view checks the file as load does and gives the writers the same tree: the text, DOT and
    HTML of the file are those of the fitted estimator; a SoftRegressionTree's view predicts as the
    estimator does."""
    from srtopt import MILOTreeRegressor, ORRTRegressor, SoftRegressionTree
    from srtopt.export import export_graphviz, export_html, export_text
    from srtopt.persistence import read_view

    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2])
    model = {"srt": SoftRegressionTree(depth=2, random_state=0, constraints="leaf_bounds:feature=1,lower=0"),
             "orrt": ORRTRegressor(depth=2, mu=1.0, max_iter=30, random_state=0),
             "milo": MILOTreeRegressor(depth=2, time_limit=5, random_state=0)}[kind].fit(X, y)
    model.save(tmp_path / "m.json")
    view = read_view(tmp_path / "m.json")
    assert export_text(view, top=None) == export_text(model, top=None)
    assert export_graphviz(view) == export_graphviz(model)
    if kind != "milo":
        assert export_html(view) == export_html(model)
    with pytest.raises(ValueError, match="routing rows of X needs the fitted estimator"):
        export_text(view, X=X)
    X_new = rng.uniform(-0.5, 1.5, (200, 3))  # beyond the training range: the clipping shows too
    if kind == "srt":
        np.testing.assert_array_equal(view.predict(X_new), model.predict(X_new))
        with pytest.raises(ValueError, match=r"X contains NaN \(first in column 0\), and the model was fitted on a table without missing"):
            view.predict(np.where(np.eye(3, dtype=bool), np.nan, X_new[:3]))
    else:
        with pytest.raises(ValueError, match="needs the fitted estimator: load it with srtopt.load"):
            view.predict(X_new)
    (tmp_path / "bad.json").write_text((tmp_path / "m.json").read_text().replace('"depth": 2', '"depth": 3'))
    with pytest.raises(ValueError, match="failed its checksum"):
        read_view(tmp_path / "bad.json")


# ---------------------------------------------------------------- classifiers
@pytest.fixture(scope="module")
def iris():
    from sklearn.datasets import load_iris

    return load_iris(return_X_y=True, as_frame=True)


def _labels(kind, codes):
    """The iris classes 0, 1, 2 as labels of one type."""
    names = np.array(["setosa", "versicolor", "virginica"])
    return {"str": names[codes], "object": names.astype(object)[codes], "int": codes.to_numpy(),
            "float": codes.to_numpy() * 2.0, "bool": codes.to_numpy() > 0}[kind]


@pytest.mark.parametrize("leaf", ["constant", "logistic"])
@pytest.mark.parametrize("kind", ["str", "object", "int", "float", "bool"])
def test_classifier_round_trip_keeps_labels_of_any_type(iris, tmp_path, kind, leaf):
    """classes_ come back with their values and dtype; the loaded model, and the view read from the
    file without scikit-learn, predict the same classes and probabilities bit for bit."""
    from srtopt.export import export_graphviz, export_html, export_text
    from srtopt.persistence import read_view

    X, codes = iris[0].to_numpy(), iris[1]
    y = _labels(kind, codes)
    weights = {y[0]: 2.0}  # a class_weight keyed by labels (not strings) is stored too
    model = SoftClassificationTree(depth=2, leaf=leaf, class_weight=weights, random_state=0).fit(X, y)
    model.save(tmp_path / "m.json")
    loaded, view = srtopt.load(tmp_path / "m.json"), read_view(tmp_path / "m.json")
    assert type(loaded) is SoftClassificationTree and loaded.class_weight == weights
    assert loaded.classes_.dtype == model.classes_.dtype and loaded.classes_.tolist() == model.classes_.tolist()
    assert loaded.n_classes_ == model.n_classes_ and loaded.leaf == leaf
    X_new = np.random.default_rng(3).uniform(X.min(axis=0) - 1, X.max(axis=0) + 1, (40, 4))  # new rows
    for reader in (loaded, view):
        np.testing.assert_array_equal(reader.predict(X_new), model.predict(X_new))
        np.testing.assert_array_equal(reader.predict_proba(X_new), model.predict_proba(X_new))
    np.testing.assert_array_equal(loaded.leaf_class_counts_, model.leaf_class_counts_)
    assert export_text(view, top=None) == export_text(model, top=None)
    assert export_graphviz(view) == export_graphviz(model) and export_html(view) == export_html(model)
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["n_classes"] == len(set(y.tolist())) and doc["state"]["classes_"]["dtype"] == model.classes_.dtype.str


def test_orct_round_trip_and_its_views(iris, tmp_path):
    """ORCTClassifier is saved and loaded like the other trees: the loaded model predicts the same
    classes and mixture scores, and the file's view draws it as the fitted model does (its class
    assignments C_ as constant leaves)."""
    from srtopt import ORCTClassifier
    from srtopt.export import export_graphviz, export_html, export_text
    from srtopt.export.leaf_readers import leaf_class_mix
    from srtopt.persistence import read_view

    X, y = iris[0].to_numpy(), _labels("str", iris[1])
    model = ORCTClassifier(depth=2, n_starts=2, random_state=0).fit(X, y)
    model.save(tmp_path / "orct.json")
    loaded, view = srtopt.load(tmp_path / "orct.json"), read_view(tmp_path / "orct.json")
    assert type(loaded) is ORCTClassifier and loaded.classes_.tolist() == model.classes_.tolist()
    np.testing.assert_array_equal(loaded.C_, model.C_)
    X_new = np.random.default_rng(3).uniform(X.min(axis=0) - 1, X.max(axis=0) + 1, (40, 4))
    np.testing.assert_array_equal(loaded.predict(X_new), model.predict(X_new))
    np.testing.assert_array_equal(loaded.predict_proba(X_new), model.predict_proba(X_new))
    np.testing.assert_allclose(leaf_class_mix(view), model.C_, atol=1e-12)
    assert export_text(view, top=None) == export_text(model, top=None)
    assert "ORCT predicts the class of largest sum_t P_t(x) C_t" in export_text(model)
    assert export_graphviz(view) == export_graphviz(model) and export_html(view) == export_html(model)


def test_predict_proba_of_a_regression_file_is_one_line(saved):
    from srtopt.persistence import read_view

    with pytest.raises(ValueError, match=r"^predict_proba needs a classifier: this model is a SoftRegressionTree, "
                                         r"which predicts numbers, not classes \(fit a SoftClassificationTree\)$"):
        read_view(saved).predict_proba(np.zeros((1, 3)))


@pytest.fixture
def saved_classifier(iris, tmp_path):
    path = tmp_path / "classifier.json"
    SoftClassificationTree(depth=2, leaf="constant", random_state=0).fit(iris[0], _labels("str", iris[1])).save(path)
    return path


@pytest.mark.parametrize("edit, match", [
    (_set(["state", "classes_", "labels"], ["setosa", "setosa", "virginica"]), "two distinct class labels or more"),
    (_set(["state", "classes_", "labels"], ["setosa", 1, "virginica"]), "holds 1, not a label of dtype <U10"),
    (_set(["state", "classes_", "labels"], ["a" * 11, "b", "c"]), "labels that dtype <U10 does not keep"),
    (_set(["state", "classes_", "dtype"], "<M8[ns]"), "has the dtype '<M8\\[ns\\]', not one of class labels"),
    (_set(["state", "classes_"], ["setosa", "versicolor"]), "state.classes_ is not a record of class labels"),
    (lambda doc: doc["state"].pop("classes_"), "state lacks classes_"),
    (_set(["n_classes"], 4), "n_classes is 4 but state.classes_ holds 3 labels"),
    (_set(["state", "leaf_model", "basis", "kind"], "linear"), r"beta_ has shape \(4, 3\), expected \(4, 15\)"),
    (_set(["state", "leaf_model", "link", "n_classes"], 2), "state.leaf_model predicts 2 classes, the file 3"),
    (_set(["state", "leaf_class_counts_", "shape"], [4, 2]), "has shape \\[4, 2\\] but 12 values"),
])
def test_invalid_classifier_contents_are_refused_with_a_clear_message(saved_classifier, edit, match):
    from srtopt.persistence import read_view

    _rewrite(saved_classifier, edit)
    for reader in (srtopt.load, read_view):
        with pytest.raises(ValueError, match=match):
            reader(saved_classifier)


def test_a_parameter_out_of_its_rules_is_refused_by_load(saved_classifier):
    _rewrite(saved_classifier, _set(["params", "leaf"], "linear"))
    with pytest.raises(ValueError, match="classifier.json': leaf must be 'constant', 'logistic', 'spline'"):
        srtopt.load(saved_classifier)


def test_a_format_2_file_loads_with_the_leaf_model_its_parameters_name(saved_classifier, iris):
    """Files written before leaf models were stored (format 2: constant, logistic or linear leaves) load, and
    predict as before."""
    from srtopt.persistence import read_view

    doc = json.loads(saved_classifier.read_text())
    expected = srtopt.load(saved_classifier).predict_proba(iris[0])
    body = {k: v for k, v in doc.items() if k != "sha256"}
    body["format_version"] = 2
    body["state"].pop("leaf_model")
    saved_classifier.write_text(json.dumps({**body, "sha256": _digest(body)}))
    np.testing.assert_array_equal(srtopt.load(saved_classifier).predict_proba(iris[0]), expected)
    np.testing.assert_array_equal(read_view(saved_classifier).predict_proba(iris[0]), expected)


def test_a_classifier_with_many_classes_is_not_taken_for_an_oversized_file(tmp_path):
    """The size check counts the declared classes: a logistic tree of 10 classes on 64 features is
    a large file, but the size its header declares."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    model = SoftClassificationTree(depth=3, leaf="logistic", max_iter=1, random_state=0).fit(X[:600], y[:600])
    model.save(tmp_path / "digits.json")
    np.testing.assert_array_equal(srtopt.load(tmp_path / "digits.json").predict(X), model.predict(X))


def test_a_view_checks_the_columns_by_name_as_the_estimator_does(tmp_path):
    """A model fitted on a DataFrame of numbers: its view refuses the columns in another order (it read them by
    position and predicted other numbers, silently)."""
    from srtopt.persistence import read_view

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.random(80), "b": rng.random(80)})
    model = SoftRegressionTree(depth=2, random_state=0).fit(frame, frame["a"] - 3 * frame["b"])
    model.save(tmp_path / "n.json")
    view = read_view(tmp_path / "n.json")
    np.testing.assert_array_equal(view.predict(frame.head(5)), model.predict(frame.head(5)))
    for predictor in (model, view):
        with pytest.raises(ValueError, match="Feature names must be in the same order as they were in fit"):
            predictor.predict(frame[["b", "a"]].head(2))


def test_read_view_does_what_its_docstring_says(srt, data, saved):
    """A view predicts new rows (as the estimator does) and does not say which leaf a row reaches."""
    from srtopt.persistence import read_view

    doc = " ".join(read_view.__doc__.split())
    assert "cannot route" not in doc and "predicting new rows" in doc
    view = read_view(saved)
    np.testing.assert_array_equal(view.predict(data[0].head(5)), srt.predict(data[0].head(5)))
    assert "does not say which leaf a row reaches (``apply``, ``decision_path``)" in doc
    with pytest.raises(ValueError, match="load it with srtopt.load to route new rows"):
        view.apply(data[0].head(5))


def test_a_spline_file_keeps_the_quantiles_and_one_saved_before_them_still_loads(tmp_path):
    """The spline basis's quantiles (where its readers read a curve) are an optional field of format 3: a file
    written before they were kept loads, predicts as before, and its text reads at the middle of the range."""
    from srtopt.export import export_text
    from srtopt.persistence import read_view

    rng = np.random.default_rng(3)
    X = rng.lognormal(0.0, 1.0, (300, 2))
    tree = SoftRegressionTree(depth=1, leaf="spline", random_state=0).fit(X, np.log1p(X).sum(axis=1))
    path = tmp_path / "spline.json"
    tree.save(path)
    loaded = srtopt.load(path)
    np.testing.assert_array_equal(loaded.leaf_model_.basis.quantiles, tree.leaf_model_.basis.quantiles)
    assert "(median row)" in export_text(read_view(path))
    _rewrite(path, lambda doc: doc["state"]["leaf_model"]["basis"].pop("quantiles"))
    assert srtopt.load(path).leaf_model_.basis.quantiles is None
    np.testing.assert_array_equal(srtopt.load(path).predict(X), tree.predict(X))
    np.testing.assert_array_equal(read_view(path).predict(X), tree.predict(X))
    assert "(mid-range)" in export_text(read_view(path)) and "(median row)" not in export_text(read_view(path))
