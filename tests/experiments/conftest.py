"""Shared fixtures: the real datasets from $SRTOPT_DATA (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import DATA


@pytest.fixture(scope="session")
def data_home() -> Path:
    if DATA is None or not (DATA / "yacht.csv").is_file():
        pytest.skip(f"dataset directory {DATA} not available (set SRTOPT_DATA)")
    return DATA


@pytest.fixture
def isolated_methods():
    """Restore the method registry after a test registers its own methods."""
    from srtopt.experiments import methods

    saved = dict(methods._REGISTRY), dict(methods._REQUIRES)
    yield methods
    methods._REGISTRY.clear()
    methods._REGISTRY.update(saved[0])
    methods._REQUIRES.clear()
    methods._REQUIRES.update(saved[1])
