"""Robustness of SoftRegressionTree/NODEC-DR: injected solver faults, saturated sigmoids,
degenerate leaves and columns; the time limit, callbacks and verbose progress."""

import re

import numpy as np
import pytest

from srtopt import SoftRegressionTree, kernels
from srtopt.models.srt import SRTProblem
from srtopt.solvers import SolverResult
from srtopt.tree import Tree


class Raising:
    name = "raising"

    def solve(self, problem, x0, *, deadline=None):
        raise RuntimeError("injected fault")


class ReturnsNaN:
    name = "nan"

    def solve(self, problem, x0, *, deadline=None):
        return SolverResult(np.full_like(x0, np.nan), float("nan"), False, "nan point", 1, 0.0)


class ReportsFailure:
    """A finite point with success=False (e.g. an iteration limit), slightly off the start."""

    name = "failing"

    def solve(self, problem, x0, *, deadline=None):
        x = np.asarray(x0, float) + 0.05
        return SolverResult(x, float(problem.evaluate(x)[0]), False, "Maximum_Iterations_Exceeded", 3, 0.0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.random((48, 3))
    y = np.where(X[:, 0] > 0.5, 2 * X[:, 1], -X[:, 2]) + 0.05 * rng.standard_normal(48)
    return X, y


def _fit(data, **params):
    # eps1=0 makes every branch node "balanced", so UpdateBranchNode always calls the BN
    # (NLP) solver; theta_w=theta_b=0 never skips a step after the first inner iteration
    base = dict(depth=2, max_iter=2, n_init=1, random_state=0, regularization=None,
                eps1=0.0, theta_w=0.0, theta_b=0.0)
    return SoftRegressionTree(**{**base, **params}).fit(*data)


def _assert_finite_model(model, X):
    assert np.all(np.isfinite(model.omega_)) and np.all(np.isfinite(model.beta_))
    assert np.isfinite(model.objective_)
    assert np.all(np.isfinite(model.predict(X)))


def _assert_monotone(history):
    for record in history:
        assert record["E_after_bn"] <= record["E_before"] + 1e-12
        assert record["E_after"] <= record["E_after_bn"] + 1e-12
    for prev, cur in zip(history, history[1:]):
        assert cur["E_before"] == prev["E_after"]


BN_FAULTS = [
    # solver, status the history must show, update recorded when the candidate is lost
    (Raising(), "raised RuntimeError: injected fault", "fallback"),
    (ReturnsNaN(), "nan point", "fallback"),
]


@pytest.mark.parametrize("k0", [None, 0])
@pytest.mark.parametrize("solver,status,update", BN_FAULTS, ids=["raises", "nan"])
def test_bn_solver_fault_falls_back_to_armijo_reference(data, solver, status, update, k0):
    model = _fit(data, bn_solver=solver, k0=k0)
    _assert_finite_model(model, data[0])
    nlp = [r["bn"] for r in model.history_ if r["bn"].get("solver") == solver.name]
    assert nlp, "the injected BN solver was never called"
    for info in nlp:
        assert info["status"] == status
        assert info["update"] == update  # candidate lost -> Armijo reference step
        assert "alpha" in info and np.isfinite(info["E_reference"])
    if k0 == 0:
        _assert_monotone(model.history_)


@pytest.mark.parametrize("k0", [None, 0])
def test_bn_solver_reporting_failure(data, k0):
    """success=False with a finite point: the point is still a candidate (SolverResult.usable);
    it is kept only if not worse than the start (safeguards off) or if it passes (18)-(19) (on)."""
    model = _fit(data, bn_solver=ReportsFailure(), k0=k0)
    _assert_finite_model(model, data[0])
    nlp = [r["bn"] for r in model.history_ if r["bn"].get("solver") == "failing"]
    assert nlp
    for info in nlp:
        assert info["status"].startswith("Maximum_Iterations_Exceeded")
        assert info["update"] in ("heuristic-nlp", "reference")
        assert info["success"] is False  # the reported failure is recorded
    if k0 == 0:
        _assert_monotone(model.history_)


@pytest.mark.parametrize("k0", [None, 0])
@pytest.mark.parametrize("solver,status", [(Raising(), "raised RuntimeError: injected fault"),
                                           (ReturnsNaN(), "nan point")], ids=["raises", "nan"])
def test_ln_solver_fault_falls_back_to_exact_least_squares(data, solver, status, k0):
    model = _fit(data, ln_solver=solver, k0=k0)
    _assert_finite_model(model, data[0])
    solved = [r["ln"] for r in model.history_ if r["ln"].get("update") not in ("none", "skipped", "empty")]
    assert solved
    for info in solved:
        assert info["update"] == "fallback" and info["status"] == status
    if k0 == 0:
        _assert_monotone(model.history_)
    reference = _fit(data, k0=k0)  # the fallback is the default solver: same iterates
    np.testing.assert_allclose(model.beta_, reference.beta_, rtol=1e-8, atol=1e-10)


# ----------------------------------------------------------- numerical edge cases
def test_sigmoids_do_not_overflow():
    # mu * u far outside exp's range (|mu u| up to 1e7): the naive 1/(1+exp(-mu u)) overflows
    Z = np.array([[1.0, 0.5], [1.0, -0.5]])
    omega = np.array([[0.0, 1e5], [1e3, -1e6], [-800.0, 0.0]])
    with np.errstate(all="raise"):
        S = kernels.split_probabilities(Z, omega, 10.0)
        P = kernels.leaf_probabilities(S, Tree(2))
    assert np.all(np.isfinite(S)) and np.all((S >= 0) & (S <= 1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    rng = np.random.default_rng(0)
    X, y = rng.random((20, 2)), rng.standard_normal(20)
    tree = Tree(2)
    omega = 1e6 * rng.standard_normal((tree.n_branch, 3))
    beta = rng.standard_normal((tree.n_leaves, 3))
    problem = SRTProblem(X, y, tree, 50.0, 0.0, 0.0)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        f, g_omega, g_beta = problem.objective(omega, beta, with_grad=True)
    assert np.isfinite(f) and np.all(np.isfinite(g_omega)) and np.all(np.isfinite(g_beta))


def test_saturated_splits_predict_finite(data):
    model = _fit(data, max_iter=1, mu=1e3)
    _assert_finite_model(model, data[0])
    model.omega_ = model.omega_ * 1e12  # far beyond exp's range
    assert np.all(np.isfinite(model.predict(data[0])))


def test_empty_and_single_point_leaves(data):
    X, y = data[0][:8], data[1][:8]  # depth 3: 8 leaves for 8 points
    model = SoftRegressionTree(depth=3, max_iter=1, n_init=1, random_state=0).fit(X, y)
    _assert_finite_model(model, X)
    leaf_counts = model.node_counts_[7:]
    assert leaf_counts.sum() == 8 and np.any(leaf_counts <= 1)
    assert np.all(np.isnan(model.leaf_r2_[leaf_counts <= 1]))
    assert np.all(np.isfinite(model.predict(np.random.default_rng(0).random((50, 3)))))


@pytest.mark.parametrize("make", [
    lambda X: np.column_stack([X, np.full(len(X), 7.0)]),           # constant column
    lambda X: np.column_stack([X, X[:, 0]]),                        # duplicate column
    lambda X: np.column_stack([X[:, :1], X[:, :1], np.zeros(len(X))]),  # both
    lambda X: np.ones((len(X), 3)),                                 # every column constant
], ids=["constant", "duplicate", "both", "all-constant"])
def test_constant_and_duplicate_columns(data, make):
    X = make(data[0])
    model = SoftRegressionTree(depth=2, max_iter=1, n_init=1, random_state=0).fit(X, data[1])
    _assert_finite_model(model, X)
    assert model.summary().notna()["intercept"].all()


# ------------------------------------------------------------------------ control
def test_time_limit_stops_after_the_current_inner_iteration(data, capsys, stopped_clock):
    """The first inner iteration outlasts the limit (its callback moves the stopped clock 0.6 s): the fit
    stops after it, however long the initialization took on the machine."""
    calls = []

    def slow(record):
        calls.append(record)
        if len(calls) == 1:
            stopped_clock.advance(0.6)

    model = SoftRegressionTree(depth=3, max_iter=5, n_init=1, random_state=0, time_limit=0.5,
                               callbacks=[slow], verbose=1).fit(*data)
    assert model.stopped_by_ == "time_limit"
    assert len(model.history_) == len(calls) == 1  # 7 inner iterations per macro; stopped after the 1st
    assert model.n_iter_ == 1
    _assert_finite_model(model, data[0])
    assert "stopped by time_limit after 1 inner iterations" in capsys.readouterr().err


def test_callbacks_get_every_inner_iteration_record(data):
    seen = []
    model = _fit(data, callbacks=[lambda state: seen.append(state.record)])
    assert [r.as_dict() for r in seen] == model.history_
    assert len(seen) == 2 * 3 and model.stopped_by_ == "max_iter"


def test_verbose_prints_one_line_per_macro_iteration(data, capsys):
    model = _fit(data, max_iter=3, verbose=1)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith("initialization: ") and lines[1].startswith("initialized: ")
    lines = lines[2:]
    assert len(lines) == 3
    pattern = r"macro (\d): E = (\S+), best (\S+), training R\^2 (?:\S+), leaf share min (\S+) max (\S+), (\S+) s"
    for m, line in enumerate(lines, 1):
        match = re.fullmatch(pattern, line)
        assert match, line
        assert int(match[1]) == m
        E = float(match[2])
        record = [r for r in model.history_ if r["macro"] == m - 1][-1]
        assert E == pytest.approx(record["E_after"], rel=1e-5)
        best = min(r["E_after"] for r in model.history_ if r["macro"] <= m - 1)
        assert float(match[3]) == pytest.approx(min(best, model.history_[0]["E_before"]), rel=1e-5)
        lo, hi = float(match[4]), float(match[5])
        assert 0 <= lo <= 0.25 <= hi <= 1  # 4 leaves: min share <= 1/4 <= max share
    _fit(data, max_iter=1, verbose=0)
    assert capsys.readouterr().err == ""


def test_verbose_must_be_a_nonnegative_integer(data):
    with pytest.raises(ValueError, match="verbose must be an integer >= 0"):
        SoftRegressionTree(verbose=-1).fit(*data)
