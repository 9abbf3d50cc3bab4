"""export_html: the page's content, and the page in a real headless Chromium (Debian's chromium
and chromium-driver; .ci/run installs them): the page loads with no console error, shows every
node, folds and unfolds subtrees, and routes a row given in the address or typed into the form
exactly as the model does (a classifier's page: the class probabilities of the HBP leaf, their
mixture over all leaves and the predicted class).  The set-ups take a screenshot of a regression
tree's page and of a classifier's; with SRTOPT_UPDATE_DOCS=1 in the environment they are saved as
docs/html_view.png and docs/html_view_classifier.png (the committed ones were made so), otherwise
into the test's temporary folder."""

import html
import os
import re
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest

from srtopt import MILOTreeRegressor, ORCTClassifier, ORRTRegressor, SoftRegressionTree, kernels
from srtopt.export import export_html, reachable_nodes
from srtopt.tree import Tree

from ..conftest import load_frame

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "html_view.png"


@pytest.fixture(scope="module")
def auto_mpg():
    return load_frame("auto_mpg")


@pytest.fixture(scope="module")
def mpg_tree(auto_mpg):
    """The tree of docs/tree.png: depth 3, defaults, random_state=0, on all of auto_mpg."""
    return SoftRegressionTree(depth=3, random_state=0).fit(*auto_mpg)


@pytest.fixture(scope="module")
def pages(mpg_tree, auto_mpg, tmp_path_factory):
    folder = tmp_path_factory.mktemp("html")
    orrt = ORRTRegressor(depth=2, mu=1.0, solver="slsqp", max_iter=30, random_state=0).fit(*auto_mpg)
    spline = SoftRegressionTree(depth=2, leaf="spline", clip_predictions=False, random_state=0).fit(*auto_mpg)
    export_html(mpg_tree, folder / "srt.html")
    export_html(orrt, folder / "orrt.html", X=auto_mpg[0], y=auto_mpg[1])
    export_html(spline, folder / "spline.html")
    return {"srt": (mpg_tree, folder / "srt.html"), "orrt": (orrt, folder / "orrt.html"),
            "spline": (spline, folder / "spline.html")}


@pytest.fixture(scope="module")
def browser():
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: the browser test needs Debian's chromium and "
                    f"chromium-driver (apt-get install chromium chromium-driver; .ci/run installs them)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_site", DOCS_SCREENSHOT.parent / "check_site.py")
    check_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_site)
    driver = check_site.headless_chromium()  # the one driver set-up, shared with the docs check
    yield driver
    driver.quit()


def _drawn(model) -> list[int]:
    """The nodes the page draws: reachable ones, less the splits that send every row one way."""
    tree, reach = Tree(model.get_depth()), reachable_nodes(model)
    closed = {t for t in tree.branch_nodes if reach[2 * t - 1] != reach[2 * t]}
    return [t for t in range(1, 2 ** (tree.depth + 1)) if reach[t - 1] and t not in closed]


def _open(browser, path, query=None):
    browser.get(path.as_uri() + ("?" + query if query else ""))
    browser.find_element("id", "tree")  # the document is there
    return browser


def _console_errors(browser):
    return [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]


def _row_query(X, i):
    return urlencode({name: repr(float(value)) for name, value in X.iloc[i].items()})


def _path(browser):
    rows = browser.find_elements("css selector", "#path-table tbody tr")
    return [(int(row.get_attribute("data-node")),
             float(row.find_element("css selector", "[data-p-left]").get_attribute("data-p-left")))
            for row in rows]


def _check_route(browser, model, row):
    """The page's HBP path, branch probabilities, leaf probabilities and prediction for ``row``
    (a one-row DataFrame)."""
    depth = model.get_depth()
    Xs = model.scaler_.transform(row.to_numpy())
    S = kernels.split_probabilities(kernels.split_design(Xs), model.omega_, model.mu)[0]
    leaf = int(kernels.hbp_leaves(kernels.split_design(Xs), model.omega_, Tree(depth))[0])
    nodes = [leaf >> (depth - d) for d in range(depth)]
    path = _path(browser)
    assert [node for node, _ in path] == nodes
    np.testing.assert_allclose([p for _, p in path], S[np.array(nodes) - 1], rtol=1e-12)
    result = browser.find_element("id", "result")
    assert int(result.get_attribute("data-leaf")) == leaf
    np.testing.assert_allclose(float(result.get_attribute("data-prediction")), model.predict(row)[0], rtol=1e-12)
    shown = [float(cell.get_attribute("data-leaf-probability"))
             for cell in browser.find_elements("css selector", "[data-leaf-probability]")]
    live = reachable_nodes(model)[np.asarray(Tree(depth).leaves) - 1]  # the table lists reachable leaves
    np.testing.assert_allclose(shown, model.leaf_probabilities(row)[0][live], rtol=1e-10, atol=1e-300)
    on_path = {int(d.get_attribute("data-node")) for d in browser.find_elements("css selector", "details.on-path")}
    assert on_path == (set(nodes) | {leaf}) & set(_drawn(model))


@pytest.fixture(scope="module")
def screenshot(browser, pages, auto_mpg, tmp_path_factory):
    """Set-up: the page with the first row routed and every node off its path folded (saved to
    docs/ only when SRTOPT_UPDATE_DOCS=1)."""
    _, path = pages["srt"]
    _open(browser, path, _row_query(auto_mpg[0], 0))
    browser.find_element("id", "collapse-all").click()
    browser.find_element("id", "route").click()
    target = (DOCS_SCREENSHOT if os.environ.get("SRTOPT_UPDATE_DOCS") == "1"
              else tmp_path_factory.mktemp("screenshot") / "html_view.png")
    browser.save_screenshot(str(target))
    return target


def test_page_loads_without_console_errors_and_shows_every_live_node(browser, pages, screenshot):
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    model, path = pages["srt"]
    _open(browser, path)
    assert _console_errors(browser) == []
    summaries = browser.find_elements("css selector", "details.node > summary")
    drawn = _drawn(model)
    assert [int(s.find_element("xpath", "..").get_attribute("data-node")) for s in summaries] == \
        sorted(drawn, key=lambda t: [t >> k & 1 for k in range(t.bit_length() - 2, -1, -1)])  # depth-first
    assert all(s.is_displayed() for s in summaries)
    texts = [s.text for s in summaries]
    assert texts[0].startswith("node 1 · 392 rows (100.0 %) · go left (to ")
    assert sum(t.startswith("leaf ") and "leaf R^2" in t for t in texts) == model.get_n_leaves()
    assert all(model.node_counts_[t - 1] > 0 for t in drawn)  # no dead branch drawn
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    page = browser.page_source
    assert "terms in order of |raw coefficient| x training range" in page
    assert "Feature importances" in page and "m_t |omega_jt|" in page


def test_every_formula_in_full_in_both_units(browser, pages):
    model, path = pages["srt"]
    _open(browser, path)
    formulas = [f.text for f in browser.find_elements("css selector", ".formula")]
    drawn = np.asarray(_drawn(model))
    assert len(formulas) == 2 * len(drawn)  # (original, scaled) of every drawn node
    names = list(model.feature_names_in_)
    # a feature drops out of a formula only where its coefficient is exactly 0 (a leaf whose
    # rows share one value of it): no "... (k more)"
    zero = {name for j, name in enumerate(names)
            if np.any(model.omega_[:, j + 1] == 0) or np.any(model.beta_[:, j + 1] == 0)}
    complete = 0
    for text in formulas:
        missing = {name for name in names if f"*{name}" not in text}
        assert "more)" not in text and missing <= zero, text
        complete += not missing
    tree = Tree(model.get_depth())
    omega = model.omega_[[tree.branch_index(t) for t in drawn if tree.is_branch(t)]]
    beta = model.beta_[[tree.leaf_index(t) for t in drawn if tree.is_leaf(t)]]
    rows_with_a_zero = sum(np.any(coef[:, 1:] == 0, axis=1).sum() for coef in (omega, beta))
    assert len(formulas) - complete == 2 * rows_with_a_zero  # original and scaled line of those nodes


def test_subtrees_fold_and_unfold(browser, pages):
    model, path = pages["srt"]
    _open(browser, path)
    assert {2, 3, 4, 9, 13} <= set(_drawn(model))  # the tree of this test (node 6 is closed: 3 -> 13, 15)

    def visible(node):
        return browser.find_element("css selector", f"#node-{node} > summary").is_displayed()

    browser.find_element("css selector", "#node-2 > summary").click()
    assert visible(2) and not visible(4) and not visible(9) and visible(3) and visible(13)
    browser.find_element("css selector", "#node-2 > summary").click()
    assert visible(4) and visible(9)
    browser.find_element("id", "collapse-all").click()
    assert visible(1) and not visible(2)
    browser.find_element("id", "expand-all").click()
    assert all(visible(t) for t in _drawn(model))
    assert _console_errors(browser) == []


@pytest.mark.parametrize("i", [0, 57, 200, 391])
def test_a_row_in_the_address_shows_its_hbp_path(browser, pages, auto_mpg, i):
    model, path = pages["srt"]
    X = auto_mpg[0]
    _open(browser, path, _row_query(X, i))
    _check_route(browser, model, X.iloc[[i]])
    _open(browser, path, "row=" + ",".join(repr(float(v)) for v in X.to_numpy()[i]))
    _check_route(browser, model, X.iloc[[i]])
    assert _console_errors(browser) == []


def test_a_row_typed_into_the_form(browser, pages, auto_mpg):
    model, path = pages["srt"]
    _open(browser, path)
    assert browser.find_element("id", "path-table").is_displayed() is False
    row = auto_mpg[0].iloc[[123]]
    for j, value in enumerate(row.to_numpy()[0]):
        field = browser.find_element("id", f"x-{j}")
        field.clear()
        field.send_keys(repr(float(value)))
    browser.find_element("id", "route").click()
    _check_route(browser, model, row)
    field = browser.find_element("id", "x-3")
    field.clear()
    browser.find_element("id", "route").click()
    assert browser.find_element("id", "row-error").text == "not a number: weight"
    assert _console_errors(browser) == []


@pytest.mark.parametrize("stretch", [1.0, 1.5])
def test_a_spline_page_routes_a_row_and_shows_each_features_contribution(browser, pages, auto_mpg, stretch):
    """The page's script evaluates the spline leaves (their curves as pieces, linear beyond the training range:
    ``stretch`` 1.5 sends the row out of it) as predict() does, and splits the HBP leaf's prediction into the
    intercept and each feature's effect b_j x_s + W_j(x_s) c_j (times y's standard deviation)."""
    model, path = pages["spline"]
    row = auto_mpg[0].iloc[[7]] * stretch
    _open(browser, path, _row_query(row, 0))
    _check_route(browser, model, row)
    cells = browser.find_elements("css selector", "[data-contribution]")
    shown = np.array([float(cell.get_attribute("data-contribution")) for cell in cells])
    assert shown.sum() == pytest.approx(model.predict(row)[0], rel=1e-10)
    leaves, basis = model.leaf_model_, model.leaf_model_.basis
    Xs = model.scaler_.transform(row.to_numpy())
    coef = model.beta_[Tree(2).leaf_index(int(model.apply(row)[0]))]
    expected = [model.scaler_.y_mean + model.scaler_.y_std * coef[0]]
    expected += [model.scaler_.y_std * (leaves.design(Xs)[0, basis.feature_columns(j)] @ coef[basis.feature_columns(j)])
                 for j in range(model.n_features_in_)]
    np.testing.assert_allclose(shown, expected, rtol=1e-9, atol=1e-9)
    assert _console_errors(browser) == []


def test_a_page_with_steps_and_pairs_shows_each_terms_contribution(browser, tmp_path):
    """The page's script builds a spline leaf's steps and pairs as the basis does: the HBP leaf's prediction is the
    intercept, each feature's effect (its line, curve and steps) and each pair's term s_P c (x_j - m_j)(x_k - m_k)."""
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"count": rng.integers(0, 12, 800).astype(float), "a": rng.random(800), "b": rng.random(800)})
    y = (X["count"] >= 5) + np.sin(5 * X["a"]) + 4 * (X["a"] - 0.5) * (X["b"] - 0.5) + 0.1 * rng.standard_normal(800)
    model = SoftRegressionTree(depth=1, leaf="spline:steps=64,pairs=2", clip_predictions=False,
                               random_state=0).fit(X, y)
    basis = model.leaf_model_.basis
    assert basis.steps and basis.pairs
    export_html(model, tmp_path / "rich.html")
    row = X.iloc[[3]]
    _open(browser, tmp_path / "rich.html", _row_query(row, 0))
    _check_route(browser, model, row)
    cells = browser.find_elements("css selector", "[data-contribution]")
    shown = np.array([float(cell.get_attribute("data-contribution")) for cell in cells])
    Xa = model.leaf_model_.design(model.scaler_.transform(row.to_numpy()))[0]
    coef = model.beta_[Tree(1).leaf_index(int(model.apply(row)[0]))]
    std = model.scaler_.y_std
    expected = [model.scaler_.y_mean + std * coef[0]]
    expected += [std * Xa[basis.feature_columns(j)] @ coef[basis.feature_columns(j)] for j in range(3)]
    expected += [std * Xa[c] * coef[c] for c in basis.pair_columns()]
    np.testing.assert_allclose(shown, expected, rtol=1e-9, atol=1e-9)
    names = [row.find_element("css selector", "td").text
             for row in browser.find_elements("css selector", "#contribution-table tbody tr")]
    assert names[4:] == [f"{X.columns[j]} & {X.columns[k]}" for j, k in basis.pairs]
    assert _console_errors(browser) == []


def test_orrt_page_predicts_with_every_leaf(browser, pages, auto_mpg):
    model, path = pages["orrt"]
    X = auto_mpg[0]
    _open(browser, path, _row_query(X, 10))
    _check_route(browser, model, X.iloc[[10]])
    assert "ORRT predicts sum_t P_it y_t(x) over all leaves" in browser.page_source
    leaves = [browser.find_element("css selector", f"#node-{t} > summary").text for t in range(4, 8)]
    assert all(re.search(r"leaf R\^2 ([-\d.e]+|n/a) · MSE", text) for text in leaves)
    assert any(re.search(r"leaf R\^2 [-\d.]+ ·", text) for text in leaves)
    assert _console_errors(browser) == []


def test_export_html_escapes_feature_names_and_embeds_the_model(srt, frame, tmp_path):
    import json

    from srtopt.export import export_html

    names = ["<b>age</b>", "__MODEL__", 'dose "mg"']
    page = export_html(srt, tmp_path / "t.html", feature_names=names)
    assert (tmp_path / "t.html").read_text() == page
    assert "<b>age</b>" not in page and "&lt;b&gt;age&lt;/b&gt;" in page and "dose &quot;mg&quot;" in page
    model = json.loads(re.search(r'<script type="application/json" id="model-data">(.*?)</script>', page,
                                 flags=re.S)[1])
    assert model["features"] == names and model["prediction"] == "hbp"
    np.testing.assert_array_equal(model["omega"], srt.omega_)
    assert page.count('<details class="node') == 7 and "__TREE__" not in page and "*__MODEL__" in page
    with pytest.raises(ValueError, match="export_html applies to SoftRegressionTree, ORRTRegressor and "
                                         "SoftClassificationTree"):
        export_html(MILOTreeRegressor(depth=1, time_limit=1.0).fit(frame[0].iloc[:8], frame[1][:8]))
    with pytest.raises(ValueError, match="y needs X"):
        export_html(srt, y=frame[1])


def test_the_page_shows_the_constraints_table(srt, frame):
    from srtopt.export import export_constraints
    from srtopt.models.constraints import RowMean

    assert "<h2>Constraints</h2>" not in export_html(srt) and "__CONSTRAINTS__" not in export_html(srt)
    X, y = frame
    cap = RowMean("squared_error", upper=1e-3, per_leaf=True)  # each leaf's MSE: not met with noise
    with pytest.warns(UserWarning, match="the constraints could not be met"):
        tree = SoftRegressionTree(depth=1, max_iter=1, n_init=1, random_state=0, constraints=cap).fit(X, y)
    page = export_html(tree)
    table = re.search(r'<table id="constraints-table">(.*?)</table>', page, flags=re.S)[1]
    rows = re.findall(r"<tr>(.*?)</tr>", table)
    assert len(rows) == 3 and "<th>held-out predict()</th>" not in rows[0]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows[1:]]
    text = [line.split() for line in export_constraints(tree).splitlines()[2:]]
    assert [c[5] for c in cells] == [t[-1] for t in text] and '<td class="bad">NO</td>' in table
    assert cells[0][1] == "mean squared_error of all rows at leaf 2" and cells[0][2] == html.escape("<= 0.001")


# ---------------------------------------------------------------- classifiers
DOCS_CLASSIFIER_SCREENSHOT = DOCS_SCREENSHOT.parent / "html_view_classifier.png"


@pytest.fixture(scope="module")
def class_pages(classifiers, binary, tmp_path_factory):
    folder = tmp_path_factory.mktemp("class-html")
    models = {"constant": classifiers["constant"], "logistic": classifiers["logistic"], "binary": binary}
    for name, model in models.items():
        export_html(model, folder / f"{name}.html")
    return {name: (model, folder / f"{name}.html") for name, model in models.items()}


def _check_class_route(browser, model, row):
    """The page's HBP path, the class probabilities of the HBP leaf, their mixture over all leaves
    and the predicted class for ``row`` (a one-row DataFrame) are the model's."""
    depth = model.get_depth()
    leaf = int(model.apply(row)[0])
    assert [node for node, _ in _path(browser)] == [leaf >> (depth - d) for d in range(depth)]
    result = browser.find_element("id", "result")
    assert int(result.get_attribute("data-leaf")) == leaf
    assert result.get_attribute("data-prediction") == str(model.predict(row)[0])
    assert f"predicted class {model.predict(row)[0]} (p = " in result.text

    def shown(attribute):
        cells = browser.find_elements("css selector", f"[{attribute}]")
        return [float(cell.get_attribute(attribute)) for cell in cells]

    np.testing.assert_allclose(shown("data-class-probability"), model.predict_proba(row, mixture=False)[0], rtol=1e-12,
                               atol=1e-300)
    np.testing.assert_allclose(shown("data-mixture-probability"), model.predict_proba(row, mixture=True)[0],
                               rtol=1e-12, atol=1e-300)
    live = reachable_nodes(model)[np.asarray(Tree(depth).leaves) - 1]
    np.testing.assert_allclose(shown("data-leaf-probability"), model.leaf_probabilities(row)[0][live], rtol=1e-10,
                               atol=1e-300)


@pytest.fixture(scope="module")
def class_screenshot(browser, class_pages, iris, tmp_path_factory):
    """Set-up: the logistic iris tree's page with row 70 routed, the nodes off its path folded
    (saved to docs/ only when SRTOPT_UPDATE_DOCS=1)."""
    _, path = class_pages["logistic"]
    _open(browser, path, _row_query(iris[0], 70))
    browser.find_element("id", "collapse-all").click()
    browser.find_element("id", "route").click()
    target = (DOCS_CLASSIFIER_SCREENSHOT if os.environ.get("SRTOPT_UPDATE_DOCS") == "1"
              else tmp_path_factory.mktemp("screenshot") / "html_view_classifier.png")
    browser.save_screenshot(str(target))
    return target


def test_a_classifier_page_shows_each_leaf_class_mix(browser, class_pages, class_screenshot):
    assert class_screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name, (model, path) in class_pages.items():
        _open(browser, path)
        assert _console_errors(browser) == []
        summaries = browser.find_elements("css selector", "details.node > summary")
        assert sorted(int(s.find_element("xpath", "..").get_attribute("data-node")) for s in summaries) == \
            _drawn(model)
        assert all(s.is_displayed() for s in summaries)
        for summary in summaries:
            t = int(summary.find_element("xpath", "..").get_attribute("data-node"))
            if t >= 4:
                mix = model.leaf_class_proba_[t - 4]
                k = int(np.argmax(mix))
                label = f"class {model.classes_[k]}" if name == "binary" else model.classes_[k]
                assert re.match(rf"leaf {t} · \d+ rows \([\d.]+ %\) · {100 * mix[k]:.1f}% {label}", summary.text)
        assert f"{len(model.classes_)} classes: " in browser.find_element("css selector", "h1").text


def test_an_orct_page_predicts_with_every_leaf(browser, iris, tmp_path):
    """ORCT's page: its leaves are the class assignments C_ (constant leaves), and it predicts the
    class of largest sum_t P_it C_t over all leaves, as ORCTClassifier.predict does."""
    X, y = iris
    model = ORCTClassifier(depth=2, n_starts=2, random_state=0).fit(X, y)
    path = tmp_path / "orct.html"
    export_html(model, path)
    assert "ORCT predicts the class of largest sum_t P_it C_t" in path.read_text()
    for i in (0, 70, 120, 149):
        _open(browser, path, _row_query(X, i))
        _check_class_route(browser, model, X.iloc[[i]])
        assert "over all leaves" in browser.find_element("id", "result").text
        assert _console_errors(browser) == []


@pytest.mark.parametrize("i", [0, 70, 120, 149])
def test_a_row_in_the_address_shows_its_class_probabilities(browser, class_pages, iris, i):
    X = iris[0]
    for name in ("constant", "logistic"):
        model, path = class_pages[name]
        _open(browser, path, _row_query(X, i))
        _check_class_route(browser, model, X.iloc[[i]])
        assert _console_errors(browser) == []


def test_a_row_typed_into_a_binary_classifiers_form(browser, class_pages, cancer):
    """A row typed into the binary tree's form (its 30 fields, key by key: 2-3 s), and two more given in
    the address, which fills the same fields and routes them through the same button."""
    model, path = class_pages["binary"]
    X = cancer[0]
    _open(browser, path)
    for j, value in enumerate(X.to_numpy()[0]):
        field = browser.find_element("id", f"x-{j}")
        field.clear()
        field.send_keys(repr(float(value)))
    browser.find_element("id", "route").click()
    _check_class_route(browser, model, X.iloc[[0]])
    for i in (19, 300):
        _open(browser, path, _row_query(X, i))
        _check_class_route(browser, model, X.iloc[[i]])
    assert _console_errors(browser) == []


def test_export_html_of_a_classifier_embeds_its_scores_and_writes_every_formula(class_pages, iris):
    import json

    for name, (model, path) in class_pages.items():
        page = path.read_text()
        data = json.loads(re.search(r'<script type="application/json" id="model-data">(.*?)</script>', page,
                                    flags=re.S)[1])
        K = len(model.classes_)
        assert data["classes"] == [str(c) for c in model.classes_]
        assert (data["n_scores"], data["q"]) == (1 if K == 2 else K, 1 if model.leaf == "constant" else
                                                 model.n_features_in_ + 1)
        np.testing.assert_array_equal(data["beta"], model.beta_)
        labels = re.findall(r'<span class="units">([^<]*)</span>', page)
        leaves, splits = model.get_n_leaves(), model.get_n_leaves() - 1
        scores = 0 if model.leaf == "constant" else 2 * data["n_scores"]
        assert len(labels) == 2 * splits + leaves * (2 + scores)
        assert labels.count("p" if model.leaf == "constant" else "mean p") == leaves and labels.count("rows") == leaves
        assert "most probable class at x (p)" in page and "leaf R^2" not in page
    model, _ = class_pages["logistic"]
    X, y = iris
    page = export_html(model, X=X.iloc[:100], y=y[:100])  # the rows of X with their labels
    assert "50 setosa" in page and "50 virginica" not in page


@pytest.fixture(scope="module")
def table_page(tmp_path_factory):
    """A tree fitted on a table with a text column and missing numbers, and its page."""
    import pandas as pd

    rng = np.random.default_rng(3)
    n = 240
    frame = pd.DataFrame({"size": rng.random(n) * 10, "home": np.array(["owner", "rent", "parents"])[rng.integers(0, 3, n)]})
    y = frame["size"] + 4.0 * (frame["home"] == "owner") + 0.2 * rng.standard_normal(n)
    frame.loc[rng.random(n) < 0.1, "size"] = np.nan
    tree = SoftRegressionTree(depth=2, random_state=0, clip_predictions=False).fit(frame, np.asarray(y))
    path = tmp_path_factory.mktemp("table") / "table.html"
    export_html(tree, path)
    return tree, frame, path


@pytest.mark.parametrize("size, home", [("3.5", "owner"), ("", "rent"), ("7", "parents")])
def test_a_table_page_takes_a_row_of_the_table(browser, table_page, size, home):
    """The form of a fit on a table asks for the table's columns (a category chosen, a number or nothing) and
    the page's script encodes the row as the fit did: its prediction is predict()'s."""
    import pandas as pd

    tree, frame, path = table_page
    _open(browser, path, urlencode({"size": size, "home": home}))
    row = pd.DataFrame({"size": [float(size) if size else np.nan], "home": [home]})
    result = browser.find_element("id", "result")
    np.testing.assert_allclose(float(result.get_attribute("data-prediction")), tree.predict(row)[0], rtol=1e-12)
    assert int(result.get_attribute("data-leaf")) == int(tree.apply(row)[0])
    assert browser.find_element("id", "c-1").tag_name == "select"
    assert _console_errors(browser) == []


@pytest.fixture(scope="module")
def number_pages(table_page, tmp_path_factory):
    """{form: (tree, page, other columns of a row)}: a tree on two numeric features (a number field per feature)
    and the table page (a field per table column)."""
    import pandas as pd

    rng = np.random.default_rng(4)
    X = pd.DataFrame({"size": rng.random(200) * 10, "rooms": rng.random(200) * 5})
    tree = SoftRegressionTree(depth=2, random_state=0, clip_predictions=False).fit(X, X["size"] - X["rooms"])
    path = tmp_path_factory.mktemp("numbers") / "numbers.html"
    export_html(tree, path)
    return {"features": (tree, path, {"rooms": "2.5"}), "table": (table_page[0], table_page[2], {"home": "rent"})}


@pytest.mark.parametrize("form", ["features", "table"])
def test_the_form_refuses_text_that_is_not_a_number(browser, number_pages, form):
    """"1,234", "12abc" and "0x10" are not read as 1, 12 and 0 (JavaScript's parseFloat): typed or in the address,
    the page says "not a number" and shows no route, as Python refuses them."""
    tree, path, others = number_pages[form]
    field = "x-0" if form == "features" else "c-0"
    for text in ("1,234", "12abc", "0x10", "1e400", "Infinity", "1_000"):
        _open(browser, path, urlencode({"size": "3", **others}))
        assert browser.find_element("id", "result").get_attribute("data-prediction") is not None
        typed = browser.find_element("id", field)
        typed.clear()
        typed.send_keys(text)
        browser.find_element("id", "route").click()
        for where in ("typed", "address"):
            if where == "address":
                _open(browser, path, urlencode({"size": text, **others}))
            assert browser.find_element("id", "row-error").text == "not a number: size", (text, where)
            assert browser.find_element("id", "result").get_attribute("data-prediction") is None, (text, where)
            assert not browser.find_element("id", "path-table").is_displayed()
    assert _console_errors(browser) == []


@pytest.mark.parametrize("form", ["features", "table"])
def test_the_form_reads_a_decimal_as_python_does(browser, number_pages, form):
    import pandas as pd

    tree, path, others = number_pages[form]
    for text in (" 5 ", "+2", "5.", ".5", "-1e-1", "7E0"):
        _open(browser, path, urlencode({"size": text, **others}))
        assert browser.find_element("id", "row-error").text == ""
        row = pd.DataFrame({"size": [float(text)], **{k: [float(v) if form == "features" else v]
                                                        for k, v in others.items()}})
        np.testing.assert_allclose(float(browser.find_element("id", "result").get_attribute("data-prediction")),
                                   tree.predict(row)[0], rtol=1e-12)
