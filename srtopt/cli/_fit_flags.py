"""The flags of ``srtopt fit`` that the regressor's fit (:mod:`srtopt.cli.models`) and the classifier's
(:mod:`srtopt.cli._classify`) share, read and checked, each error in one line naming its flag:
``--sample-weight COLUMN`` (the rows' weights, a column that is not a feature), ``--max-features
K`` (at most K features in the tree), ``--max-iter`` and ``--tol``, ``--regularization``, the constraint
flags, the formulation and solver flags; and what both print and budget: the fit's share of
``--time-limit`` and the legend of the progress lines."""

from __future__ import annotations

import sys
import time


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


def sample_weights(table, column):
    """The --sample-weight column of the CSV ``table`` (:class:`~._table.CsvTable`) as weights: numbers,
    finite, >= 0, not all 0."""
    w = table.numbers([column], "--sample-weight", remedy="")[column].to_numpy(dtype=float)
    if (w < 0).any():
        raise ValueError(f"column {column!r} of {table.path!r} (--sample-weight) has negative weights")
    if not w.any():
        raise ValueError(f"column {column!r} of {table.path!r} (--sample-weight) weighs every row 0")
    return w


def regularization(text):
    """--regularization: a number (lambda_w = lambda_b), else a reading as the estimator takes it
    ('l2', 'l2:split=10', 'none', ...)."""
    from ..estimators.regularization import READINGS, parse_reading

    try:
        return float(text)
    except ValueError:
        pass
    try:
        parse_reading(text)
    except ValueError:
        raise ValueError(f"--regularization must be 'none', {', '.join(map(repr, READINGS))} (optionally with "
                         f"':split=FACTOR') or a number, got {text!r}") from None
    return text.lower()


def progress_legend(classifier: bool) -> str:
    """The legend of the progress lines: E, best, the tree's training score (R^2 or accuracy), the leaf shares."""
    loss = "loss (log loss by default)" if classifier else "loss (squared error by default)"
    score = ("training accuracy = the share of the training rows predict() classifies right (HBP predictions, "
             "weighted by --sample-weight and --class-weight)" if classifier else
             "training R^2 = the tree's own fit (HBP predictions, weighted by --sample-weight), the scale of the last "
             "line")
    return ("progress on stderr, one line per macro iteration: E = the training objective (eq. obj), the soft "
            f"model's, where every row pays every leaf's {loss} weighted by its probability of reaching it (at the "
            "initial tree a leaf fitted on few rows can make it hundreds of times the next one's); best = the lowest E "
            "so far, the tree the fit returns (with k0 unset, as in the paper, the convergence safeguards are off and "
            f"E may rise between macro iterations); {score}; leaf share min/max = the smallest and largest fraction of "
            "the training rows that HBP routes to a single leaf (min 0: an empty leaf; max 1: every row in one leaf)")


def fit_budget(time_limit: float, estimator) -> float:
    """The fit's share of ``--time-limit``, which counts from the command's start: what remains
    after starting, reading the data and loading the compiled kernels of ``estimator``'s class, to 0.01 s
    (at least that: a fit whose time is up returns its initial tree)."""
    from ..estimators.soft_tree import _load_kernels
    from . import STARTED

    _load_kernels(type(estimator))
    left = time_limit - (time.perf_counter() - STARTED)
    return max(round(left, 2), 0.01)


class Header:
    """The progress header of ``srtopt fit``, printed when the fit starts, every input checked (a bad one is the
    only line): the estimator, its depth and leaves, the rows and features (and classes), the time left, the
    legend of the progress lines."""

    def __init__(self, time_limit):
        self.time_limit = time_limit

    def on_fit_begin(self, problem, estimator):
        classes = getattr(estimator, "n_classes_", None)
        counts = f"{len(problem.y)} rows x {estimator.n_features_in_} features" + (
            "" if classes is None else f", {classes} classes")
        print(f"fitting {type(estimator).__name__}(depth={estimator.depth}, leaf={estimator.leaf}) on {counts}"
              f"{budget_note(estimator, self.time_limit)}\n{progress_legend(classes is not None)}", file=sys.stderr,
              flush=True)


def budget_note(model, time_limit) -> str:
    """", S s of the L s time limit left for the fit" for the progress header ("" without --time-limit)."""
    if time_limit is None:
        return ""
    return f", {model.time_limit:g} s of the {time_limit:g} s time limit left for the fit"


def constraint_flags(args):
    """(monotonic_cst or None, [(flag, constraint spec)]) of the constraint flags (each error names its flag)."""
    monotonic_cst = {}
    for item in args.monotone or ():
        name, _, sign = item.rpartition("=")
        if not name or sign not in ("1", "-1", "+1", "0"):
            raise ValueError(f"--monotone takes NAME=1 or NAME=-1, got {item!r}")
        if monotonic_cst.setdefault(name, int(sign)) != int(sign):
            raise ValueError(f"--monotone: {name!r} is given the contradictory signs {monotonic_cst[name]} and "
                             f"{int(sign)}; give one")
    flagged = [("--constraint", spec) for spec in args.constraint or ()]
    for item in args.leaf_bounds or ():
        name, _, bounds = item.rpartition("=")
        low, colon, high = bounds.partition(":")
        try:
            low, high = (float(v) if v.strip() else None for v in (low, high))
        except ValueError:
            low = high = colon = None
        if not name or not colon:
            raise ValueError(f"--leaf-bounds takes NAME=LOW:HIGH (a side may be empty), got {item!r}")
        flagged.append(("--leaf-bounds", f"leaf_bounds:feature={name},lower={low},upper={high}"))
    flagged += [("--parity", f"parity:gap={args.parity}")] if args.parity is not None else []
    flagged += [("--group-loss", f"group_loss:bound={args.group_loss}")] if args.group_loss is not None else []
    return monotonic_cst or None, flagged


def check_formulation(args, classification=False):
    """The formulation and solver flags, checked before the fit (each error names its flag)."""
    from ..models.terms import make_loss, make_penalties
    from ..models.terms.class_losses import make_class_loss
    from ..solvers import make_solver
    from ..training.working_sets import make_working_sets

    loss = (lambda: make_class_loss(args.loss or "log_loss")) if classification else lambda: make_loss(
        args.loss or "squared")
    checks = [("--loss", loss), ("--penalty", lambda: make_penalties(args.penalty)),
              ("--working-sets", lambda: make_working_sets(args.working_sets))]
    checks += [(f"--{kind}-solver", lambda kind=kind: make_solver(kind, getattr(args, f"{kind}_solver")))
               for kind in ("bn", "ln", "wlr")]
    for flag, check in checks:
        try:
            check()
        except ValueError as exc:
            raise ValueError(f"{flag}: {exc}") from None


def check_search_flags(args) -> None:
    """--cv-depths, --cv-leaves and --cv-rule need --cv (one line naming the flag)."""
    for flag, value in (("--cv-depths", args.cv_depths), ("--cv-leaves", args.cv_leaves), ("--cv-rule", args.cv_rule)):
        if value is not None and args.cv is None:
            raise ValueError(f"{flag} needs --cv (the candidates are compared by K-fold cross-validation)")


def search(tree, args, X, y, groups, weights, time_limit):
    """The tree the search of ``tree``'s task (SoftRegressionTreeCV, SoftClassificationTreeCV, with the Python
    defaults but for the flags given) chose and refit, the whole search within ``time_limit`` seconds, its rounds
    shown unless --quiet."""
    from ..estimators.cv import SoftClassificationTreeCV, SoftRegressionTreeCV

    cls = SoftClassificationTreeCV if hasattr(tree, "class_weight") else SoftRegressionTreeCV
    given = {"depths": args.cv_depths, "rule": args.cv_rule,
             "leaves": args.cv_leaves or ((args.leaf,) if args.leaf is not None else None)}
    searched = cls(tree.set_params(verbose=0, callbacks=None, time_limit=None), cv=args.cv, time_limit=time_limit,
                   random_state=args.random_state, verbose=0 if args.quiet else 1,
                   **{name: value for name, value in given.items() if value is not None})
    searched._check_params()
    if not args.quiet:
        depths, leaves = searched.depths, searched.leaves
        print(f"choosing the depth ({', '.join(map(str, depths))}) and the leaves ({', '.join(map(str, leaves))}) of "
              f"{type(tree).__name__} by {args.cv}-fold cross-validation, the deeper trees while they predict the "
              f"held-out rows better: at most {searched.max_fits(len(y))} fits, the refit included, on {len(y)} rows",
              file=sys.stderr, flush=True)
    searched.fit(X, y, sample_weight=weights, **({} if groups is None else {"sensitive_features": groups}))
    return searched.best_estimator_
