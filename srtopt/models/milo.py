"""Deprecated path: the MILO tree lives in :mod:`srtopt.milo`."""

from srtopt._deprecated import moved

__getattr__ = moved("srtopt.models.milo", "srtopt.milo.model", "srtopt.milo.objective")
