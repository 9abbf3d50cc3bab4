"""Property-based input checking of SoftRegressionTree (hypothesis).

Every generated input either fits and predicts finite values, or raises a
ValueError whose message names the offending argument; nothing hangs, crashes
or floods warnings.  Most examples exercise the validation path (fast); a few
dozen run a real fit (depth 1, max_iter=1, n_init=1).  ``EXAMPLES`` counts the
examples actually run; the last test checks the total is >= 1000.
"""

import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from srtopt import SoftRegressionTree

pytestmark = pytest.mark.slow

EXAMPLES = Counter()
N_FIT_CHECKS, N_PREDICT_CHECKS, N_FITS = 620, 360, 40
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

def _names_argument(message, *names):
    import re

    return any(re.search(rf"(^|\W){re.escape(n)}(\W|$)", message) for n in names)


def _estimator():
    return SoftRegressionTree(depth=1, max_iter=1, n_init=1, random_state=0)


def _container(X, kind, names=None):
    if kind == "list":
        return X.tolist()
    if kind == "frame":
        return pd.DataFrame(X, columns=names or [f"f{j}" for j in range(X.shape[1])])
    return X


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)
special = st.sampled_from([np.nan, np.inf, -np.inf])


@st.composite
def bad_fit_input(draw):
    """(X, y, argument that must be named) for an input fit must refuse."""
    kind = draw(st.sampled_from(["empty_column", "inf_X", "nan_y", "inf_y", "empty", "one_row", "X_1d",
                                 "length_mismatch", "no_features", "y_2d", "X_3d"]))
    n = draw(st.integers(2, 8))
    p = draw(st.integers(1, 4))
    X = draw(hnp.arrays(np.float64, (n, p), elements=finite))
    y = draw(hnp.arrays(np.float64, (n,), elements=finite))
    name = "X"
    if kind == "empty_column":  # a missing cell is taken, a column of them is not
        X[:, draw(st.integers(0, p - 1))] = np.nan
    elif kind == "inf_X":
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, p - 1))] = draw(st.sampled_from([np.inf, -np.inf]))
    elif kind in ("nan_y", "inf_y"):
        y[draw(st.integers(0, n - 1))] = np.nan if kind == "nan_y" else draw(st.sampled_from([np.inf, -np.inf]))
        name = "y"
    elif kind == "empty":
        X, y = X[:0], y[:0]
    elif kind == "one_row":
        X, y = X[:1], y[:1]
    elif kind == "X_1d":
        X = X[:, 0]
    elif kind == "length_mismatch":
        y = y[: draw(st.integers(0, n - 1))]
        name = "y"
    elif kind == "no_features":
        X = X[:, :0]
    elif kind == "y_2d":
        y = np.column_stack([y, y])
        name = "y"
    elif kind == "X_3d":
        X = X[:, :, None]
    dtype = draw(st.sampled_from(["float64", "float32", "int"]))
    if dtype != "float64" and np.all(np.isfinite(X)):
        X = X.astype(np.float32 if dtype == "float32" else np.int64)
    container = draw(st.sampled_from(["array", "list", "frame"])) if np.ndim(X) == 2 else "array"
    return _container(X, container), y, name, kind


@settings(max_examples=N_FIT_CHECKS, **SETTINGS)
@given(bad_fit_input())
def test_fit_refuses_bad_input_naming_the_argument(case):
    X, y, name, kind = case
    EXAMPLES["fit_checks"] += 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError) as error:
            _estimator().fit(X, y)
    message = str(error.value)
    assert _names_argument(message, name, "X", "y"), (kind, message)
    assert len(caught) <= 1 and all(_expected_warning(w) for w in caught), [str(w.message) for w in caught]


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((12, 3)), columns=["a", "b", "c"])
    return _estimator().fit(X, X["a"] - X["b"])


@st.composite
def predict_input(draw):
    n = draw(st.integers(0, 5))
    p = draw(st.sampled_from([3, 3, 3, 1, 2, 4]))
    X = draw(hnp.arrays(np.float64, (n, p), elements=st.one_of(finite, finite, finite, special)))
    dtype = draw(st.sampled_from(["float64", "float32", "int"]))
    if dtype != "float64" and np.all(np.isfinite(X)):
        X = X.astype(np.float32 if dtype == "float32" else np.int64)
    names = draw(st.sampled_from([["a", "b", "c"], ["a", "b", "c"], ["c", "b", "a"], ["a", "b", "x"]]))
    container = draw(st.sampled_from(["frame", "frame", "array", "list"]))
    if container == "frame" and p != 3:
        names = [f"f{j}" for j in range(p)]
    return _container(X, container, names), X, container, names


@settings(max_examples=N_PREDICT_CHECKS, **SETTINGS)
@given(case=predict_input())
def test_predict_finite_or_value_error(fitted, case):
    Xin, X, container, names = case
    EXAMPLES["predict_checks"] += 1
    valid = (X.ndim == 2 and X.shape[0] > 0 and X.shape[1] == 3 and np.all(np.isfinite(X))
             and (container != "frame" or names == ["a", "b", "c"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if valid:
            pred = fitted.predict(Xin)
            assert pred.shape == (X.shape[0],) and np.all(np.isfinite(pred))
        else:
            with pytest.raises(ValueError) as error:
                fitted.predict(Xin)
            assert _names_argument(str(error.value), "X", "feature names"), str(error.value)
    # at most sklearn's "X does not have valid feature names" for unnamed input, and the
    # RuntimeWarning of sklearn's finiteness check when a row holds both +inf and -inf
    assert len(caught) <= 2, [str(w.message) for w in caught]
    assert all(_expected_warning(w) for w in caught), [str(w.message) for w in caught]


def _expected_warning(w):
    message = str(w.message)
    return "feature names" in message or (issubclass(w.category, RuntimeWarning)
                                          and "invalid value encountered in reduce" in message)


@st.composite
def valid_fit_input(draw):
    """Small valid data with constant/duplicate columns, huge/tiny magnitudes, int/float32, frames,
    missing cells and text columns (taken natively)."""
    n = draw(st.integers(2, 10))
    columns = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["random", "random", "constant", "duplicate", "binary", "missing", "text"]))
        if kind == "missing":
            column = np.array(draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n)))
            column[draw(st.lists(st.integers(1, n - 1), max_size=n - 1))] = np.nan  # row 0 stays
            columns.append(column)
        elif kind == "text":
            columns.append(np.array(draw(st.lists(st.sampled_from(["a", "b", "c", None]), min_size=n, max_size=n)),
                                    dtype=object))
        elif kind == "constant":
            columns.append(np.full(n, draw(finite)))
        elif kind == "duplicate" and columns:
            columns.append(columns[draw(st.integers(0, len(columns) - 1))].copy())
        elif kind == "binary":
            columns.append(np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), float))
        else:
            scale = 10.0 ** draw(st.integers(-300, 300))
            columns.append(scale * np.array(draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n))))
    X = np.column_stack(columns)
    for j in range(X.shape[1]):
        if all(cell is None for cell in X[:, j]):
            X[0, j] = "a"  # a column of missing cells only is refused (bad_fit_input)
    y_scale = 10.0 ** draw(st.integers(-150, 150))
    y = y_scale * np.array(draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n)))
    dtype = draw(st.sampled_from(["float64", "float64", "float32", "int"]))
    numeric = X.dtype != object and np.all(np.isfinite(X))
    if dtype == "float32" and numeric and np.all(np.abs(X) < 1e30):
        X = X.astype(np.float32)
    elif dtype == "int" and numeric and np.all(np.abs(X) < 1e9):
        X = np.round(X).astype(np.int64)
        y = np.round(y).astype(np.int64) if np.all(np.abs(y) < 1e9) else y
    container = draw(st.sampled_from(["array", "frame", "list"]))
    return _container(X, container), y, X


@settings(max_examples=N_FITS, **SETTINGS)
@given(case=valid_fit_input())
def test_valid_input_fits_and_predicts_finite(case):
    Xin, y, X = case
    EXAMPLES["fits"] += 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _estimator().fit(Xin, y)
        pred = model.predict(Xin)
    assert pred.shape == (len(y),) and np.all(np.isfinite(pred))
    assert np.all(np.isfinite(model.omega_)) and np.all(np.isfinite(model.beta_))
    assert len(caught) <= 2, [str(w.message) for w in caught]


def test_huge_y_magnitude():
    X = np.random.default_rng(0).random((6, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        pred = _estimator().fit(X, 1e300 * np.array([1.0, -1, 0.5, 0.2, -0.7, 0.9])).predict(X)
    assert np.all(np.isfinite(pred))


@pytest.mark.parametrize("call", [
    lambda m, fitted: m.fit(np.empty((0, 2)), np.empty(0)),
    lambda m, fitted: m.fit(np.empty((5, 0)), np.ones(5)),
    lambda m, fitted: m.fit(np.ones((5, 2, 1)), np.ones(5)),
    lambda m, fitted: m.fit(pd.DataFrame(index=range(5)), np.ones(5)),
    lambda m, fitted: fitted.predict([]),
    lambda m, fitted: fitted.predict(np.ones(3)),
], ids=["fit-empty", "fit-no-features", "fit-3d", "fit-frame-no-columns", "predict-empty-list", "predict-1d"])
def test_sklearn_messages_are_prefixed_with_the_argument(fitted, call):
    with pytest.raises(ValueError, match=r"(^|\W)X(\W|$)"):
        call(_estimator(), fitted)


def test_example_count():
    """Runs last in this module: the property tests above ran >= 1000 examples in total."""
    if set(EXAMPLES) != {"fit_checks", "predict_checks", "fits"}:
        pytest.skip("run the whole module to count examples")
    total = sum(EXAMPLES.values())
    print(f"hypothesis examples run: {dict(EXAMPLES)}, total {total}")
    assert total >= 1000, EXAMPLES
