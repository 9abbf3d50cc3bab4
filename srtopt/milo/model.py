"""The MILO model of a deterministic regression tree with axis-aligned splits and linear
leaves (Bertsimas & Dunn's ORT-L, *Machine Learning under a Modern Optimization Lens*, 2019,
ch. 8), built in Pyomo: binaries a[j,t] (feature j splits node t), d[t] (node t splits) and
z[i,t] (row i reaches leaf t), thresholds b[t], leaf models beta0[t], beta[j,t], residuals r[i].
Its objective is :class:`srtopt.milo.objective.AxisObjective`'s E: a MILP for the absolute
loss, an MIQP for the squared loss.  The module builds the model and reads values back; it
never calls a solver.  The variables, constraints, big-M constants and why they are valid:
docs/baselines.md, "The mixed-integer model".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pe

from srtopt.milo.objective import feature_epsilons, route
from srtopt.tree import Tree

__all__ = ["MILOTree", "MILOSolution", "feature_epsilons", "route"]


@dataclass
class MILOSolution:
    """Values of the MILO variables in array form (scaled units).

    ``features``/``thresholds`` are indexed by branch row t-1 (feature -1 when
    d_t = 0), ``beta0`` (|T_L|,), ``beta`` (|T_L|, p), ``leaf`` (N,) the leaf of
    each point, ``r`` (N,) the residual variables.

    Parameters
    ----------
    features : ndarray of int, shape (|T_B|,)
        Split feature of branch node t at index t - 1; -1 when d_t = 0.
    thresholds : ndarray of shape (|T_B|,)
        Threshold b_t at index t - 1.
    beta0 : ndarray of shape (|T_L|,)
        Leaf intercepts beta0_t.
    beta : ndarray of shape (|T_L|, p)
        Leaf slopes beta_jt.
    leaf : ndarray of int, shape (N,)
        The leaf (paper numbering) of each training point.
    r : ndarray of shape (N,) or None, default=None
        The residual variables r_i (None: not known; :meth:`MILOTree.set_solution` derives them).
    extra : dict, default={}
        Free-form additional information.
    """

    features: np.ndarray
    thresholds: np.ndarray
    beta0: np.ndarray
    beta: np.ndarray
    leaf: np.ndarray
    r: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


class MILOTree:
    """Builder of the ORT-L style MILP (see the module docstring for the maths).

    Parameters
    ----------
    X : (N, p) array with entries in [0, 1].
    y : (N,) array, standardized.
    depth : tree depth D >= 1.
    loss : "absolute" (a MILP) or "squared" (an MIQP).
    l1 : weight of the l1 penalty on leaf slopes (not intercepts).
    l2 : weight of the squared l2 penalty on leaf slopes (``loss="squared"`` only).
    cp : complexity penalty per applied split.
    cutoff : objective of a known tree (the warm start): with l1 > 0 it gives valid
        coefficient bounds (module docstring).
    coef_bound : B, bound on |beta_jt| (default: from ``cutoff``, else 10).
    intercept_bound : B0, bound on |beta0_t| (default max|y| + B p).
    min_samples_leaf : N_min; if > 1, a non-empty leaf holds at least N_min points.
    min_epsilon : floor on eps_j (default 1e-5, see the module docstring).

    Attributes
    ----------
    model : the ``pyomo.environ.ConcreteModel``.
    tree : ``srtopt.tree.Tree``.
    eps, eps_max, big_m_left, big_m_right, big_m_res : the constants used.
    """

    def __init__(
        self,
        X,
        y,
        depth: int,
        *,
        loss: str = "absolute",
        l1: float = 1e-3,
        l2: float = 0.0,
        cp: float = 0.0,
        cutoff: float | None = None,
        coef_bound: float | None = None,
        intercept_bound: float | None = None,
        min_samples_leaf: int = 1,
        min_epsilon: float = 1e-5,
    ):
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float).ravel()
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y have different lengths: {X.shape[0]} != {y.shape[0]}")
        if X.size and (X.min() < -1e-9 or X.max() > 1 + 1e-9):
            raise ValueError("X must be scaled to [0, 1] (the big-M constants assume it)")
        if loss not in ("absolute", "squared"):
            raise ValueError(f"loss must be 'absolute' or 'squared', got {loss!r}")
        if l1 < 0 or l2 < 0 or cp < 0:
            raise ValueError("l1, l2 and cp must be >= 0")
        if loss == "absolute" and l2 > 0:
            raise ValueError("l2 > 0 needs loss='squared' (the absolute-loss model stays a MILP)")
        self.X, self.y = X, y
        self.tree = Tree(int(depth))
        self.depth = int(depth)
        self.loss, self.l1, self.l2, self.cp = loss, float(l1), float(l2), float(cp)
        self.cutoff = None if cutoff is None else float(cutoff)
        N, p = X.shape
        self.n_samples, self.n_features = N, p
        self.l1_budget = self.cutoff / self.l1 if self.cutoff is not None and self.l1 > 0 else np.inf
        if coef_bound is None:
            coef_bound = self.l1_budget if np.isfinite(self.l1_budget) else 10.0
        if not coef_bound > 0:
            raise ValueError(f"coef_bound must be > 0, got {coef_bound}")
        self.coef_bound = float(coef_bound)
        ymax = float(np.abs(y).max()) if N else 0.0
        if intercept_bound is None:
            intercept_bound = ymax + min(self.coef_bound * p, self.l1_budget)
            if np.isfinite(self.l1_budget):  # a point of the leaf: |beta0| <= |y_i| + r_i + sum_j |beta_j|
                intercept_bound += math.sqrt(N * self.cutoff) if loss == "squared" else N * self.cutoff
        self.intercept_bound = float(intercept_bound)
        self.min_samples_leaf = int(min_samples_leaf)
        self.min_epsilon = float(min_epsilon)
        self.eps, self.splittable = (
            feature_epsilons(X, self.min_epsilon) if N else (np.ones(p), np.zeros(p, bool))
        )
        self.eps_max = float(self.eps.max()) if p else 1.0
        self.big_m_left = 1.0 + self.eps_max
        self.big_m_right = 1.0
        slopes = np.minimum(self.coef_bound * np.abs(X).sum(axis=1), self.l1_budget)
        self.big_m_res = self.intercept_bound + slopes + np.abs(y)
        self.model = self._build()

    # ------------------------------------------------------------------ build
    def _build(self) -> pe.ConcreteModel:
        X, y, tree = self.X, self.y, self.tree
        N, p = X.shape
        B, B0 = self.coef_bound, self.intercept_bound
        m = pe.ConcreteModel(name=f"milo_tree_D{self.depth}")
        m.I = pe.RangeSet(0, N - 1) if N else pe.Set(initialize=[])
        m.J = pe.RangeSet(0, p - 1)
        m.TB = pe.Set(initialize=list(tree.branch_nodes), ordered=True)
        m.TL = pe.Set(initialize=list(tree.leaves), ordered=True)

        m.a = pe.Var(m.J, m.TB, domain=pe.Binary)
        m.d = pe.Var(m.TB, domain=pe.Binary)
        m.b = pe.Var(m.TB, bounds=(0.0, 1.0))
        m.z = pe.Var(m.I, m.TL, domain=pe.Binary)
        m.beta0 = pe.Var(m.TL, bounds=(-B0, B0))
        m.beta = pe.Var(m.J, m.TL, bounds=(-B, B))
        m.s = pe.Var(m.J, m.TL, bounds=(0.0, B))
        m.r = pe.Var(m.I, bounds=lambda m_, i: (0.0, float(self.big_m_res[i])))
        for j in range(p):
            if not self.splittable[j]:
                for t in tree.branch_nodes:
                    m.a[j, t].setub(0)

        m.split_choice = pe.Constraint(m.TB, rule=lambda m_, t: sum(m_.a[j, t] for j in m_.J) == m_.d[t])
        m.threshold_off = pe.Constraint(m.TB, rule=lambda m_, t: m_.b[t] <= m_.d[t])
        m.hierarchy = pe.Constraint(
            [t for t in tree.branch_nodes if t != 1], rule=lambda m_, t: m_.d[t] <= m_.d[t // 2]
        )
        m.assign = pe.Constraint(m.I, rule=lambda m_, i: sum(m_.z[i, t] for t in m_.TL) == 1)

        left_idx = [(i, t, a) for t in tree.leaves for a in tree.ancestors_left(t) for i in range(N)]
        right_idx = [(i, t, a) for t in tree.leaves for a in tree.ancestors_right(t) for i in range(N)]
        eps, ML, MR = self.eps, self.big_m_left, self.big_m_right

        def _left(m_, i, t, a):
            lhs = sum(float(X[i, j] + eps[j]) * m_.a[j, a] for j in m_.J) + (1 - m_.d[a])
            return lhs <= m_.b[a] + ML * (1 - m_.z[i, t])

        def _right(m_, i, t, a):
            return sum(float(X[i, j]) * m_.a[j, a] for j in m_.J) >= m_.b[a] - MR * (1 - m_.z[i, t])

        m.route_left = pe.Constraint(pe.Set(initialize=left_idx, dimen=3), rule=_left)
        m.route_right = pe.Constraint(pe.Set(initialize=right_idx, dimen=3), rule=_right)

        if self.min_samples_leaf > 1:
            m.l = pe.Var(m.TL, domain=pe.Binary)
            m.leaf_used = pe.Constraint(m.I, m.TL, rule=lambda m_, i, t: m_.z[i, t] <= m_.l[t])
            nmin = self.min_samples_leaf
            m.leaf_min = pe.Constraint(
                m.TL, rule=lambda m_, t: sum(m_.z[i, t] for i in m_.I) >= nmin * m_.l[t]
            )

        def _pred(m_, i, t):
            return m_.beta0[t] + sum(float(X[i, j]) * m_.beta[j, t] for j in m_.J)

        MRes = self.big_m_res
        m.res_pos = pe.Constraint(
            m.I, m.TL,
            rule=lambda m_, i, t: m_.r[i] >= _pred(m_, i, t) - float(y[i]) - float(MRes[i]) * (1 - m_.z[i, t]),
        )
        m.res_neg = pe.Constraint(
            m.I, m.TL,
            rule=lambda m_, i, t: m_.r[i] >= float(y[i]) - _pred(m_, i, t) - float(MRes[i]) * (1 - m_.z[i, t]),
        )
        m.abs_pos = pe.Constraint(m.J, m.TL, rule=lambda m_, j, t: m_.s[j, t] >= m_.beta[j, t])
        m.abs_neg = pe.Constraint(m.J, m.TL, rule=lambda m_, j, t: m_.s[j, t] >= -m_.beta[j, t])

        inv_n = 1.0 / max(N, 1)
        power = 2 if self.loss == "squared" else 1
        m.loss = pe.Expression(expr=inv_n * sum(m.r[i] ** power for i in m.I))
        m.penalty_l1 = pe.Expression(expr=self.l1 * sum(m.s[j, t] for j in m.J for t in m.TL))
        m.penalty_l2 = pe.Expression(expr=self.l2 * sum(m.beta[j, t] ** 2 for j in m.J for t in m.TL))
        m.penalty_cp = pe.Expression(expr=self.cp * sum(m.d[t] for t in m.TB))
        m.obj = pe.Objective(expr=m.loss + m.penalty_l1 + m.penalty_l2 + m.penalty_cp, sense=pe.minimize)
        return m

    # --------------------------------------------------------------- pickling
    def __getstate__(self):
        # Pyomo components keep their construction rules (closures), which do
        # not pickle: store the data and the variable values, rebuild on load.
        state = {k: v for k, v in self.__dict__.items() if k != "model"}
        state["_values"] = [v.value for v in self._vars()]
        return state

    def __setstate__(self, state):
        values = state.pop("_values")
        self.__dict__.update(state)
        self.model = self._build()
        for v, val in zip(self._vars(), values):
            v.set_value(val, skip_validation=True)

    # ------------------------------------------------------------- inspection
    def _vars(self):
        return list(self.model.component_data_objects(pe.Var, active=True, descend_into=True))

    @property
    def n_variables(self) -> int:
        return len(self._vars())

    @property
    def n_binaries(self) -> int:
        return sum(1 for v in self._vars() if v.is_binary())

    @property
    def n_constraints(self) -> int:
        return sum(1 for _ in self.model.component_data_objects(pe.Constraint, active=True))

    def sizes(self) -> dict:
        """Numbers of variables, binaries and constraints."""
        return {
            "variables": self.n_variables,
            "binaries": self.n_binaries,
            "continuous": self.n_variables - self.n_binaries,
            "constraints": self.n_constraints,
        }

    def big_m(self) -> dict:
        """The big-M constants used (see the module docstring for validity)."""
        return {
            "route_left": self.big_m_left,
            "route_right": self.big_m_right,
            "residual_max": float(self.big_m_res.max()) if self.n_samples else 0.0,
            "coef_bound": self.coef_bound,
            "intercept_bound": self.intercept_bound,
            "eps": self.eps.copy(),
        }

    def write(self, path, format: str | None = None) -> str:
        """Write the model with Pyomo's writers (format from the suffix: .lp, .mps)."""
        path = str(path)
        if format is None:
            if path.endswith(".lp"):
                format = "lp"
            elif path.endswith(".mps"):
                format = "mps"
            else:
                raise ValueError(f"cannot infer the format of {path!r}; use .lp or .mps or pass format=")
        self.model.write(path, format=format, io_options={"symbolic_solver_labels": True})
        return path

    # ------------------------------------------------------------ values I/O
    def objective_value(self) -> float:
        return float(pe.value(self.model.obj))

    def values(self) -> dict:
        """All variable values as {component name: {index: value}}."""
        out = {}
        for comp in self.model.component_objects(pe.Var, active=True):
            out[comp.name] = {idx: comp[idx].value for idx in comp}
        return out

    def set_solution(self, sol: MILOSolution) -> None:
        """Load a tree (structure + leaf models) as values of every MILO variable.

        ``sol.leaf`` must be consistent with routing the training points through
        ``sol.features``/``sol.thresholds`` for the result to be feasible; r, s
        and z are derived so that the point is feasible whenever the tree is.
        """
        m, tree, X, y = self.model, self.tree, self.X, self.y
        N, p = X.shape
        for t in tree.branch_nodes:
            f = int(sol.features[t - 1])
            m.d[t].set_value(1 if f >= 0 else 0)
            m.b[t].set_value(float(sol.thresholds[t - 1]) if f >= 0 else 0.0)
            for j in range(p):
                m.a[j, t].set_value(1 if j == f else 0)
        beta0, beta = sol.beta0, sol.beta  # a start outside the bounds is infeasible: the solver says so
        for t in tree.leaves:
            k = tree.leaf_index(t)
            m.beta0[t].set_value(float(beta0[k]))
            for j in range(p):
                m.beta[j, t].set_value(float(beta[k, j]))
                m.s[j, t].set_value(abs(float(beta[k, j])))
        rows = tree.leaf_rows(sol.leaf)
        pred = beta0[rows] + np.einsum("ij,ij->i", X, beta[rows]) if N else np.zeros(0)
        for i in range(N):
            for t in tree.leaves:
                m.z[i, t].set_value(1 if t == sol.leaf[i] else 0)
            m.r[i].set_value(float(min(abs(y[i] - pred[i]), self.big_m_res[i])))
        if self.min_samples_leaf > 1:
            counts = np.bincount(rows, minlength=tree.n_leaves)
            for t in tree.leaves:
                m.l[t].set_value(1 if counts[tree.leaf_index(t)] > 0 else 0)

    def get_solution(self) -> MILOSolution:
        """Read the current variable values back (binaries rounded)."""
        m, tree = self.model, self.tree
        N, p = self.X.shape
        feats = np.full(tree.n_branch, -1, dtype=np.int64)
        thr = np.zeros(tree.n_branch)
        for t in tree.branch_nodes:
            if (m.d[t].value or 0) > 0.5:
                vals = [m.a[j, t].value or 0.0 for j in range(p)]
                feats[t - 1] = int(np.argmax(vals))
                thr[t - 1] = float(m.b[t].value or 0.0)
        beta0 = np.array([m.beta0[t].value or 0.0 for t in tree.leaves])
        beta = np.array([[m.beta[j, t].value or 0.0 for j in range(p)] for t in tree.leaves]).reshape(
            tree.n_leaves, p
        )
        leaves = np.array(tree.leaves)
        leaf = np.array(
            [leaves[int(np.argmax([m.z[i, t].value or 0.0 for t in tree.leaves]))] for i in range(N)],
            dtype=np.int64,
        )
        r = np.array([m.r[i].value or 0.0 for i in range(N)])
        return MILOSolution(feats, thr, beta0, beta, leaf, r)

    def max_violation(self) -> float:
        """Largest constraint or bound violation at the current values (for checks)."""
        worst = 0.0
        for c in self.model.component_data_objects(pe.Constraint, active=True):
            body = pe.value(c.body)
            if c.has_lb():
                worst = max(worst, pe.value(c.lower) - body)
            if c.has_ub():
                worst = max(worst, body - pe.value(c.upper))
        for v in self._vars():
            val = v.value
            if val is None:
                return float("inf")
            if v.lb is not None:
                worst = max(worst, v.lb - val)
            if v.ub is not None:
                worst = max(worst, val - v.ub)
            if v.is_binary():
                worst = max(worst, abs(val - round(val)))
        return float(worst)

    def snap_thresholds(self, sol: MILOSolution) -> MILOSolution:
        """Make thresholds route the training points exactly as ``sol.leaf`` says.

        A solver returns b_t within its feasibility tolerance (~1e-6), so a point
        with x_j = b_t - 1e-7 assigned right by z could be routed left by the
        strict test x_j < b_t.  Clip each b_t into [max_left + eps_j, min_right]
        over the training points that the solution sends through t (b_t is not in
        the objective, so the objective is unchanged and the point stays
        feasible).  If that interval is empty (only possible through tolerance),
        use min_right, which still routes correctly since left values are
        smaller.
        """
        X, tree = self.X, self.tree
        thr = sol.thresholds.copy()
        for t in tree.branch_nodes:
            f = int(sol.features[t - 1])
            if f < 0:
                continue
            left_leaves = tree.descendants_leaves(2 * t)
            right_leaves = tree.descendants_leaves(2 * t + 1)
            xl = X[np.isin(sol.leaf, left_leaves), f]
            xr = X[np.isin(sol.leaf, right_leaves), f]
            lo = xl.max() + self.eps[f] if xl.size else 0.0
            hi = xr.min() if xr.size else 1.0
            b = float(np.clip(thr[t - 1], 0.0, 1.0))
            if lo <= hi:
                b = min(max(b, lo), hi)
            else:
                b = hi
            thr[t - 1] = b
        return MILOSolution(sol.features.copy(), thr, sol.beta0.copy(), sol.beta.copy(), sol.leaf.copy(), sol.r)
