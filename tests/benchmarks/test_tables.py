"""Tables of one's own for the searches' benchmark (benchmarks/common/data.py's ``folder_tables``, ``folder_table``;
``benchmarks/decisions/search.py --tables``): the folder's manifest checked with a message that names what to fix,
the tables read as the shared ones are, and the benchmark run on them end to end into its own folder."""

import json

import numpy as np
import pandas as pd
import pytest

from benchmarks.common.data import folder_table, folder_tables


def _write_tables(folder, n=80):
    """A regression table with a text column and empty cells, and a classification table, in the shared form."""
    rng = np.random.default_rng(0)
    x = rng.random(n)
    prices = pd.DataFrame({"size": x, "kind": np.where(x > 0.5, "big", "small"), "target": 3 * x + rng.random(n)})
    prices.loc[::9, "size"] = np.nan
    prices.loc[::11, "kind"] = None
    prices.loc[5, "target"] = np.nan  # a row of a missing target: dropped
    churn = pd.DataFrame({"months": rng.integers(1, 60, n), "plan": rng.choice(["a", "b"], n),
                          "target": np.where(rng.random(n) > 0.5, "yes", "no")})
    folder.mkdir(parents=True, exist_ok=True)
    prices.to_csv(folder / "prices.csv", index=False)
    churn.to_csv(folder / "churn.csv", index=False)
    (folder / "MANIFEST.json").write_text(json.dumps({"prices": {"task": "regression"},
                                                      "churn": {"task": "classification", "rows": n}}))
    return folder


def test_a_folder_of_tables_is_read_as_the_shared_tables_are(tmp_path):
    folder = _write_tables(tmp_path / "mine")
    assert folder_tables(folder) == {"prices": "regression", "churn": "classification"}
    X, y, task = folder_table(folder, "prices")
    assert task == "regression" and len(X) == len(y) == 79 and list(X.columns) == ["size", "kind"]
    assert X["size"].isna().sum() == 9 and X["kind"].isna().sum() > 0 and y.dtype == float
    X, y, task = folder_table(folder, "churn")
    assert task == "classification" and set(y) == {"yes", "no"} and y.dtype.kind in "UO"


@pytest.mark.parametrize("manifest, message", [
    (None, "no MANIFEST.json in"),
    ("not json", "is not JSON"),
    ({}, "must be a non-empty JSON object"),
    ({"prices": {"task": "ranking"}}, "table 'prices' needs a \"task\""),
    ({"missing": {"task": "regression"}}, "names the table 'missing', but missing.csv is not in"),
])
def test_a_bad_folder_is_refused_with_what_to_fix(tmp_path, manifest, message):
    folder = _write_tables(tmp_path / "mine")
    path = folder / "MANIFEST.json"
    if manifest is None:
        path.unlink()
    else:
        path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        folder_tables(folder)


def test_a_table_without_a_target_column_is_refused(tmp_path):
    folder = _write_tables(tmp_path / "mine")
    pd.DataFrame({"a": [1, 2], "y": [0, 1]}).to_csv(folder / "prices.csv", index=False)
    with pytest.raises(ValueError, match="prices.csv in .* has no column named target"):
        folder_table(folder, "prices")


def test_a_regression_table_with_text_targets_is_refused_with_the_line(tmp_path):
    folder = _write_tables(tmp_path / "mine")
    pd.DataFrame({"a": [1, 2, 3, 4], "target": [None, 1.5, 2.0, "high"]}).to_csv(folder / "prices.csv", index=False)
    with pytest.raises(ValueError, match="must be numbers, and line 5 holds 'high'"):  # line 1: the header
        folder_table(folder, "prices")


@pytest.mark.slow
def test_the_search_benchmark_runs_on_a_folder_of_ones_own_into_its_own_folder(tmp_path, monkeypatch, capsys):
    from benchmarks.common import SMOKE_ENV
    from benchmarks.decisions import search

    folder, out = _write_tables(tmp_path / "mine"), tmp_path / "out"
    monkeypatch.setenv(SMOKE_ENV, str(tmp_path / "smoke"))  # tiny budgets: the search at depths 1-2, 2 folds
    assert search.main(["--tables", str(folder), "--out", str(out), "--variants", "search"]) == 0
    rows = [json.loads(line) for line in (out / "search.jsonl").read_text().splitlines()]
    assert {(r["dataset"], r["variant"]) for r in rows} >= {(name, variant) for name in ("prices", "churn")
                                                             for variant in ("plain", "search")}
    assert all(np.isfinite(r["score"]) and r["seconds"] > 0 for r in rows)
    report = (out / "search.md").read_text()
    assert f"--tables {folder}" in report and "Tables the defaults were not chosen on." in report
    assert "| prices |" in report and "| churn |" in report and "tuning half" not in report
    assert not (tmp_path / "smoke" / "search.jsonl").exists()  # the shared tables' store is not touched
    with pytest.raises(SystemExit):
        search.main(["--tables", str(tmp_path / "nowhere")])
    assert "--tables: no MANIFEST.json in" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        search.main(["--out", str(out)])
    assert "--out goes with --tables" in capsys.readouterr().err


@pytest.mark.slow
def test_the_seeds_benchmark_runs_on_a_folder_of_ones_own(tmp_path, monkeypatch):
    from benchmarks.common import SMOKE_ENV
    from benchmarks.decisions import search_seeds

    folder, out = _write_tables(tmp_path / "mine"), tmp_path / "out"
    monkeypatch.setenv(SMOKE_ENV, str(tmp_path / "smoke"))  # the search at depths 1-2, 2 folds
    assert search_seeds.main(["--tables", str(folder), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "search_seeds.jsonl").read_text().splitlines()]
    seeds = [str(seed) for seed in search_seeds.SEEDS] + ["none", "none again"]
    assert {(r["dataset"], r["seed"]) for r in rows} == {(name, seed) for name in ("prices", "churn") for seed in seeds}
    report = (out / "search_seeds.md").read_text()
    assert "## The search with random_state=s on your tables" in report and "| churn |" in report
    assert "| own | 2 | 2 | - |" in report  # the two default runs of each table predicted the same
    assert "20 classification sets" not in report


def test_every_model_is_fitted_on_both_tasks_before_any_table_is_timed(tmp_path, monkeypatch):
    from benchmarks.common import SMOKE_ENV
    from benchmarks.decisions import search

    monkeypatch.setenv(SMOKE_ENV, str(tmp_path))
    seen, fitted = [], search.fitted

    def recording(variant, task, X, y):
        seconds, estimator = fitted(variant, task, X, y)
        seen.append((variant, task, type(estimator).__name__, len(y)))
        return seconds, estimator

    monkeypatch.setattr(search, "fitted", recording)
    search.warm_up(["plain", "search"])
    assert seen == [("plain", "regression", "SoftRegressionTree", 60),
                    ("search", "regression", "SoftRegressionTreeCV", 60),
                    (search.ALL_CORES, "regression", "SoftRegressionTreeCV", 60),  # it starts the workers
                    ("plain", "classification", "SoftClassificationTree", 60),
                    ("search", "classification", "SoftClassificationTreeCV", 60),
                    (search.ALL_CORES, "classification", "SoftClassificationTreeCV", 60)]
