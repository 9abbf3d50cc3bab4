import numpy as np
import pytest
from scipy import sparse

from srtopt.solvers import make_solver
from srtopt.solvers.qp import Csc

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
