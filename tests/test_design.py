"""docs/design.md's checkable claims: the modules it names exist, the one fit of the soft trees and its hooks
are where it says, and the parameters each estimator adds to the base's are the ones it lists."""

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
