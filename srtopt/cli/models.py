"""``srtopt fit``, ``srtopt predict`` and ``srtopt show``: train, apply and read a tree from CSV files.

    srtopt fit data.csv --target y --depth 3 --out model.json
    srtopt fit data.csv --target label --task classification --leaf constant --out model.json
    srtopt predict model.json data.csv --out preds.csv [--proba]
    srtopt show model.json [--format text|dot|png|html] [--out FILE]

User mistakes raise ValueError / FileNotFoundError / KeyError with one clear
line; the dispatcher (:mod:`srtopt.cli`) prints it and exits with status 2.
Outputs are written atomically and never onto an input file.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import secrets
import sys
import tempfile
import warnings
from pathlib import Path

from .. import _io
from .._io import atomic_write, check_replaceable, is_special
from ._fit_flags import (Header, check_formulation, check_search_flags, constraint_flags, fit_budget, max_features,
                         regularization, sample_weights, search, stopping, weight_column)
from ._table import add_reading_flags, read_table

#: the folds of --cv without a number: SoftTreeCV's default cv (tests/cli/test_models.py keeps them equal)
CV_FOLDS = 4


def register(subparsers) -> None:
    fit = subparsers.add_parser(
        "fit", help="fit a SoftRegressionTree or a SoftClassificationTree on a CSV file and save it as JSON",
        description="Fit a SoftRegressionTree (a numeric target) or a SoftClassificationTree (class labels: "
                    "--task classification) on the columns of a CSV file (header row required): numbers, text as "
                    "categories, an empty cell as a missing value; and save it (versioned JSON). Progress per macro "
                    "iteration on stderr.")
    fit.add_argument("data", help="CSV file with a header row")
    add_reading_flags(fit)
    fit.add_argument("--target", required=True, help="name of the column to predict")
    fit.add_argument("--task", choices=TASKS, default="auto",
                     help="'regression' (a SoftRegressionTree), 'classification' (a SoftClassificationTree: the "
                          "target holds class labels) or 'auto' (default): classification when the target column "
                          "holds text or booleans, else regression (integer class labels need --task "
                          "classification)")
    fit.add_argument("--depth", type=int, default=2, help="tree depth D (default 2)")
    fit.add_argument("--leaf", default=None,
                     help="the leaf model: 'linear' (a regression's default) or 'spline' (a curve per feature); for a "
                          "classifier 'logistic' (its default), 'constant' or 'spline'; a spline spec such as "
                          "'spline:n_knots=7' or 'spline:steps=64,pairs=4'; or the name of a leaf model of your own, registered by "
                          "register_leaf_model or declared by an installed package (entry points "
                          "'srtopt.leaf_models') (docs: 'Leaf models')")
    fit.add_argument("--out", required=True, help="where to write the model (JSON; '-' for standard output)")
    fit.add_argument("--regularization", default="l2",
                     help="'l2' (default; the paper's lambdas on the summed error, see docs/departures.md), "
                          "'l2-slopes', 'l2-mean', 'l2-calibrated' (other readings), with ':split=FACTOR' a factor "
                          "on the splits' weight (e.g. 'l2:split=10'), 'none' (plain SRT) or a number "
                          "(lambda_w = lambda_b)")
    fit.add_argument("--leaf-ridge", type=_leaf_ridge, default="auto",
                     help="'auto' (default: 1, or on small data, N < 2^D (p + 1), chosen by 3-fold "
                          "cross-validation among 1, 1e2, 1e4, 1e6) or a number: a factor on the leaves' l2 weight")
    fit.add_argument("--max-iter", type=int, default=None,
                     help="macro iterations (default: 10 for regression, the paper's, and 5 for classification)")
    fit.add_argument("--tol", default=None, metavar="TOL",
                     help="stop after a macro iteration that lowers the best training objective by less than TOL "
                          "(relative); 'none': run every macro iteration (default: none for regression, 1e-3 for "
                          "classification)")
    fit.add_argument("--init", choices=["model-tree", "cluster", "cart"], default=None,
                     help="initial tree: 'model-tree' (default for regression), 'cluster' (the paper's) or 'cart' "
                          "(default for classification)")
    fit.add_argument("--n-init", type=int, default=10, help="2-means repetitions of the 'cluster' initialization")
    fit.add_argument("--time-limit", type=float, default=None,
                     help="seconds for the command up to the saved model: the fit gets what remains after "
                          "starting and reading the data (with --cv: the whole search and the refit)")
    fit.add_argument("--random-state", type=int, default=0, help="seed of the initialization (default 0)")
    fit.add_argument("--features", nargs="+", default=None,
                     help="feature columns (default: every column except the target)")
    fit.add_argument("--sample-weight", default=None, metavar="COLUMN",
                     help="the column of the rows' weights (numbers >= 0, not a feature): an integer weight counts "
                          "a row that many times")
    fit.add_argument("--max-features", default="none", metavar="K",
                     help="at most K features in the whole tree, chosen on a held-out split (the estimator's "
                          "max_features); 'none' (default): every feature")
    fit.add_argument("--cv", type=int, nargs="?", const=CV_FOLDS, default=None, metavar="K",
                     help=f"choose the depth and the leaves by K-fold cross-validation (default K: {CV_FOLDS}), as "
                          "SoftRegressionTreeCV() and SoftClassificationTreeCV() do in Python, and save the chosen tree "
                          "refit on all the rows; the whole search within --time-limit")
    fit.add_argument("--cv-depths", type=int, nargs="+", default=None, metavar="D",
                     help="with --cv: the depths compared (default 1 2 3 4), the deeper while they predict better")
    fit.add_argument("--cv-leaves", nargs="+", default=None, metavar="LEAF",
                     help="with --cv: the leaves compared (default: linear spline, or logistic spline; --leaf alone: "
                          "that leaf)")
    fit.add_argument("--cv-rule", choices=["one-se", "paired-se", "best"], default=None,
                     help="with --cv: 'paired-se' (default) the plainest candidate within one standard error of the "
                          "per-row differences from the best held-out loss; 'one-se' within one standard error of the "
                          "best's; 'best' the best")
    formulation = fit.add_argument_group(
        "formulation and solvers", "the estimator's parameters of the same names (docs: 'Formulations' and "
                                   "'Solvers'); a solver spec may carry options, e.g. 'ipopt:hessian=exact,tol=1e-8'")
    formulation.add_argument("--loss", default=None,
                             help="regression: 'squared' (default), 'huber[:delta=D]' or 'absolute'; classification: "
                                  "'log_loss' (default) or 'cost' (the expected misclassification cost)")
    formulation.add_argument("--penalty", action="append", default=None, metavar="SPEC",
                             help="an extra penalty, e.g. 'split_l1:strength=0.01' or 'feature_l1:strength=0.01' "
                                  "(repeatable)")
    formulation.add_argument("--working-sets", default="subtree", help="'subtree' (default), 'all' or 'paths'")
    formulation.add_argument("--bn-solver", default="auto", help="BN subproblems: 'auto' (default), 'newton', "
                                                                 "'ipopt', 'cyipopt', 'l-bfgs-b', 'prox-gradient', ...")
    formulation.add_argument("--ln-solver", default="auto", help="LN steps: 'auto' (default), 'exact', 'qp' (HiGHS), "
                                                                 "'qpoases', 'osqp', 'ipopt', ...")
    formulation.add_argument("--wlr-solver", default="auto", help="the weighted logistic proxies: 'auto' (default), "
                                                                  "'newton', 'sklearn', ...")
    classification = fit.add_argument_group("classification", "the SoftClassificationTree parameters of the same "
                                                              "names (with --task classification)")
    classification.add_argument("--class-weight", choices=("balanced",), default=None,
                                help="'balanced': weight each class inversely to its frequency")
    constraints = fit.add_argument_group(
        "constraints", "constraints the tree must meet (docs: 'Constraints'); the group constraints need --sensitive")
    constraints.add_argument("--monotone", action="append", default=None, metavar="NAME=SIGN",
                             help="prediction increasing (1) or decreasing (-1) in a feature, exactly (repeatable)")
    constraints.add_argument("--leaf-bounds", action="append", default=None, metavar="NAME=LOW:HIGH",
                             help="bounds on a feature's leaf slopes in y's units per unit of it, e.g. 'weight=:0' "
                                  "(an empty side is unbounded; repeatable)")
    constraints.add_argument("--sensitive", default=None, metavar="COLUMN",
                             help="the column of the protected group (not a feature)")
    constraints.add_argument("--parity", type=float, default=None, metavar="GAP",
                             help="the groups' mean predictions differ by at most GAP (y's units)")
    constraints.add_argument("--group-loss", type=float, default=None, metavar="BOUND",
                             help="each group's mean loss (for the squared loss its MSE) at most BOUND")
    constraints.add_argument("--constraint", action="append", default=None, metavar="SPEC",
                             help="any registered constraint spec, e.g. 'parity:gap=0.02' or "
                                  "'row_mean:value=prediction,over=groups,upper=150', or one an installed package "
                                  "declares (entry points 'srtopt.constraints') (repeatable)")
    fit.add_argument("--quiet", action="store_true", help="no progress lines")
    fit.set_defaults(func=run_fit, on_interrupt="--out was not written")

    predict = subparsers.add_parser(
        "predict", help="predict a CSV file with a saved model",
        description="Predict every row of a CSV file with a model saved by 'srtopt fit'; the feature "
                    "columns are taken by name (other columns are ignored). A classifier predicts class "
                    "labels, or with --proba the probability of every class.")
    predict.add_argument("model", help="model file written by 'srtopt fit'")
    predict.add_argument("data", help="CSV file with a header row")
    add_reading_flags(predict)
    predict.add_argument("--out", default=None, help="CSV file for the predictions (default or '-': stdout)")
    predict.add_argument("--column", default=None, help="name of the prediction column (default 'prediction')")
    predict.add_argument("--proba", action="store_true",
                         help="a classifier's class probabilities (those of each row's HBP leaf): one column per "
                              "class, named by the class")
    predict.set_defaults(func=run_predict)

    show = subparsers.add_parser(
        "show", help="print, draw or write a web page of a saved model",
        description="Show a saved model as an indented text tree (scaled and original units), "
                    "Graphviz DOT source, a PNG drawn with matplotlib, or one self-contained HTML page "
                    "(collapsible nodes, every formula in full, a form that routes a row). Terms are "
                    "ranked by |raw coefficient| x the feature's training range (scale-free).")
    show.add_argument("model", help="model file written by 'srtopt fit'")
    show.add_argument("--format", choices=("text", "dot", "png", "html"), default=None,
                      help="default: from the --out extension (.png, .dot/.gv, .html/.htm, .txt), else text")
    show.add_argument("--out", default=None, help="output file (required for png; default or '-': stdout)")
    show.add_argument("--top", type=_top, default=3,
                      help="terms shown per split/leaf in text, dot and png: a number (default 3) or 'all' "
                           "(the HTML page always shows every term)")
    show.add_argument("--max-depth", type=int, default=None, metavar="K",
                      help="text, dot and png: draw K levels below the root, each deeper split as one box "
                           "for its folded subtree (default: every level; the HTML page folds by clicking)")
    show.set_defaults(func=run_show)


# ---------------------------------------------------------------------- helpers
TASKS = ("auto", "regression", "classification")
def _top(text):
    """--top: a number of terms, or 'all' (None)."""
    return None if text == "all" else int(text)


def _out_path(path, inputs):
    """--out checked before any work: "-" is standard output; otherwise it is not a directory,
    it is none of the ``inputs`` (after symlinks, relative paths and hard links), and a file
    can be written where it points (a FIFO or a device is written into; see ``srtopt._io``)."""
    if path == "-":
        return path
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a directory; give a file name")
    for name in inputs:
        if _same_file(out, name):
            raise ValueError(f"--out {str(path)!r} is the input file {str(name)!r}; writing it would "
                             f"destroy the input: choose another output file")
    if not is_special(out):
        _check_writable(out)
    return out


def _check_writable(out):
    """A file can be created beside the (symlink-resolved) --out: tried with a temporary file."""
    try:
        os.stat(out)
    except FileNotFoundError:
        pass  # a new file, or a dangling link: its directory is checked below
    except OSError as exc:  # ELOOP: a symlink loop
        raise ValueError(f"--out {str(out)!r} cannot be resolved: {exc.strerror}") from None
    directory = Path(os.path.realpath(out)).parent
    if not directory.is_dir():
        raise FileNotFoundError(f"--out: directory {str(directory)!r} does not exist")
    try:
        check_replaceable(out)
    except PermissionError as exc:
        raise ValueError(f"--out {str(out)!r} cannot be written: {exc.strerror}") from None
    from . import signals_held

    try:
        with signals_held():  # a signal between creating the probe and removing it left the probe behind
            with tempfile.NamedTemporaryFile(dir=directory, prefix=".srtopt-probe-"):
                pass
    except OSError as exc:
        raise ValueError(f"--out {str(out)!r} cannot be written: {exc.strerror} in {str(directory)!r}") from None


def _write_out(out, data: bytes, what: str | None) -> None:
    """Write ``data`` to --out ("-": standard output) and say so on stderr (unless ``what`` is None);
    not after a signal that should have ended the command (:func:`~srtopt.cli.check_signals`)."""
    from . import check_signals

    check_signals()
    if out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    atomic_write(out, data)
    if what is not None:
        print(f"wrote {what} to {out}", file=sys.stderr)


def _same_file(a, b) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):  # realpath: a symlink loop is no error here
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def _leaf_ridge(text):
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 'auto' or a number > 0, got {text!r}") from None


# ------------------------------------------------------------------------ fit
def run_fit(args) -> int:
    table = read_table(args.data, args)
    frame, columns = table.frame, table.columns
    if args.target not in columns:
        raise ValueError(f"--target {args.target!r} is not a column of {args.data!r}; columns: "
                         f"{', '.join(columns)}")
    if args.sensitive is not None and args.sensitive not in columns:
        raise ValueError(f"--sensitive {args.sensitive!r} is not a column of {args.data!r}; columns: "
                         f"{', '.join(columns)}")
    if args.sensitive == args.target:
        raise ValueError("--sensitive must name another column than --target")
    weight_name = weight_column(args, columns)
    features = args.features or [c for c in columns if c not in (args.target, args.sensitive, weight_name)]
    unknown = [c for c in features if c not in columns]
    if unknown:
        raise ValueError(f"--features: {', '.join(map(repr, unknown))} not in {args.data!r}")
    if args.target in features:
        raise ValueError(f"--features must not contain the target {args.target!r}")
    if args.sensitive is not None and args.sensitive in features:
        raise ValueError(f"--features must not contain the --sensitive column {args.sensitive!r} (it is not a feature)")
    if weight_name is not None and weight_name in features:
        raise ValueError(f"--features must not contain the --sample-weight column {weight_name!r} (it is not a "
                         f"feature)")
    features = table.features(features, chosen=bool(args.features))
    if not features:
        raise ValueError(f"{args.data!r} has no feature column besides the target {args.target!r}")
    X = table.table(features)
    budget = max_features(args.max_features)
    if budget is not None and budget > X.shape[1]:
        raise ValueError(f"--max-features {budget} is more than the {X.shape[1]} feature column(s)")
    classify = _task(args.task, frame[args.target]) == "classification"
    y = table.labels(args.target) if classify else \
        table.numbers([args.target], "--target", _REGRESSION_TARGET)[args.target].to_numpy(dtype=float)
    out = _out_path(args.out, [args.data])  # fail before a long fit, not after
    groups = None if args.sensitive is None else frame[args.sensitive].to_numpy()
    if groups is not None and frame[args.sensitive].isna().any():
        raise ValueError(f"column {args.sensitive!r} of {args.data!r} (--sensitive) has missing values")
    weights = None if weight_name is None else sample_weights(table, weight_name)
    if classify:
        from ._classify import fit_classifier as fit
    else:
        fit = _fit_regressor
    model = fit(args, X, y, groups, weights)
    _save_model(model, out, args)  # first: whatever fails after training, the model is kept
    print(f"saved {out} ({_training_score(model, X, y, weights)}, stopped by {model.stopped_by_}"
          f"{_constraints_note(model)})", file=sys.stderr if out == "-" else sys.stdout)
    return 0


def _training_score(model, X, y, weights) -> str:
    """"training R^2 0.4293" (a classifier's accuracy), weighted by ``weights``; "... not computed: out of
    memory" when predicting every training row does not fit in memory (the model is saved by then)."""
    name = "accuracy" if hasattr(model, "classes_") else "R^2"
    try:
        return f"training {name} {model.score(X, y, sample_weight=weights):.4f}"
    except MemoryError:
        return f"training {name} not computed: out of memory"


def _constraints_note(model) -> str:
    """"; constraints: k of m rows hold on the training data" ("" without constraints), and the
    held-out folds' worst row when --cv measured them."""
    report = getattr(model, "constraint_report_", None) or []
    if not report:
        return ""
    holding = sum(row["holds"] for row in report)
    note = f"; constraints: {holding} of {len(report)} rows hold on the training data"
    held = [row for row in report if row.get("held_out")]
    if held:
        worst = max(held, key=lambda row: max(abs(v) for v in row["held_out"]))
        folds = ", ".join(f"{v:.4g}" for v in worst["held_out"])
        note += f", {worst['row']} on the held-out folds {folds} (bound {worst['bound']})"
    return note + ("" if holding == len(report) else "; 'srtopt show' prints the table")


#: what to do with a regression target that is not numbers
_REGRESSION_TARGET = "give --task classification if it holds class labels"


#: a numeric target of at most this many distinct whole numbers may be class codes (the hint of srtopt fit)
CLASS_CODES = 20


def _hint_class_codes(y, name) -> None:
    """Warn that a target ``y`` of few distinct whole numbers is fitted as a regression, and say how to classify."""
    import numpy as np

    values = np.unique(y)
    if 1 < len(values) <= CLASS_CODES and all(float(v).is_integer() for v in values):
        shown = ", ".join(f"{v:g}" for v in sorted(values)[:5]) + (", ..." if len(values) > 5 else "")
        warnings.warn(f"the target {name!r} holds {len(values)} distinct whole numbers ({shown}): fitted as a "
                      f"regression; give --task classification if they are class codes", UserWarning, stacklevel=2)


def _task(task, target) -> str:
    """--task, 'auto' read from the target column: classification for text, booleans or categories."""
    import pandas as pd

    if task != "auto":
        return task
    numeric = pd.api.types.is_numeric_dtype(target) and not pd.api.types.is_bool_dtype(target)
    return "regression" if numeric else "classification"


def _fit_regressor(args, X, y, groups, weights=None):
    """The fitted SoftRegressionTree, or the one --cv chose."""
    from ..estimators import SoftRegressionTree

    if args.class_weight is not None:
        raise ValueError(f"--class-weight applies to a classifier (--task classification); the target "
                         f"{args.target!r} is fitted by a SoftRegressionTree")
    monotonic_cst, constraint_specs = _constraints(args)
    model = SoftRegressionTree(depth=args.depth, regularization=regularization(args.regularization),
                               leaf_ridge=args.leaf_ridge, leaf=args.leaf or "linear",
                               **stopping(args), init=args.init or "model-tree", n_init=args.n_init,
                               time_limit=args.time_limit, loss=args.loss or "squared", penalty=args.penalty,
                               working_sets=args.working_sets, bn_solver=args.bn_solver, ln_solver=args.ln_solver,
                               wlr_solver=args.wlr_solver, random_state=args.random_state,
                               verbose=0 if args.quiet else 1, monotonic_cst=monotonic_cst,
                               constraints=constraint_specs, max_features=max_features(args.max_features))
    check_formulation(args)  # the formulation and solver flags, each error naming its flag
    model._check_params()  # a bad parameter is reported before the progress header
    if args.task == "auto":  # once the input is checked: a refusal is one line
        _hint_class_codes(y, args.target)
    check_search_flags(args)
    budget = None if args.time_limit is None else fit_budget(args.time_limit, model)
    if args.cv is not None:
        model = search(model, args, X, y, groups, weights, budget)
    else:
        model.set_params(time_limit=budget)
        if not args.quiet:  # printed once every input is checked: a bad one is the only line
            model.set_params(callbacks=[Header(args.time_limit)])
        model.fit(X, y, sample_weight=weights, sensitive_features=groups)
    return model


def _constraints(args):
    """(monotonic_cst, constraint specs) of the constraint flags of a regression, checked (each
    error names its flag)."""
    from ..models.constraints import make_constraints

    monotonic_cst, flagged = constraint_flags(args)
    terms = []
    for flag, spec in flagged:
        try:
            terms += make_constraints(spec)
        except ValueError as exc:
            raise ValueError(f"{flag}: {exc}") from None
    grouped = [term.name for term in terms if term.needs_groups]
    if grouped and args.sensitive is None:
        raise ValueError(f"the {' and '.join(sorted(set(grouped)))} constraint needs --sensitive COLUMN (the "
                         f"protected group)")
    specs = [spec for _, spec in flagged]
    return monotonic_cst, specs or None


def _save_model(model, out, args):
    """Write the fitted model to --out and make the note of a later Ctrl-C say so (one step: a
    signal in between waits for its end, :func:`~srtopt.cli.signals_held`; not while a FIFO or
    standard output is written into, which may wait for a reader); if the write fails (disk full, a
    directory gone read-only), keep the work: save it in the temporary directory and say where, then fail."""
    from ..persistence import dumps
    from . import signals_held

    data = dumps(model).encode("utf-8")
    with signals_held() if out != "-" and not is_special(out) else contextlib.nullcontext():
        _write_model(data, out)
        args.on_interrupt = f"the model was saved to {'standard output' if out == '-' else out}"


def _write_model(data, out):
    try:
        _write_out(out, data, None)  # run_fit says "saved"
    except OSError as exc:
        reason = f"could not write --out {str(out)!r} ({exc.strerror or exc})"
        kept = Path(tempfile.gettempdir()) / f"srtopt-model-{secrets.token_hex(4)}.json"
        try:
            _io.atomic_write(kept, data)  # nothing half-written is left there either
        except OSError as again:
            raise OSError(f"{reason}, nor a copy in {tempfile.gettempdir()} ({again.strerror or again}): the "
                          "fitted model is lost") from None
        raise OSError(f"{reason}; the fitted model was saved to {kept} instead") from None


# -------------------------------------------------------------------- predict
def run_predict(args) -> int:
    from ..persistence import load, read_view

    out = None if args.out is None else _out_path(args.out, [args.model, args.data])
    if args.proba and args.column is not None:
        raise ValueError("--column names the one prediction column; --proba writes one column per class, named by "
                         "the class")
    model = read_view(args.model)  # a soft tree predicts without loading the estimator (quick)
    if args.proba and model.classes_ is None:
        raise ValueError(f"--proba: {args.model!r} holds a {model.estimator}, which predicts numbers, not classes; "
                         f"fit a classifier with 'srtopt fit --task classification'")
    if model.predictor is None:
        model = load(args.model)
    table = read_table(args.data, args)
    names, count = _input_columns(model)
    if names is not None:
        missing = [n for n in names if n not in table.columns]
        if missing:
            raise ValueError(f"{args.data!r} lacks the model's feature column(s) "
                             f"{', '.join(map(repr, missing))}")
        X = table.table(list(names), remedy="")
    else:
        if len(table.columns) != count:
            raise ValueError(f"{args.data!r} has {len(table.columns)} columns, the model expects "
                             f"{count} (it was fitted without column names)")
        warnings.warn(f"the model was fitted without column names: the columns of {args.data!r} are taken by "
                      f"position, in this order: {', '.join(table.columns)}")
        X = table.table(table.columns, remedy="").to_numpy()
    import pandas as pd

    if args.proba:
        preds = pd.DataFrame(model.predict_proba(X), columns=[str(label) for label in model.classes_])
    else:
        preds = pd.DataFrame({args.column or "prediction": model.predict(X)})
    _write_out(out or "-", preds.to_csv(index=False).encode("utf-8"), f"{len(preds)} predictions")
    return 0


def _input_columns(model) -> tuple:
    """(the names of the table columns a model reads, or None without names; their number): a fit on a table
    with text or missing cells reads its table's columns (``encoder_``), not its encoded ones."""
    encoder = getattr(model, "encoder_", None)
    if encoder is not None:
        return (list(encoder.columns_) if encoder.named_ else None), len(encoder.columns_)
    names = getattr(model, "feature_names_in_", None)
    return (None if names is None else list(names)), model.n_features_in_


# ----------------------------------------------------------------------- show
def run_show(args) -> int:
    from ..export import export_graphviz, export_text
    from ..persistence import read_view

    fmt = _show_format(args.format, args.out)
    out = None if args.out is None else _out_path(args.out, [args.model])
    model = read_view(args.model)  # the tree as the writers see it, without loading the estimator
    if args.top is not None and args.top < 1:
        raise ValueError(f"--top must be >= 1 or 'all', got {args.top}")
    if args.max_depth is not None and (args.max_depth < 0 or fmt == "html"):
        raise ValueError(f"--max-depth must be >= 0, got {args.max_depth}" if args.max_depth < 0 else
                         "--max-depth applies to text, dot and png; the HTML page folds its nodes by clicking")
    if fmt == "html":
        from ..export import export_html

        _write_out(out or "-", export_html(model).encode("utf-8"), "the page")
        return 0
    if fmt == "png":
        if out is None:
            raise ValueError("--format png needs --out FILE.png (or --out - for standard output)")
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ..plotting import plot_tree

        ax = plot_tree(model, top=args.top, max_depth=args.max_depth)
        buffer = io.BytesIO()
        ax.figure.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
        _write_out(out, buffer.getvalue(), "the picture")
        return 0
    export = export_text if fmt == "text" else export_graphviz
    text = export(model, top=args.top, max_depth=args.max_depth)
    _write_out(out or "-", (text if text.endswith("\n") else text + "\n").encode("utf-8"), f"the {fmt}")
    return 0


_SUFFIX_FORMATS = {".png": "png", ".dot": "dot", ".gv": "dot", ".html": "html", ".htm": "html", ".txt": "text"}


def _show_format(fmt, out):
    """--format, else the one --out's extension names, else text; a contradiction is refused."""
    implied = _SUFFIX_FORMATS.get(Path(out).suffix.lower()) if out else None
    if fmt is not None and implied is not None and fmt != implied:
        raise ValueError(f"--format {fmt} contradicts --out {out!r}, which names a {implied} file; "
                         f"drop --format or change the extension")
    return fmt or implied or "text"
