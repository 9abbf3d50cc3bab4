"""The SRT formulations with classification leaves (srtopt.models.leaves.ClassLeaves) and the
classification constraints: numpy values and derivatives against finite differences, and the CasADi
and Pyomo renderings against the numpy reference."""

import numpy as np
import pytest

from srtopt import kernels
from srtopt.bases import ConstantBasis, LinearBasis
from srtopt.models.constraints import ClassRecall, Parity, RowMean, TrainingUnits
from srtopt.models.leaves import ClassLeaves
from srtopt.models.pyomo_backend import render_pyomo
from srtopt.models.srt import SRTProblem
from srtopt.models.terms.class_losses import LogLoss, MisclassificationCost
from srtopt.tree import Tree

LEAVES = [("constant", 2, LogLoss()), ("logistic", 2, LogLoss()), ("constant", 3, LogLoss()),
          ("logistic", 3, LogLoss()), ("logistic", 3, MisclassificationCost())]


def _problem(rng, leaf, K, loss, depth=2, n=40, p=2, constraints=(), groups=None):
    tree, leaves = Tree(depth), ClassLeaves(loss, K, (ConstantBasis if leaf == "constant" else LinearBasis)(p))
    X, y = rng.random((n, p)), rng.integers(0, K, n)
    y[:K] = np.arange(K)  # every class present
    problem = SRTProblem(X, y, tree, mu=1.3, lambda_w=0.05, lambda_b=0.02, constraints=constraints, groups=groups,
                         leaves=leaves)
    omega = 2 * rng.standard_normal((tree.n_branch, p + 1))
    beta = rng.standard_normal((tree.n_leaves, problem.Xa.shape[1] * leaves.n_outputs))
    return problem, omega, beta


def _check(formulation, x, pyomo=True):
    f, g = formulation.evaluate(x)
    h = 1e-6
    fd = np.array([(formulation.evaluate(x + h * e)[0] - formulation.evaluate(x - h * e)[0]) / (2 * h)
                   for e in np.eye(len(x))])
    np.testing.assert_allclose(g, fd, atol=1e-7)
    model = formulation.render()
    assert model.objective(x) == pytest.approx(f, abs=1e-10, rel=1e-10)
    np.testing.assert_allclose(model.gradient(x), g, atol=1e-10, rtol=1e-9)
    hessian = getattr(formulation, "hessian", None)
    if callable(hessian):  # the exact Hessian the Newton steps use, against CasADi's AD
        np.testing.assert_allclose(hessian(x), model.hessian(x), atol=1e-9, rtol=1e-8)
    if pyomo:
        rendered = render_pyomo(formulation)
        assert rendered.objective(x) == pytest.approx(f, abs=1e-10, rel=1e-10)
        np.testing.assert_allclose(rendered.gradient(x), g, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize("leaf, K, loss", LEAVES, ids=lambda c: getattr(c, "name", c))
def test_the_full_objective(leaf, K, loss):
    rng = np.random.default_rng(K)
    problem, omega, beta = _problem(rng, leaf, K, loss, n=25)
    full = problem.full(omega, beta)
    _check(full, full.start())


@pytest.mark.parametrize("leaf, K, loss", LEAVES, ids=lambda c: getattr(c, "name", c))
def test_branch_and_leaf_subproblems(leaf, K, loss):
    rng = np.random.default_rng(20 + K)
    problem, omega, beta = _problem(rng, leaf, K, loss, n=30)
    tree, leaves = problem.tree, problem.hbp_leaves(omega)
    for t in tree.branch_nodes:
        rows = np.flatnonzero(kernels.hbp_contains(leaves, tree, t))
        if len(rows):
            bn = problem.branch_subproblem(omega, beta, t, tree.subtree_branch(t), rows)
            _check(bn, bn.start() + 0.1 * rng.standard_normal(bn.start().shape))
        ln = problem.leaf_subproblem(omega, beta, t, tree.descendants_leaves(t), np.arange(20))
        _check(ln, ln.start() + 0.1 * rng.standard_normal(ln.start().shape))


def test_the_objective_is_the_soft_models_log_loss():
    rng = np.random.default_rng(5)
    problem, omega, beta = _problem(rng, "logistic", 3, LogLoss())
    P = kernels.leaf_probabilities(kernels.split_probabilities(problem.Z, omega, problem.mu), problem.tree)
    B = beta.reshape(problem.tree.n_leaves, 3, -1)
    scores = np.einsum("iq,lkq->ilk", problem.Xa, B)
    p = np.exp(scores) / np.exp(scores).sum(axis=2, keepdims=True)
    log_loss = -np.log(p[np.arange(len(problem.y)), :, problem.y])  # (n, leaves)
    expected = np.mean(np.sum(P * log_loss, axis=1)) + 0.5 * (0.05 * np.sum(omega**2) + 0.02 * np.sum(beta**2))
    assert problem.objective(omega, beta) == pytest.approx(expected, rel=1e-12)


def _bound(term, K, groups=False):
    units = TrainingUnits(("x0", "x1"), np.ones(2), classes=tuple("abc"[:K]))
    return term.in_training_units(units)


@pytest.mark.parametrize("leaf", ["constant", "logistic"])
@pytest.mark.parametrize("case", ["recall", "parity", "row_mean"])
def test_classification_constraint_rows(leaf, case):
    """The rows of class_recall, of parity (two classes: the positive rate) and of a row_mean (each group's
    Brier score of class "b"), their Jacobians against finite differences on every formulation, and their CasADi
    and Pyomo renderings."""
    rng = np.random.default_rng(7)
    K = 2 if case == "parity" else 3
    term = {"recall": lambda: _bound(ClassRecall(lower=0.6, **{"class": "b"}), K), "parity": lambda: Parity(0.05),
            "row_mean": lambda: _bound(RowMean("squared_error", over="groups", upper=0.3, pos_label="b"), K)}[case]()
    groups = rng.integers(0, 2, 40) if case != "recall" else None
    problem, omega, beta = _problem(rng, leaf, K, LogLoss(), constraints=(term,), groups=groups)
    bound = problem.constraints[0]
    g = bound.values(problem, omega, beta)
    S = kernels.split_probabilities(problem.Z, omega, problem.mu)
    P = kernels.leaf_probabilities(S, problem.tree)
    leaf_p = kernels.class_probabilities(problem.leaf_model.leaf_scores(problem.Xa, beta).transpose(1, 2, 0), K)
    soft = np.sum(P * leaf_p[:, :, 1], axis=1)  # the probability of class code 1 ("b")
    if case == "recall":
        rows = problem.y == 1
        assert g[0] == pytest.approx(np.average(soft[rows], weights=problem.s[rows]))
    elif case == "row_mean":
        brier = np.sum(P * (leaf_p[:, :, 1] - (problem.y == 1)[:, None]) ** 2, axis=1)
        np.testing.assert_allclose(g, [np.average(brier[groups == k], weights=problem.s[groups == k]) for k in (0, 1)])
    else:
        mean = [np.average(soft[groups == k], weights=problem.s[groups == k]) for k in (0, 1)]
        assert g[0] == pytest.approx(mean[1] - mean[0])
    full = problem.full(omega, beta)
    rows_of = [full] + [problem.exact_branch_subproblem(omega, beta, 2, (2,)),
                        problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(40))]
    h = 1e-6
    for formulation in rows_of:
        x = formulation.start()
        J = formulation.constraint_jacobian(x)
        fd = np.array([(formulation.constraint_values(x + h * e) - formulation.constraint_values(x - h * e)) / (2 * h)
                       for e in np.eye(len(x))]).T
        np.testing.assert_allclose(J, fd, atol=1e-7)
        model = formulation.render()
        np.testing.assert_allclose(np.asarray(model.constraints(x)).ravel(), formulation.constraint_values(x),
                                   atol=1e-10)
    ln = rows_of[2]
    rendered = render_pyomo(ln)
    rendered.set_x(ln.start())
    import pyomo.environ as pyo

    values = [pyo.value(c.body) for c in rendered.model.constraints.values()]
    np.testing.assert_allclose(values, ln.constraint_values(ln.start()), atol=1e-10)


def test_class_recall_refuses_an_unknown_class_and_a_bad_share():
    with pytest.raises(ValueError, match="class 'z' is not a class of y"):
        _bound(ClassRecall(lower=0.9, **{"class": "z"}), 3)
    for lower in (0, 1.5, "x"):
        with pytest.raises(ValueError, match=r"share in \(0, 1\]"):
            ClassRecall(lower=lower, **{"class": "a"})
    with pytest.raises(ValueError, match="class=LABEL"):
        ClassRecall(lower=0.9)
