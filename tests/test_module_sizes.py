"""Modules a reader can hold: no module of the package is longer than 700 lines, none of
srtopt/models/ longer than 500.  A module that outgrows its limit is split by concept."""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "srtopt"
LIMIT = 700
LIMITS = {"models": 500}  # first folder under srtopt/ -> its stricter limit


def too_long(package: Path = PACKAGE) -> list[str]:
    """'path: lines > limit' of every module of ``package`` longer than its limit."""
    out = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        limit = LIMITS.get(relative.parts[0], LIMIT) if len(relative.parts) > 1 else LIMIT
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            out.append(f"{relative}: {lines} lines > {limit}")
    return out


def test_no_module_is_longer_than_its_limit():
    assert too_long() == []


def test_the_checker_applies_each_limit_to_its_folder(tmp_path):
    (tmp_path / "models" / "srt").mkdir(parents=True)
    (tmp_path / "models" / "srt" / "branch.py").write_text("x = 1\n" * 501)
    (tmp_path / "models" / "leaves.py").write_text("x = 1\n" * 500)
    (tmp_path / "estimators").mkdir()
    (tmp_path / "estimators" / "srt.py").write_text("x = 1\n" * 700)
    (tmp_path / "datasets.py").write_text("x = 1\n" * 701)
    (tmp_path / "models.py").write_text("x = 1\n" * 600)  # a module named models is not the folder
    assert too_long(tmp_path) == [str(Path("datasets.py")) + ": 701 lines > 700",
                                  str(Path("models/srt/branch.py")) + ": 501 lines > 500"]
