"""Working-set rules of NODEC-GS: which branch nodes W_B and leaves W_L each inner iteration updates.

A rule is a callable ``rule(tree)`` returning the inner iterations of one macro
iteration, as triples (t, W_B, W_L): t is the branch node whose routing the BN step's
reassignment heuristic examines (and the ``node`` of the history record), W_B a
non-empty tuple of branch nodes, W_L a tuple of leaves (may be empty).  The
subproblems of an inner iteration are the proxies of section 4.2 rooted at the lowest
common ancestor r of t, W_B and the parents of W_L (:func:`subproblem_root`): the data
I_r and the subtree of r, the probabilities above r taken as 1; with the safeguards
on (k0) the LN step uses the full objective.  Any rule keeps conditions (18)-(19) and
the k0 safeguards, so with k0=0 E never increases.

Built-in rules (``working_sets=`` of the estimator):

* ``"subtree"`` -- the paper's NODEC-DR rule (:func:`subtree_working_sets`);
* ``"all"`` -- one inner iteration per macro iteration: all branch nodes, then all leaves;
* ``"paths"`` -- one inner iteration per leaf l: the root-to-leaf path of l and l itself.
"""

from __future__ import annotations

from .._spec import Registry
from ..tree import Tree


def subtree_working_sets(tree: Tree):
    """The NODEC-DR rule: t = 1..2^D-1; the root gives W_B = {1}, W_L = {} (when D > 1),
    any other t gives W_B = {t} + D_B(t), W_L = D_L(t)."""
    for t in tree.branch_nodes:
        if t == 1 and tree.depth > 1:
            yield t, (1,), ()
        else:
            yield t, tree.subtree_branch(t), tree.descendants_leaves(t)


def all_nodes(tree: Tree):
    """One inner iteration: W_B = tau_B, W_L = tau_L (t = 1)."""
    yield 1, tree.branch_nodes, tree.leaves


def root_to_leaf_paths(tree: Tree):
    """One inner iteration per leaf l: W_B = the branch nodes on the path to l, W_L = {l};
    t is the parent of l (the path's last split)."""
    for leaf in tree.leaves:
        yield leaf // 2, tree.path(leaf), (leaf,)


RULES = Registry("working_sets", {"subtree": subtree_working_sets, "all": all_nodes, "paths": root_to_leaf_paths},
                 "a callable rule(tree) -> [(t, W_B, W_L), ...]")


def subproblem_root(tree: Tree, t: int, W_B=(), W_L=()) -> int:
    """r: the lowest common ancestor of t, the nodes of W_B and the parents of the leaves of W_L."""
    return tree.common_ancestor([t, *W_B, *(leaf // 2 for leaf in W_L)])


class CheckedRule:
    """A rule whose inner iterations are checked (t and W_B branch nodes, W_L leaves)."""

    def __init__(self, rule, name=None):
        self.rule, self.name = rule, name or getattr(rule, "__name__", repr(rule))

    def __call__(self, tree: Tree):
        for t, W_B, W_L in self.rule(tree):
            W_B, W_L = tuple(int(a) for a in W_B), tuple(int(a) for a in W_L)
            if not tree.is_branch(int(t)) or not W_B or not all(tree.is_branch(a) for a in W_B) \
                    or not all(tree.is_leaf(a) for a in W_L):
                raise ValueError(f"working-set rule {self.name}: ({t}, {W_B}, {W_L}) is not (branch node, "
                                 f"non-empty tuple of branch nodes, tuple of leaves) of a depth-{tree.depth} tree")
            yield int(t), W_B, W_L


def make_working_sets(spec) -> CheckedRule:
    """A checked rule from a name of :data:`RULES` or a callable ``rule(tree)``."""
    if isinstance(spec, str):
        return CheckedRule(RULES.factory(spec), spec.lower())
    if callable(spec):
        return CheckedRule(spec)
    raise ValueError(f"working_sets must be a name or a callable, got {spec!r}")
