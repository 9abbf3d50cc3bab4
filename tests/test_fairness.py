"""srtopt.fairness: the groups' means, gaps and losses on any data, with the textbook intervals (equal
weights: mean +- z s / sqrt(n), a difference of independent means: sqrt(s_g^2/n_g + s_h^2/n_h)), and
their coverage on simulated data.  (A tree's report on other rows: tests/estimators/test_constraints.py.)"""

import numpy as np
import pytest
from scipy.stats import norm

from srtopt.fairness import group_gaps, group_losses, group_means

Z = norm.ppf(0.975)


def test_means_and_gaps_with_equal_weights_are_the_textbook_ones():
    rng = np.random.default_rng(0)
    groups = np.repeat(["f", "m", "x"], [40, 60, 30])
    values = rng.standard_normal(130) + (groups == "m")
    means = group_means(values, groups)
    assert means["group"].tolist() == ["f", "m", "x"] and means["rows"].tolist() == [40, 60, 30]
    for k, label in enumerate("fmx"):
        v = values[groups == label]
        assert means["mean"][k] == pytest.approx(v.mean())
        assert means["high"][k] - v.mean() == pytest.approx(Z * v.std(ddof=1) / np.sqrt(len(v)))
    gaps = group_gaps(values, groups)
    assert gaps["pair"].tolist() == ["m - f", "x - f", "x - m"]
    f, m = values[groups == "f"], values[groups == "m"]
    assert gaps["gap"][0] == pytest.approx(m.mean() - f.mean()) and gaps["rows"][0] == 100
    half = Z * np.sqrt(f.var(ddof=1) / len(f) + m.var(ddof=1) / len(m))
    assert (gaps["low"][0], gaps["high"][0]) == pytest.approx((m.mean() - f.mean() - half, m.mean() - f.mean() + half))


def test_weights_are_repetitions_for_the_estimate():
    values, groups = np.array([1.0, 2.0, 5.0, 3.0, 4.0]), np.array([0, 0, 1, 1, 1])
    weights = np.array([2.0, 1.0, 1.0, 0.0, 3.0])
    repeated = np.repeat(np.arange(5), weights.astype(int))
    ours = group_means(values, groups, sample_weight=weights)
    theirs = group_means(values[repeated], groups[repeated])
    np.testing.assert_allclose(ours["mean"], theirs["mean"])
    assert ours["rows"].tolist() == [2, 2]


def test_losses_are_each_groups_mean_loss():
    y, prediction, groups = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.5, 2.0, 1.0, 4.0]), np.array(["a", "a", "b", "b"])
    squared = group_losses(y, prediction, groups)
    np.testing.assert_allclose(squared["loss"], [0.125, 2.0])
    np.testing.assert_allclose(group_losses(y, prediction, groups, loss="absolute")["loss"], [0.25, 1.0])
    np.testing.assert_allclose(group_losses(y, prediction, groups, loss=lambda t, p: (p > t).astype(float))["loss"],
                               [0.5, 0.0])


def test_the_gaps_interval_covers_the_true_gap_at_its_level():
    rng = np.random.default_rng(1)
    covered = 0
    for _ in range(400):
        groups = (rng.random(200) < 0.3).astype(int)
        values = rng.exponential(1.0, 200) + 0.5 * groups  # skewed, true gap 0.5
        gap = group_gaps(values, groups, confidence=0.9)
        covered += gap["low"][0] <= 0.5 <= gap["high"][0]
    assert 0.86 <= covered / 400 <= 0.94


@pytest.mark.parametrize("call, message", [
    (lambda: group_gaps([1.0, 2.0], [0, 0]), "the groups hold a single group"),
    (lambda: group_gaps([1.0, 2.0], [0, 1, 1]), "must be 1-D of one length"),
    (lambda: group_gaps([1.0, np.nan], [0, 1]), "must be finite numbers"),
    (lambda: group_gaps([1.0, 2.0], [0, 1], sample_weight=[1.0, -1.0]), "sample_weight must hold a finite weight"),
    (lambda: group_gaps([1.0, 2.0], [0, 1], confidence=1.5), "confidence must lie in"),
    (lambda: group_losses([1.0, 2.0], [1.0, 2.0], [0, 1], loss="huber"), "loss must be 'squared', 'absolute'"),
])
def test_bad_input_is_one_line(call, message):
    with pytest.raises(ValueError, match=message):
        call()
