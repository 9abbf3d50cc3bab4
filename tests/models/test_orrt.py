"""ORRT objective (eq. formulation): numpy gradient, CasADi rendering and Hessian."""

import numpy as np
import pytest

from srtopt import kernels
from srtopt.models.orrt import ORRTObjective, soft_prediction
from srtopt.tree import Tree


def _objective(rng, depth, n=25, p=2, mu=1.3, lambda_w=0.05, lambda_b=0.02, weights=None):
    tree = Tree(depth)
    X, y = rng.random((n, p)), rng.standard_normal(n)
    omega = 2 * rng.standard_normal((tree.n_branch, p + 1))
    beta = rng.standard_normal((tree.n_leaves, p + 1))
    return ORRTObjective.from_data(X, y, tree, omega, beta, mu, lambda_w, lambda_b, weights)


def _by_hand(X, y, omega, beta, mu, tree, s, lambda_w, lambda_b):
    """Prediction and objective with explicit loops over rows and leaves (paper's products)."""
    n, p = X.shape
    pred = np.zeros(n)
    for i in range(n):
        for t in tree.leaves:
            prob = 1.0
            for a in tree.ancestors_left(t):
                prob *= 1 / (1 + np.exp(-mu * (omega[a - 1, 0] + omega[a - 1, 1:] @ X[i] / p)))
            for a in tree.ancestors_right(t):
                prob *= 1 - 1 / (1 + np.exp(-mu * (omega[a - 1, 0] + omega[a - 1, 1:] @ X[i] / p)))
            pred[i] += prob * (beta[tree.leaf_index(t), 0] + beta[tree.leaf_index(t), 1:] @ X[i])
    f = s @ (pred - y) ** 2 + 0.5 * lambda_w * np.sum(omega**2) + 0.5 * lambda_b * np.sum(beta**2)
    return pred, f


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_value_and_prediction_by_hand(rng, depth):
    weights = rng.random(25)
    obj = _objective(rng, depth, weights=weights)
    pr = obj.problem
    pred, f = _by_hand(pr.X, pr.y, obj.omega, obj.beta, pr.mu, pr.tree, weights / weights.sum(),
                       pr.lambda_w, pr.lambda_b)
    np.testing.assert_allclose(obj.predict(obj.start()), pred, rtol=1e-12, atol=1e-12)
    assert obj.evaluate(obj.start())[0] == pytest.approx(f, rel=1e-12)


def test_orrt_differs_from_srt_and_uses_all_leaves(rng):
    """E_ORRT <= E_SRT (Jensen: the squared error of the P-weighted mean is at most
    the P-weighted squared error), and the prediction is not the HBP leaf's."""
    obj = _objective(rng, 2, lambda_w=0.0, lambda_b=0.0)
    pr = obj.problem
    e_orrt = obj.evaluate(obj.start())[0]
    assert e_orrt < pr.objective(obj.omega, obj.beta)
    hbp = kernels.hbp_predict(pr.X, obj.omega, obj.beta, pr.tree)
    assert not np.allclose(obj.predict(obj.start()), hbp)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_gradient_against_finite_differences(rng, depth):
    obj = _objective(rng, depth)
    x = obj.start()
    f, g = obj.evaluate(x)
    h = 1e-6
    fd = np.array([(obj.evaluate(x + h * e)[0] - obj.evaluate(x - h * e)[0]) / (2 * h)
                   for e in np.eye(len(x))])
    np.testing.assert_allclose(g, fd, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_casadi_matches_numpy_and_hessian(rng, depth):
    obj = _objective(rng, depth)
    model = obj.render()
    assert model.x.numel() == obj.n_variables == len(model.variable_names)
    assert model.p.numel() == len(obj.render_parameters())
    for x in (obj.start(), obj.start() + 0.3 * rng.standard_normal(obj.n_variables)):
        f, g = obj.evaluate(x)
        assert model.objective(x) == pytest.approx(f, abs=1e-10, rel=1e-10)
        np.testing.assert_allclose(model.gradient(x), g, atol=1e-10, rtol=1e-10)
    # exact Hessian (CasADi AD) against central differences of the numpy gradient
    x = obj.start()
    H = model.hessian(x)
    h = 1e-6
    fd = np.array([(obj.evaluate(x + h * e)[1] - obj.evaluate(x - h * e)[1]) / (2 * h)
                   for e in np.eye(len(x))])
    np.testing.assert_allclose(H, fd.T, atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(H, H.T, atol=1e-12)


def test_saturated_splits_stay_finite(rng):
    """mu = 512 (the public ORRT code's slope): no NaN in either evaluator."""
    obj = _objective(rng, 2, mu=512.0)
    x = 5 * obj.start()
    f, g = obj.evaluate(x)
    model = obj.render()
    assert np.isfinite(f) and np.all(np.isfinite(g))
    assert model.objective(x) == pytest.approx(f, rel=1e-10)
    np.testing.assert_allclose(model.gradient(x), g, atol=1e-8, rtol=1e-8)


def test_structure_key_shares_model_across_data_and_mu(rng):
    """Data and mu are parameters of the rendering; the loss and penalty terms (with their
    strengths) are part of its structure."""
    a = _objective(rng, 2, n=20, mu=1.0)
    b = _objective(rng, 2, n=20, mu=512.0)
    assert a.structure_key == b.structure_key
    assert a.structure_key != _objective(rng, 2, n=21).structure_key
    assert a.structure_key != _objective(rng, 3, n=20).structure_key
    assert a.structure_key != _objective(rng, 2, n=20, lambda_w=0.0).structure_key
    # one rendering evaluated with the other problem's parameters gives that problem's value
    model, x = a.render(), b.start()
    assert float(model.f_function(x, b.render_parameters())) == pytest.approx(b.evaluate(x)[0], rel=1e-10)


def test_soft_prediction_function(rng):
    obj = _objective(rng, 2)
    pr = obj.problem
    S = kernels.split_probabilities(pr.Z, obj.omega, pr.mu)
    P = kernels.leaf_probabilities(S, pr.tree)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(soft_prediction(pr.Z, pr.Xa, obj.omega, obj.beta, pr.mu, pr.tree),
                               np.sum(P * (pr.Xa @ obj.beta.T), axis=1))
