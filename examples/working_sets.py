"""
Working-set rules of NODEC-GS and your own
==========================================

Working-set rules of NODEC-GS compared on the training objective E against time, and a rule
of your own; an ordinary callback records E and the time after every inner iteration.

    PYTHONPATH=. python examples/working_sets.py       (SRTOPT_EXAMPLES_QUICK=1: a smaller run)

Rules: the paper's subtree rule (NODEC-DR), all branch nodes then all leaves at once,
root-to-leaf paths, and "bottom_up" defined below (the subtrees of the deepest branch
nodes first, the root's last).  Every rule runs from the same initialization; with
k0=0 the safeguards hold for each of them, so E never increases.
"""

import os
import time

import matplotlib.pyplot as plt
from sklearn.datasets import make_friedman1

from srtopt import SoftRegressionTree
from srtopt.training.callbacks import Callback

QUICK = bool(os.environ.get("SRTOPT_EXAMPLES_QUICK"))


def bottom_up(tree):
    """A user's rule: the paper's subtree working sets, deepest nodes first."""
    for t in sorted(tree.branch_nodes, key=tree.node_depth, reverse=True):
        yield t, tree.subtree_branch(t), tree.descendants_leaves(t)


class Trace(Callback):
    """(seconds since the run began, E) after every inner iteration."""

    def on_run_begin(self, state):
        self.start, self.points = time.perf_counter(), [(0.0, state.E)]

    def on_inner_iteration(self, state):
        self.points.append((time.perf_counter() - self.start, state.E))


def main():
    X, y = make_friedman1(1000 if QUICK else 4000, noise=1.0, random_state=0)
    max_iter = 3 if QUICK else 10
    print(f"{'rule':<10}{'inner its':>10}{'E start':>10}{'E end':>10}{'seconds':>9}   E after 25/50/75 % of the run")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for rule in ("subtree", "all", "paths", bottom_up):
        trace = Trace()
        SoftRegressionTree(depth=3, k0=0, working_sets=rule, max_iter=max_iter, random_state=0,
                           callbacks=[trace]).fit(X, y)
        (_, E0), (seconds, E1) = trace.points[0], trace.points[-1]
        marks = [min(trace.points, key=lambda p: abs(p[0] - share * seconds))[1] for share in (0.25, 0.5, 0.75)]
        name = rule if isinstance(rule, str) else rule.__name__
        print(f"{name:<10}{len(trace.points) - 1:>10}{E0:10.4f}{E1:10.4f}{seconds:9.2f}   "
              + " ".join(f"{E:.4f}" for E in marks))
        ax.plot(*zip(*trace.points), marker=".", label=name)
    ax.set(xlabel="seconds", ylabel="E (training objective)", title="E along the run, by working-set rule")
    ax.legend()
    fig.tight_layout()


if __name__ == "__main__":
    main()
