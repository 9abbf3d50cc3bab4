"""Topology of a maximal binary tree of depth D (paper section 3).

Nodes are numbered as in the paper: the root is 1, the children of node t are
2t (left) and 2t+1 (right).  Branch nodes tau_B = {1, ..., 2^D - 1}, leaves
tau_L = {2^D, ..., 2^(D+1) - 1}.  Arrays of parameters are 0-based: row
``branch_index(t)`` of omega holds omega_t and row ``leaf_index(t)`` of beta
holds beta_t.  Those two helpers are the only place where the conversion is
written.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tree:
    """A maximal binary tree of depth ``depth`` >= 1.

    Parameters
    ----------
    depth : int
        Depth D of the tree: 2^D - 1 branch nodes tau_B and 2^D leaves tau_L.

    Raises
    ------
    ValueError
        If ``depth`` is not an int or is smaller than 1.

    Examples
    --------
    >>> tree = Tree(2)
    >>> tree.branch_nodes, tree.leaves
    ((1, 2, 3), (4, 5, 6, 7))
    >>> tree.ancestors_left(5), tree.ancestors_right(5)  # 1 -> 2 (left) -> 5 (right)
    ((1,), (2,))
    >>> tree.descendants_leaves(3), tree.leaf_index(6)
    ((6, 7), 2)
    """

    depth: int

    def __post_init__(self):
        if not isinstance(self.depth, int) or self.depth < 1:
            raise ValueError(f"depth must be an integer >= 1, got {self.depth!r}")

    # --- node sets -------------------------------------------------------------
    @property
    def n_branch(self) -> int:
        """|tau_B| = 2^D - 1."""
        return 2**self.depth - 1

    @property
    def n_leaves(self) -> int:
        """|tau_L| = 2^D."""
        return 2**self.depth

    @property
    def branch_nodes(self) -> tuple[int, ...]:
        return tuple(range(1, 2**self.depth))

    @property
    def leaves(self) -> tuple[int, ...]:
        return tuple(range(2**self.depth, 2 ** (self.depth + 1)))

    def is_leaf(self, t: int) -> bool:
        return 2**self.depth <= t < 2 ** (self.depth + 1)

    def is_branch(self, t: int) -> bool:
        return 1 <= t < 2**self.depth

    # --- index conversion (the only place) -------------------------------------
    def branch_index(self, t: int) -> int:
        """Row of omega that holds omega_t."""
        if not self.is_branch(t):
            raise ValueError(f"node {t} is not a branch node of a depth-{self.depth} tree")
        return t - 1

    def leaf_index(self, t: int) -> int:
        """Row of beta that holds beta_t."""
        if not self.is_leaf(t):
            raise ValueError(f"node {t} is not a leaf of a depth-{self.depth} tree")
        return t - 2**self.depth

    def leaf_rows(self, leaves):
        """Rows of beta for an array of leaf numbers (vectorised ``leaf_index``)."""
        return np.asarray(leaves) - self.n_leaves

    # --- relations ----------------------------------------------------------------
    @staticmethod
    def left(t: int) -> int:
        return 2 * t

    @staticmethod
    def right(t: int) -> int:
        return 2 * t + 1

    @staticmethod
    def parent(t: int) -> int:
        return t // 2

    @staticmethod
    def node_depth(t: int) -> int:
        """Depth of node t (root has depth 0)."""
        return t.bit_length() - 1

    @functools.lru_cache(maxsize=None)
    def ancestors_left(self, t: int) -> tuple[int, ...]:
        """A_L(t): ancestors of t whose left branch lies on the path to t."""
        return tuple(a for a, child in self._path(t) if child == 2 * a)

    @functools.lru_cache(maxsize=None)
    def ancestors_right(self, t: int) -> tuple[int, ...]:
        """A_R(t): ancestors of t whose right branch lies on the path to t."""
        return tuple(a for a, child in self._path(t) if child == 2 * a + 1)

    def _path(self, t: int):
        pairs = []
        while t > 1:
            pairs.append((t // 2, t))
            t //= 2
        return reversed(pairs)

    @functools.lru_cache(maxsize=None)
    def descendants_branch(self, t: int) -> tuple[int, ...]:
        """D_B(t): branch nodes strictly below t."""
        return tuple(s for s in self.subtree_branch(t) if s != t)

    @functools.lru_cache(maxsize=None)
    def descendants_leaves(self, t: int) -> tuple[int, ...]:
        """D_L(t): leaves below t (t itself if t is a leaf)."""
        d = self.depth - self.node_depth(t)
        return tuple(range(t * 2**d, (t + 1) * 2**d))

    @functools.lru_cache(maxsize=None)
    def subtree_branch(self, t: int) -> tuple[int, ...]:
        """Branch nodes of the subtree rooted at t, t first, in breadth-first order."""
        nodes, level = [], [t]
        while level and self.is_branch(level[0]):
            nodes.extend(level)
            level = [c for s in level for c in (2 * s, 2 * s + 1)]
        return tuple(nodes)

    def subtree_depth(self, t: int) -> int:
        """Depth of the subtree rooted at t."""
        return self.depth - self.node_depth(t)

    def path(self, t: int) -> tuple[int, ...]:
        """The branch nodes on the path from the root to t (t excluded), root first.

        >>> Tree(3).path(13)  # 1 -> 3 -> 6 -> 13
        (1, 3, 6)
        """
        return tuple(a for a, _ in self._path(t))

    @staticmethod
    def common_ancestor(nodes) -> int:
        """The lowest common ancestor of ``nodes`` (a node is its own ancestor).

        >>> Tree.common_ancestor([9, 5]), Tree.common_ancestor([6, 7]), Tree.common_ancestor([4, 13])
        (2, 3, 1)
        """
        nodes = set(nodes)
        while len(nodes) > 1:
            deepest = max(nodes)
            nodes = (nodes - {deepest}) | {deepest // 2}
        return nodes.pop()
