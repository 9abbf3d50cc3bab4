"""Reports: numbers equal a direct computation from the stored rows."""

from __future__ import annotations

import json
import math
import sqlite3
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from srtopt.experiments import register_method, run_benchmark
from srtopt.experiments.report import (
    averages,
    geometric_mean,
    latex_tables,
    markdown_tables,
    paper_tables,
    summarize,
    write_report,
)


@pytest.fixture(scope="module")
def store(tmp_path_factory, data_home):
    """cart on three datasets at two depths, and a method that sometimes fails
    and sometimes predicts worse than the mean (R^2 < 0)."""
    from srtopt.experiments import methods

    class Bad(DecisionTreeRegressor):
        def predict(self, X, check_input=True):
            return -3 * super().predict(X, check_input=check_input)

    def sometimes_bad(depth, seed, **params):
        if seed == 2:
            raise ValueError("no convergence")
        cls = Bad if seed == 1 else DecisionTreeRegressor
        return cls(max_depth=depth, random_state=seed)

    saved = dict(methods._REGISTRY)
    register_method("bad", sometimes_bad)
    path = tmp_path_factory.mktemp("report") / "r.db"
    try:
        run_benchmark(["yacht", "housing", "auto_mpg"], [2, 3], ["cart", "bad"], folds=4, seeds=3,
                      store=path, jobs=1, quiet=True, data_home=data_home)
    finally:
        methods._REGISTRY.clear()
        methods._REGISTRY.update(saved)
    return path


def _direct(path: Path):
    """Per (dataset, depth, method): the numbers computed straight from SQL rows."""
    conn = sqlite3.connect(path)
    out = {}
    for dataset, depth, method in conn.execute("SELECT DISTINCT dataset, depth, method FROM runs"):
        r2 = [v for (v,) in conn.execute(
            "SELECT r2_test FROM runs WHERE dataset=? AND depth=? AND method=? AND status='ok'",
            (dataset, depth, method))]
        secs = [v for (v,) in conn.execute(
            "SELECT seconds FROM runs WHERE dataset=? AND depth=? AND method=? AND status='ok'",
            (dataset, depth, method))]
        errors = conn.execute(
            "SELECT COUNT(*) FROM runs WHERE dataset=? AND depth=? AND method=? AND status='error'",
            (dataset, depth, method)).fetchone()[0]
        mean = sum(r2) / len(r2)
        sigma = math.sqrt(sum((v - mean) ** 2 for v in r2) / len(r2))
        out[dataset, depth, method] = {
            "runs": len(r2), "errors": errors, "r2_mean": mean, "sigma_e2": 100 * sigma,
            "seconds_mean": sum(secs) / len(secs), "neg_r2": sum(v < 0 for v in r2),
        }
    conn.close()
    return out


def test_summary_equals_direct_computation(store):
    summary = summarize(store)
    direct = _direct(store)
    assert len(summary) == len(direct) == 12
    for row in summary.itertuples():
        d = direct[row.dataset, row.depth, row.method]
        assert row.runs == d["runs"] and row.errors == d["errors"] and row.neg_r2 == d["neg_r2"]
        assert row.r2_mean == pytest.approx(d["r2_mean"], rel=1e-12)
        assert row.sigma_e2 == pytest.approx(d["sigma_e2"], rel=1e-9)
        assert row.seconds_mean == pytest.approx(d["seconds_mean"], rel=1e-12)
    bad = summary[summary["method"] == "bad"]
    assert set(bad["runs"]) == {8} and set(bad["errors"]) == {4}
    assert (bad["neg_r2"] == 4).all()  # the -3x predictions of seed 1
    assert (summary[summary["method"] == "cart"]["errors"] == 0).all()


def test_averages_are_arithmetic_and_geometric_over_datasets(store):
    summary = summarize(store)
    direct = _direct(store)
    avg = averages(summary)
    for row in avg.itertuples():
        values = {k: v for k, v in direct.items() if k[1] == row.depth and k[2] == row.label}
        assert row.datasets == len(values) == 3
        for metric in ("r2_mean", "sigma_e2", "seconds_mean", "neg_r2"):
            xs = [v[metric] for v in values.values()]
            assert getattr(row, f"arith_{metric}") == pytest.approx(sum(xs) / 3)
            expected_geo = (xs[0] * xs[1] * xs[2]) ** (1 / 3) if min(xs) >= 0 else math.nan
            got = getattr(row, f"geo_{metric}")
            assert (math.isnan(got) and math.isnan(expected_geo)) or got == pytest.approx(expected_geo)


def test_geometric_mean_reproduces_the_papers_rows():
    """The paper's 'Geometric avg' is the geometric mean over the 15 datasets of
    the per-dataset mean R^2, sigma and time (its Table 3 and the D=2 table)."""
    tables = paper_tables()
    for depth in ("depth2", "depth3"):
        for name, published in tables["averages"][depth].items():
            rows = [tables[depth][d][name] for d in tables[depth]]
            assert len(rows) == 15
            assert geometric_mean(r["r2"] for r in rows) == pytest.approx(published["geo_r2"], abs=1.5e-3)
            assert geometric_mean(r["time"] for r in rows) == pytest.approx(published["geo_time"], rel=1e-2)
            assert np.mean([r["r2"] for r in rows]) == pytest.approx(published["arith_r2"], abs=1e-3)
    rf = [tables["random_forest"][d]["RF"]["r2"] for d in tables["random_forest"]]
    assert geometric_mean(rf) == pytest.approx(tables["averages"]["random_forest"]["geo_r2"], abs=1e-3)
    assert geometric_mean([4.0, 1.0]) == 2.0
    assert geometric_mean([0.5, 0.0]) == 0.0 and math.isnan(geometric_mean([0.5, -0.1]))


def test_tables_show_ours_beside_the_paper(store, data_home, tmp_path):
    summary = summarize(store)
    md = markdown_tables(summary)
    assert "## Depth 2" in md and "## Depth 3" in md
    assert "Arithmetic avg" in md and "Geometric avg" in md
    yacht = summary[(summary["dataset"] == "yacht") & (summary["depth"] == 3)
                    & (summary["method"] == "cart")].iloc[0]
    line = next(l for l in md.splitlines() if l.startswith("| Yacht") and f"{yacht.r2_mean:.3f}" in l)
    assert f"{yacht.r2_mean:.3f} ({yacht.sigma_e2:.2f})" in line and "| 308 | 6 |" in line
    tex = latex_tables(summary)
    assert tex.count(r"\begin{tabular}") == 2 and r"Geometric avg" in tex and "$R^2$" in tex


def test_paper_values_and_differences_for_mapped_methods(data_home, isolated_methods, tmp_path):
    """A method named like the paper's (here rf) is shown with the paper's
    value and the difference; the RF appendix table appears."""
    register_method("rf", lambda depth, seed, **p: DecisionTreeRegressor(max_depth=depth, random_state=seed))
    path = tmp_path / "rf.db"
    run_benchmark(["lpga2009"], [2], ["rf"], folds=4, seeds=1, store=path, jobs=1, quiet=True,
                  data_home=data_home)
    summary = summarize(path)
    ours = summary.iloc[0]
    paper = paper_tables()["random_forest"]["lpga2009"]["RF"]
    md = markdown_tables(summary)
    assert "Random forest" in md
    line = next(l for l in md.splitlines() if l.startswith("| Lpga2009 | 146 | 11 |"))
    assert f"{paper['r2']:.3f} ({paper['sigma_e2']:.2f})" in line
    assert f"{ours.r2_mean - paper['r2']:+.3f}" in line


def test_write_report_files(store, tmp_path):
    out = write_report(store, tmp_path / "rep")
    names = sorted(p.name for p in out.files)
    assert names == sorted(["report.md", "report.tex", "summary.csv", "r2_by_dataset_depth2.png",
                            "r2_vs_time_depth2.png", "r2_by_dataset_depth3.png", "r2_vs_time_depth3.png"])
    for path in out.files:
        assert path.stat().st_size > 100
        if path.suffix == ".png":
            head = path.read_bytes()[:24]
            assert head[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", head[16:24])
            assert width > 300 and height > 200
    assert (tmp_path / "rep" / "report.md").read_text() == out.markdown
    with pytest.raises(FileNotFoundError, match="no results store"):
        write_report(tmp_path / "missing.db", tmp_path / "x")


def test_report_counts_done_failed_and_claimed_runs(store, tmp_path):
    import shutil

    from srtopt.experiments import ResultStore, build_grid
    from srtopt.experiments.runner import package_versions

    copy = tmp_path / "claimed.db"
    shutil.copy(store, copy)
    extra = build_grid(["yacht"], [2], ["cart"], folds=4, seeds=[7, 8, 9])
    with ResultStore(copy) as results:
        for spec in extra:
            assert results.claim(spec, "otherhost:1:a", lease=600)
        total = results.count()
        failed = len(results.keys(status="error"))
    output = write_report(copy, tmp_path / "out", plots=False)
    assert (total, failed) == (144, 24)  # 3 datasets x 2 depths x 2 methods x 4 folds x 3 seeds
    assert output.markdown.startswith(
        "# srtopt benchmark report\n\nRuns: 144 done (120 ok, 24 failed); 12 claimed by running benchmarks, "
        f"not in the tables yet.  \nsrtopt versions: {package_versions()['srtopt']} (144 runs).\n")


# ---- classification ------------------------------------------------------------------

def _class_rows():
    """Stored rows of a classification store: cart-clf at depths 2 and 3 and a depth-free method, on two
    datasets, 2 folds; one failed run; a regression row beside them."""
    from srtopt.experiments.runner import package_versions

    versions = json.dumps(package_versions(), sort_keys=True)
    rows = []

    def add(dataset, depth, method, fold, accuracy, log_loss, seconds, leaves, status="ok"):
        ok = status == "ok"
        rows.append({"dataset": dataset, "depth": depth, "method": method, "params": "{}", "n_folds": 2,
                     "split_seed": 0, "fold": fold, "seed": 0, "status": status, "versions": versions,
                     "r2_test": None, "accuracy_train": accuracy + 0.05 if ok else None,
                     "accuracy_test": accuracy if ok else None, "log_loss_test": log_loss if ok else None,
                     "seconds": seconds if ok else None, "leaves": leaves if ok else None,
                     "iterations": None})

    for dataset, shift in (("pima", 0.0), ("glass", -0.2)):
        for fold in range(2):
            add(dataset, 2, "cart-clf", fold, 0.7 + shift + 0.02 * fold, 0.6 - shift, 0.001, 4)
            add(dataset, 3, "cart-clf", fold, 0.75 + shift, 0.5, 0.002, 7 + fold)
            add(dataset, 0, "rf-clf", fold, 0.8 + shift, 0.4, 0.1, None)
    add("glass", 0, "rf-clf", 2, 0, 0, 0, None, status="error")
    rows.append({**rows[0], "dataset": "yacht", "method": "cart", "r2_test": 0.9, "accuracy_test": None,
                 "log_loss_test": None, "leaves": None})
    return pd.DataFrame(rows)


def test_classification_summary_and_tables():
    from srtopt.experiments.report import classification_tables, summarize_classification

    summary = summarize_classification(_class_rows())
    assert list(dict.fromkeys(summary["label"])) == ["cart-clf D=2", "cart-clf D=3", "rf-clf"]
    row = summary[(summary["dataset"] == "glass") & (summary["label"] == "cart-clf D=2")].iloc[0]
    assert row["accuracy_mean"] == pytest.approx(0.51) and row["accuracy_std"] == pytest.approx(0.01)
    assert row["log_loss_mean"] == pytest.approx(0.8) and row["leaves_mean"] == 4
    assert row["accuracy_train_mean"] == pytest.approx(0.56)
    rf = summary[(summary["dataset"] == "glass") & (summary["method"] == "rf-clf")].iloc[0]
    assert (rf["runs"], rf["errors"], rf["depth"]) == (2, 1, 0) and np.isnan(rf["leaves_mean"])
    assert list(summary["dataset"][:2]) == ["pima", "glass"]  # the registry's order
    assert set(summarize(_class_rows())["dataset"]) == {"yacht"}  # the regression summary leaves them out

    md = classification_tables(summary)
    lines = md.splitlines()
    assert "| cart-clf D=2 | 2 | 4 | 0.610 | 0.700 | 0.001 | 4.0 |" in lines
    assert "| rf-clf | 2 | 4 (1 failed) | 0.700 | 0.400 | 0.1 | n/a |" in lines
    accuracy = lines[lines.index("### Test accuracy"):]
    assert accuracy[2] == "| Dataset | N | p | K | cart-clf D=2 | cart-clf D=3 | rf-clf |"
    assert accuracy[4] == "| pima | 768 | 8 | 2 | 0.710 | 0.750 | 0.800 |"
    assert accuracy[5] == "| glass | 214 | 9 | 6 | 0.510 | 0.550 | 0.600 (1 failed) |"
    assert accuracy[6] == "| Mean |  |  |  | 0.610 | 0.650 | 0.700 |"
    leaves = lines[lines.index("### Leaves"):]
    assert leaves[4] == "| pima | 768 | 8 | 2 | 4.0 | 7.5 | n/a |"


def test_the_classification_figure_has_one_colour_per_method_and_names_a_person_writes():
    from srtopt.experiments.report import summarize_classification
    from srtopt.experiments.report.figures import accuracy_series, readable_label

    frame = _class_rows()
    sct = frame[frame["method"] == "cart-clf"].assign(method="sct", params='{"leaf":"constant"}')
    summary = summarize_classification(pd.concat([frame[frame["dataset"] != "yacht"], sct]), mixed_versions=False)
    series = accuracy_series(summary)
    names = [name for _, name, _, _ in series]
    assert names == ["CART, depth 2", "CART, depth 3", "random forest (100 trees)",
                     "soft tree, constant leaves, depth 2", "soft tree, constant leaves, depth 3"]
    assert [colour for *_, colour, _ in series] == [0, 0, 1, 2, 2]  # one colour per method
    assert [marker for *_, marker in series] == ["o", "s", "o", "o", "s"]  # one marker per variant of it
    assert readable_label("sct-cv", "{}", 0) == "soft tree, depth by CV"
    search = sct[sct["depth"] == 2].assign(method="sct-cv", params="{}", depth=0)
    searched = summarize_classification(pd.concat([frame[frame["dataset"] != "yacht"], sct, search]),
                                        mixed_versions=False)
    assert accuracy_series(searched)[-1][1:] == ("soft tree, depth by CV", 2, "^")  # the search in its tree's colour


def test_write_report_of_a_classification_store(tmp_path):
    frame = _class_rows()
    out = write_report(frame[frame["dataset"] != "yacht"], tmp_path / "c", mixed_versions=False)
    assert sorted(p.name for p in out.files) == ["accuracy_vs_time.png", "report.md", "report.tex",
                                                "summary_classification.csv"]
    assert "## Classification" in out.markdown and "## Depth" not in out.markdown
    assert r"\textbf{0.610}" in (tmp_path / "c" / "report.tex").read_text()
    both = write_report(frame, tmp_path / "both", plots=False)
    assert "## Depth 2" in both.markdown and "## Classification" in both.markdown
    assert sorted(p.name for p in both.files) == ["report.md", "report.tex", "summary.csv",
                                                 "summary_classification.csv"]
