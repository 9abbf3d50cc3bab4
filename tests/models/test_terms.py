"""Every objective term (loss and penalty, built-in and a user's): its numpy value and derivatives
against finite differences, its CasADi and Pyomo renderings against numpy; and every
formulation composed of them (full objective, BN and LN subproblems) across the backends."""

import casadi as ca
import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.expr.calculus.derivatives import Modes, differentiate

from srtopt import kernels
from srtopt.models.casadi_backend import matrix
from srtopt.models.pyomo_backend import render_pyomo
from srtopt.models.terms import (L2, Absolute, CasadiLoss, FeatureL1, Huber, Penalty, SplitL1, Squared, make_loss,
                                 make_penalties)

from ..conftest import random_tree_problem

LOSSES = {
    "squared": Squared(),
    "huber": Huber(0.7),
    "absolute": Absolute(0.1),
    "user-logcosh": CasadiLoss(lambda r: ca.log(ca.cosh(r)), name="logcosh"),
}


class Cauchy(Penalty):
    """A user's penalty, written in one file: strength * sum log(1 + w^2) over the split weights."""

    name = "cauchy"
    blocks = ("omega",)

    def __init__(self, strength=0.1):
        self.strength = strength

    def value(self, omega, beta):
        return self.strength * float(np.sum(np.log1p(omega[:, 1:] ** 2)))

    def gradient(self, omega, beta):
        g = np.zeros_like(omega)
        g[:, 1:] = self.strength * 2 * omega[:, 1:] / (1 + omega[:, 1:] ** 2)
        return g, np.zeros_like(beta)

    def casadi(self, omega, beta):
        return self.strength * ca.sum1(ca.sum2(ca.log(1 + omega[:, 1:] ** 2)))

    def pyomo(self, omega, beta):
        return self.strength * sum(pyo.log(1 + w * w) for row in omega for w in row[1:])


PENALTIES = {
    "l2": L2(0.3, 0.2),
    "split_l1": SplitL1(0.05),
    "feature_l1": FeatureL1(0.05),
    "user-cauchy": Cauchy(0.1),
}


# --------------------------------------------------------------------------------- losses
def _r():
    # points away from the kinks of Huber (|r| = 0.7)
    return np.array([-2.3, -0.9, -0.4, -0.05, 0.0, 0.03, 0.5, 0.69 - 0.05, 1.1, 3.0])


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_derivatives_against_finite_differences(name):
    loss, r, h = LOSSES[name], _r(), 1e-6
    np.testing.assert_allclose(loss.derivative(r), (loss.value(r + h) - loss.value(r - h)) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(loss.second_derivative(r),
                               (loss.derivative(r + h) - loss.derivative(r - h)) / (2 * h), atol=1e-5)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_renderings_agree(name):
    loss, r = LOSSES[name], _r()
    sym = ca.MX.sym("r", len(r))
    expr = loss.casadi(sym)
    f = ca.Function("f", [sym], [expr, ca.jacobian(expr, sym)])
    value, jac = f(r)
    np.testing.assert_allclose(np.asarray(value).ravel(), loss.value(r), atol=1e-12)
    np.testing.assert_allclose(np.diag(np.asarray(jac)), loss.derivative(r), atol=1e-12)
    m = pyo.ConcreteModel()
    m.r = pyo.Var()
    e = loss.pyomo(m.r)
    for ri in r:
        m.r.set_value(float(ri))
        assert pyo.value(e) == pytest.approx(float(loss.value(ri)), abs=1e-12)
        assert differentiate(e, wrt=m.r, mode=Modes.reverse_numeric) == pytest.approx(
            float(loss.derivative(np.array(ri))), abs=1e-12)


@pytest.mark.parametrize("function", [
    lambda r: ca.if_else(r > 0.5, ca.fmax(r, 0.2) ** 3, ca.sqrt(r * r + 1)) + ca.log1p(r * r) + ca.sign(r) * ca.fabs(r)
    + ca.atan2(r, 2) + ca.hypot(r, 3) + 1 / (1 + r * r) + ca.tanh(r) ** 2,
    lambda r: ca.erf(r) * r,  # erf: no numpy counterpart, CasADi evaluates it
    lambda r: 3 * r * r,  # a constant second derivative
], ids=["many-operations", "erf", "quadratic"])
def test_user_loss_values_are_casadis(function):
    """A user loss's numpy value, derivative and second derivative (CasADi's graphs replayed with
    numpy operations) are CasADi's own, elementwise, in the shape of r."""
    loss, r = CasadiLoss(function), np.linspace(-2, 2, 12).reshape(4, 3)
    sym = ca.SX.sym("r")
    e = function(sym)
    for order, ours in enumerate((loss.value, loss.derivative, loss.second_derivative)):
        expression = (e, ca.gradient(e, sym), ca.hessian(e, sym)[0])[order]
        theirs = np.array([float(ca.Function("f", [sym], [expression])(v)) for v in r.ravel()]).reshape(r.shape)
        np.testing.assert_allclose(ours(r), theirs, rtol=1e-14, atol=1e-14)


def test_losses_from_specs():
    assert make_loss("huber:delta=0.5") == Huber(0.5)
    assert make_loss("squared") == Squared() and make_loss("Absolute").epsilon == 1e-3
    user = make_loss(lambda r: r**4)
    assert isinstance(user, CasadiLoss) and user.value(np.array([2.0]))[0] == 16.0
    with pytest.raises(ValueError, match="unknown loss 'l7'"):
        make_loss("l7")
    with pytest.raises(ValueError, match="bad options for loss 'huber'"):
        make_loss("huber:width=2")
    with pytest.raises(ValueError, match="huber delta must be a positive"):
        make_loss("huber:delta=-1")


def test_huber_and_absolute_shapes():
    r = np.array([-3.0, -1.0, 0.2, 2.0])
    np.testing.assert_allclose(Huber(1.0).value(r), [5.0, 1.0, 0.04, 3.0])  # r^2 inside, 2|r| - 1 outside
    np.testing.assert_allclose(Absolute(1e-6).value(r), np.abs(r), atol=1e-6)
    a, b = Huber(0.5).qp_form  # huber(r) = min_z a z^2 + b |r - z|
    z = np.linspace(-5, 5, 200001)
    assert np.min(a * z**2 + b * np.abs(2.0 - z)) == pytest.approx(Huber(0.5).value(2.0), abs=1e-8)


# ------------------------------------------------------------------------------ penalties
def _omega_beta(rng):
    return rng.standard_normal((3, 4)), rng.standard_normal((4, 4))


def _casadi_penalty(penalty, omega, beta):
    x = ca.MX.sym("x", omega.size + beta.size)  # row-major like ravel
    O, B = matrix(x[:omega.size], *omega.shape), matrix(x[omega.size:], *beta.shape)
    expr = penalty.casadi(O, B)
    f = ca.Function("f", [x], [expr, ca.gradient(expr, x), ca.hessian(expr, x)[0]])
    return [np.asarray(v) for v in f(np.concatenate([omega.ravel(), beta.ravel()]))]


@pytest.mark.parametrize("name", sorted(PENALTIES))
def test_penalty_value_gradient_hessian(rng, name):
    penalty = PENALTIES[name]
    omega, beta = _omega_beta(rng)
    x = np.concatenate([omega.ravel(), beta.ravel()])

    def split(z):
        return z[:12].reshape(3, 4), z[12:].reshape(4, 4)

    def grad(z):
        return np.concatenate([g.ravel() for g in penalty.gradient(*split(z))])

    h = 1e-6
    eye = np.eye(len(x))
    fd = np.array([(penalty.value(*split(x + h * e)) - penalty.value(*split(x - h * e))) / (2 * h) for e in eye])
    np.testing.assert_allclose(grad(x), fd, atol=1e-7)
    value, cas_grad, cas_hess = _casadi_penalty(penalty, omega, beta)
    assert value.item() == pytest.approx(penalty.value(omega, beta), rel=1e-12)
    np.testing.assert_allclose(cas_grad.ravel(), grad(x), atol=1e-12)
    fd_hess = np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in eye])
    np.testing.assert_allclose(cas_hess, fd_hess, atol=1e-5)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(len(x)), initialize=dict(enumerate(x)))
    rows = [[m.x[r * 4 + j] for j in range(4)] for r in range(7)]
    assert pyo.value(penalty.pyomo(rows[:3], rows[3:])) == pytest.approx(penalty.value(omega, beta), rel=1e-12)


@pytest.mark.parametrize("name", sorted(PENALTIES))
def test_block_penalty_is_the_penalty_of_the_block(rng, name):
    penalty = PENALTIES[name]
    omega, beta = _omega_beta(rng)
    for kind, rows in (("omega", (0, 2)), ("beta", (1,))):
        if kind not in penalty.blocks:
            continue
        block = penalty.exact_block(kind, rows, omega, beta)
        X = rng.standard_normal((len(rows), 4))
        full = block.full(X)
        g = penalty.gradient(*full)[0 if kind == "omega" else 1][list(rows)]
        np.testing.assert_allclose(block.gradient(X), g, atol=1e-12)
        if name == "l2":  # the l2 block leaves out the constant of the fixed rows
            strength = penalty.lambda_w if kind == "omega" else penalty.lambda_b
            assert block.value(X) == pytest.approx(0.5 * strength * np.sum(X**2))
        else:
            assert block.value(X) == pytest.approx(penalty.value(*full))


@pytest.mark.parametrize("kind,rows", [("omega", (0, 2)), ("beta", (1, 3))])
def test_feature_l1_majorizer_touches_the_term_at_the_current_weights(rng, kind, rows):
    """The smooth block term of feature_l1 (method "majorize") equals the term, with the same
    gradient, at the current weights and lies above it elsewhere."""
    penalty = FeatureL1(0.3)
    omega, beta = _omega_beta(rng)
    omega[:, 2], beta[:, 2] = 0.0, 0.0  # a removed feature stays removed
    major, exact = penalty.block(kind, rows, omega, beta), penalty.exact_block(kind, rows, omega, beta)
    assert major.smooth and not exact.smooth
    X0 = (omega if kind == "omega" else beta)[list(rows)]
    assert major.value(X0) == pytest.approx(exact.value(X0), rel=1e-12)
    np.testing.assert_allclose(major.gradient(X0)[:, [1, 3]], exact.gradient(X0)[:, [1, 3]], rtol=1e-10)
    for _ in range(50):
        X = X0 + rng.standard_normal(X0.shape)
        assert major.value(X) >= exact.value(X) - 1e-12
    assert major.ridge()[:, 2].min() >= 0.3 / major.ETA_FLOOR * (1 / 9 if kind == "omega" else 1) * 0.99


def _prox_objective(penalty_value, v, step):
    return lambda x: step * penalty_value(x) + 0.5 * np.sum((x - v) ** 2)


@pytest.mark.parametrize("name", ["split_l1", "feature_l1", "both"])
def test_proximal_operators_minimise_and_give_exact_zeros(rng, name):
    terms = {"split_l1": [SplitL1(0.3)], "feature_l1": [FeatureL1(0.3)], "both": [SplitL1(0.2), FeatureL1(0.3)]}[name]
    omega, beta = 0.3 * rng.standard_normal((3, 4)), 0.3 * rng.standard_normal((4, 4))
    beta[:, 2] = 0.01  # feature 2: small everywhere -> zeroed by feature_l1
    omega[:, 2] = 0.02
    step = 1.0

    def total(z):
        o, b = z[:12].reshape(3, 4), z[12:].reshape(4, 4)
        return sum(t.value(o, b) for t in terms)

    v = np.concatenate([omega.ravel(), beta.ravel()])
    o, b = omega, beta
    for t in sorted(terms, key=lambda t: t.order):  # the composition is the prox of the sum
        o, b = t.prox(o, b, step)
    x = np.concatenate([o.ravel(), b.ravel()])
    F = _prox_objective(total, v, step)
    for _ in range(300):
        assert F(x) <= F(x + 1e-3 * rng.standard_normal(x.shape)) + 1e-12
    assert np.all(o[:, 2] == 0.0) and (name == "split_l1" or np.all(b[:, 2] == 0.0))


def test_group_radius_solves_its_equation_over_many_magnitudes(rng):
    """The root r of sum_k a_k / (r + b_k)^2 + c2 / r^2 = 1 behind the feature_l1 proximal operators,
    for coefficients spread over 11 orders of magnitude, with and without the fixed part c2."""
    from srtopt.models.terms.blocks import _group_radius

    n = 500
    a1, a2 = (rng.random(n) * 10 ** rng.uniform(-8, 3, n) for _ in range(2))
    b = rng.random(n) * 10 ** rng.uniform(-6, 1, n)
    c2 = np.where(rng.random(n) < 0.5, 0.0, rng.random(n) * 10 ** rng.uniform(-12, 0, n))
    active = (c2 > 0) | (a1 / b**2 + a2 / b**2 > 1)
    r = _group_radius([(a1, b), (a2, b)], c2, active)
    S = a1 / (r + b) ** 2 + a2 / (r + b) ** 2 + np.where(c2 > 0, c2 / r**2, 0.0)
    assert active.sum() > 100 and np.all(r > 0)
    np.testing.assert_allclose(S[active], 1.0, rtol=1e-12)


@pytest.mark.parametrize("kind,rows", [("omega", (1,)), ("beta", (0, 3))])
def test_feature_l1_block_prox_with_fixed_weights(rng, kind, rows):
    """With the other rows fixed (norm c_j of feature j's fixed weights), the block prox minimises
    step strength sqrt(||x||^2 + c^2) + ||x - v||^2 / 2; it zeroes a feature only when c_j = 0."""
    penalty = FeatureL1(0.4)
    omega, beta = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    own = omega if kind == "omega" else beta
    keep = [i for i in range(own.shape[0]) if i not in rows]
    own[keep, 3] = 0.0
    if kind == "omega":
        beta[:, 3] = 0.0  # feature 3 has no fixed weight: c_3 = 0
    else:
        omega[:, 3] = 0.0
    block = penalty.exact_block(kind, rows, omega, beta)
    V = 0.1 * rng.standard_normal((len(rows), 4))
    X = block.prox(V, 1.0)
    F = _prox_objective(lambda z: block.value(z.reshape(V.shape)), V.ravel(), 1.0)
    for _ in range(300):
        assert F(X.ravel()) <= F(X.ravel() + 1e-3 * rng.standard_normal(V.size)) + 1e-12
    assert np.all(X[:, 3] == 0.0) and np.all(X[:, 1:3] != 0.0)


def test_penalties_from_specs():
    assert make_penalties(None) == ()
    assert make_penalties("split_l1:strength=0.01") == (SplitL1(0.01),)
    assert make_penalties(["split_l1", FeatureL1(0.2)]) == (SplitL1(1e-3), FeatureL1(0.2))
    with pytest.raises(ValueError, match="unknown penalty 'l0'"):
        make_penalties("l0")


# --------------------------------------------------------------------- composed formulations
def _formulations(rng, loss, penalty):
    problem, omega, beta = random_tree_problem(rng, 2, n=24, p=3)
    problem.loss, problem.penalties = loss, (penalty,) if penalty is not None else ()
    tree = problem.tree
    rows = np.flatnonzero(kernels.hbp_contains(problem.hbp_leaves(omega), tree, 2))
    return {
        "full": problem.full(omega, beta),
        "bn-path": problem.branch_subproblem(omega, beta, 1, (1, 3), np.arange(24)),
        "bn-node2": problem.branch_subproblem(omega, beta, 2, (2,), rows if len(rows) else np.arange(6)),
        "ln": problem.leaf_subproblem(omega, beta, 1, (5, 6), np.arange(20)),
    }


@pytest.mark.parametrize("penalty", [None, "split_l1", "feature_l1", "feature_l1-prox", "user-cauchy"])
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_formulations_agree_across_numpy_casadi_and_pyomo(rng, loss, penalty):
    terms = {**PENALTIES, "feature_l1-prox": FeatureL1(0.05, method="prox")}
    forms = _formulations(rng, LOSSES[loss], None if penalty is None else terms[penalty])
    for name, form in forms.items():
        x = form.start() + 0.2 * rng.standard_normal(form.start().shape)
        f, g = form.evaluate_smooth(x)
        total = f + (form.nonsmooth_value(x) if form.nonsmooth else 0.0)
        casadi_model, pyomo_model = form.render(), render_pyomo(form)
        assert casadi_model.objective(x) == pytest.approx(total, rel=1e-10, abs=1e-12), name
        assert pyomo_model.objective(x) == pytest.approx(total, rel=1e-10, abs=1e-12), name
        assert form.evaluate(x)[0] == pytest.approx(total, rel=1e-12)
        h = 1e-6
        fd = np.array([(form.evaluate_smooth(x + h * e)[0] - form.evaluate_smooth(x - h * e)[0]) / (2 * h)
                       for e in np.eye(len(x))])
        np.testing.assert_allclose(g, fd, atol=2e-6, err_msg=name)
        if not form.nonsmooth:
            np.testing.assert_allclose(casadi_model.gradient(x), g, atol=1e-9, err_msg=name)
            hessian = getattr(form, "hessian", None)
            if callable(hessian):  # the LN subproblem's exact Hessian (the Newton LN solver's)
                np.testing.assert_allclose(hessian(x), casadi_model.hessian(x), atol=1e-9, err_msg=name)
            if loss != "huber":  # Huber's second derivative jumps: FD of the gradient is not its Hessian at kinks
                fd_hess = np.array([(form.evaluate(x + h * e)[1] - form.evaluate(x - h * e)[1]) / (2 * h)
                                    for e in np.eye(len(x))])
                np.testing.assert_allclose(casadi_model.hessian(x), fd_hess.T, atol=2e-5, err_msg=name)


def test_stationarity_gradient_vanishes_at_zero_when_the_penalty_dominates(rng):
    """At x = 0 with a split_l1 stronger than the smooth gradient, 0 is stationary: the
    stationarity gradient of the feature weights is exactly the soft-thresholded gradient."""
    problem, omega, beta = random_tree_problem(rng, 2, n=24, p=3)
    problem.penalties = (SplitL1(1e3),)
    omega[:, 1:] = 0.0
    sub = problem.branch_subproblem(omega, beta, 1, (1, 2, 3), np.arange(24))
    x = sub.start()
    f, g = sub.evaluate_smooth(x)
    G = sub.evaluate(x)[1].reshape(3, 4)
    np.testing.assert_allclose(G[:, 1:], 0.0, atol=1e-9)
    np.testing.assert_allclose(G[:, 0], g.reshape(3, 4)[:, 0], rtol=1e-6)


def test_feature_l1_without_a_strength_takes_one_over_the_root_of_the_weights_at_bind():
    from srtopt.models.srt import SRTProblem
    from srtopt.models.terms import FeatureL1
    from srtopt.tree import Tree

    rng = np.random.default_rng(0)
    X, y = rng.random((50, 3)), rng.random(50)
    given, chosen = FeatureL1(strength=0.01), FeatureL1()
    assert chosen.strength is None and chosen.get_params()["strength"] is None
    weights = np.full(50, 2.0)  # 100 rows' worth
    problem = SRTProblem(X, y, Tree(1), penalties=(given, chosen), weights=weights)
    assert problem.penalties[0].strength == 0.01
    assert problem.penalties[1].strength == pytest.approx(FeatureL1.SCALE / 10.0)
    assert chosen.strength is None  # the estimator's term is left as given
