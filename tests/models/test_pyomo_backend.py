"""Pyomo renderings against the CasADi renderings (and so against the numpy reference)."""

import numpy as np
import pytest

from srtopt import kernels
from srtopt.models.orrt import ORRTObjective
from srtopt.models.pyomo_backend import render, render_pyomo
from srtopt.models.srt import WLRProxy

from ..conftest import random_tree_problem


def _formulations(rng):
    problem, omega, beta = random_tree_problem(rng, 2, n=24, p=2)
    tree = problem.tree
    rows = np.flatnonzero(kernels.hbp_contains(problem.hbp_leaves(omega), tree, 2))
    c = (rng.random(18) > 0.5).astype(float)
    return {
        "full": problem.full(omega, beta),
        "bn-root": problem.branch_subproblem(omega, beta, 1, (1,), np.arange(20)),
        "bn-subtree": problem.branch_subproblem(omega, beta, 1, tree.branch_nodes, np.arange(24)),
        "bn-node2": problem.branch_subproblem(omega, beta, 2, (2,), rows if len(rows) else np.arange(5)),
        "ln": problem.leaf_subproblem(omega, beta, 2, tree.descendants_leaves(2), np.arange(15)),
        "wlr": WLRProxy(problem.Z[:18], c, 0.5 + rng.random(18), 1.3, omega[0], alpha=0.05),
        "orrt": ORRTObjective(problem, omega, beta),
    }


@pytest.mark.parametrize("name", ["full", "bn-root", "bn-subtree", "bn-node2", "ln", "wlr", "orrt"])
def test_pyomo_matches_casadi(rng, name):
    formulation = _formulations(rng)[name]
    casadi_model, pyomo_model = render(formulation, "casadi"), render(formulation, "pyomo")
    assert pyomo_model.variable_names == casadi_model.variable_names
    np.testing.assert_array_equal(pyomo_model.get_x(), formulation.start())
    for _ in range(2):
        x = formulation.start() + 0.3 * rng.standard_normal(formulation.start().shape)
        assert pyomo_model.objective(x) == pytest.approx(casadi_model.objective(x), abs=1e-8)
        np.testing.assert_allclose(pyomo_model.gradient(x), casadi_model.gradient(x), atol=1e-8)
        np.testing.assert_allclose(pyomo_model.hessian(x), casadi_model.hessian(x), atol=1e-8)


def _nl_objective(path, x_by_name):
    """Evaluate an exported .nl objective with CasADi's AMPL reader (no solver needed)."""
    import casadi as ca

    # CasADi's reader does not accept the comments that symbolic labels add: strip them
    text = "\n".join(line.split("#")[0].rstrip() for line in open(path).read().splitlines())
    plain = str(path) + ".plain.nl"
    with open(plain, "w") as fh:
        fh.write(text + "\n")
    builder = ca.NlpBuilder()
    builder.import_nl(plain, {"verbose": False})
    names = open(str(path)[:-3] + ".col").read().split()
    f = ca.Function("f", [ca.vertcat(*builder.x)], [builder.f])
    return float(f([x_by_name[n] for n in names]))


@pytest.mark.parametrize("name", ["bn-subtree", "ln", "wlr"])
def test_exported_nl_evaluates_like_the_model(rng, tmp_path, name):
    formulation = _formulations(rng)[name]
    model = render_pyomo(formulation)
    path = model.write(tmp_path / f"{name}.nl")
    x = formulation.start() + 0.1
    labels = {model.model.x[j].name: value for j, value in enumerate(x)}
    assert _nl_objective(path, labels) == pytest.approx(formulation.evaluate(x)[0], abs=1e-10)


def test_lp_only_for_quadratic_models(rng, tmp_path):
    forms = _formulations(rng)
    assert render_pyomo(forms["ln"]).write(tmp_path / "ln.lp")
    with pytest.raises(ValueError, match="not quadratic"):
        render_pyomo(forms["bn-root"]).write(tmp_path / "bn.lp")
    with pytest.raises(ValueError, match="unknown model format"):
        render_pyomo(forms["ln"]).write(tmp_path / "ln.mps")


def test_unknown_formulation_and_backend(rng):
    with pytest.raises(TypeError, match="no Pyomo rendering"):
        render_pyomo(object())
    with pytest.raises(ValueError, match="unknown backend"):
        render(_formulations(rng)["ln"], "gams")
