"""The leaf-ridge guard: leaf_ridge="auto", where it runs (fewer rows than leaf coefficients; fewer than
ZONE per coefficient where the linear model competes with the initial tree), its cross-validation, and
the shrinkage of the leaves towards the linear fit, and the rule that keeps factor 1 unless another
factor beats it by a standard error."""

from __future__ import annotations

import time
from unittest import mock

import numpy as np
import pytest

from srtopt import SoftRegressionTree, load
from srtopt.estimators import leaf_ridge
from srtopt.estimators.leaf_ridge import GRID, chosen, in_small_data_zone
from srtopt.linalg import ridge_loo
from srtopt.estimators.regularization import regularization_lambdas
from srtopt.models.terms import Squared
from srtopt.training.initialization import WarmStart
from srtopt.tree import Tree


def _noise(n, p, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, p)), rng.standard_normal(n)


@pytest.mark.parametrize("n, p, depth, inside", [(83, 20, 2, True), (84, 20, 2, False), (100, 5, 3, False),
                                                 (47, 5, 3, True)])
def test_the_zone_is_fewer_rows_than_leaf_coefficients(n, p, depth, inside):
    assert in_small_data_zone(n, p, depth) is inside


@pytest.mark.parametrize("n, structured", [(240, False), (120, True)])
def test_outside_the_zone_nothing_changes(n, structured):
    X, y = _noise(n, 4)  # 240 rows: 12 per leaf coefficient; 120 rows of a tree's data: the linear model loses
    if structured:
        y = np.where(X[:, 0] > 0.5, 3 * X[:, 1], -2 * X[:, 2]) + 0.1 * y
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=3).fit(X, y)
    plain = SoftRegressionTree(depth=2, random_state=0, max_iter=3, leaf_ridge=1).fit(X, y)
    assert tree.leaf_ridge_ == 1.0 and tree.leaf_ridge_losses_ == {} and tree.leaf_center_ is None
    assert tree.lambda_b_ == regularization_lambdas("l2", 4, Tree(2), n)[1]
    np.testing.assert_array_equal(tree.beta_, plain.beta_)


def test_where_the_linear_model_competes_the_guard_runs_in_the_wider_zone():
    rng = np.random.default_rng(0)
    X = rng.random((150, 5))
    y = X @ rng.standard_normal(5) + 0.5 * rng.standard_normal(150)  # 7.5 rows per coefficient at depth 2
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=3).fit(X, y)
    assert list(tree.leaf_ridge_losses_) == list(GRID)


def test_inside_the_zone_the_factor_of_least_validation_loss_is_used():
    X, y = _noise(60, 20)
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=3).fit(X, y)
    losses = tree.leaf_ridge_losses_
    assert list(losses) == list(GRID) and all(np.isfinite(v) and v > 0 for v in losses.values())
    assert tree.leaf_ridge_ == min(losses, key=losses.get) and tree.leaf_ridge_ > 1
    assert tree.lambda_b_ == pytest.approx(regularization_lambdas("l2", 20, Tree(2), 60)[1])  # the paper's, and
    np.testing.assert_allclose(tree.leaf_center_, ridge_loo(tree.scaler_.transform(X), tree.scaler_.transform_y(y),
                                                            np.ones(60))[0])  # the shrinkage towards the linear fit
    paper = SoftRegressionTree(depth=2, random_state=0, max_iter=3, leaf_ridge=1.0).fit(X, y)
    again = SoftRegressionTree(depth=2, random_state=0, max_iter=leaf_ridge.WARM_ITER, leaf_ridge=tree.leaf_ridge_,
                               init=WarmStart.from_estimator(paper)).fit(X, y)
    # the final fit: the tree of factor 1, continued with the chosen factor
    np.testing.assert_allclose(tree.beta_, again.beta_, rtol=1e-9, atol=1e-12)
    assert tree.n_iter_ == paper.n_iter_ + again.n_iter_ and again.leaf_ridge_losses_ == {}
    macros = [record["macro"] for record in tree.history_]  # one history, the continued run's numbered after
    assert macros == sorted(macros) and macros[-1] == tree.n_iter_ - 1


def test_leaves_of_curves_are_fitted_with_the_chosen_factor_from_the_start():
    """Spline leaves: the final fit is the fit with the chosen factor from the estimator's start, not the tree of
    factor 1 continued."""
    X, y = _noise(60, 6)
    tree = SoftRegressionTree(depth=2, leaf="spline", random_state=0, max_iter=3).fit(X, y)
    assert list(tree.leaf_ridge_losses_) == list(GRID) and tree.leaf_ridge_ > 1
    chosen = SoftRegressionTree(depth=2, leaf="spline", random_state=0, max_iter=3, leaf_ridge=tree.leaf_ridge_)
    np.testing.assert_array_equal(tree.beta_, chosen.fit(X, y).beta_)
    assert tree.n_iter_ == chosen.n_iter_


def test_the_comparison_fits_carry_the_group_constraints():
    """A parity constraint changes which factor is best (the heavy factors pull the leaves towards the
    unconstrained linear model): every fold's fit has the estimator's constraints and its rows' groups."""
    X, y = _noise(60, 20)
    group = np.arange(60) % 2
    seen, fit = [], SoftRegressionTree.fit

    def recording(self, X, y, sample_weight=None, sensitive_features=None, **kwargs):
        seen.append((self.constraints, None if sensitive_features is None else len(sensitive_features)))
        return fit(self, X, y, sample_weight, sensitive_features, **kwargs)

    with mock.patch.object(SoftRegressionTree, "fit", recording):
        tree = SoftRegressionTree(depth=2, random_state=0, max_iter=3, constraints="parity:gap=0.05").fit(
            X, y, sensitive_features=group)
    assert len(tree.leaf_ridge_losses_) == len(GRID) and len(seen) > 1
    assert all(constraints == "parity:gap=0.05" and rows is not None for constraints, rows in seen)
    assert {rows for _, rows in seen[1:]} == {40}  # the fold fits: two thirds of the rows, with their groups


def test_a_factor_that_cannot_win_is_not_fitted_on_the_remaining_folds():
    rows, losses = _held_out(np.full(100, 0.5))
    fitted = {1.0: leaf_ridge.FOLDS, 100.0: leaf_ridge.FOLDS, 1e4: 1, 1e6: 1}
    losses[1e4] = losses[1e6] = losses[100.0] + 1.0  # partial sums above 100's total: further folds only add
    assert leaf_ridge._next_fit(losses, rows, None, fitted, nonnegative=True) is None
    losses[1e6] = losses[100.0] - 1.0  # a partial sum below it: its next fold is fitted
    assert leaf_ridge._next_fit(losses, rows, None, fitted, nonnegative=True) == 1e6


def test_the_comparison_chooses_as_the_one_that_fits_every_factor_on_every_fold():
    X, noise = _noise(60, 20)
    y = 4.0 * (X[:, 0] > 0.5) + 0.1 * noise
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=3).fit(X, y)
    with mock.patch.object(Squared, "nonnegative", False):  # every factor on every fold
        full = SoftRegressionTree(depth=2, random_state=0, max_iter=3).fit(X, y)
    assert tree.leaf_ridge_ == full.leaf_ridge_
    assert tree.leaf_ridge_losses_[tree.leaf_ridge_] == full.leaf_ridge_losses_[tree.leaf_ridge_]


def test_factor_1_is_fitted_on_a_fold_before_the_others_which_start_from_its_tree():
    X, y = _noise(60, 20)
    calls, fold_loss = [], leaf_ridge._fold_loss

    def recording(estimator, X, y, sample_weight, factor, fold, time_limit, groups=None, start=None, encoder=None):
        calls.append((factor, len(fold[1]), start))
        out = fold_loss(estimator, X, y, sample_weight, factor, fold, time_limit, groups, start, encoder)
        if start is not None:
            assert out[2].n_iter_ <= leaf_ridge.WARM_ITER
        return out

    with mock.patch.object(leaf_ridge, "_fold_loss", recording):
        SoftRegressionTree(depth=2, random_state=0, max_iter=3).fit(X, y)
    assert all(start is None for factor, _, start in calls if factor == 1.0)
    assert all(start is not None for factor, _, start in calls if factor != 1.0)
    fits_of = {factor: [i for i, call in enumerate(calls) if call[0] == factor] for factor in GRID}
    assert len(fits_of[1.0]) == leaf_ridge.FOLDS and all(fits_of[factor] for factor in GRID)
    for factor in GRID[1:]:  # the k-th fold of every other factor comes after factor 1's
        for k, i in enumerate(fits_of[factor]):
            assert fits_of[1.0][k] < i


def test_a_larger_factor_shrinks_the_leaves_towards_zero_or_the_linear_fit():
    X, y = _noise(60, 20)
    norms = [np.linalg.norm(SoftRegressionTree(depth=2, random_state=0, max_iter=3, leaf_ridge=f, leaf_center="zero")
                            .fit(X, y).beta_[:, 1:]) for f in (1, 1e6)]
    assert norms[1] < 0.01 * norms[0]
    y = X @ np.linspace(-1, 1, 20) + 0.3 * y
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=3, leaf_ridge=1e6).fit(X, y)
    np.testing.assert_allclose(tree.beta_, np.tile(tree.leaf_center_, (4, 1)), atol=1e-3)  # every leaf: the linear fit


def test_no_l2_term_no_cross_validation():
    X, y = _noise(60, 20)
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=2, regularization=None).fit(X, y)
    assert tree.leaf_ridge_ == 1.0 and tree.leaf_ridge_losses_ == {} and tree.lambda_b_ == 0


def test_sample_weights_count_the_rows_that_weigh():
    X, y = _noise(200, 20)
    weights = np.zeros(200)
    weights[:60] = 1.0  # 60 rows weigh: fewer than the leaves' coefficients although X has 200 rows
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=2).fit(X, y, sample_weight=weights)
    assert list(tree.leaf_ridge_losses_) == list(GRID)


@pytest.mark.parametrize("value", ["big", 0, -1.0, float("nan"), True, None])
def test_bad_leaf_ridge_is_named(value):
    X, y = _noise(60, 3)
    with pytest.raises(ValueError, match="leaf_ridge must be 'auto' or a number > 0"):
        SoftRegressionTree(leaf_ridge=value).fit(X, y)


@pytest.mark.slow
def test_time_limit_covers_the_cross_validation():
    X, y = _noise(150, 60)
    started = time.perf_counter()
    tree = SoftRegressionTree(depth=3, random_state=0, time_limit=1.0).fit(X, y)
    assert time.perf_counter() - started < 12.0  # 1 s asked; measured 1.0 s
    assert tree.leaf_ridge_ in GRID


def test_the_chosen_factor_is_saved(tmp_path):
    X, y = _noise(60, 20)
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=2).fit(X, y)
    tree.save(tmp_path / "m.json")
    assert load(tmp_path / "m.json").leaf_ridge_ == tree.leaf_ridge_


def test_too_few_rows_for_the_folds_keeps_the_factor_one():
    X, y = _noise(5, 3)
    tree = SoftRegressionTree(depth=2, random_state=0, max_iter=2).fit(X, y)
    assert tree.leaf_ridge_ == 1.0 and tree.leaf_ridge_losses_ == {}


def _held_out(gains, seed=0):
    """Per-row held-out losses of the factors, factor 1's above factor 100's by ``gains`` (NaN: factor 1 not
    held out there yet), and their sums."""
    base = np.random.default_rng(seed).random(len(gains)) + 1.0
    rows = {1.0: base + gains, 100.0: base, 1e4: base + 1.0, 1e6: base + 1.0}
    return rows, {factor: float(np.nansum(r)) for factor, r in rows.items()}


def test_a_factor_that_one_row_makes_best_does_not_replace_factor_1():
    rows, losses = _held_out(np.r_[np.full(99, -0.1), 20.0])  # 100 is worse on 99 rows, far better on one
    assert min(losses, key=losses.get) == 100.0
    assert chosen(losses, rows, list(GRID)) == 1.0
    with mock.patch.object(leaf_ridge, "MARGIN", 0.0):  # the least loss alone
        assert chosen(losses, rows, list(GRID)) == 100.0


def test_a_factor_better_on_most_rows_replaces_factor_1():
    rows, losses = _held_out(0.2 + 0.1 * np.random.default_rng(1).standard_normal(100))
    assert chosen(losses, rows, list(GRID)) == 100.0


@pytest.mark.parametrize("first_half, beaten", [(np.r_[np.full(49, -0.1), 85.0], False), (np.full(50, 2.0), True)])
def test_factor_1_gets_its_remaining_folds_only_while_the_best_does_not_beat_it(first_half, beaten):
    """Factor 1 held out on half of the rows so far, its partial sum above factor 100's total: the comparison
    ends when 100 beats it there by a standard error, else fits factor 1's next fold."""
    rows, losses = _held_out(np.r_[first_half, np.full(50, np.nan)])
    assert losses[1.0] > losses[100.0]
    fitted = {1.0: 1, 100.0: leaf_ridge.FOLDS, 1e4: 1, 1e6: 1}
    assert leaf_ridge._next_fit(losses, rows, None, fitted, nonnegative=True) == (None if beaten else 1.0)


def test_a_weight_counts_as_repeated_rows_in_the_standard_error():
    rows, losses = _held_out(np.r_[np.full(50, -0.2), np.full(50, 0.35)])
    twice = {factor: np.r_[r, r[:50]] for factor, r in rows.items()}  # the first 50 rows repeated
    weights = np.r_[np.full(50, 2.0), np.ones(50)]
    for factor in (100.0, 1e4):
        assert leaf_ridge.beats_one(rows, factor, weights) == leaf_ridge.beats_one(twice, factor)
    assert leaf_ridge.beats_one(rows, 100.0, weights) != leaf_ridge.beats_one(rows, 100.0)  # the weights matter
