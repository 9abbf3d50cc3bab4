"""docs/design.md's checkable claims: the modules it names exist, the one fit of the soft trees and its hooks
are where it says, the parameters each estimator adds to the base's are the ones it lists, and one input pipeline
and one prediction serve the estimators, their searches and a model file's view."""

import re
from pathlib import Path

from srtopt import SoftClassificationTree, SoftRegressionTree
from srtopt.estimators.soft_tree import SoftTree

ROOT = Path(__file__).resolve().parents[1]
DESIGN = (ROOT / "docs" / "design.md").read_text()
HOOKS = ("_check_targets", "_row_weights", "_leaf_model", "_training_stages", "_store_leaf_statistics")


def test_every_module_the_page_names_exists():
    named = set(re.findall(r"`([a-z_/]+\.py)`", DESIGN))
    files = {str(p.relative_to(ROOT / "srtopt")) for p in (ROOT / "srtopt").rglob("*.py")}
    missing = [name for name in named if not any(f == name or f.endswith("/" + name) for f in files)
               and not (ROOT / name).exists()]
    assert missing == []


def test_one_fit_and_its_hooks():
    assert "fit" in vars(SoftTree)
    for estimator in (SoftRegressionTree, SoftClassificationTree):
        assert "fit" not in vars(estimator) and issubclass(estimator, SoftTree)
        assert all(hook in vars(estimator) for hook in HOOKS), estimator
    assert all(f"`{hook}`" in DESIGN for hook in HOOKS)


def test_the_parameters_each_estimator_adds_are_the_pages():
    base = set(SoftTree._parameter_constraints)
    regressor = set(SoftRegressionTree._parameter_constraints) - base
    classifier = set(SoftClassificationTree._parameter_constraints) - base
    assert regressor == {"leaf", "loss", "init", "leaf_ridge", "leaf_center", "clip_predictions"}
    assert classifier == {"leaf", "loss", "init", "leaf_ridge", "class_weight"}
    listed = DESIGN[DESIGN.index("1. **Parameters**"):DESIGN.index("2. **Deadline**")]
    assert all(f"`{name}`" in listed for name in regressor | classifier)
    assert "max_features" in base  # both estimators take a feature budget


def _counting(monkeypatch, owner, name):
    """Count the calls of ``owner.name`` (the original still runs)."""
    calls = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_one_input_pipeline_and_one_prediction_for_the_estimators_and_the_view(monkeypatch, tmp_path):
    """"The input pipeline and the prediction": the estimators' predict and a model file's view both go through
    InputSchema.transform and LeafModel.hbp_predict, and the estimators' scaler_ and encoder_ are their inputs_'."""
    import numpy as np
    import pandas as pd

    from srtopt.inputs import InputSchema
    from srtopt.leaf_model import LeafModel
    from srtopt.persistence import read_view

    frame = pd.DataFrame({"a": np.arange(40.0), "b": ["u", "v"] * 20})
    for estimator, y in ((SoftRegressionTree, np.arange(40.0)), (SoftClassificationTree, np.arange(40) % 2)):
        tree = estimator(depth=1, max_iter=1, random_state=0).fit(frame, y)
        assert tree.scaler_ is tree.inputs_.scaling and tree.encoder_ is tree.inputs_.encoder
        tree.save(tmp_path / "m.json")
        view = read_view(tmp_path / "m.json")
        transforms = _counting(monkeypatch, InputSchema, "transform")
        predictions = _counting(monkeypatch, LeafModel, "hbp_predict")
        np.testing.assert_array_equal(view.predict(frame), tree.predict(frame))
        assert len(transforms) == 2 and len(predictions) == 2
        monkeypatch.undo()
    finishing = [path.relative_to(ROOT).as_posix() for path in (ROOT / "srtopt").rglob("*.py")
                 if "link.finish(" in path.read_text()]
    assert finishing == ["srtopt/leaf_model.py"]


def test_the_searches_pass_the_whole_tables_encoder_to_every_fit(monkeypatch):
    import numpy as np
    import pandas as pd

    from srtopt import SoftRegressionTreeCV

    frame = pd.DataFrame({"a": np.r_[np.nan, np.arange(59.0)], "b": ["u", "v", "w"] * 20})
    fits = _counting(monkeypatch, SoftTree, "fit")
    search = SoftRegressionTreeCV(depths=(1,), leaves=("linear",), cv=3).fit(frame, np.arange(60.0))
    assert len(fits) == search.cv_results_["n_folds"].sum() + 1 == 3 * 9 + 1  # 3 leaf factors, the folds repeated
    assert all(call["encoder"] is search.encoder_ for call in fits)
