import numpy as np

from srtopt.estimators.folds import folds, n_distinct


def test_a_weighted_row_and_its_copies_fall_in_the_same_fold_whatever_the_order():
    rng = np.random.default_rng(0)
    X, y = rng.random((30, 3)), rng.random(30)
    w = rng.integers(0, 4, size=30)
    order = rng.permutation(30)
    repeated = np.repeat(np.arange(30), w)  # the original row of every copy
    test_rows = [sorted(order[test]) for _, test in folds(X[order], y[order], 3, w[order])]
    test_copies = [sorted(set(repeated[test])) for _, test in folds(X[repeated], y[repeated], 3)]
    assert test_rows == test_copies
    assert n_distinct(X, y, w) == np.count_nonzero(w) == n_distinct(X[repeated], y[repeated])


def test_rows_of_weight_zero_are_in_no_fold():
    X, y = np.arange(12.0)[:, None], np.arange(12.0)
    w = np.r_[np.zeros(3), np.ones(9)]
    used = np.concatenate([test for _, test in folds(X, y, 3, w)])
    assert sorted(used) == list(range(3, 12))
    for train, test in folds(X, y, 3, w):
        assert not set(train) & set(test) and min(train) >= 3
