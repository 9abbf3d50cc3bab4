"""The readings of the paper's l2 weights: (lambda_w, lambda_b) of eq. (obj) from an estimator's
``regularization`` (a reading such as "l2" or "l2:split=10", None or "none", a number or a pair)."""

from __future__ import annotations

import numbers

import numpy as np

from .._spec import parse_spec
from ..models.srt.problem import COUNTED_ROWS
from ..tree import Tree

__all__ = ["LAMBDA_ROWS", "NO_L2", "READINGS", "parse_reading", "regularization_lambdas"]

SPLIT_FACTOR = 0.01  # "l2": lambda_w is the paper's value on the summed error times this factor
CALIBRATION = 1e-3  # "l2-calibrated": the paper's lambdas times CALIBRATION / N
READINGS = ("l2", "l2-slopes", "l2-mean", "l2-calibrated")
NO_L2 = "none"  # the word for None, no l2 term, in Python as on the command line (any case)
LAMBDA_ROWS = COUNTED_ROWS  # the readings' N counts at most this many rows (docs/departures.md, "Large N")


def regularization_lambdas(regularization, p: int, tree: Tree, n: float) -> tuple[float, float]:
    """(lambda_w, lambda_b) of eq. (obj) for ``n`` training points and ``p`` features.

    ``n`` is the sum of the sample weights (the number of rows when they are all 1), so that a row
    of integer weight k counts as k repeated rows.

    The paper sets lambda_w = 2/(p |tau_B|) and lambda_b = 2/(p |tau_L|) for "SRT l2"
    but does not say on which scale; the readings (measured in docs/departures.md):

    * "l2" (default): the paper's values on the summed error (eq. obj's data term
      times N), lambda_b = 2/(p |tau_L| N); lambda_w the same on the splits times
      SPLIT_FACTOR = 0.01, lambda_w = 0.02/(p |tau_B| N);
    * "l2-slopes": on the summed error and on the split slopes omega/p,
      lambda_w = 2/(p^3 |tau_B| N), lambda_b = 2/(p |tau_L| N);
    * "l2-mean": the values as printed, under eq. (obj)'s 1/N;
    * "l2-calibrated": both values times 1e-3/N (next to no regularization);
    * None or "none": no l2 term (plain "SRT"); a number or a pair: lambda_w, lambda_b themselves.

    A reading takes the option ``split``, a factor on its lambda_w: "l2:split=10" is ten
    times the default weight on the splits (lambda_b unchanged), the dial that
    :class:`~srtopt.estimators.cv.SoftRegressionTreeCV` turns.  It stays relative to N,
    so one value means the same on every cross-validation fold.

    In the readings N counts at most ``LAMBDA_ROWS`` (100,000) rows: beyond that, weights
    that keep falling as 1/N no longer keep the splits soft (docs/departures.md).
    """
    if regularization is None:
        return 0.0, 0.0
    if isinstance(regularization, str):
        reading, split = parse_reading(regularization)
        if reading == NO_L2:
            return 0.0, 0.0
        w, b = 2.0 / (p * tree.n_branch), 2.0 / (p * tree.n_leaves)
        n = min(n, LAMBDA_ROWS)
        factor_w, factor_b = {"l2": (SPLIT_FACTOR / n, 1.0 / n), "l2-slopes": (1.0 / (n * p**2), 1.0 / n),
                              "l2-mean": (1.0, 1.0), "l2-calibrated": (CALIBRATION / n, CALIBRATION / n)}[reading]
        return w * factor_w * split, b * factor_b
    values = np.broadcast_to(np.asarray(regularization, float), (2,))
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"regularization values must be finite and >= 0, got {regularization!r}")
    return float(values[0]), float(values[1])


def parse_reading(regularization: str) -> tuple[str, float]:
    """(reading, split factor) of a regularization string such as "l2" or "l2:split=10", or
    ("none", 1.0) for "none" (no l2 term).

    >>> parse_reading("l2:split=10")
    ('l2', 10.0)
    """
    reading, options = parse_spec(regularization)
    split = options.pop("split", 1.0)
    if reading not in (*READINGS, NO_L2) or options or (reading == NO_L2 and ":" in regularization):
        raise ValueError(f"regularization must be one of {', '.join(map(repr, READINGS))} (with the option "
                         f"split=FACTOR, e.g. 'l2:split=10'), None or 'none', a number or a pair (lambda_w, "
                         f"lambda_b), got {regularization!r}")
    if isinstance(split, bool) or not isinstance(split, numbers.Real) or not (np.isfinite(split) and split > 0):
        raise ValueError(f"the option split of regularization={regularization!r} must be a number > 0, "
                         f"got {split!r}")
    return reading, float(split)
