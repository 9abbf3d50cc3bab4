"""The JSON forms of what a model file holds (:mod:`srtopt.persistence`): arrays, scalar
attributes and parameters, and a classifier's class labels.

Arrays are ``{"dtype", "shape", "data"}`` with non-finite floats written as the strings "nan",
"inf", "-inf" (the file is strict JSON); a scalar or parameter is a JSON value, or ``{"tuple":
[...]}``, ``{"list": [...]}``, ``{"dict": {...}}`` (string keys) or ``{"items": [[key, value],
...]}`` (other keys, e.g. the labels of a ``class_weight``); class labels are ``{"dtype": <numpy
dtype string>, "labels": [...]}``.  Each decoder checks its record and raises a one-line
ValueError naming ``where`` it is in the file.
"""

from __future__ import annotations

import math
import re

import numpy as np


def json_float(v):
    """A float as strict JSON: itself, or "nan", "inf", "-inf"."""
    v = float(v)
    return v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))


def unfloat(v, where):
    """The float of :func:`json_float`'s form ``v``, found at ``where`` in the file."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"model file: {where} holds {v!r}, not a number")
    if isinstance(v, str):
        if v not in ("nan", "inf", "-inf"):
            raise ValueError(f"model file: {where} holds the string {v!r}, not a number")
        return float(v)
    return float(v)


def encode_array(a):
    """The array record of ``a``: int64 for integers and booleans, float64 otherwise."""
    a = np.asarray(a)
    if a.dtype.kind in "iub":
        return {"dtype": "int64", "shape": list(a.shape), "data": [int(v) for v in a.ravel()]}
    return {"dtype": "float64", "shape": list(a.shape), "data": [json_float(v) for v in a.ravel()]}


def decode_array(obj, where):
    """The array of an array record, checked: its shape holds its values, each of its dtype."""
    if not isinstance(obj, dict) or set(obj) != {"dtype", "shape", "data"}:
        raise ValueError(f"model file: {where} is not an array record")
    shape, data, dtype = obj["shape"], obj["data"], obj["dtype"]
    if (not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape)
            or not isinstance(data, list) or int(np.prod(shape)) != len(data)):
        raise ValueError(f"model file: {where} has shape {shape!r} but {len(data) if isinstance(data, list) else '?'}"
                         f" values")
    if dtype == "int64":
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in data):
            raise ValueError(f"model file: {where} must hold integers")
        return np.array(data, dtype=np.int64).reshape(shape)
    if dtype != "float64":
        raise ValueError(f"model file: {where} has unknown dtype {dtype!r}")
    return np.array([unfloat(v, where) for v in data], dtype=np.float64).reshape(shape)


def encode_labels(classes) -> dict:
    """The record of a classifier's ``classes_``: its numpy dtype and the labels as JSON values."""
    classes = np.asarray(classes)
    labels = []
    for label in classes.tolist():
        if not isinstance(label, (str, bool, int, float)):
            raise ValueError(f"cannot save a classifier whose class label {label!r} is a {type(label).__name__}; a "
                             f"model file stores labels that are strings, integers, floats or booleans")
        labels.append(label)
    return {"dtype": classes.dtype.str, "labels": labels}


_LABEL_DTYPE = re.compile(r"[<>|=]?(U\d{1,6}|[iu][1248]|f[248]|b1|O)")
_LABEL_TYPES = {"U": (str,), "i": (int,), "u": (int,), "f": (int, float), "b": (bool,), "O": (str, int, float, bool)}


def decode_labels(obj, where) -> np.ndarray:
    """The ``classes_`` of a labels record (:func:`encode_labels`), checked: two labels or more,
    distinct, each of the dtype's kind."""
    if not isinstance(obj, dict) or set(obj) != {"dtype", "labels"} or not isinstance(obj["labels"], list):
        raise ValueError(f"model file: {where} is not a record of class labels")
    dtype, labels = obj["dtype"], obj["labels"]
    if not isinstance(dtype, str) or not _LABEL_DTYPE.fullmatch(dtype):
        raise ValueError(f"model file: {where} has the dtype {dtype!r}, not one of class labels")
    dtype = np.dtype(dtype)
    kinds = _LABEL_TYPES[dtype.kind]
    bad = [v for v in labels if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds)]
    if bad:
        raise ValueError(f"model file: {where} holds {bad[0]!r}, not a label of dtype {dtype}")
    if len(labels) < 2 or len({(type(v), v) for v in labels}) != len(labels):
        raise ValueError(f"model file: {where} must hold two distinct class labels or more")
    try:
        classes = np.array(labels, dtype=dtype)
    except (OverflowError, ValueError):
        raise ValueError(f"model file: {where} holds labels outside the range of dtype {dtype}") from None
    if classes.tolist() != labels:
        raise ValueError(f"model file: {where} holds labels that dtype {dtype} does not keep")
    return classes


def encode_value(v):
    """A JSON value for a scalar attribute or parameter (:data:`NO_JSON` if it has none)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return json_float(v)
    if isinstance(v, (list, tuple)):
        items = [encode_value(x) for x in v]
        if all(x is not NO_JSON for x in items):
            return {"tuple" if isinstance(v, tuple) else "list": items}
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        items = {k: encode_value(x) for k, x in v.items()}
        if all(x is not NO_JSON for x in items.values()):
            return {"dict": items}
    if isinstance(v, dict):  # other keys (a class_weight's labels): a list of [key, value] pairs
        items = [[encode_value(k), encode_value(x)] for k, x in v.items()]
        if all(k is not NO_JSON and not isinstance(k, dict) and x is not NO_JSON for k, x in items):
            return {"items": items}
    return NO_JSON


NO_JSON = object()  #: what encode_value returns for a value without a JSON form


def decode_value(v, where):
    """The scalar or parameter of :func:`encode_value`'s form ``v``."""
    if isinstance(v, dict):
        if len(v) == 1 and ("tuple" in v or "list" in v):
            key = next(iter(v))
            if not isinstance(v[key], list):
                raise ValueError(f"model file: {where} is malformed")
            items = [decode_value(x, where) for x in v[key]]
            return tuple(items) if key == "tuple" else items
        if len(v) == 1 and isinstance(v.get("dict"), dict):
            return {k: decode_value(x, where) for k, x in v["dict"].items()}
        if len(v) == 1 and isinstance(v.get("items"), list) and all(
                isinstance(pair, list) and len(pair) == 2 and not isinstance(pair[0], (dict, list))
                for pair in v["items"]):
            return {decode_value(k, where): decode_value(x, where) for k, x in v["items"]}
        raise ValueError(f"model file: {where} is malformed")
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    return v


__all__ = ["NO_JSON", "decode_array", "decode_labels", "decode_value", "encode_array", "encode_labels",
           "encode_value", "json_float", "unfloat"]
