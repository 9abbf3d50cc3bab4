"""Deprecated path: the MILO tree lives in :mod:`srtopt.milo`."""

from srtopt._deprecated import moved

__getattr__ = moved("srtopt.training.certificate", "srtopt.milo.certificate")
