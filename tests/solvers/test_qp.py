import numpy as np
import pytest
from scipy import sparse

from srtopt.solvers import HighsQP, make_solver
from srtopt.solvers.qp import MAX_BATCH, Csc, leaf_qp, leaf_qps

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


@pytest.mark.parametrize("spec", ["highs", "qpoases"])
def test_one_adapter_serves_ln_steps_of_different_shapes_with_the_exact_solution(rng, spec):
    problem, omega, beta = random_tree_problem(rng, 3, n=90)
    solver = make_solver("ln", spec)
    for root in (1, 2):  # two LN steps of different shapes through one adapter
        sub = problem.leaf_subproblem(omega, beta, root, problem.tree.descendants_leaves(root), np.arange(90))
        exact = make_solver("ln", "exact").solve(sub)
        result = solver.solve(sub, sub.start())
        assert result.success, result.status
        np.testing.assert_allclose(result.x, exact.x, atol=1e-8)


def test_lower_is_the_lower_triangle(rng):
    M = rng.normal(size=(4, 4))
    assert np.array_equal(_dense(Csc.of(M).lower()), np.tril(M))
    S = sparse.random(5, 5, density=0.5, random_state=2)
    assert np.array_equal(_dense(Csc.of(S).lower()), np.tril(S.toarray()))


def test_block_diagonal_matches_scipy(rng):
    blocks = [rng.normal(size=(2, 3)), np.zeros((0, 2)), sparse.random(3, 2, density=0.5, random_state=1)]
    ours = Csc.block_diagonal([Csc.of(b) for b in blocks])
    theirs = sparse.block_diag([sparse.csc_matrix(b) for b in blocks]).toarray()
    assert ours.shape == theirs.shape and np.array_equal(_dense(ours), theirs)


@pytest.mark.parametrize("p,groups", [(3, [4]), (20, [3, 1]), (40, [1, 1, 1, 1])],
                         ids=["all together", "three and one", "each apart"])
def test_leaf_qps_put_small_leaves_side_by_side_up_to_max_batch(rng, p, groups):
    problem, omega, beta = random_tree_problem(rng, 2, n=50, p=p)
    sub = problem.leaf_subproblem(omega, beta, 1, problem.tree.leaves, np.arange(50))
    qps = list(leaf_qps(sub))
    assert [qp.beta.size // (p + 1) for qp in qps] == groups and all(qp.g.size <= MAX_BATCH for qp in qps)
    singles = iter(leaf_qp(sub, j) for j in range(4))
    for qp, size in zip(qps, groups):  # side by side: the objectives add up
        parts = [next(singles) for _ in range(size)]
        x = rng.normal(size=qp.g.size)
        offsets = np.cumsum([0] + [part.g.size for part in parts])
        assert _value(qp, x) == pytest.approx(sum(_value(part, x[a:b]) for part, a, b in
                                                  zip(parts, offsets, offsets[1:])))


def _value(qp, x) -> float:
    return 0.5 * x @ _dense(qp.H) @ x + qp.g @ x + qp.const


def test_the_qp_preset_is_highs():
    assert isinstance(make_solver("ln", "qp"), HighsQP)
