"""The row, feature and stopping flags of ``srtopt fit``: ``--sample-weight COLUMN`` (the rows' weights, a
column that is not a feature), ``--max-features K`` (at most K features in the tree) and ``--tol`` (the
estimator's ``tol``), read and checked, each error in one line naming its flag."""

from __future__ import annotations


def max_features(text):
    """--max-features: a number of features >= 1, or 'none' (every feature: None)."""
    if text.lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"--max-features must be a whole number >= 1 or 'none', got {text!r}")
    return value


def stopping(args) -> dict:
    """The estimator's parameters of --max-iter and --tol that were given: a number of macro iterations
    >= 1; tol a number >= 0 or 'none' (run every macro iteration)."""
    given = {}
    if args.max_iter is not None:
        if args.max_iter < 1:
            raise ValueError(f"--max-iter must be a whole number >= 1, got {args.max_iter}")
        given["max_iter"] = args.max_iter
    if args.tol is not None:
        given["tol"] = None if args.tol.lower() == "none" else _tol(args.tol)
    return given


def _tol(text) -> float:
    """--tol's number: finite and >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < float("inf"):
        raise ValueError(f"--tol must be a number >= 0 or 'none', got {text!r}")
    return value


def weight_column(args, columns):
    """The --sample-weight column, checked against the other column flags (None when not given)."""
    column = args.sample_weight
    if column is None:
        return None
    if column not in columns:
        raise ValueError(f"--sample-weight {column!r} is not a column of {args.data!r}; columns: {', '.join(columns)}")
    for flag, other in (("--target", args.target), ("--sensitive", args.sensitive)):
        if column == other:
            raise ValueError(f"--sample-weight must name another column than {flag}")
    return column


def sample_weights(frame, column, path):
    """The --sample-weight column as weights: numbers, finite, >= 0, not all 0."""
    from .models import _numeric

    w = _numeric(frame, [column], path)[column].to_numpy(dtype=float)
    if (w < 0).any():
        raise ValueError(f"column {column!r} of {path!r} (--sample-weight) has negative weights")
    if not w.any():
        raise ValueError(f"column {column!r} of {path!r} (--sample-weight) weighs every row 0")
    return w
