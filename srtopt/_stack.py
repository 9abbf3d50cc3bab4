"""Where a warning points: at the user's line that called into srtopt, however deep inside the package it is
raised (a fit reaches its checks through decorators and mixins whose depth differs between estimators)."""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = str(Path(__file__).resolve().parent) + "/"


def user_stacklevel() -> int:
    """The ``stacklevel`` of a ``warnings.warn`` call, made in the caller of this function, that names the first
    frame outside the srtopt package."""
    frame, level = sys._getframe(1), 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
