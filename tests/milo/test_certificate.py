"""srtopt.milo.certificate: the structure branch and bound against brute-force enumeration
of every tree (every feature and threshold at every node, leaves fitted exactly)."""

import itertools
import math

import numpy as np
import pytest

from srtopt.milo.certificate import certify
from srtopt.milo.local_search import LocalSearch
from srtopt.milo.objective import AxisObjective, tree_objective
from srtopt.solvers.deadline import Deadline


def brute_force(X, y, depth, objective):
    candidates = [(-1, 0.0)]
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        candidates += [(j, b) for b in (values[:-1] + values[1:]) / 2]
    best = math.inf
    for combo in itertools.product(candidates, repeat=2**depth - 1):
        features = np.array([f for f, _ in combo], np.int64)
        thresholds = np.array([b for _, b in combo])
        best = min(best, tree_objective(objective, X, y, features, thresholds, depth)[0])
    return best


@pytest.mark.parametrize("seed", range(16))
def test_certified_optimum_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, p, depth = int(rng.integers(6, 13)), int(rng.integers(1, 3)), 1 + seed % 2
    X = np.round(rng.random((n, p)), 1)
    y = rng.standard_normal(n)
    objective = AxisObjective("squared", l1=float(rng.choice([0.0, 1e-2, 0.1])), cp=float(rng.choice([0.0, 0.01])),
                              min_samples_leaf=int(rng.integers(1, 4)))
    optimum = brute_force(X, y, depth, objective)
    incumbent = LocalSearch(X, y, depth, objective, random_state=seed).run(n_restarts=2).objective
    for known in (math.inf, incumbent):  # with and without the local search's tree to prune
        proof = certify(X, y, depth, objective, Deadline(), incumbent=known)  # no limit: complete on any machine
        assert proof.complete
        assert proof.bound <= optimum * (1 + 1e-12) + 1e-15
        assert proof.bound == pytest.approx(optimum, rel=1e-7, abs=1e-12)
        if known == math.inf:
            assert proof.objective == pytest.approx(optimum, rel=1e-9, abs=1e-12)


@pytest.mark.slow
def test_depth_three_on_a_tiny_set():
    rng = np.random.default_rng(0)
    X = np.round(rng.random((8, 1)), 1)  # 6 distinct values: 6^7 trees for the brute force (8 s; 9 rows: 30 s)
    y = rng.standard_normal(8)
    objective = AxisObjective("squared", l1=0.01, min_samples_leaf=1)
    proof = certify(X, y, 3, objective, Deadline())  # no limit: complete on any machine
    assert proof.complete and proof.objective == pytest.approx(brute_force(X, y, 3, objective), rel=1e-9)


class CountingDeadline:
    """A deadline that passes after ``looks`` looks (none: never), whatever the machine's load;
    ``seen`` counts the looks."""

    def __init__(self, looks=math.inf):
        self.looks, self.seen = looks, 0

    def passed(self):
        self.seen += 1
        return self.seen > self.looks


def test_a_deadline_gives_a_valid_partial_bound():
    """Stopped halfway through the looks at the clock of a complete search, the search returns an
    incomplete certificate whose bound is positive and at most the optimum it would have proven;
    stopped at its first look, before any bound, it returns None."""
    rng = np.random.default_rng(1)
    X = rng.random((80, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 1] + 0.3 * rng.standard_normal(80)
    objective = AxisObjective("squared", l1=1e-3)
    found = LocalSearch(X, y, 3, objective, random_state=0).run(n_restarts=3)
    never = CountingDeadline()
    full = certify(X, y, 3, objective, never, incumbent=found.objective)
    assert full.complete
    optimum = min(full.objective, found.objective)
    partial = certify(X, y, 3, objective, CountingDeadline(never.seen // 2), incumbent=found.objective)
    assert not partial.complete and 0 < partial.bound <= optimum
    assert certify(X, y, 3, objective, CountingDeadline(1), incumbent=found.objective) is None


def test_absolute_loss_is_not_certified_here():
    X = np.random.default_rng(2).random((10, 2))
    assert certify(X, X[:, 0], 1, AxisObjective("absolute"), Deadline(10)) is None
