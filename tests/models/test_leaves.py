"""The leaf-model contract, run on an example of every registered leaf model (srtopt.leaf_model.LEAF_MODELS):
R_il's derivatives in the coefficients against finite differences, the LN subproblem's CasADi and Pyomo
renderings against numpy, a start of the right shape, predictions, and the file form.  A leaf model registered
without an example here fails the first test."""

import re

import numpy as np
import pytest

from srtopt.bases import ConstantBasis, LinearBasis, SplineBasis
from srtopt.leaf_model import LEAF_MODELS, Identity, LeafModel, leaf_model_from_json
from srtopt.models.leaves import ClassLeaves, RegressionLeaves
from srtopt.models.pyomo_backend import render_pyomo
from srtopt.models.srt import SRTProblem
from srtopt.models.terms import SQUARED, Huber
from srtopt.models.terms.class_losses import LogLoss, MisclassificationCost
from srtopt.tree import Tree

RNG = np.random.default_rng(0)
X = RNG.random((40, 2))
SPLINE = SplineBasis.fit(X, n_knots=4).with_scale(0.8)
EXAMPLES = {
    "regression": [RegressionLeaves(SQUARED, LinearBasis(2)), RegressionLeaves(Huber(0.5), SPLINE)],
    "classification": [ClassLeaves(LogLoss(), 2, ConstantBasis(2)), ClassLeaves(LogLoss(), 3, SPLINE),
                       ClassLeaves(MisclassificationCost(), 3, LinearBasis(2))],
}
CASES = [leaves for kind in EXAMPLES for leaves in EXAMPLES[kind]]


def _targets(leaves):
    return RNG.standard_normal(len(X)) if leaves.n_classes is None else np.arange(len(X)) % leaves.n_classes


def _problem(leaves):
    return SRTProblem(X, _targets(leaves), Tree(2), mu=1.2, lambda_w=0.05, lambda_b=0.02, leaves=leaves)


def test_every_registered_leaf_model_has_an_example():
    assert set(LEAF_MODELS) <= set(EXAMPLES), f"add examples of {set(LEAF_MODELS) - set(EXAMPLES)} to this test"


@pytest.mark.parametrize("leaves", CASES, ids=lambda m: f"{m.kind}-{m.basis.kind}-{m.n_classes}")
def test_the_leaf_losses_have_their_derivatives(leaves):
    problem = _problem(leaves)
    Xa, T = problem.Xa, problem.targets
    q = Xa.shape[1] * leaves.n_outputs
    beta, W = RNG.standard_normal((3, q)), RNG.random((len(X), 3))
    R, D, C = leaves.losses(Xa, T, beta, order=2)
    assert R.shape == (len(X), 3) and D.shape == (leaves.n_outputs, len(X), 3)
    gradient = leaves.gradient(Xa, W, D)
    h = 1e-6

    def value(b):
        return float(np.sum(W * leaves.losses(Xa, T, b)))

    for l in range(3):
        for c in range(q):
            step = np.zeros_like(beta)
            step[l, c] = h
            assert gradient[l, c] == pytest.approx((value(beta + step) - value(beta - step)) / (2 * h), abs=1e-6)
    from srtopt.models.leaves import leaf_hessian_blocks

    blocks = leaf_hessian_blocks(Xa, C * W)
    for c in range(q):
        step = np.zeros_like(beta)
        step[0, c] = h
        column = (leaves.gradient(Xa, W, leaves.losses(Xa, T, beta + step, order=1)[1])
                  - leaves.gradient(Xa, W, leaves.losses(Xa, T, beta - step, order=1)[1]))[0] / (2 * h)
        np.testing.assert_allclose(blocks[0][:, c], column, atol=1e-5)


@pytest.mark.parametrize("leaves", CASES, ids=lambda m: f"{m.kind}-{m.basis.kind}-{m.n_classes}")
def test_the_renderings_of_the_ln_subproblem_are_the_numpy_one(leaves):
    problem = _problem(leaves)
    omega = 2 * RNG.standard_normal((3, 3))
    beta = RNG.standard_normal((4, problem.Xa.shape[1] * leaves.n_outputs))
    ln = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(len(X)))
    x = ln.start() + 0.1 * RNG.standard_normal(ln.start().shape)
    f, g = ln.evaluate(x)
    model = ln.render()
    assert model.objective(x) == pytest.approx(f, rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(model.gradient(x), g, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(ln.hessian(x), model.hessian(x), rtol=1e-8, atol=1e-9)
    assert render_pyomo(ln).objective(x) == pytest.approx(f, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("leaves", CASES, ids=lambda m: f"{m.kind}-{m.basis.kind}-{m.n_classes}")
def test_start_predictions_and_file_form(leaves):
    problem = _problem(leaves)
    start = leaves.start(problem, np.arange(20))
    assert start.shape == (problem.Xa.shape[1] * leaves.n_outputs,) and np.isfinite(start).all()
    beta = RNG.standard_normal((len(X), start.size))
    outputs = leaves.predict(problem.Xa, beta)
    assert outputs.shape == ((len(X),) if leaves.n_classes is None else (len(X), leaves.n_classes))
    again = leaf_model_from_json(leaves.to_json())
    assert type(again) is type(leaves) and again.basis == leaves.basis
    np.testing.assert_array_equal(again.predict(again.design(X), beta), outputs)


def test_the_contract_says_what_a_method_must_give():
    bare = LeafModel(LinearBasis(2), Identity())
    for call, says in [(lambda: bare.losses(None, None, None), "must give R (n, m)"),
                       (lambda: bare.start(None, None), "fitted to the training rows"),
                       (lambda: bare.casadi(None, None, None), "CasADi MX"),
                       (lambda: bare.partition_tree(), "CART estimator"),
                       (lambda: bare.mean_values(None), "soft-mean constraint")]:
        with pytest.raises(NotImplementedError, match=f"LeafModel.*{re.escape(says)}"):
            call()
    with pytest.raises(ValueError, match="needs a classifier"):
        bare.class_values(0)


def test_a_file_form_of_an_unregistered_kind_still_predicts():
    leaves = RegressionLeaves(SQUARED, SPLINE)
    doc = {**leaves.to_json(), "kind": "someone-elses"}
    again = leaf_model_from_json(doc)
    beta = RNG.standard_normal((len(X), SPLINE.n_columns))
    np.testing.assert_array_equal(again.predict(again.design(X), beta), leaves.predict(leaves.design(X), beta))
    assert again.to_json()["kind"] == "someone-elses"
