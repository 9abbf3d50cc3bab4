import os
import signal
from pathlib import Path

import numpy as np
import pytest

#: The directory of the 15 dataset CSVs (srtopt.datasets), from $SRTOPT_DATA; tests that need
#: it skip when it is not set (.ci/run sets it).
DATA = Path(os.environ["SRTOPT_DATA"]) if os.environ.get("SRTOPT_DATA") else None
#: The directory of the 20 classification dataset CSVs, from $SRTOPT_CLASSIFICATION_DATA (skipped without).
CLASSIFICATION_DATA = (Path(os.environ["SRTOPT_CLASSIFICATION_DATA"])
                       if os.environ.get("SRTOPT_CLASSIFICATION_DATA") else None)

# A background job of a non-interactive shell (`nohup pytest &`) starts with SIGINT ignored, and
# the programs the interrupt tests start would inherit that: handle SIGINT as in a terminal, so
# they start with the default disposition (Python then raises KeyboardInterrupt on SIGINT).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def load_csv(slug):
    """(X, y) of a dataset CSV in $SRTOPT_DATA; skips the test when the directory is absent."""
    if DATA is None or not (DATA / f"{slug}.csv").exists():
        pytest.skip(f"{slug}.csv not found: set SRTOPT_DATA to the datasets directory (now {DATA})")
    path = DATA / f"{slug}.csv"
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    return data[:, :-1], data[:, -1]


def sklearn_data(name, n=None, p=6):
    """(X, y) that needs no download: the first ``n`` rows of scikit-learn's bundled diabetes data
    (442 x 10), or a Friedman #1 sample of ``n`` rows (300 when None) and ``p`` >= 5 features
    (noise 0.5; the features after the fifth are pure noise)."""
    from sklearn.datasets import load_diabetes, make_friedman1

    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        return X[:n], y[:n]
    if name == "friedman":
        return make_friedman1(n_samples=n or 300, n_features=p, noise=0.5, random_state=0)
    raise ValueError(f"sklearn_data: unknown name {name!r} (diabetes or friedman)")


def random_tree_problem(rng, depth, n=60, p=3):
    from srtopt.models.srt import SRTProblem
    from srtopt.tree import Tree

    tree = Tree(depth)
    X, y = rng.random((n, p)), rng.standard_normal(n)
    omega = 2 * rng.standard_normal((tree.n_branch, p + 1))
    beta = rng.standard_normal((tree.n_leaves, p + 1))
    return SRTProblem(X, y, tree, mu=1.3, lambda_w=0.05, lambda_b=0.02), omega, beta


def load_frame(slug):
    """(X as a DataFrame with the CSV's feature names, y) of a dataset in $SRTOPT_DATA (skips when absent)."""
    import pandas as pd

    load_csv(slug)  # skips the test when the file is missing
    frame = pd.read_csv(DATA / f"{slug}.csv")
    return frame.drop(columns="target"), frame["target"].to_numpy(dtype=float)
