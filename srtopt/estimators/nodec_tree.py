"""What the soft trees trained by NODEC-DR share, whatever their leaves: the configuration of
NODEC-DR as NODEC-GS's parts, the solvers checked against the subproblems, the initializations
and restarts, and the closing of empty subtrees.

:class:`~.srt.SoftRegressionTree` (linear leaves) and
:class:`~.classification.SoftClassificationTree` (class-probability leaves) differ in their
problem (:mod:`srtopt.models.leaves`) and their predictions only; both train through
:meth:`NodecTree._train`.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
from sklearn.utils import check_random_state

from .. import kernels
from ..models.constraints import FeatureSubset, make_constraints, rank
from ..models.terms import FeatureL1, make_penalties
from ..solvers import Auto, make_solver
from ..solvers.base import acceptance
from ..solvers.deadline import Deadline
from ..training.feasibility import restore
from ..training.initialization import CartInitialization, ClusterInitialization, initialize
from ..training.nodec import MaxMacroIterations, NodecGS, TrainingState
from ..training.nodec_dr import BranchStep, LeafStep, Thresholds, macro_step
from ..training.working_sets import make_working_sets
from ..tree import Tree
from .selection import (check_max_features, feature_norms, l1_support, relaxed, screen_features, screens,
                        select_features)
from .tabular import tree_columns


#: the reasons a NODEC run ends of itself (not by a time limit or a callback's stop)
FINISHED = ("max_iter", "max_macro", "tol")


class NodecTree:
    """The NODEC-DR training of a soft tree estimator (a mixin over the estimator's parameters:
    the thresholds, solvers, working sets, initializations, restarts and time limit)."""

    def _named_initializations(self, wlr_solver) -> dict:
        """Name -> factory of the initializations ``init`` may name."""
        return {"cart": CartInitialization,
                "cluster": lambda: ClusterInitialization(self.n_init, self.init_scale, wlr_solver=wlr_solver,
                                                         n_jobs=self.n_jobs)}

    def _train(self, problem, solvers, deadline, callbacks):
        """NODEC-DR from the initialization (its split weights and leaf coefficients restored to
        the constraints, :func:`~srtopt.training.feasibility.restore`); with ``n_restarts`` > 1,
        that many initializations run ``restart_iter`` macro iterations and the one with the
        lowest training objective E (the least infeasible, with constraints) continues.  A
        callback's stop ends the fit."""
        for callback in callbacks:
            getattr(callback, "on_fit_begin", lambda problem, estimator: None)(problem, self)
        inits = self._initializations(solvers["wlr"])
        rng = check_random_state(self.random_state)
        seeds = ([self.random_state] if self.n_restarts == 1
                 else [rng.randint(np.iinfo(np.int32).max) for _ in range(self.n_restarts)])
        candidates = [(init, seed) for seed in seeds for init in inits]
        runs = []
        for init, seed in candidates:
            omega0, beta0, *info = initialize(init, problem, seed, deadline)
            omega0, beta0 = restore(problem, omega0, beta0, solvers["ln"], deadline)
            state = TrainingState.start_at(problem, omega0, beta0, **(info[0] if info else {}))
            algorithm = self._algorithm(problem, solvers, deadline, callbacks, seed)
            max_macro = self.restart_iter if len(candidates) > 1 else None
            runs.append((algorithm.run(problem, state=state, max_macro=max_macro), algorithm))
            if runs[-1][0].stopped_by not in FINISHED:
                break  # a time limit or a callback's stop ends the fit
        best = min(range(len(runs)), key=lambda i: rank(runs[i][0].objective, runs[i][0].violation))
        result, algorithm = runs[best]
        self.init_davies_bouldin_ = result.state.info.get("davies_bouldin", np.nan)
        self.init_chosen_ = best % len(inits)
        if result.stopped_by != "max_macro":
            return result
        return algorithm.run(problem, state=result.state)

    def _train_stages(self, stages, solvers, deadline, callbacks):
        """:meth:`_train` on the first problem of ``stages`` ([(problem, macro iterations)]), then each next one
        :meth:`_continued` from the tree before for its macro iterations: one result."""
        (problem, _), *rest = stages
        result = self._train(problem, solvers, deadline, callbacks)
        for problem, macros in rest:
            result = self._continued(problem, solvers, deadline, callbacks, result, macros)
        return result

    def _continued(self, problem, solvers, deadline, callbacks, first, macros):
        """``first`` (a result of :meth:`_train`) continued on ``problem`` for ``macros`` macro iterations from its
        tree (restored to the constraints), as a fit with ``init=WarmStart`` of that tree and ``max_iter=macros``
        runs; one result of both runs (the second's history numbered after the first's, the first's reason to
        stop unless a time limit or a callback stopped the second).  ``first`` itself when a time limit or a
        callback stopped it: the fit ends there."""
        if first.stopped_by not in FINISHED:
            return first
        omega0, beta0 = restore(problem, first.omega, first.beta, solvers["ln"], deadline)
        state = TrainingState.start_at(problem, omega0, beta0)
        second = self._algorithm(problem, solvers, deadline, callbacks, self.random_state).run(
            problem, state=state, max_macro=macros)
        history = first.history + [dataclasses.replace(r, macro=r.macro + first.n_macro) for r in second.history]
        stopped = first.stopped_by if second.stopped_by in FINISHED else second.stopped_by
        return dataclasses.replace(second, history=history, n_macro=first.n_macro + second.n_macro, stopped_by=stopped)

    def _solvers(self, problem) -> dict:
        """The configured BN, LN and WLR solvers, checked against the formulations they will get; "auto" BN and LN
        steps try the leaf model's ``bn_specs`` and ``ln_specs`` where it has them."""
        solvers = {kind: self._solver(kind, problem) for kind in ("bn", "ln", "wlr")}
        tree = problem.tree
        omega = np.zeros((tree.n_branch, problem.n_features + 1))
        beta = np.zeros((tree.n_leaves, problem.Xa.shape[1] * problem.leaf_model.n_outputs))
        rows = np.arange(len(problem.y))
        probes = {"bn": problem.branch_subproblem(omega, beta, 1, tree.branch_nodes, rows),
                  "ln": problem.leaf_subproblem(omega, beta, 1, tree.leaves, rows)}
        for kind, sub in probes.items():
            verdict = acceptance(solvers[kind], sub)
            if not verdict:
                raise ValueError(f"{kind}_solver={getattr(self, f'{kind}_solver')!r} does not accept the "
                                 f"{kind.upper()} subproblems of {problem.leaf_model.describe()}, loss={self.loss!r}, "
                                 f"penalty={self.penalty!r}: {verdict.reason}")
        return solvers

    def _solver(self, kind: str, problem):
        """The solver of ``{kind}_solver``: "auto" for the BN and LN steps tries the leaf model's ``bn_specs`` and
        ``ln_specs`` where given."""
        spec = getattr(self, f"{kind}_solver")
        specs = getattr(problem.leaf_model, f"{kind}_specs", None)
        if isinstance(spec, str) and spec == "auto" and specs:
            return Auto(kind, specs=list(specs))
        return make_solver(kind, spec)

    def _initializations(self, wlr_solver) -> list:
        """The initialization callables: ``init`` or each entry of a list of them."""
        inits = self.init if isinstance(self.init, (list, tuple)) else [self.init]
        if not inits:
            raise ValueError("init must not be an empty list")
        return [self._initialization(init, wlr_solver) for init in inits]

    def _initialization(self, init, wlr_solver):
        """One initialization callable: a name of :meth:`_named_initializations` or a copy of the user's
        object."""
        named = self._named_initializations(wlr_solver)
        if isinstance(init, str) and init in named:
            return named[init]()
        if isinstance(init, str) or not callable(init):
            listed = ", ".join(repr(name) for name in named)
            raise ValueError(f"init must be {listed}, a callable init(problem, random_state) or a list of these, "
                             f"got {init!r}")
        return copy.deepcopy(init)

    def _algorithm(self, problem, solvers, deadline=None, callbacks=(), seed=None) -> NodecGS:
        """NODEC-DR as a configuration of NODEC-GS, every part of it by ``deadline`` (None: none)."""
        deadline = deadline or Deadline()
        thresholds = Thresholds(self.eps1, self.eps2, self.eps3, self.zeta)
        bn = BranchStep(solvers["bn"], solvers["wlr"], thresholds, self.theta_w, self.k0, self.tau,
                        wlr_C=self.wlr_C, wlr_weights=self.wlr_weights, max_rows=self.max_subproblem_rows,
                        random_state=seed, deadline=deadline)
        ln = LeafStep(solvers["ln"], self.theta_b, self.k0, deadline)
        working_sets = make_working_sets(self.working_sets if isinstance(self.working_sets, str)
                                         else copy.deepcopy(self.working_sets))
        return NodecGS(working_sets, bn, ln, MaxMacroIterations(self.max_iter, deadline, self.tol),
                       thresholds.decay, callbacks, macro_step(problem, deadline), deadline)

    def _feature_budget(self, given, y, params: dict, deadline) -> tuple:
        """(the constraints a feature budget adds, the penalty terms): ``max_features=k`` keeps the k features of
        a recursive elimination (:func:`~.selection.select_features`); feature_l1 terms that select
        (``relax``) keep their support, and the tree is fitted on it without them: the support of the l1 fit
        (:func:`~.selection.l1_support`), or without a strength the held-out screen's
        (:func:`~.selection.screen_features`).  No budget: ((), the penalty terms).  A feature_l1 term is refused
        first where the leaves do not take it (:meth:`~srtopt.models.terms.FeatureL1.check_leaves`)."""
        k = check_max_features(self.max_features, given.shape[1])
        penalties = make_penalties(self.penalty)
        for term in penalties:
            if isinstance(term, FeatureL1):
                term.check_leaves(self._leaf_model(given.shape[1]))
        if k is not None and k < given.shape[1]:
            return (FeatureSubset(select_features(self, given, y, params, k, deadline)),), penalties
        if relaxed(penalties) != penalties:
            support = (screen_features if screens(penalties) else l1_support)(self, given, y, params, deadline)
            return (FeatureSubset(support),), relaxed(penalties)
        return (), penalties

    def _without_selection(self, budget: tuple, penalties: tuple):
        """This estimator when no feature budget applied (``budget`` empty), else a copy with the budget's
        outcome in its place: the constraints ``budget`` (the FeatureSubset of the features kept) added,
        ``penalties`` (without the selecting feature_l1 terms) and max_features None.  The fits of the
        leaf-ridge comparison clone it, so they fit the kept features instead of selecting again in
        every fold."""
        if not budget:
            return self
        from sklearn.base import clone

        return clone(self).set_params(max_features=None, penalty=list(penalties),
                                      constraints=list(make_constraints(self.constraints)) + list(budget))

    def _store_selected_features(self):
        """selected_features_ (the features with a nonzero weight in a split or a leaf, by name when X had
        names) and n_features_used_."""
        used = np.flatnonzero(feature_norms(self.omega_, self.beta_, self.leaf_model_) > 0)
        names = getattr(self, "feature_names_in_", None) if getattr(self, "encoder_", None) is None else tree_columns(self)
        self.selected_features_ = (used if names is None else np.asarray(names)[used]).tolist()
        self.n_features_used_ = len(used)

    def _close_unreached(self, Xs):
        """node_counts_ of the HBP routing of the scaled training data Xs; a split that routes no
        training row through on one side is closed (:func:`srtopt.kernels.close_unreached`): the
        empty subtree is pruned."""
        tree = Tree(int(self.depth))
        leaves = kernels.hbp_leaves(kernels.split_design(Xs), self.omega_, tree)
        self.node_counts_ = kernels.node_counts(leaves, tree)
        self.omega_ = kernels.close_unreached(self.omega_, self.node_counts_, tree, float(self.mu))
