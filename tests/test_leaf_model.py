"""The leaf seam: a bare LeafModel subclass, with a link derived from no link of srtopt's, registered under a
name, goes through fit (its LN steps by the routes its traits admit, its score in the progress lines, leaf_ridge
by its own loss and centre), predict, save, load and the views (text, HTML, plot, read_view); the registry
drives ``leaf=`` and refuses what it cannot serve in one line."""

import io
import re
from contextlib import redirect_stderr

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import srtopt  # noqa: E402
from srtopt import SoftClassificationTree, SoftRegressionTree  # noqa: E402
from srtopt.bases import Basis, LinearBasis, basis_from_json  # noqa: E402
from srtopt.estimators.leaf_ridge import GRID, held_out_losses  # noqa: E402
from srtopt.export import export_html, export_text  # noqa: E402
from srtopt.leaf_model import LEAF_MODELS, LEAF_NAMES, LeafModel, register_leaf_model  # noqa: E402
from srtopt.models.leaves import RegressionLeaves  # noqa: E402
from srtopt.persistence import read_view  # noqa: E402
from srtopt.plotting import plot_tree  # noqa: E402


class Shift:
    """A value link written from scratch: the score is the value."""

    name, n_outputs = "shift", 1

    def __call__(self, U):
        return U[:, 0]

    def to_json(self):
        return {"name": self.name}

    def finish(self, outputs, scaling, y_range=None, classes=None):
        return outputs if y_range is None else np.clip(outputs, *y_range)

    def probabilities(self, outputs):
        raise ValueError("values, not class probabilities")

    def score_names(self, classes=None, scaled=False):
        return ["m"]

    def score_units(self, scaling):
        return 0.0, 1.0

    def leaf_name(self, basis_kind):
        return "log-cosh"


class LogCoshLeaves(LeafModel):
    """R_il = log cosh(Xa_i . beta_l - y_i) on y as given: a loss of a residual that the leaf model does not
    declare (no ``residual_loss``), so no closed-form LN route may take it."""

    score_name = "log-cosh fit"

    def __init__(self, basis="linear"):
        super().__init__(basis, Shift())

    @classmethod
    def from_json(cls, doc):
        return cls(basis_from_json(doc["basis"]))

    def fitted(self, Xs, targets, weights, lambda_b):
        return self if isinstance(self.basis, Basis) else self.with_basis(LinearBasis(Xs.shape[1]))

    def start(self, problem, rows):
        w = problem.counts[rows]
        mean = np.average(problem.y[rows], weights=w) if w.sum() > 0 else np.average(problem.y)
        return np.r_[mean, np.zeros(problem.Xa.shape[1] - 1)]

    def losses(self, Xa, T, beta, order=0):
        r = Xa @ beta.T - T[:, None]
        R = np.abs(r) + np.log1p(np.exp(-2 * np.abs(r))) - np.log(2.0)
        if order == 0:
            return R
        D = np.tanh(r)[None]
        return (R, D) if order == 1 else (R, D, (1.0 - D[0] ** 2)[None, None])

    def casadi(self, Xa, T, B):
        import casadi as ca

        return ca.log(ca.cosh(ca.mtimes(Xa, B.T) - ca.repmat(T, 1, B.shape[0])))

    def score(self, outputs, y, s):
        def mean_loss(prediction):
            return float(s @ np.log(np.cosh(prediction - y)))

        return 1.0 - mean_loss(outputs) / mean_loss(np.full_like(y, (s @ y) / s.sum()))


@pytest.fixture
def registered():
    """LogCoshLeaves registered as "logcosh" for the test, and forgotten after it."""
    register_leaf_model("logcosh", LogCoshLeaves)  # the class declares no kind: it takes the name
    yield "logcosh"
    LEAF_NAMES.pop("logcosh", None)
    LEAF_MODELS.pop("logcosh", None)
    del LogCoshLeaves.kind


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    return X, np.where(X[:, 0] > 0.5, 2.0 * X[:, 1], -X[:, 2]) + 0.1 * rng.standard_normal(n)


def test_a_bare_leaf_model_fits_predicts_saves_loads_and_shows(registered, tmp_path):
    X, y = _data()
    stderr = io.StringIO()
    with redirect_stderr(stderr):
        model = SoftRegressionTree(depth=2, leaf=registered, max_iter=3, random_state=0, verbose=1).fit(X, y)
    assert type(model.leaf_model_) is LogCoshLeaves and model.leaf_model_.kind == "logcosh"
    solvers = {record["ln"]["solver"] for record in model.history_ if "solver" in record["ln"]}
    assert solvers == {"newton"}  # not least squares: R_il is no squared residual
    assert re.search(r"macro 3: .*training log-cosh fit 0\.[89]", stderr.getvalue())  # its score, by its name
    prediction = model.predict(X)
    assert model.score(X, y) > 0.8

    path = tmp_path / "logcosh.json"
    model.save(path)
    again = srtopt.load(path)
    assert type(again.leaf_model_) is LogCoshLeaves and again.leaf == "logcosh"
    np.testing.assert_array_equal(again.predict(X), prediction)
    np.testing.assert_array_equal(read_view(path).predict(X), prediction)

    text = export_text(again, feature_names=["a", "b", "c"])  # the link's names: the score "m", the leaves'
    assert text.startswith("SoftRegressionTree(depth=2, leaf=log-cosh)") and text.count("original: m = ") >= 2
    assert export_html(read_view(path), feature_names=["a", "b", "c"]).count("m = ") >= 2
    axes = plot_tree(read_view(path), feature_names=["a", "b", "c"])
    leaves = [t.get_text().split("\n") for t in axes.texts if t.get_text().startswith("leaf")]
    assert len(leaves) >= 2 and all(lines[1].startswith("m = ") for lines in leaves)


def test_leaf_ridge_auto_scores_by_the_leaf_models_own_loss_and_pulls_towards_its_center(registered):
    X, y = _data(n=40, seed=1)  # 40 rows for 4 leaves of 4 coefficients: outside the small-data zone
    model = SoftRegressionTree(depth=2, leaf=registered, max_iter=2, random_state=0, clip_predictions=False,
                               leaf_ridge=1e6).fit(X, y)
    np.testing.assert_allclose(model.leaf_center_, np.r_[np.mean(y), 0.0, 0.0, 0.0])  # its start on every row
    np.testing.assert_allclose(model.beta_, np.tile(model.leaf_center_, (4, 1)), atol=1e-3)
    np.testing.assert_allclose(held_out_losses(model, X, y, 123.0), np.log(np.cosh(model.predict(X) - y)),
                               rtol=1e-10)  # R_i at the HBP leaf: its own loss, whatever the scale of y
    X, y = _data(n=20, seed=2)  # 20 rows: inside the zone, the comparison runs
    X = np.hstack([X, np.random.default_rng(3).random((20, 3))])
    auto = SoftRegressionTree(depth=2, leaf=registered, max_iter=2, random_state=0).fit(X, y)
    assert list(auto.leaf_ridge_losses_) == list(GRID) and all(np.isfinite(list(auto.leaf_ridge_losses_.values())))


def test_a_subclass_that_redefines_the_losses_leaves_the_closed_form_routes():
    class Quartic(RegressionLeaves):
        def losses(self, Xa, T, beta, order=0):
            r = Xa @ beta.T - T[:, None]
            return r**4 if order == 0 else (r**4, 4 * r[None] ** 3) if order == 1 else (
                r**4, 4 * r[None] ** 3, 12 * r[None, None] ** 2)

    assert RegressionLeaves().residual_loss.name == "squared" and Quartic().residual_loss is None
    X, y = _data(120)
    model = SoftRegressionTree(depth=2, leaf=Quartic(), max_iter=2, random_state=0).fit(X, y)
    assert {record["ln"]["solver"] for record in model.history_ if "solver" in record["ln"]} == {"newton"}


@pytest.mark.parametrize("estimator, leaf, message", [
    (SoftRegressionTree, "lgocosh", r"^leaf must be 'linear', 'spline' \(options n_knots, smoothing, steps, pairs\), "
                                    r"a registered leaf model's name \('logcosh'\) or a LeafModel, got 'lgocosh'$"),
    (SoftRegressionTree, "logcosh:knots=3", r"^bad options for leaf model 'logcosh': .*knots"),
    (SoftClassificationTree, "logcosh", r"^leaf='logcosh': bad options for leaf model 'logcosh': .*n_classes.*"
                                        r"a leaf model of values is fitted by a SoftRegressionTree\)$"),
])
def test_a_leaf_name_the_registry_cannot_serve_is_refused_in_one_line(registered, estimator, leaf, message):
    X, y = _data(60)
    with pytest.raises(ValueError, match=message):
        estimator(leaf=leaf, max_iter=1).fit(X, y if estimator is SoftRegressionTree else y > 0)


def test_register_leaf_model_refuses_what_it_cannot_name():
    class Declared(LogCoshLeaves):
        kind = "declared"

    for args, message in [(("spline", LogCoshLeaves), r"^leaf='spline' is one of the estimators' own leaves"),
                          (("other", Declared), r"^Declared declares kind = 'declared': register it under that name"),
                          (("a:b", LogCoshLeaves), r"^a leaf model's name must be a non-empty string without ':'"),
                          (("x", Shift), r"^register_leaf_model takes a LeafModel subclass"),
                          ((LogCoshLeaves,), r"^LogCoshLeaves declares no kind: register it by name")]:
        with pytest.raises(ValueError, match=message):
            register_leaf_model(*args)
    assert "declared" not in LEAF_NAMES and LogCoshLeaves.kind == "leaf"


def test_a_group_loss_bound_needs_a_loss_of_the_residual(registered):
    X, y = _data(60)
    with pytest.raises(ValueError, match=r"^group_loss bounds each group's mean loss of the residual: the "
                                         r"LogCoshLeaves leaf model has no loss of a residual \(residual_loss\)"):
        SoftRegressionTree(leaf=registered, max_iter=1, constraints="group_loss:bound=1").fit(
            X, y, sensitive_features=(X[:, 0] > 0.5).astype(int))
