"""``srtopt fit`` of a SoftClassificationTree (``--task classification``, or a target column of
text): the flags of :mod:`srtopt.cli.models` read for a classifier (those both read: :mod:`._fit_flags`)."""

from __future__ import annotations

import sys

from ._fit_flags import Header, check_formulation, constraint_flags, fit_budget, max_features, regularization, stopping


def fit_classifier(args, X, y, groups, weights=None):
    """The fitted SoftClassificationTree (or the one --cv chose); the flags of regression alone are refused, and
    the constraint flags reach the parameters of the same meaning if the estimator has them."""
    from ..estimators.classification import SoftClassificationTree

    if args.init == "model-tree":
        raise ValueError("--init model-tree applies to regression; a SoftClassificationTree (--task classification) "
                         "takes --init cart or cluster")
    if args.cv_rule is not None:
        raise ValueError("--cv-rule applies to regression; a SoftClassificationTree's --cv chooses by the held-out "
                         "log loss")
    if args.cv_depths is not None and args.cv is None:
        raise ValueError("--cv-depths needs --cv K (the candidates are compared by K-fold cross-validation)")
    options = {"depth": args.depth, "regularization": regularization(args.regularization),
               **stopping(args), "n_init": args.n_init, "time_limit": args.time_limit,
               "penalty": args.penalty, "working_sets": args.working_sets, "bn_solver": args.bn_solver,
               "ln_solver": args.ln_solver, "wlr_solver": args.wlr_solver, "random_state": args.random_state,
               "verbose": 0 if args.quiet else 1, "class_weight": args.class_weight,
               "max_features": max_features(args.max_features)}
    given = {"init": args.init, "leaf": args.leaf, "loss": args.loss,
             "leaf_ridge": None if args.leaf_ridge == "auto" else args.leaf_ridge}
    options.update({key: value for key, value in given.items() if value is not None})
    _refuse_continuous(y)
    model = SoftClassificationTree(**options)
    model.set_params(**_class_constraints(args, model))
    check_formulation(args, classification=True)
    model._check_params()  # a bad parameter is reported before the progress header
    budget = None if args.time_limit is None else fit_budget(args.time_limit, model)
    if args.cv is not None:
        model = _choose_depth_and_leaf_weight(model, args, X, y, groups, weights, budget)
    else:
        model.set_params(time_limit=budget)
        if not args.quiet:  # once the data are checked: a bad target is the only line
            model.set_params(callbacks=[Header(args.time_limit)])
        model.fit(X, y, sample_weight=weights, **({} if groups is None else {"sensitive_features": groups}))
    return model


def _choose_depth_and_leaf_weight(tree, args, X, y, groups, weights, time_limit):
    """The tree refit with the depth, leaf weight and leaves that K-fold CV chose on the held-out log loss
    (SoftClassificationTreeCV; the depths of --cv-depths, else its own; the leaves of --leaf, else its own), the
    search within ``time_limit``."""
    from ..estimators.cv import DEPTHS, LEAVES, SoftClassificationTreeCV

    depths = args.cv_depths or DEPTHS
    search = SoftClassificationTreeCV(tree.set_params(verbose=0), depths=depths, cv=args.cv,
                                      leaves=LEAVES if args.leaf is None else None,  # --leaf: that leaf only
                                      random_state=args.random_state, time_limit=time_limit)
    if not args.quiet:
        factors = ", ".join(f"{f:g}" for f in search.leaf_ridges)
        leaves = f" and the leaves among {', '.join(search.leaves)}" if search.leaves else ""
        print(f"choosing the depth among {', '.join(map(str, depths))}, the leaves' l2 factor among {factors}{leaves} "
              f"of SoftClassificationTree by {args.cv}-fold cross-validation on the held-out log loss, on {len(y)} "
              f"rows", file=sys.stderr, flush=True)
    search.fit(X, y, sample_weight=weights, **({} if groups is None else {"sensitive_features": groups}))
    if not args.quiet:
        best = ", ".join(f"depth {d}: {-score:.4f}" for d, score in search.depth_scores_.items())
        print(f"best mean CV log loss per depth {best}; chosen depth {search.depth_}, leaf l2 factor "
              f"{search.leaf_ridge_:g}, {search.leaf_} leaves", file=sys.stderr, flush=True)
    return search.best_estimator_


def _refuse_continuous(labels) -> None:
    """Refuse class labels, read as text, that are numbers which look continuous (the estimator's line)."""
    import pandas as pd

    from ..estimators.class_targets import refuse_continuous

    numbers = pd.to_numeric(pd.Series(labels), errors="coerce")
    if numbers.notna().all():
        refuse_continuous(numbers.to_numpy(dtype=float))


def _class_constraints(args, estimator) -> dict:
    """The classifier's parameters of the constraint flags (``monotonic_cst``, ``constraints``; the
    estimator checks their specs); a flag is refused in one line where the estimator has no
    parameter for it."""
    import inspect

    monotonic_cst, flagged = constraint_flags(args)
    wanted = {"monotonic_cst": ("--monotone", monotonic_cst),
              "constraints": (flagged[0][0] if flagged else "", [spec for _, spec in flagged] or None),
              "sensitive_features": ("--sensitive", args.sensitive)}
    known = set(estimator.get_params()) | set(inspect.signature(estimator.fit).parameters)
    for param, (flag, value) in wanted.items():
        if value is not None and param not in known:
            raise ValueError(f"{flag} does not apply to a SoftClassificationTree (it takes no {param})")
    return {param: value for param, (_, value) in wanted.items() if value is not None and param != "sensitive_features"}


__all__ = ["fit_classifier"]
