"""
Inspect a NODEC-DR subproblem and solve it three ways
=====================================================

Pull one NODEC-DR subproblem out of a training run, look at it, solve it three ways.

    PYTHONPATH=. python examples/inspect_subproblem.py

Trains a depth-3 SoftRegressionTree, re-runs training up to the BN step of
node 2 in macro iteration 3 (0-based, as in ``tree.history_``), prints the BN
subproblem (variables, current values, the size of I_t, objective), solves it with IPOPT
(CasADi), SciPy L-BFGS-B and SciPy trust-exact (CasADi Hessian) from the same
start, and exports it (into a temporary directory, removed at the end).
"""

import os
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np

from srtopt import SoftRegressionTree
from srtopt.inspect import capture


def main():
    rng = np.random.default_rng(0)
    X = rng.random((600, 5))
    y = np.where(X[:, 0] > 0.5, np.sin(4 * X[:, 1]), X[:, 2] ** 2 - X[:, 3]) + 0.05 * rng.standard_normal(600)
    tree = SoftRegressionTree(depth=3, regularization=1e-3, max_iter=5, random_state=0).fit(X, y)
    print(f"trained: R^2 = {tree.score(X, y):.3f}, {len(tree.history_)} inner iterations")

    start = time.perf_counter()
    snapshot = capture(tree, X, y, node=2, macro=3)
    print(f"re-ran training to inner iteration k={snapshot.k} in {time.perf_counter() - start:.2f} s "
          f"(BN update taken in training: {snapshot.bn_info.get('update')})\n")
    bn = snapshot.bn()
    print(bn.summary(max_variables=8))
    print(f"  I_t (first rows of the training data): {bn.rows[:10].tolist()} ...\n")

    print(f"{'solver':<22}{'objective':>16}{'iterations':>12}{'seconds':>10}  termination")
    results = {}
    for spec in ("ipopt", "l-bfgs-b", "trust-exact"):
        result = results[spec] = bn.solve(spec)
        print(f"{spec:<22}{result.objective:16.10f}{result.iterations:12d}{result.seconds:10.4f}  "
              f"{result.termination_condition}")

    fig, ax = plt.subplots(figsize=(5, 2.8))
    ax.barh(list(results), [r.iterations for r in results.values()])
    ax.invert_yaxis()
    ax.set(xlabel="iterations to the same BN subproblem's optimum", title="One captured subproblem, three solvers")
    fig.tight_layout()

    with tempfile.TemporaryDirectory(prefix="srtopt_bn_") as directory:  # removed at the end
        for ext in (".nl", ".gms", ".casadi", ".c"):
            path = bn.export(os.path.join(directory, "bn_node2" + ext))
            print(f"exported {os.path.basename(path)} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
