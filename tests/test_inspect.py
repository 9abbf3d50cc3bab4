"""Inspection of the subproblems of a training run."""

import dataclasses

import casadi as ca
import numpy as np
import pytest

from srtopt import SoftRegressionTree, kernels
from srtopt.inspect import IterationNotFound, capture


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(200)
    tree = SoftRegressionTree(depth=3, regularization=1e-3, max_iter=3, n_init=2, random_state=0).fit(X, y)
    return tree, X, y


def test_capture_reproduces_the_recorded_iterate(fitted):
    tree, X, y = fitted
    snap = capture(tree, X, y, node=2, macro=1)
    record = tree.history_[snap.k]
    assert (record["node"], record["macro"]) == (2, 1)
    assert snap.E == pytest.approx(record["E_before"], rel=1e-12)
    bn = snap.bn()
    expected_rows = np.flatnonzero(kernels.hbp_contains(snap.problem.hbp_leaves(snap.omega), snap.problem.tree, 2))
    np.testing.assert_array_equal(bn.rows, expected_rows)
    assert bn.n_rows == len(expected_rows) and bn.n_variables == 3 * (X.shape[1] + 1)
    assert list(bn.variables()) == [f"omega[{t}][{j}]" for t in (2, 4, 5) for j in range(4)]
    f, g = bn.evaluate()
    assert bn.objective() == f and bn.render("casadi").objective(bn.x0) == pytest.approx(f, abs=1e-12)
    assert bn.render("pyomo").objective(bn.x0) == pytest.approx(f, abs=1e-10)
    assert "BN subproblem of node 2" in str(bn)


def test_the_solved_subproblem_is_the_one_training_used(fitted):
    tree, X, y = fitted
    nlp = [r for r in tree.history_ if r["bn"].get("update") == "heuristic-nlp"]
    if not nlp:
        pytest.skip("no NLP BN step in this run")
    record = nlp[0]
    snap = capture(tree, X, y, k=record["k"])
    bn = snap.bn()
    assert bn.solved_in_training and snap.bn_info["update"] == "heuristic-nlp"
    assert bn.solve("ipopt").objective <= bn.objective() + 1e-12
    assert len(bn.rows) == record["bn"]["n_rows"]


def test_three_solvers_agree_on_a_captured_subproblem(fitted):
    tree, X, y = fitted
    bn = capture(tree, X, y, node=1, macro=1).bn()
    results = [bn.solve(spec) for spec in ("ipopt:tol=1e-10", "l-bfgs-b:tol=1e-13,max_iter=2000",
                                            "trust-exact:tol=1e-8")]
    assert max(r.objective for r in results) - min(r.objective for r in results) < 1e-6
    assert all(r.objective <= bn.objective() + 1e-12 for r in results)


def test_exports_evaluate_like_the_model(fitted, tmp_path):
    tree, X, y = fitted
    snap = capture(tree, X, y, node=2, macro=0)
    bn, ln = snap.bn(), snap.ln()
    x = bn.x0 + 0.05
    loaded = ca.Function.load(bn.export(tmp_path / "bn.casadi"))
    f, g = loaded(x)
    assert float(f) == pytest.approx(bn.objective(x), abs=1e-12)
    np.testing.assert_allclose(np.asarray(g).ravel(), bn.gradient(x), atol=1e-12)
    code = open(bn.export(tmp_path / "bn.c")).read()
    assert "bn_subproblem" in code
    bn.export(tmp_path / "bn.nl")
    assert (tmp_path / "bn.nl").stat().st_size > 0 and (tmp_path / "bn.col").exists()
    assert "tanh" in open(bn.export(tmp_path / "bn.gms")).read()
    assert ln.export(tmp_path / "ln.lp")
    with pytest.raises(ValueError, match="unknown export format"):
        bn.export(tmp_path / "bn.xyz")


def test_unfitted_estimator_and_missing_iterations(fitted):
    tree, X, y = fitted
    fresh = SoftRegressionTree(depth=3, regularization=1e-3, max_iter=3, n_init=2, random_state=0)
    snap = capture(fresh, X, y, k=3)
    assert snap.k == 3 and snap.node == tree.history_[3]["node"]
    assert snap.E == pytest.approx(tree.history_[3]["E_before"], rel=1e-12)
    with pytest.raises(IterationNotFound):
        capture(tree, X, y, node=2, macro=10)
    with pytest.raises(IterationNotFound):
        capture(fresh, X, y, node=2, macro=10)
    with pytest.raises(ValueError, match="give k"):
        capture(tree, X, y, node=2)


def test_a_snapshot_prints_a_summary_not_its_data(fitted):
    tree, X, y = fitted
    snap = capture(tree, X, y, node=2, macro=1)
    text = repr(snap)
    assert len(text.splitlines()) < 30 and len(text) < 400
    assert text.startswith("Snapshot(macro 1, inner iteration") and "node 2" in text and "E = " in text
    assert str(snap) == text


def _same_formulation(a, b):
    """Term for term: the same class, working set, rows and weights, start, objective and
    gradient, and constraint rows with their bounds and values."""
    assert type(a) is type(b) and a.root == b.root and a.working == b.working
    np.testing.assert_array_equal(a.rows, b.rows)
    assert a.structure_key == b.structure_key
    np.testing.assert_array_equal(a.start(), b.start())
    (f_a, g_a), (f_b, g_b) = a.evaluate(a.start()), b.evaluate(b.start())
    assert f_a == f_b
    np.testing.assert_array_equal(g_a, g_b)
    for lower_upper_a, lower_upper_b in zip(a.constraint_bounds(), b.constraint_bounds()):
        np.testing.assert_array_equal(lower_upper_a, lower_upper_b)
    np.testing.assert_array_equal(a.constraint_values(a.start()), b.constraint_values(b.start()))
    np.testing.assert_array_equal(a.render_parameters(), b.render_parameters())


@pytest.mark.parametrize("case", ["parity", "safeguards"])
def test_a_rebuilt_subproblem_is_the_one_training_solved(case):
    """inspect's BN and LN subproblems come from the rule NODEC-DR uses: with constraint rows (E's own
    subproblems) and with the safeguards on (E's own LN problem), rebuilding them from the iterate
    gives the formulations training handed to its solvers."""
    rng = np.random.default_rng(3)
    X = rng.random((160, 3))
    group = (rng.random(160) < 0.5).astype(int)
    y = X[:, 0] + 0.8 * group + 0.1 * rng.standard_normal(160)
    if case == "parity":
        tree = SoftRegressionTree(depth=2, max_iter=2, leaf_ridge=1.0, random_state=0, constraints="parity:gap=0.1")
        fit = {"sensitive_features": group}
    else:
        tree, fit = SoftRegressionTree(depth=2, max_iter=2, leaf_ridge=1.0, random_state=0, k0=0), {}
    tree.fit(X, y, **fit)
    solved = [r["k"] for r in tree.history_ if r["bn"].get("update") == "heuristic-nlp"
              and r["ln"].get("update") == "solved"]
    assert solved, "no inner iteration solved both a BN and an LN subproblem"
    snap = capture(tree, X, y, k=solved[0], **fit)
    assert {"bn", "ln"} <= set(snap.solved)
    rebuilt = dataclasses.replace(snap, solved={})
    _same_formulation(snap.bn().formulation, rebuilt.bn().formulation)
    _same_formulation(snap.ln().formulation, rebuilt.ln().formulation)
    assert snap.ln().formulation.root == 1  # E's own LN problem in both cases
