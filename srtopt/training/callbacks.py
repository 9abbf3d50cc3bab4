"""Callbacks: observe a training run and stop it cleanly.

A callback is a :class:`Callback` (override the hooks you need) or a plain callable,
which is called after every inner iteration with the
:class:`~.nodec.TrainingState`.  The state holds the iterate (``omega``, ``beta``,
``E``), the counters (``k``, ``macro``), the inner iteration just finished (``t``,
``W_B``, ``W_L``, ``start`` = the iterate before its BN step, ``omega_after_bn``,
``record`` = its history record) and ``solves``: every subproblem a step handed to a
solver with the solver's result.  ``state.stop(reason)`` ends the run after the
current inner iteration; the best iterate so far is returned, with
``stopped_by == reason``.

Hooks (all optional):

* ``on_fit_begin(problem, estimator)`` -- before the initialization (estimators call it);
* ``on_run_begin(state)`` -- a run starts from its initial iterate;
* ``on_inner_iteration(state)`` -- after every inner iteration;
* ``on_macro_end(state)`` -- after every macro iteration;
* ``on_run_end(state, result)`` -- the run ended;
* ``on_fit_end(estimator)`` -- the estimator is fitted.

:class:`ProgressPrinter` (the estimators' ``verbose``) is one; so is
:class:`srtopt.inspect.Capture`.
"""

from __future__ import annotations

import time

import numpy as np

from .. import _announce


HOOKS = ("on_fit_begin", "on_run_begin", "on_inner_iteration", "on_macro_end", "on_run_end", "on_fit_end")


class Callback:
    """Base class of callbacks: every hook does nothing."""

    def on_fit_begin(self, problem, estimator):
        pass

    def on_run_begin(self, state):
        pass

    def on_inner_iteration(self, state):
        pass

    def on_macro_end(self, state):
        pass

    def on_run_end(self, state, result):
        pass

    def on_fit_end(self, estimator):
        pass


class FunctionCallback(Callback):
    """A plain callable, called with the state after every inner iteration."""

    def __init__(self, function):
        self.function = function

    def on_inner_iteration(self, state):
        self.function(state)


def as_callbacks(callbacks) -> list:
    """Callback objects of a list of callbacks and plain callables."""
    out = []
    for callback in callbacks or ():
        if any(hasattr(callback, hook) for hook in HOOKS):
            out.append(callback)
        elif callable(callback):
            out.append(FunctionCallback(callback))
        else:
            raise ValueError(f"a callback must be a Callback or a callable, got {callback!r}")
    return out


class ProgressPrinter(Callback):
    """Progress lines on stderr.  ``verbose`` 1: a line when the initialization starts and ends,
    one per macro iteration (E, the lowest E so far, which the fit returns, the training R^2 or
    accuracy of the HBP tree, the smallest and largest share of the training rows routed to a leaf
    by HBP, seconds), and one for the current inner iteration whenever ``QUIET_SECONDS`` passed
    without a line; 2: also one per inner iteration.

    E is the soft objective of eq. (obj): every row pays every leaf's loss, weighted by its
    probability of reaching it.  At the initial tree, whose leaves are least-squares fits on the
    rows each receives, a leaf fitted on few rows can extrapolate far and make E hundreds of times
    the next macro iteration's; the training R^2 (accuracy) is the tree's own fit, on the scale of
    ``score`` and of a benchmark's scores, from the first line to the last."""

    QUIET_SECONDS = 5.0

    def __init__(self, verbose=1, stream=None):
        self.verbose, self.stream = verbose, stream
        self.start = self.last = time.perf_counter()
        self.problem = None

    def say(self, text):
        self.last = time.perf_counter()
        _announce.say(f"{text}, {self.last - self.start:.2f} s", self.stream)

    def on_fit_begin(self, problem, estimator):
        self.problem, self.start = problem, time.perf_counter()
        self.say(f"initialization: {_describe_init(estimator)} into {problem.tree.n_leaves} leaves on "
                 f"{len(problem.y)} rows")

    def on_run_begin(self, state):
        if self.problem is None:
            return
        labels = {**INFO_LABELS, "cart_score": f"CART training {self.problem.leaf_model.score_name}"}
        details = "".join(f", {labels.get(key, key)} {value:.4g}" for key, value in state.info.items()
                          if isinstance(value, (int, float)))
        self.say(f"initialized: E = {state.E:.6g}, {self._training_fit(state.omega, state.beta)}{details}")

    def on_inner_iteration(self, state):
        r = state.record
        if self.verbose >= 2 or time.perf_counter() - self.last >= self.QUIET_SECONDS:
            n_branch = len(state.W_B) if self.problem is None else self.problem.tree.n_branch
            self.say(f"  macro {r.macro + 1}, inner iteration {r.k + 1} (node {r.node} of {n_branch}): "
                     f"E = {r.E_before:.6g} -> BN {r.E_after_bn:.6g} ({r.bn.get('update', '?')}) -> LN "
                     f"{r.E_after:.6g} ({r.ln.get('update', '?')})")

    def on_macro_end(self, state):
        if self.problem is None:
            return
        tree = self.problem.tree
        leaves = self.problem.hbp_leaves(state.omega)
        share = np.bincount(tree.leaf_rows(leaves), minlength=tree.n_leaves) / len(leaves)
        self.say(f"macro {state.macro + 1}: E = {state.E:.6g}, best {state.best[0]:.6g}, "
                 f"{self._training_fit(state.omega, state.beta)}, leaf share min {share.min():.3f} max {share.max():.3f}")

    def _training_fit(self, omega, beta) -> str:
        """The HBP tree's training fit by its leaf model's ``score`` (R^2 or accuracy), weighted by the rows'
        weights s_i (R^2 is the same on y's scale and on the standardized one)."""
        p = self.problem
        outputs = p.leaf_model.predict(p.Xa, beta[p.tree.leaf_rows(p.hbp_leaves(omega))])
        return f"training {p.leaf_model.score_name} {p.leaf_model.score(outputs, p.y, p.s):.4f}"

    def on_fit_end(self, estimator):
        if getattr(estimator, "stopped_by_", None) == "time_limit":
            _announce.say(f"stopped by time_limit after {len(estimator.history_)} inner iterations", self.stream)


INFO_LABELS = {"davies_bouldin": "Davies-Bouldin index", "model_tree_splits": "splits"}


def _describe_init(estimator) -> str:
    init = getattr(estimator, "init", None)
    if isinstance(init, (list, tuple)):
        return " | ".join(_describe(estimator, entry) for entry in init) + " (lowest E continues)"
    return _describe(estimator, init)


def _describe(estimator, init) -> str:
    names = {"cluster": f"{estimator.n_init} x hierarchical 2-means", "cart": "softened CART splits",
             "model-tree": "softened model-tree splits"}
    return names.get(init, str(init)) if isinstance(init, str) else str(init)
