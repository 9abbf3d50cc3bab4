"""Saving and loading fitted trees as versioned JSON (no pickle).

File layout (format version 3)::

    {"format": "srtopt-model", "format_version": 3, "srtopt_version": "0.3.0",
     "estimator": "SoftRegressionTree",
     "params": {...get_params(deep=False); callbacks not stored...},
     "n_features_in": p, "feature_names": [...] or null,
     "state": {"omega_": <array>, "beta_": <array>, "scaler": {...}, "leaf_model": {...}, ...},
     "sha256": "<hex digest of the canonical JSON of everything above>"}

Every estimator stores its scaling statistics as ``state.scaler`` (x_min, x_scale,
y_mean, y_std).  A soft tree stores its fitted leaf model as ``state.leaf_model``
(:meth:`srtopt.leaf_model.LeafModel.to_json`: its basis, e.g. a spline's knots, and its link), from
which ``beta_``'s shape and every prediction follow; a file of format version 2 (linear, constant or
logistic leaves) is read with the leaf model its parameters name.  A spline basis's training quantiles (where
the views read its curves, :mod:`srtopt.export.curves`) are an optional field: a format-3 file written before
they were kept loads and predicts as it did, its views reading the curves at mid-range.  A classifier also stores ``"n_classes": K`` after ``n_features_in`` and its
labels as ``state.classes_ = {"dtype": <numpy dtype string>, "labels": [...]}``: strings, integers,
floats or booleans as JSON values, so that labels of any of these types come back as they were.
Files of an older format version are refused with a message naming the last srtopt version that
reads them (``LAST_READER``): loading such a file there and saving it again writes the current format.

Arrays, values and labels take the JSON forms of :mod:`srtopt._model_json` (strict JSON:
non-finite floats are the strings "nan", "inf", "-inf").  ``load`` checks the
format and its version, the estimator class, the checksum (a truncated or
corrupt file, or an accidental edit, is refused; it is not a signature: an edit
with a recomputed checksum loads), and every array's shape against depth and
n_features, and raises :class:`ValueError` naming what is wrong.  Loading never
runs code from the file.  Writes are atomic: a temporary
file in the target directory, flushed and fsynced, then ``os.replace``.

Parameters that are not JSON values (e.g. a solver object passed as
``bn_solver``) are stored as ``{"unserializable": repr}`` and come back as the
estimator's default, with a warning; a Constraint object of ``constraints`` is
stored as the spec that rebuilds it (a registered name, e.g. ``"parity:gap=1.0"``),
and comes back as that spec; the training history (``history_``) is
not stored.  Floats are written with Python's shortest round-trip repr, so a
loaded model predicts exactly what the saved one did.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import math
import re
import warnings
from pathlib import Path

import numpy as np

from ._io import atomic_write, read_regular_file
from ._model_json import (NO_JSON, decode_array, decode_labels, decode_value, encode_array, encode_labels,
                          encode_value, json_float, unfloat)
from .tree import Tree
from .bases import ConstantBasis, LinearBasis
from .encoding import TableEncoder
from .inputs import InputSchema
from .leaf_model import LeafModel, Softmax, leaf_model_from_json
from .view import FittedTree, Scaling, assignment_scores, axis_reach, oblique_reach

FORMAT = "srtopt-model"
FORMAT_VERSION = 3
#: the older formats still read (their leaf model follows from the parameters)
READS = (2,)
#: the last srtopt version that reads each older format (loading a file there and saving it again
#: writes the current format)
LAST_READER = {1: "0.2.0"}
EXCLUDED_PARAMS = ("callbacks",)


@dataclasses.dataclass(frozen=True)
class ModelFile:
    """What a file of one estimator holds: the module that defines it, its fitted arrays and scalars (the
    scaler and the leaf model are stored for every estimator that has them), the arrays a file must have, and
    whether it predicts classes (it then stores ``classes_``, :func:`_encode_labels`)."""

    module: str
    arrays: tuple
    scalars: tuple
    required: tuple
    classifier: bool = False


#: estimator name -> :class:`ModelFile`: the model kinds a file may hold.  A registry by name, so that this
#: module never imports the estimators (which import it to save), and :func:`read_view` needs none of them.
MODEL_FILES = {
    "SoftRegressionTree": ModelFile(
        "srtopt.estimators.srt",
        ("omega_", "beta_", "node_counts_", "leaf_mse_", "leaf_r2_", "feature_importances_", "y_range_"),
        ("objective_", "n_iter_", "stopped_by_", "lambda_w_", "lambda_b_", "init_davies_bouldin_", "init_chosen_",
         "leaf_ridge_", "constraint_report_", "sensitive_feature_name_", "groups_", "selected_features_",
         "n_features_used_", "fit_seconds_"),
        ("omega_", "beta_")),
    "ORRTRegressor": ModelFile("srtopt.estimators.orrt", ("omega_", "beta_", "feature_importances_"),
                               ("objective_", "n_iter_", "solver_status_", "fit_seconds_"), ("omega_", "beta_")),
    "MILOTreeRegressor": ModelFile(
        "srtopt.estimators.milo",
        ("split_feature_", "split_threshold_", "split_threshold_scaled_", "leaf_coef_", "leaf_intercept_",
         "leaf_coef_scaled_", "leaf_intercept_scaled_"),
        ("objective_", "mip_gap_", "mip_bound_", "solver_status_", "bound_source_", "warm_start_objective_",
         "fit_seconds_", "l1_", "min_samples_leaf_"),
        ("split_feature_", "split_threshold_", "split_threshold_scaled_", "leaf_coef_", "leaf_intercept_",
         "leaf_coef_scaled_", "leaf_intercept_scaled_")),
    "SoftClassificationTree": ModelFile(
        "srtopt.estimators.classification",
        ("omega_", "beta_", "node_counts_", "leaf_class_counts_", "leaf_class_proba_", "feature_importances_"),
        ("objective_", "n_iter_", "stopped_by_", "lambda_w_", "lambda_b_", "constraint_report_",
         "sensitive_feature_name_", "groups_", "selected_features_", "n_features_used_", "fit_seconds_"),
        ("omega_", "beta_", "classes_"), classifier=True),
    "ORCTClassifier": ModelFile("srtopt.estimators.orct", ("omega_", "C_", "feature_importances_"),
                                ("objective_", "n_iter_", "solver_status_", "fit_seconds_"),
                                ("omega_", "C_", "classes_"), classifier=True),
}


def register_model_file(name: str, model_file: ModelFile) -> None:
    """Let :func:`save` and :func:`load` take the estimator class ``name`` (defined in ``model_file.module``)."""
    if not isinstance(model_file, ModelFile):
        raise ValueError(f"register_model_file takes a ModelFile, got {model_file!r}")
    MODEL_FILES[name] = model_file


def _classes():
    import importlib

    return {name: getattr(importlib.import_module(entry.module), name) for name, entry in MODEL_FILES.items()}


def _digest(body: dict) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------- save
def to_dict(model) -> dict:
    """The JSON document of a fitted estimator (what :func:`save` writes).

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor, MILOTreeRegressor, SoftClassificationTree or ORCTClassifier
        A fitted estimator.

    Returns
    -------
    dict
        The format-2 document (see the module docstring), its "sha256" checksum included.

    Raises
    ------
    ValueError
        If ``model`` is of another class (e.g. a SoftRegressionTreeCV: save its ``best_estimator_``).
    sklearn.exceptions.NotFittedError
        If ``model`` is not fitted.
    """
    from sklearn.utils.validation import check_is_fitted

    from . import __version__

    name = type(model).__name__
    if name not in MODEL_FILES:
        hint = "; save the tree it chose, model.best_estimator_" if hasattr(model, "best_estimator_") else ""
        raise ValueError(f"cannot save a {name}; supported: {', '.join(MODEL_FILES)}{hint}")
    entry = MODEL_FILES[name]
    check_is_fitted(model)
    params = {}
    for key, value in model.get_params(deep=False).items():
        if key in EXCLUDED_PARAMS:
            continue
        encoded = (_constraint_specs(value) if key == "constraints" else
                   {"leaf_model": value.to_json()} if isinstance(value, LeafModel) else encode_value(value))
        params[key] = {"unserializable": repr(value)} if encoded is NO_JSON else encoded
    state = {attr: encode_array(getattr(model, attr)) for attr in entry.arrays if _stored(model, attr)}
    if entry.classifier:
        state["classes_"] = encode_labels(model.classes_)
    if hasattr(model, "leaf_model_"):
        state["leaf_model"] = model.leaf_model_.to_json()
    if getattr(model, "encoder_", None) is not None:
        state["encoder"] = model.encoder_.to_json()
    for attr in entry.scalars:
        if hasattr(model, attr):
            encoded = encode_value(getattr(model, attr))
            state[attr] = None if encoded is NO_JSON else encoded
    s = model.scaler_
    state["scaler"] = {"x_min": encode_array(s.x_min), "x_scale": encode_array(s.x_scale),
                       "y_mean": json_float(s.y_mean), "y_std": json_float(s.y_std)}
    names = getattr(model, "feature_names_in_", None)
    body = {"format": FORMAT, "format_version": FORMAT_VERSION, "srtopt_version": __version__,
            "estimator": name, "params": params, "n_features_in": int(model.n_features_in_),
            **({"n_classes": len(model.classes_)} if entry.classifier else {}),
            "feature_names": None if names is None else [str(n) for n in names], "state": state}
    return {**body, "sha256": _digest(body)}


def _stored(model, attr) -> bool:
    """Whether ``model`` has the fitted array ``attr`` to store: not the NaN importances of a fit that ran out
    of memory computing its statistics (a complete model without them, :meth:`SoftTree.fit`), which the file
    leaves out as it does the leaves' statistics."""
    value = getattr(model, attr, None)
    return value is not None and not (attr == "feature_importances_" and np.isnan(value).all())


def _constraint_specs(value):
    """The JSON value of a ``constraints`` parameter: its specs, each Constraint object by the spec that
    rebuilds it (``describe()``, a registered name); :data:`NO_JSON` if one has no such spec (e.g. a
    RowMean of a callable: register a subclass)."""
    from .models.constraints import Constraint, make_constraints

    items = value if isinstance(value, (list, tuple)) else [value]
    if not any(isinstance(item, Constraint) for item in items):
        return encode_value(value)
    specs = []
    for item in items:
        spec = item.describe() if isinstance(item, Constraint) else item
        try:
            rebuilt = make_constraints(spec)
        except (ValueError, TypeError):
            return NO_JSON
        if isinstance(item, Constraint) and rebuilt != (item,):
            return NO_JSON
        specs.append(spec)
    return encode_value(specs)


def save(model, path) -> None:
    """Write a fitted estimator to ``path`` atomically (temporary file, then ``os.replace``).

    Parameters
    ----------
    model : SoftRegressionTree, ORRTRegressor, MILOTreeRegressor, SoftClassificationTree or ORCTClassifier
        A fitted estimator.
    path : str or path-like
        The file to write (replaced if it exists).

    Raises
    ------
    FileNotFoundError
        If the directory of ``path`` does not exist.
    ValueError
        If ``path`` is a directory, or ``model`` cannot be saved (see :func:`to_dict`).
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise FileNotFoundError(f"directory {str(directory)!r} does not exist")
    if path.is_dir():
        raise ValueError(f"{str(path)!r} is a directory, not a file name")
    atomic_write(path, dumps(model).encode("utf-8"))


def dumps(model) -> str:
    """The text :func:`save` writes: the versioned JSON document of a fitted estimator, read back with
    every check of :func:`load` first (a ValueError says why a document that load would refuse is not
    written)."""
    text = json.dumps(to_dict(model), indent=1, allow_nan=False) + "\n"
    try:
        _checked_state(_parsed(text), "the model")
    except ValueError as exc:
        raise ValueError(f"{type(model).__name__} cannot be saved, a file of it would not load: {exc}") from None
    return text


# --------------------------------------------------------------------- load
def load(path):
    """Read a model written by :func:`save` (or ``model.save``); ValueError if the file is not valid.

    Only a regular file of at most :data:`MAX_FILE_BYTES` is read (a FIFO or a device is
    refused); numbers outside float64 or int64 and nesting deeper than a model's are refused.

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    SoftRegressionTree, ORRTRegressor, MILOTreeRegressor, SoftClassificationTree or ORCTClassifier
        The fitted estimator, predicting exactly as the saved one did (a classifier's ``classes_``
        of the same labels and dtype).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If ``path`` is not a regular file, is too large, is not UTF-8 or valid JSON, or fails any check of
        :func:`from_dict` (format, version, checksum, estimator, parameters, array shapes, finite values).

    Warns
    -----
    UserWarning
        If the file was written by another srtopt version, or a parameter was not stored.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from srtopt.datasets import example_tree
    >>> tree, X, y = example_tree()  # depth 2, on 200 rows: y = 2 x1 where x0 > 0.5, else -x2
    >>> with tempfile.TemporaryDirectory() as folder:  # removed afterwards
    ...     tree.save(Path(folder) / "model.json")
    ...     again = load(Path(folder) / "model.json")
    >>> bool((again.predict(X) == tree.predict(X)).all())  # the same predictions, bit for bit
    True
    """
    doc, source = _read_json(path)
    return from_dict(doc, source=source)


def read_view(path) -> FittedTree:
    """The fitted tree of a model file as the readers see it (:class:`srtopt.view.FittedTree`),
    with every check of :func:`load`, without building the estimator: quick (no scikit-learn),
    for showing a tree (``srtopt show``) and, for a SoftRegressionTree or a SoftClassificationTree,
    predicting new rows (``predict``, as ``srtopt predict`` does; a classifier's view also gives
    ``predict_proba``).  It does not say which leaf a row reaches (``apply``, ``decision_path``): load the
    model for that.  The other estimators' views show the tree; load them to predict.

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    FittedTree
        What :func:`srtopt.export.export_text` and the other writers take.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`load`.
    """
    doc, source = _read_json(path)
    state = _checked_state(doc, source)
    name, p, depth, fitted = state["estimator"], state["n_features"], state["depth"], state["fitted"]
    tree = Tree(depth)
    reach = (axis_reach(fitted["split_feature_"], tree) if name == "MILOTreeRegressor" else
             np.ones(2 ** (depth + 1) - 1, dtype=bool) if name in ("ORRTRegressor", "ORCTClassifier") else
             oblique_reach(fitted["omega_"], tree))
    mu, scaling = state["params"].get("mu"), Scaling(*state["scaler"])
    fields = {f.name for f in dataclasses.fields(FittedTree)}
    predictor = probabilities = None
    if "leaf_model_" in fitted and name in ("SoftRegressionTree", "SoftClassificationTree"):
        predictor, probabilities = _hbp_predictors(state, tree)
    if name == "ORCTClassifier":  # its leaves, the class assignments C_, read as constant leaves
        fitted = {**fitted, "beta_": assignment_scores(fitted["C_"]), "leaf_class_proba_": fitted["C_"],
                  "leaf_model_": LeafModel(ConstantBasis(p), Softmax(len(fitted["classes_"])))}
    encoder = state["encoder"]
    names = state["feature_names"] if encoder is None else np.array(encoder.names, dtype=object)
    return FittedTree(estimator=name, depth=depth, n_features_in_=len(scaling.x_min), scaler_=scaling, reach=reach,
                      feature_names_in_=names, mu=None if mu is None else float(mu), encoder_=encoder,
                      predictor=predictor, probabilities=probabilities,
                      **{k: v for k, v in fitted.items() if k in fields})


def _hbp_predictors(state, tree):
    """(raw X -> predict, raw X -> predict_proba) of the saved soft tree: its input pipeline, then the leaf model
    of each row's HBP leaf finished as the estimator's ``predict`` (:meth:`~srtopt.leaf_model.LeafModel.hbp_predict`)
    and, for a classifier, ``predict_proba``."""
    fitted = state["fitted"]
    model, omega, beta = fitted["leaf_model_"], fitted["omega_"], fitted["beta_"]
    inputs = _inputs(state, fitted.get("sensitive_feature_name_"))
    clip = state["params"].get("clip_predictions", True) and "y_range_" in fitted
    y_range = fitted["y_range_"] if clip else None

    def predict(X):
        return model.hbp_predict(inputs.transform(X), omega, beta, tree, inputs.scaling, y_range,
                                 fitted.get("classes_"))

    def predict_proba(X):
        return model.link.probabilities(model.hbp_outputs(inputs.transform(X), omega, beta, tree))

    return predict, predict_proba


def _read_json(path) -> tuple[dict, str]:
    """(parsed document, how messages name it) of the model file ``path``."""
    path = Path(path)
    data = read_regular_file(path, MAX_FILE_BYTES, "model file")
    source = f"model file {str(path)!r}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"cannot read {source}: {exc}") from None
    _check_declared_size(text, source)
    try:
        return _parsed(text), source
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source} is not valid JSON (truncated or corrupt?): {exc}") from None
    except _OutOfRange as exc:
        raise ValueError(f"{source} holds {exc}") from None
    except RecursionError:
        raise ValueError(f"{source} is nested too deeply to be a model file") from None


def _parsed(text: str) -> dict:
    """The JSON document of ``text``, every number within the range of float64 and int64."""
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_int64)


MAX_FILE_BYTES = 256 * 2**20  # a depth-12 tree with 1000 features takes about 180 MB
BYTES_PER_NUMBER = 40  # generous: a float64 in JSON with its separators takes about 25


def _check_declared_size(text, source) -> None:
    """Refuse, before parsing a single number, a file far larger than the model its header
    declares (depth and n_features_in): parsing a 200 MB array costs minutes and gigabytes."""
    depth = re.search(r'"depth":\s*(\d{1,3})\b', text[: 1 << 16])
    features = re.search(r'"n_features_in":\s*(\d{1,9})\b', text[: 1 << 20])
    if depth is None or features is None:
        return  # an unusual layout: from_dict's checks decide
    classes = re.search(r'"n_classes":\s*(\d{1,9})\b', text[: 1 << 20])
    D, p, K = int(depth[1]), int(features[1]), int(classes[1]) if classes else 1
    if D > 20:
        return
    numbers = 2 * (2**D) * (p + 1) * 4 * K + 8 * 2**D * K + 4 * p + 64  # every array a model stores, with room
    limit = numbers * BYTES_PER_NUMBER + 200 * (p + K) + (1 << 20)
    if len(text) > limit:
        raise ValueError(f"{source} holds {len(text)} bytes, more than a model of depth {D} on {p} features "
                         f"can (at most {limit}): it was modified or is not a model file")


class _OutOfRange(ValueError):
    """A number of the file that no model attribute can hold."""


def _reject_constant(name):
    raise _OutOfRange(f"the non-standard JSON constant {name}")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise _OutOfRange(f"the number {text[:40]}, outside the float64 range")
    return value


def _int64(text):
    if len(text.lstrip("-")) > 19 or not -2**63 <= int(text) < 2**63:
        raise _OutOfRange(f"the integer {text[:40]}{'...' if len(text) > 40 else ''}, outside the int64 range")
    return int(text)


def from_dict(doc, source="model") -> object:
    """Rebuild an estimator from the document of :func:`to_dict`, validating everything.

    Parameters
    ----------
    doc : dict
        The parsed JSON document (format version 2).
    source : str, default="model"
        How error and warning messages name the document (e.g. "model file 'tree.json'").

    Returns
    -------
    SoftRegressionTree, ORRTRegressor, MILOTreeRegressor, SoftClassificationTree or ORCTClassifier
        The fitted estimator.

    Raises
    ------
    ValueError
        If the format, its version or the checksum is wrong, the estimator or a parameter is unknown, depth
        or n_features_in is out of range, a required attribute is missing, an array is malformed or has
        the wrong shape, a value is non-finite or a scale not positive, or the feature names are wrong.

    Warns
    -----
    UserWarning
        If the document was written by another srtopt version, or a parameter was stored as unserializable
        (the estimator's default is used).
    """
    state = _checked_state(doc, source)
    cls = _classes()[state["estimator"]]
    signature = inspect.signature(cls.__init__).parameters
    kwargs = {}
    for key, value in state["params"].items():
        if key not in signature:
            raise ValueError(f"{source}: {state['estimator']} has no parameter {key!r}")
        if isinstance(value, dict) and set(value) == {"unserializable"}:
            warnings.warn(f"{source}: parameter {key}={value['unserializable']} was not stored; "
                          f"using the default {signature[key].default!r}", UserWarning, stacklevel=3)
            continue
        kwargs[key] = (leaf_model_from_json(value["leaf_model"]) if isinstance(value, dict) and set(value) == {"leaf_model"}
                       else decode_value(value, f"params.{key}"))
    model = cls(**kwargs)
    if hasattr(model, "_check_params"):
        try:
            model._check_params()
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
    fitted = dict(state["fitted"])
    group = fitted.pop("sensitive_feature_name_", None)
    for attr, value in fitted.items():
        setattr(model, attr, value)
    if hasattr(model, "leaf_model_") and hasattr(model, "_restored_leaf_model"):
        model.leaf_model_ = model._restored_leaf_model(model.leaf_model_)
    if state["estimator"] == "MILOTreeRegressor":
        model.model_ = None
    model.inputs_ = _inputs(state, group)
    return model


def _inputs(state, group=None) -> InputSchema:
    """The input pipeline of a model file's estimator (:class:`srtopt.inputs.InputSchema`)."""
    names = state["feature_names"]
    return InputSchema(state["estimator"], state["n_features"], None if names is None else tuple(map(str, names)),
                       group, state["encoder"], Scaling(*state["scaler"]))


def _checked_state(doc, source) -> dict:
    """Every check of :func:`from_dict` that needs no estimator class: a dict of ``estimator``,
    ``params`` (as stored), ``depth``, ``n_features``, ``fitted`` (attribute -> decoded value),
    ``scaler`` (x_min, x_scale, y_mean, y_std) and ``feature_names`` (array or None)."""
    from . import __version__

    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{source} is not an srtopt model file (no \"format\": \"{FORMAT}\")")
    version = doc.get("format_version")
    if version in LAST_READER:
        raise ValueError(f"{source} has format_version {version}, which srtopt {LAST_READER[version]} reads: "
                         f"load and save it there to convert it to format_version {FORMAT_VERSION}")
    if version != FORMAT_VERSION and version not in READS:
        raise ValueError(f"{source} has format_version {version!r}; this srtopt ({__version__}) reads "
                         f"format_version {', '.join(map(str, (*READS, FORMAT_VERSION)))}")
    body = {k: v for k, v in doc.items() if k != "sha256"}
    if doc.get("sha256") != _digest(body):
        raise ValueError(f"{source} failed its checksum: the file was modified or corrupted")
    saved_version = doc.get("srtopt_version")
    if saved_version != __version__:
        warnings.warn(f"{source} was written by srtopt {saved_version}, this is {__version__}", UserWarning,
                      stacklevel=4)
    name = doc.get("estimator")
    if name not in MODEL_FILES:
        raise ValueError(f"{source}: unknown estimator {name!r}; expected one of {', '.join(MODEL_FILES)}")
    entry = MODEL_FILES[name]
    params = doc.get("params")
    if not isinstance(params, dict):
        raise ValueError(f"{source}: params must be an object")
    depth = params.get("depth", 2)
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= 20:
        raise ValueError(f"{source}: depth must be an integer in 1..20, got {depth!r}")
    p = doc.get("n_features_in")
    if not isinstance(p, int) or isinstance(p, bool) or p < 1:
        raise ValueError(f"{source}: n_features_in must be an integer >= 1, got {p!r}")
    state = doc.get("state")
    if not isinstance(state, dict):
        raise ValueError(f"{source}: state must be an object")
    n_branch, n_leaves = 2**depth - 1, 2**depth
    classes = _checked_classes(doc, state, source) if entry.classifier else None
    K = 0 if classes is None else len(classes)
    encoder = _checked_encoder(state, p, doc.get("feature_names"), source)
    p_tree = p if encoder is None else len(encoder.names)  # the tree's columns: the encoded ones
    leaf_model = _checked_leaf_model(state, params, p_tree, classes, source) if "beta_" in entry.required else None
    beta_columns = p_tree + 1 if leaf_model is None else leaf_model.n_outputs * leaf_model.basis.n_columns
    shapes = {"omega_": (n_branch, p_tree + 1), "beta_": (n_leaves, beta_columns),
              "node_counts_": (2 * n_leaves - 1,), "leaf_class_counts_": (n_leaves, K),
              "leaf_class_proba_": (n_leaves, K), "C_": (n_leaves, K), "leaf_mse_": (n_leaves,),
              "leaf_r2_": (n_leaves,), "feature_importances_": (p_tree,),
              "split_feature_": (n_branch,), "split_threshold_": (n_branch,),
              "split_threshold_scaled_": (n_branch,), "leaf_coef_": (n_leaves, p),
              "leaf_intercept_": (n_leaves,), "leaf_coef_scaled_": (n_leaves, p),
              "leaf_intercept_scaled_": (n_leaves,), "y_range_": (2,)}
    for attr in entry.required:
        if attr not in state:
            raise ValueError(f"{source}: state lacks {attr}")
    fitted = {} if leaf_model is None else {"leaf_model_": leaf_model}
    for attr in entry.arrays:
        if attr not in state:
            continue
        array = decode_array(state[attr], f"state.{attr}")
        if array.shape != shapes[attr]:
            raise ValueError(f"{source}: {attr} has shape {array.shape}, expected {shapes[attr]} for depth "
                             f"{depth} and {p} features")
        fitted[attr] = array
    for attr in entry.scalars:
        if attr in state:
            fitted[attr] = decode_value(state[attr], f"state.{attr}")
    if classes is not None:
        fitted["classes_"], fitted["n_classes_"] = classes, len(classes)
    y_range = fitted.get("y_range_")
    if y_range is not None and not y_range[0] <= y_range[1]:
        raise ValueError(f"{source}: y_range_ must be (low, high), got {y_range.tolist()}")
    if name == "MILOTreeRegressor":
        f = fitted["split_feature_"]
        if np.any(f < -1) or np.any(f >= p):
            raise ValueError(f"{source}: split_feature_ must lie in -1..{p - 1}")
    scaler = _decode_scaler(state.get("scaler"), p_tree, source)
    finite = [a for a in entry.arrays if a not in ("leaf_mse_", "leaf_r2_", "split_threshold_",
                                                    "split_threshold_scaled_", "leaf_class_proba_") and a in fitted]
    checks = {a: fitted[a] for a in finite}
    checks.update(zip(("scaler.x_min", "scaler.x_scale", "scaler.y_mean", "scaler.y_std"), scaler))
    for attr, value in checks.items():
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{source}: {attr} holds non-finite values")
        if attr in ("scaler.x_scale", "scaler.y_std") and np.any(np.asarray(value) <= 0):
            raise ValueError(f"{source}: {attr} must be positive")
    names = doc.get("feature_names")
    if names is not None:
        if not isinstance(names, list) or len(names) != p or not all(isinstance(n, str) for n in names):
            raise ValueError(f"{source}: feature_names must be {p} strings")
        names = np.array(names, dtype=object)
    return {"estimator": name, "params": params, "depth": depth, "n_features": p, "fitted": fitted,
            "scaler": scaler, "feature_names": names, "encoder": encoder}


def _checked_encoder(state, p, feature_names, source):
    """The table encoder of a file (``state.encoder``; None without one), on the file's p columns and, for a
    DataFrame's fit, its feature names."""
    doc = state.get("encoder")
    if doc is None:
        return None
    try:
        encoder = TableEncoder.from_json(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{source}: state.encoder is malformed: {exc}") from None
    if len(encoder.columns_) != p or (feature_names is not None and encoder.columns_ != feature_names):
        raise ValueError(f"{source}: state.encoder encodes the columns {encoder.columns_[:5]}, not the model's {p}")
    return encoder


def _checked_classes(doc, state, source) -> np.ndarray:
    """classes_ of a classifier's file: its labels record, which the declared ``n_classes`` counts."""
    if "classes_" not in state:
        raise ValueError(f"{source}: state lacks classes_")
    classes = decode_labels(state["classes_"], "state.classes_")
    if doc.get("n_classes") != len(classes):
        raise ValueError(f"{source}: n_classes is {doc.get('n_classes')!r} but state.classes_ holds "
                         f"{len(classes)} labels")
    return classes


def _checked_leaf_model(state, params, p, classes, source) -> LeafModel:
    """The leaf model of a soft tree's file (``state.leaf_model``; a format-2 file's from its parameters: linear
    leaves, or a classifier's constant or logistic ones), its basis on the file's p features and its link on
    its classes."""
    doc = state.get("leaf_model")
    if doc is None:
        doc = _format2_leaf_model(params, p, classes, source)
    try:
        model = leaf_model_from_json(doc)
    except ValueError as exc:
        raise ValueError(f"{source}: state.leaf_model: {exc}") from None
    if model.basis.n_features != p:
        raise ValueError(f"{source}: state.leaf_model has a basis of {model.basis.n_features} features, the model "
                         f"{p}")
    if model.n_classes != (None if classes is None else len(classes)):
        raise ValueError(f"{source}: state.leaf_model predicts {model.n_classes or 'no'} classes, the file "
                         f"{'none' if classes is None else len(classes)}")
    return model


def _format2_leaf_model(params, p, classes, source) -> dict:
    """The leaf model a format-2 file's parameters name."""
    if classes is None:
        return {"kind": "regression", "basis": LinearBasis(p).to_json(), "link": {"name": "identity"}}
    leaf = params.get("leaf")
    if leaf not in ("constant", "logistic"):
        raise ValueError(f"{source}: params.leaf must be 'constant' or 'logistic', got {leaf!r}")
    basis = ConstantBasis(p) if leaf == "constant" else LinearBasis(p)
    return {"kind": "classification", "basis": basis.to_json(), "link": {"name": "softmax", "n_classes": len(classes)}}


def _decode_scaler(scaler, p, source) -> tuple:
    """(x_min, x_scale, y_mean, y_std) of ``state.scaler``."""
    if not isinstance(scaler, dict) or set(scaler) != {"x_min", "x_scale", "y_mean", "y_std"}:
        raise ValueError(f"{source}: state.scaler must hold x_min, x_scale, y_mean, y_std")
    x_min = decode_array(scaler["x_min"], "state.scaler.x_min")
    x_scale = decode_array(scaler["x_scale"], "state.scaler.x_scale")
    y_mean = unfloat(scaler["y_mean"], "state.scaler.y_mean")
    y_std = unfloat(scaler["y_std"], "state.scaler.y_std")
    if x_min.shape != (p,) or x_scale.shape != (p,):
        raise ValueError(f"{source}: scaler x_min/x_scale must have shape ({p},)")
    return x_min, x_scale, y_mean, y_std


__all__ = ["FORMAT_VERSION", "from_dict", "load", "save", "to_dict"]
