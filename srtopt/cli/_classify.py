"""``srtopt fit`` of a SoftClassificationTree (``--task classification``, or a target column of
text): the flags of :mod:`srtopt.cli.models` read for a classifier (those both read: :mod:`._fit_flags`)."""

from __future__ import annotations

from ._fit_flags import (Header, check_formulation, check_search_flags, constraint_flags, fit_budget, max_features,
                         regularization, search, stopping)


def fit_classifier(args, X, y, groups, weights=None):
    """The fitted SoftClassificationTree (or the one --cv chose); the flags of regression alone are refused, and
    the constraint flags reach the parameters of the same meaning if the estimator has them."""
    from ..estimators.classification import SoftClassificationTree

    if args.init == "model-tree":
        raise ValueError("--init model-tree applies to regression; a SoftClassificationTree (--task classification) "
                         "takes --init cart or cluster")
    check_search_flags(args)
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
        model = search(model, args, X, y, groups, weights, budget)
    else:
        model.set_params(time_limit=budget)
        if not args.quiet:  # once the data are checked: a bad target is the only line
            model.set_params(callbacks=[Header(args.time_limit)])
        model.fit(X, y, sample_weight=weights, **({} if groups is None else {"sensitive_features": groups}))
    return model


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
