"""Module paths that moved: the old path still imports, and each name read from it warns once
with the new path (PEP 562 module ``__getattr__``)."""

from __future__ import annotations

import importlib
import warnings


def moved(old: str, *new: str):
    """The ``__getattr__`` of the deprecated module ``old``: a name is looked up in the modules
    ``new`` in turn, with a DeprecationWarning that names where it lives now."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        for path in new:
            module = importlib.import_module(path)
            if hasattr(module, name):
                warnings.warn(f"{old} is deprecated: import {name} from {path}", DeprecationWarning, stacklevel=2)
                return getattr(module, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r} (it moved to {', '.join(new)})")

    return __getattr__
