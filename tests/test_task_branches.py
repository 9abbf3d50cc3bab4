"""Outside estimators/, cli/, datasets/ and experiments/, at most 3 lines of srtopt/ branch on the task
(issue 47): below the estimators a leaf model is asked, and the views ask the reader of its link
(srtopt/export/leaf_readers.py), never whether the tree is a regressor or a classifier.

A task branch is a line that tests ``is_classifier``, ``classes_`` against None or ``n_classes`` against None
(the issue's grep), ``hasattr(..., "classes_")``, ``isinstance(..., Softmax)`` or ``Identity``, or the
``leaf_kind`` the views once inferred the task from."""

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "srtopt"
ALLOWED = 3
#: folders under srtopt/ whose lines may branch on the task (the estimators and what drives them)
EXEMPT = ("estimators", "cli", "datasets", "experiments")
TASK_BRANCH = re.compile(r"is_classifier|classes_ is None|classes_ is not None|n_classes is None"
                         r"|hasattr\([^)]*[\"']classes_[\"']\)|isinstance\([^)]*\b(Softmax|Identity)\b|\bleaf_kind\b")


def task_branches(package: Path = PACKAGE) -> list[str]:
    """'path:line: text' of every task-branch line of ``package``'s modules outside :data:`EXEMPT`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if len(relative.parts) > 1 and relative.parts[0] in EXEMPT:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if TASK_BRANCH.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_at_most_three_lines_branch_on_the_task():
    found = task_branches()
    assert len(found) <= ALLOWED, f"{len(found)} lines branch on the task (at most {ALLOWED}):\n" + "\n".join(found)


def test_the_counter_finds_each_kind_of_branch_outside_the_exempt_folders(tmp_path):
    (tmp_path / "export").mkdir()
    (tmp_path / "estimators").mkdir()
    (tmp_path / "export" / "text.py").write_text("if model.is_classifier:\n    pass\nx = 1\n"
                                                 "y = None if model.classes_ is None else 2\n")
    (tmp_path / "view.py").write_text("if hasattr(model, 'classes_'):\n    pass\n"
                                      "if isinstance(model.leaf_model_.link, Softmax):\n    pass\n"
                                      "kind = model.leaf_kind\n")
    (tmp_path / "estimators" / "srt.py").write_text("if self.classes_ is not None:\n    pass\n")
    (tmp_path / "cli.py").write_text("if leaves.n_classes is None:\n    pass\n")  # a module named cli is no folder
    assert [line.split(": ")[0] for line in task_branches(tmp_path)] == [
        "cli.py:1", str(Path("export/text.py")) + ":1", str(Path("export/text.py")) + ":4", "view.py:1", "view.py:3",
        "view.py:5"]
