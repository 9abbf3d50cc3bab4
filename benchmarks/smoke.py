"""Every benchmark script in smoke mode (``--smoke``: tiny data, one fold, one seed, tiny budgets, the outputs
in a temporary folder; benchmarks/common/__init__.py), one after another in this process: one line per script
with its seconds, and a non-zero exit status when any script fails.

    python -m benchmarks.smoke                 # every script of decisions/, perf/ and reproduce/
    python -m benchmarks.smoke defaults cv     # those scripts only (names without .py)
    python -m benchmarks.smoke --keep          # keep the outputs (one folder per script), printed at the end

A failing script's output and traceback are printed after its line.  Run from the repository root; the
processes the scripts start find this checkout through PYTHONPATH, which the runner sets.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from benchmarks.common import BENCHMARKS, ROOT, SMOKE_ENV

FOLDERS = ("decisions", "perf", "reproduce")


def scripts(names=(), root=BENCHMARKS) -> list[Path]:
    """The scripts of :data:`FOLDERS` under ``root`` (those named ``names`` when given), in order."""
    found = [path for folder in FOLDERS for path in sorted((root / folder).glob("*.py"))]
    unknown = set(names) - {path.stem for path in found}
    if unknown:
        raise SystemExit(f"no benchmark script named {', '.join(sorted(unknown))} in {', '.join(FOLDERS)}")
    return [path for path in found if not names or path.stem in names]


def run_one(path: Path, folder: Path, root=BENCHMARKS) -> tuple[bool, float, str]:
    """(passed, seconds, what it printed) of ``main(["--smoke"])`` of the script ``path`` (the module of its path
    from ``root``'s parent), its outputs in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[SMOKE_ENV] = str(folder)
    printed, started, passed = io.StringIO(), time.perf_counter(), False
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            module = importlib.import_module(".".join(path.relative_to(root.parent).with_suffix("").parts))
            status = module.main(["--smoke"])
        passed = status in (0, None)
        if not passed:
            printed.write(f"main returned {status!r}\n")
    except SystemExit as stop:
        passed = stop.code in (0, None)
        printed.write(f"exited with {stop.code!r}\n")
    except Exception:  # a failing script is reported, and the others run
        printed.write(traceback.format_exc())
    finally:
        del os.environ[SMOKE_ENV]
    return passed, time.perf_counter() - started, printed.getvalue()


def run_all(paths, outputs: Path, root=BENCHMARKS) -> list[str]:
    """Run the scripts ``paths`` (under ``root``) in smoke mode, each's outputs in a folder of ``outputs``; print a
    line per script (and a failing one's last output lines); the names of those that failed."""
    failed = []
    for path in paths:
        name = path.relative_to(root).as_posix()
        passed, seconds, printed = run_one(path, outputs / path.parent.name / path.stem, root)
        skips = [line[len("skipped: "):] for line in printed.splitlines() if line.startswith("skipped: ")]
        print(f"{seconds:7.1f} s  {'ok    ' if passed else 'FAILED'}  {name}"
              + (f"  (skipped: {'; '.join(skips)})" if skips else ""), flush=True)
        if not passed:
            failed.append(name)
            print("\n".join(f"    | {line}" for line in printed.rstrip().splitlines()[-40:]), flush=True)
    return failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="scripts to run (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the scripts' outputs")
    args = parser.parse_args(argv)
    root = BENCHMARKS
    chosen = scripts(args.names, root)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    outputs, started = Path(tempfile.mkdtemp(prefix="srtopt-smoke-")), time.perf_counter()
    try:
        failed = run_all(chosen, outputs, root)
    finally:
        if args.keep:
            print(f"outputs kept in {outputs}")
        else:
            shutil.rmtree(outputs, ignore_errors=True)
    print(f"smoke: {len(chosen)} scripts in {time.perf_counter() - started:.0f} s, "
          + (f"{len(failed)} failed: {', '.join(failed)}" if failed else "none failed"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
