"""The leaf bases: the spline basis is scikit-learn's SplineTransformer basis (same knots, linear
extrapolation), holds the linear leaf, its wiggle map turns the l2 term into the P-spline penalty, its
pieces evaluate to its columns, and its file form is checked."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.preprocessing import SplineTransformer

from srtopt.bases import (ConstantBasis, LinearBasis, SplineBasis, basis_from_json, bspline_design, greville,
                          knot_vector, wiggle_map)


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    X = rng.random((400, 3))
    X[:, 2] = rng.integers(0, 2, 400)  # a binary column: no curve
    return X


def test_the_basis_is_scikit_learns_spline_basis_with_linear_extrapolation(rows):
    basis = SplineBasis.fit(rows, n_knots=5)
    assert sorted(basis.curves) == [0, 1]
    knots, _ = basis.curves[0]
    reference = SplineTransformer(knots=knots[:, None], degree=3, extrapolation="linear").fit(rows[:, [0]])
    x = np.linspace(-0.5, 1.5, 81)
    np.testing.assert_allclose(bspline_design(x, knot_vector(knots, 3), 3), reference.transform(x[:, None]),
                               atol=1e-13)


def test_the_spline_basis_holds_the_linear_leaf_and_the_wiggles_are_the_penalty(rows):
    basis = SplineBasis.fit(rows)
    knots, M = basis.curves[0]
    t = knot_vector(knots, 3)
    x = np.linspace(-1.0, 2.0, 61)  # extrapolation included
    B = bspline_design(x, t, 3)
    np.testing.assert_allclose(B @ greville(t, 3), x, atol=1e-12)  # the function x
    np.testing.assert_allclose(B.sum(axis=1), 1.0, atol=1e-12)  # the function 1
    g = greville(t, 3)
    first = np.diff(np.eye(len(g)), axis=0) / np.diff(g)[:, None]
    D2 = np.diff(first, axis=0) / ((g[2:] - g[:-2]) / 2)[:, None]
    c = np.random.default_rng(1).standard_normal(M.shape[1])
    assert np.sum((D2 @ (M @ c)) ** 2) == pytest.approx(np.sum(c**2), rel=1e-9)
    assert np.abs(D2 @ g).max() < 1e-9  # x is not penalized
    Xa = basis.with_scale(0.3).design(rows)
    assert Xa.shape == (400, basis.n_columns) and np.linalg.matrix_rank(Xa) == basis.n_columns
    np.testing.assert_allclose(basis.with_scale(0.3).wiggle(0, rows[:, 0]), 0.3 * bspline_design(rows[:, 0], t, 3) @ M)


def test_a_curve_is_its_linear_term_plus_its_wiggle(rows):
    basis = SplineBasis.fit(rows).with_scale(0.5)
    coef = np.random.default_rng(2).standard_normal(basis.n_columns)
    x = np.linspace(-0.2, 1.2, 15)
    X = np.zeros((15, 3))
    X[:, 1] = x
    expected = basis.design(X) @ coef - basis.design(np.zeros((1, 3)))[0] @ coef  # only feature 1 moves
    curve = basis.curve(1, coef, x) - basis.curve(1, coef, np.zeros(1))
    np.testing.assert_allclose(curve, expected, atol=1e-12)
    a = basis.bspline_coefficients(1, coef)
    knots, _ = basis.curves[1]
    np.testing.assert_allclose(bspline_design(x, knot_vector(knots, 3), 3) @ a, basis.curve(1, coef, x), atol=1e-12)


def test_the_pieces_evaluate_to_the_columns(rows):
    basis = SplineBasis.fit(rows).with_scale(0.7)
    pieces = basis.pieces(0)
    breaks = np.asarray(pieces["breaks"])

    def evaluate(column, v):
        if v < breaks[0]:
            return column["left"][0] + column["left"][1] * (v - breaks[0])
        if v > breaks[-1]:
            return column["right"][0] + column["right"][1] * (v - breaks[-1])
        i = min(int(np.searchsorted(breaks, v, side="right")) - 1, len(breaks) - 2)
        return np.polyval(column["coef"][i], v - breaks[i])

    x = np.linspace(-0.4, 1.4, 37)
    evaluated = np.array([[0.7 * evaluate(column, v) for column in pieces["columns"]] for v in x])
    np.testing.assert_allclose(evaluated, basis.wiggle(0, x), atol=1e-12)


def test_feature_columns_and_bounds(rows):
    basis = SplineBasis.fit(rows)
    owners = basis.column_features()
    assert owners[0] == -1 and list(owners[1:4]) == [0, 1, 2]
    assert all(owners[c] == 1 for c in basis.feature_columns(1)) and len(basis.feature_columns(2)) == 1
    lower, upper = np.full(4, -np.inf), np.full(4, np.inf)
    lower[2] = lower[3] = 0.0  # features 1 (curved) and 2 (binary) increasing
    lower[1] = upper[1] = 0.0  # feature 0 left out
    lo, hi = basis.column_bounds(lower, upper)
    assert np.all(lo[basis.feature_columns(0)] == 0) and np.all(hi[basis.feature_columns(0)] == 0)
    assert np.all(np.isinf(lo[basis.feature_columns(1)])), "a bounded curve is bounded by rows, not columns"
    assert lo[3] == 0.0 and hi[3] == np.inf, "a feature without a curve keeps its slope's bound"
    A, row_lo, row_hi = basis.slope_rows(lower, upper)
    coef = np.random.default_rng(3).standard_normal(basis.n_columns)
    np.testing.assert_allclose(A @ coef, basis.slopes(1, coef), atol=1e-12)
    assert np.all(row_lo == 0) and np.all(row_hi == np.inf)
    assert LinearBasis(3).slope_rows(lower, upper) is None
    assert ConstantBasis(3).column_bounds(lower, upper)[0].shape == (1,)


def _slopes_on_a_grid(basis, j, coef, x):
    """The slope of curve j between the points of a fine grid x (extrapolation included)."""
    return np.diff(basis.curve(j, coef, x)) / np.diff(x)


def test_the_slopes_bound_the_curves_derivative_everywhere(rows):
    basis = SplineBasis.fit(rows).with_scale(0.4)
    x = np.linspace(-1.0, 2.0, 3001)
    for seed in range(5):
        coef = np.random.default_rng(seed).standard_normal(basis.n_columns)
        d, slope = basis.slopes(0, coef), _slopes_on_a_grid(basis, 0, coef, x)
        assert d.min() - 1e-9 <= slope.min() and slope.max() <= d.max() + 1e-9
    line = np.zeros(basis.n_columns)
    line[1] = 2.5
    np.testing.assert_allclose(basis.slopes(0, line), 2.5)  # a line's slopes are its slope: no line is lost


def test_within_slopes_moves_only_the_curves_off_their_bounds(rows):
    basis = SplineBasis.fit(rows).with_scale(0.4)
    lower, upper = np.full(4, -np.inf), np.full(4, np.inf)
    lower[1], upper[1] = -0.5, 3.0
    coef = np.random.default_rng(6).standard_normal((4, 2, basis.n_columns))
    coef[0, 0] = 0.0
    coef[0, 0, 1] = 1.0  # a line of slope 1: within the bounds
    moved = basis.within_slopes(coef, lower, upper)
    d = basis.slopes(0, moved)
    assert d.min() >= -0.5 - 1e-12 and d.max() <= 3.0 + 1e-12
    np.testing.assert_array_equal(moved[0, 0], coef[0, 0])
    others = np.setdiff1d(np.arange(basis.n_columns), np.r_[0, basis.feature_columns(0)])
    np.testing.assert_array_equal(moved[..., others], coef[..., others])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5.0, 5.0), min_size=6, max_size=6), st.sampled_from([1, -1]))
def test_a_curve_whose_slopes_have_a_sign_is_monotone_everywhere(rows_of_coefficients, sign):
    basis = SplineBasis.fit(np.linspace(0.0, 1.0, 50)[:, None] ** 2).with_scale(0.3)  # knots crowd to the left
    coef = np.zeros(basis.n_columns)
    coef[basis.feature_columns(0)] = rows_of_coefficients  # the linear weight and 5 wiggles
    lower, upper = np.array([-np.inf, 0.0 if sign > 0 else -np.inf]), np.array([np.inf, np.inf if sign > 0 else 0.0])
    coef = basis.within_slopes(coef, lower, upper)
    A, lo, hi = basis.slope_rows(lower, upper)
    assert np.all(A @ coef >= lo - 1e-9) and np.all(A @ coef <= hi + 1e-9)
    x = np.linspace(-1.0, 2.0, 601)
    assert np.all(sign * np.diff(basis.curve(0, coef, x)) >= -1e-9)


@pytest.mark.parametrize("basis", [ConstantBasis(3), LinearBasis(3), "spline"])
def test_the_file_form_gives_the_same_basis(rows, basis):
    basis = SplineBasis.fit(rows).with_scale(0.25) if basis == "spline" else basis
    again = basis_from_json(basis.to_json())
    assert again == basis
    np.testing.assert_array_equal(getattr(again, "quantiles", None), getattr(basis, "quantiles", None))
    np.testing.assert_array_equal(again.design(rows), basis.design(rows))


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(kind="quadratic"), "unknown leaf basis"),
    (lambda d: d.update(scale=-1.0), "out of range"),
    (lambda d: d["curves"][0].update(knots=[0.0, 0.5, 0.4, 1.0, 1.1]), "do not make a spline"),
    (lambda d: d["curves"][0].update(feature=7), "do not make a spline"),
    (lambda d: d["curves"][0].update(map=[[1.0]]), "do not make a spline"),
    (lambda d: d.pop("degree"), "malformed spline leaf basis"),
    (lambda d: d.update(quantiles=[[0.0] * 11] * 2), "quantiles"),
    (lambda d: d.update(quantiles=[[0.5] * 10 + [0.4]] * 3), "nondecreasing"),
])
def test_a_malformed_file_form_is_refused(rows, edit, match):
    doc = SplineBasis.fit(rows).to_json()
    edit(doc)
    with pytest.raises(ValueError, match=match):
        basis_from_json(doc)


def test_wiggle_map_has_the_penalty_range():
    t = knot_vector(np.array([0.0, 0.2, 0.5, 0.9, 1.0]), 3)
    M = wiggle_map(t, 3)
    assert M.shape == (7, 5) and np.linalg.matrix_rank(M) == 5


@pytest.fixture(scope="module")
def rich(rows):
    """A spline basis with steps on features 0 and 1 and the pairs (0, 1), (1, 2)."""
    return SplineBasis.fit(rows).with_scale(0.5).replaced(
        steps={0: np.array([0.3, 0.6]), 1: np.array([0.5])}, step_scale=0.7, pairs=[(0, 1), (1, 2)], pair_scale=1.3)


def test_steps_and_pairs_are_columns_of_their_own(rows, rich):
    plain = SplineBasis.fit(rows).with_scale(0.5)
    Xa = rich.design(rows)
    assert Xa.shape == (400, plain.n_columns + 3 + 2)
    np.testing.assert_array_equal(Xa[:, :plain.n_columns], plain.design(rows))
    np.testing.assert_array_equal(Xa[:, rich.step_columns(0)], 0.7 * (rows[:, [0]] >= [0.3, 0.6]))
    m = rich.medians()
    np.testing.assert_allclose(m, np.median(rows, axis=0))
    np.testing.assert_allclose(Xa[:, rich.pair_columns()[0]], 1.3 * (rows[:, 0] - m[0]) * (rows[:, 1] - m[1]))
    owners = rich.column_features()
    assert list(owners[rich.step_columns(0)]) == [0, 0] and list(owners[rich.pair_columns()]) == [-1, -1]
    assert set(rich.step_columns(1)) < set(rich.feature_columns(1)) and not len(rich.step_columns(2))


def test_a_curve_jumps_at_its_steps_and_a_pair_is_zero_at_either_median(rich):
    coef = np.random.default_rng(4).standard_normal(rich.n_columns)
    jumps = coef[rich.step_columns(0)] * 0.7
    at = rich.curve(0, coef, np.array([0.3 - 1e-9, 0.3, 0.6 - 1e-9, 0.6]))
    np.testing.assert_allclose([at[1] - at[0], at[3] - at[2]], jumps, atol=1e-6)
    m = rich.medians()
    X = np.random.default_rng(5).random((50, 3))
    X[:25, 0], X[25:, 1] = m[0], m[1]
    assert np.all(rich.pair_design(X)[:, 0] == 0)


def test_bases_of_other_medians_differ_when_pairs_use_them(rows, rich):
    """The medians center the pairs' columns: two bases whose quantiles differ are the same design without pairs
    (the other quantiles are the readers'), and different ones with pairs."""
    plain = SplineBasis.fit(rows)
    moved = plain.replaced(quantiles=plain.quantiles + 0.01)
    assert moved == plain and hash(moved) == hash(plain)
    shifted = rich.replaced(quantiles=rich.quantiles + 0.01)
    assert shifted != rich and not np.array_equal(shifted.design(rows), rich.design(rows))


def test_bounds_keep_steps_and_pairs_within_a_features_slope_bounds(rich):
    lower, upper = np.full(4, -np.inf), np.full(4, np.inf)
    lower[1] = 0.0  # feature 0 increasing
    lower[2], upper[2] = -1.0, 2.0  # feature 1 within an interval
    lo, hi = rich.column_bounds(lower, upper)
    assert np.all(lo[rich.step_columns(0)] == 0) and np.all(hi[rich.step_columns(0)] == np.inf)
    assert np.all(lo[rich.step_columns(1)] == 0) and np.all(hi[rich.step_columns(1)] == 0)
    assert np.all(lo[rich.pair_columns()] == 0) and np.all(hi[rich.pair_columns()] == 0)
    free = rich.column_bounds(np.full(4, -np.inf), np.full(4, np.inf))
    assert np.all(np.isinf(free[0][1:])) and np.all(np.isinf(free[1][1:]))
    coef = np.zeros(rich.n_columns)
    coef[1] = 1.0  # a line of slope 1 in x0
    assert rich.slopes(0, coef).min() == 0.0 and rich.slopes(0, coef).max() == 1.0
    coef[rich.step_columns(0)[1]] = -0.1  # a step down
    assert rich.slopes(0, coef).min() == -np.inf
    coef[rich.step_columns(0)[1]], coef[rich.pair_columns()[0]] = 0.0, 0.2  # a pair: the slope in x0 moves with x1
    assert rich.slopes(0, coef).min() == -np.inf and rich.slopes(0, coef).max() == np.inf
    assert rich.slopes(2, coef).max() == 0.0, "feature 2's pair with feature 1 has no weight"


def test_the_file_form_keeps_steps_and_pairs(rows, rich):
    again = basis_from_json(rich.to_json())
    assert again == rich and again.pairs == [(0, 1), (1, 2)] and again.step_scale == 0.7
    np.testing.assert_array_equal(again.design(rows), rich.design(rows))
    assert "steps" not in SplineBasis.fit(rows).to_json(), "a basis without them writes the file of before"


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["steps"][0].update(thresholds=[0.6, 0.3]), "not increasing"),
    (lambda d: d["steps"][0].update(feature=3), "not increasing"),
    (lambda d: d.update(pairs=[[1, 0]]), "not distinct"),
    (lambda d: d.update(pairs=[[0, 1], [0, 1]]), "not distinct"),
    (lambda d: d.update(pair_scale=0.0), "pair_scale"),
    (lambda d: d.update(step_scale=True), "step_scale"),
    (lambda d: d.pop("quantiles"), "needs the features' quantiles"),
])
def test_malformed_steps_and_pairs_are_refused(rich, edit, match):
    doc = rich.to_json()
    edit(doc)
    with pytest.raises(ValueError, match=match):
        basis_from_json(doc)
