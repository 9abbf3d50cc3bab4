"""Shared fixtures: the real datasets from $SRTOPT_DATA (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import CLASSIFICATION_DATA, DATA


@pytest.fixture(scope="session")
def data_home() -> Path:
    if DATA is None or not (DATA / "yacht.csv").is_file():
        pytest.skip(f"dataset directory {DATA} not available (set SRTOPT_DATA)")
    return DATA


@pytest.fixture(scope="session")
def class_data_home() -> Path:
    if CLASSIFICATION_DATA is None or not (CLASSIFICATION_DATA / "bupa.csv").is_file():
        pytest.skip(f"classification dataset directory {CLASSIFICATION_DATA} not available "
                    f"(set SRTOPT_CLASSIFICATION_DATA)")
    return CLASSIFICATION_DATA


@pytest.fixture
def isolated_methods():
    """Restore the method registry after a test registers its own methods."""
    from srtopt.experiments import methods

    tables = (methods._REGISTRY, methods._REQUIRES, methods._TASK, methods._DEPTH_FREE)
    saved = [table.copy() for table in tables]
    yield methods
    for table, copy in zip(tables, saved):
        table.clear()
        table.update(copy)
