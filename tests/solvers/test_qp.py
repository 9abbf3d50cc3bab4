import numpy as np
import pytest
from scipy import sparse

from srtopt.models.terms import Huber
from srtopt.solvers import make_solver
from srtopt.solvers.qp import Csc, leaf_qp, ln_qp

from ..conftest import random_tree_problem


def _dense(m: Csc) -> np.ndarray:
    return sparse.csc_matrix((m.data, m.indices, m.indptr), shape=m.shape).toarray()


def test_csc_of_dense_keeps_every_entry_and_of_sparse_keeps_its_pattern(rng):
    M = rng.normal(size=(4, 3))
    M[1, 2] = 0.0
    dense = Csc.of(M)
    assert dense.data.size == 12 and np.array_equal(_dense(dense), M)
    assert np.array_equal(_dense(Csc.of(np.zeros((0, 3)))), np.zeros((0, 3)))
    S = sparse.random(5, 4, density=0.4, random_state=0, format="csr")
    assert np.array_equal(_dense(Csc.of(S)), S.toarray())


def test_block_diagonal_matches_scipy(rng):
    blocks = [rng.normal(size=(2, 3)), np.zeros((0, 2)), sparse.random(3, 2, density=0.5, random_state=1)]
    ours = Csc.block_diagonal([Csc.of(b) for b in blocks])
    theirs = sparse.block_diag([sparse.csc_matrix(b) for b in blocks]).toarray()
    assert ours.shape == theirs.shape and np.array_equal(_dense(ours), theirs)


@pytest.mark.parametrize("loss", [None, Huber(0.3)], ids=["squared", "huber"])
def test_the_ln_qp_is_the_leaves_qps_side_by_side(rng, loss):
    problem, omega, beta = random_tree_problem(rng, 2, n=40)
    if loss is not None:
        problem.loss = loss
    sub = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(40))
    whole, parts = ln_qp(sub), [leaf_qp(sub, j) for j in range(len(sub.working))]
    assert whole.g.size == sum(p.g.size for p in parts) and whole.beta.size == sum(p.beta.size for p in parts)
    assert whole.const == pytest.approx(sum(p.const for p in parts))
    x = rng.normal(size=whole.g.size)  # the objective of the whole QP is the sum of the leaves'
    H = _dense(whole.H)
    offsets = np.cumsum([0] + [p.g.size for p in parts])
    values = [0.5 * x[a:b] @ _dense(p.H) @ x[a:b] + p.g @ x[a:b] for p, a, b in zip(parts, offsets, offsets[1:])]
    assert 0.5 * x @ H @ x + whole.g @ x == pytest.approx(sum(values))


@pytest.mark.parametrize("spec", ["highs", "qpoases"])
def test_one_qp_solver_call_per_ln_step_keeps_the_exact_solution(rng, spec):
    problem, omega, beta = random_tree_problem(rng, 3, n=90)
    solver = make_solver("ln", spec)
    for root in (1, 2):  # two LN steps of different shapes through one adapter
        sub = problem.leaf_subproblem(omega, beta, root, problem.tree.descendants_leaves(root), np.arange(90))
        exact = make_solver("ln", "exact").solve(sub)
        result = solver.solve(sub, sub.start())
        assert result.success, result.status
        np.testing.assert_allclose(result.x, exact.x, atol=1e-8)
