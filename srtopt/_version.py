"""The version of srtopt (pyproject.toml holds the same)."""

__version__ = "0.3.0"
