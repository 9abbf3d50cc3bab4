"""Sphinx configuration of the srtopt documentation site.

    pip install ".[docs]" && sphinx-build -W -b html docs docs/_build/html

The API reference (one page per public module, every name of its ``__all__`` or, without
one, its public names) is generated into ``docs/api/`` at every build; the gallery runs
every script of ``examples/`` (an example that fails fails the build).  No network is
needed: no intersphinx, no remote images.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("SRTOPT_EXAMPLES_QUICK", "1")  # the gallery runs the examples' small versions
os.environ.setdefault("MPLBACKEND", "Agg")

import srtopt  # noqa: E402

project = "srtopt"
author = "the srtopt developers"
release = version = srtopt.__version__
copyright = "the srtopt developers"

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "api/.gitignore", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.json", "**/*.codeobj.json"]
myst_heading_anchors = 3
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "none"
suppress_warnings = ["myst.header", "config.cache"]

html_theme = "pydata_sphinx_theme"
html_title = f"srtopt {release}"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2, "navbar_end": ["navbar-icon-links"],
                      "icon_links": []}
html_static_path = []
html_context = {"default_mode": "light"}


def _reset_argv(gallery_conf, script_vars):
    """Command-line arguments of a gallery example: read_a_tree.py writes its files into the build."""
    if Path(script_vars["src_file"]).name == "read_a_tree.py":
        out = HERE / "_build" / "gallery_files"
        out.mkdir(parents=True, exist_ok=True)
        return ["--out", str(out)]
    return []


sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",  # run every example, not only plot_*.py
    "reset_argv": _reset_argv,
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "abort_on_example_error": True,
}

# ----------------------------------------------------------------- API pages
PRIVATE = ("srtopt.cli", "srtopt.__main__")


def _public_modules():
    names = ["srtopt"]
    for info in pkgutil.walk_packages(srtopt.__path__, "srtopt."):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")) or name.startswith(PRIVATE):
            continue
        names.append(name)
    return sorted(names)


def _write_api_pages():
    folder = HERE / "api"
    folder.mkdir(exist_ok=True)
    (folder / ".gitignore").write_text("*\n")
    modules = _public_modules()
    for name in modules:
        module = importlib.import_module(name)
        names = getattr(module, "__all__", None)
        members = ":members: " + ", ".join(n for n in names if not n.startswith("__")) if names else ":members:"
        package = hasattr(module, "__path__")  # its names are documented where they are defined too
        text = (f"{name}\n{'=' * len(name)}\n\n.. automodule:: {name}\n   {members}\n"
                + ("   :imported-members:\n" if names else "") + ("   :no-index:\n" if package else ""))
        path = folder / f"{name}.rst"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    index = ("API reference\n=============\n\nEvery public module, with every name of its ``__all__`` "
             "(or its public names).\n\n.. toctree::\n   :maxdepth: 1\n\n"
             + "".join(f"   {name}\n" for name in modules))
    (folder / "index.rst").write_text(index)


_write_api_pages()


# --------------------------------------------------------- docstring markup
def _plain_text(app, what, name, obj, options, lines):
    """The docstrings are plain text with formulas: |x| and name_ are not reST markup here."""
    for k, line in enumerate(lines):
        if line.lstrip().startswith((">>>", "...")):
            continue
        line = re.sub(r"(?<![\\`])\|", r"\\|", line)
        line = re.sub(r"(?<=\w)_(?=[\s,.;:)\]]|$)", r"\\_", line)
        lines[k] = line


def _skip_scikit_learn(app, what, name, obj, skip, options):
    """Members that scikit-learn generates (set_*_request, metadata routing) are its to document."""
    module = getattr(obj, "__module__", "") or ""
    return True if module.startswith("sklearn") else None


def setup(app):
    app.connect("autodoc-process-docstring", _plain_text, priority=100)
    app.connect("autodoc-skip-member", _skip_scikit_learn)
