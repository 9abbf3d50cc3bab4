"""Deprecated path: the MILO tree lives in :mod:`srtopt.milo`."""

from srtopt._deprecated import moved

__getattr__ = moved("srtopt.training.local_search", "srtopt.milo.local_search", "srtopt.milo.objective")
