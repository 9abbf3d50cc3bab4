"""Classification loss terms: the numpy hot path against the formula written once, finite differences,
and the formula's CasADi and Pyomo renderings."""

import casadi as ca
import numpy as np
import pytest

from srtopt.models.constraints import RowMean
from srtopt.models.terms.class_losses import (ClassProbability, ClassValue, LogLoss, MisclassificationCost,
                                              ProbabilityLoss, make_class_loss, register_class_loss)
from srtopt.models.terms.operations import CASADI, pyomo_ops

COST = np.array([[0.0, 1.0, 3.0], [2.0, 0.0, 1.0], [1.0, 5.0, 0.0]])
CASES = [(LogLoss(), 2), (LogLoss(), 4), (MisclassificationCost(), 2), (MisclassificationCost(COST), 3),
         (ClassProbability(1), 2), (ClassProbability(0), 2), (ClassProbability(2), 3),
         (ProbabilityLoss(lambda p: -ca.log(p), name="log"), 2), (ProbabilityLoss(lambda p: -ca.log(p), name="log"), 3),
         (ProbabilityLoss(lambda p: -(1 - p) ** 2 * ca.log(p), name="focal"), 4),
         (ProbabilityLoss(lambda p, c: -(1 + c) * ca.log(p), name="class-weighted"), 3),
         (ClassValue(RowMean("squared_error", upper=1), 1), 2), (ClassValue(RowMean("residual", upper=1), 2), 3)]


def _data(loss, K, rng, n=6, m=3):
    free = 1 if K == 2 else K
    U = 2.0 * rng.standard_normal((free, n, m))
    T = loss.targets(rng.integers(0, K, n), K).T[:, :, None]  # classes first, broadcast over the leaves
    return U, T


@pytest.mark.parametrize("loss, K", CASES, ids=lambda c: getattr(c, "name", c))
def test_derivatives_match_finite_differences(loss, K):
    rng = np.random.default_rng(K)
    U, T = _data(loss, K, rng)
    R, G, H = loss.evaluate(U, T, order=2)
    np.testing.assert_allclose(R, loss.value(U, T), rtol=1e-13, atol=1e-15)  # the hot path = the formula
    h = 1e-6
    for a in range(len(U)):
        step = np.zeros((len(U), 1, 1))
        step[a] = h
        np.testing.assert_allclose(G[a], (loss.value(U + step, T) - loss.value(U - step, T)) / (2 * h), atol=1e-8)
        dG = (loss.evaluate(U + step, T, 1)[1] - loss.evaluate(U - step, T, 1)[1]) / (2 * h)
        np.testing.assert_allclose(H[:, a], dG, atol=1e-7)
    np.testing.assert_allclose(H, np.swapaxes(H, 0, 1), atol=1e-14)


@pytest.mark.parametrize("loss, K", CASES, ids=lambda c: getattr(c, "name", c))
def test_casadi_and_pyomo_render_the_same_formula(loss, K):
    rng = np.random.default_rng(10 + K)
    U, T = _data(loss, K, rng, n=4, m=1)
    expected = loss.value(U, T)[:, 0]
    symbols = [ca.SX.sym(f"u{a}") for a in range(len(U))]
    for i in range(len(expected)):
        targets = [float(t) for t in T[:, i, 0]]
        f = ca.Function("f", symbols, [loss.expression(symbols, targets, CASADI)])
        assert float(f(*U[:, i, 0])) == pytest.approx(expected[i], rel=1e-12, abs=1e-14)
        assert loss.expression([float(u) for u in U[:, i, 0]], targets, pyomo_ops()) == \
            pytest.approx(expected[i], rel=1e-12, abs=1e-14)


def test_the_log_loss_is_the_cross_entropy_of_the_softmax():
    U = np.array([[[0.3]], [[-1.2]], [[2.0]]])  # three classes, one row, one leaf
    T = np.eye(3)[[2]].T[:, :, None]
    p = np.exp(U[:, 0, 0]) / np.exp(U[:, 0, 0]).sum()
    assert LogLoss().value(U, T)[0, 0] == pytest.approx(-np.log(p[2]))
    assert MisclassificationCost(COST).evaluate(U, COST[[2]].T[:, :, None])[0, 0] == pytest.approx(p @ COST[2])


def test_specs_and_bad_costs():
    assert isinstance(make_class_loss("cost"), MisclassificationCost)
    assert make_class_loss(LogLoss()) == LogLoss()
    with pytest.raises(ValueError, match="unknown classification loss 'hinge'"):
        make_class_loss("hinge")
    with pytest.raises(ValueError, match="square matrix"):
        MisclassificationCost([[0, 1, 2]])
    with pytest.raises(ValueError, match="3 classes"):
        MisclassificationCost([[0, 1], [1, 0]]).targets(np.array([0, 2]), 3)
    register_class_loss("doubled", lambda: MisclassificationCost([[0, 2], [2, 0]]))
    assert make_class_loss("doubled").cost == ((0.0, 2.0), (2.0, 0.0))


@pytest.mark.parametrize("K", [2, 3])
def test_a_callable_of_the_true_class_probability_is_the_log_loss(K):
    """-log(p) written as a callable gives the built-in log loss, its gradient and Hessian to rounding."""
    rng = np.random.default_rng(K)
    U, T = _data(LogLoss(), K, rng)
    for mine, theirs in zip(ProbabilityLoss(lambda p: -ca.log(p)).evaluate(U, T, 2), LogLoss().evaluate(U, T, 2)):
        np.testing.assert_allclose(mine, theirs, atol=1e-12)


def test_a_named_probability_loss_and_bad_callables():
    class Focal(ProbabilityLoss):
        """-(1 - p)^gamma log p."""

        def __init__(self, gamma=2.0):
            self.gamma = gamma
            super().__init__(lambda p: -(1 - p) ** gamma * ca.log(p), name="focal")

    register_class_loss("focal", Focal)
    loss = make_class_loss("focal:gamma=1")
    U, T = _data(loss, 2, np.random.default_rng(0))
    p = 1 / (1 + np.exp(np.where(T[1] == 1, -U[0], U[0])))  # the probability of each row's class
    np.testing.assert_allclose(loss.value(U, T), -(1 - p) * np.log(p), rtol=1e-12)
    assert isinstance(make_class_loss(lambda p: -ca.log(p)), ProbabilityLoss)
    with pytest.raises(ValueError, match="takes p .* or \\(p, c\\)"):
        make_class_loss(lambda p, c, d: p)
