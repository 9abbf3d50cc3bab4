import pytest

from srtopt.tree import Tree


def test_numbering_and_relations_depth3():
    tree = Tree(3)
    assert tree.branch_nodes == (1, 2, 3, 4, 5, 6, 7)
    assert tree.leaves == tuple(range(8, 16))
    # path 1 -(right)-> 3 -(left)-> 6 -(left)-> 12
    assert tree.ancestors_left(12) == (3, 6) and tree.ancestors_right(12) == (1,)
    # paper figure: t = 3 gives W_B = {3, 6, 7}, W_L = {12, 13, 14, 15}
    assert tree.subtree_branch(3) == (3, 6, 7)
    assert tree.descendants_leaves(3) == (12, 13, 14, 15)
    assert tree.descendants_branch(3) == (6, 7)
    assert tree.subtree_depth(3) == 2


def test_index_conversion_round_trip():
    tree = Tree(2)
    assert [tree.branch_index(t) for t in tree.branch_nodes] == [0, 1, 2]
    assert [tree.leaf_index(t) for t in tree.leaves] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="not a leaf"):
        tree.leaf_index(3)
    with pytest.raises(ValueError, match="not a branch"):
        tree.branch_index(4)


@pytest.mark.parametrize("depth", [0, -1, 1.5])
def test_bad_depth(depth):
    with pytest.raises(ValueError, match="depth"):
        Tree(depth)
