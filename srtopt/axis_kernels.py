"""Deprecated path: the MILO tree lives in :mod:`srtopt.milo`."""

from srtopt._deprecated import moved

__getattr__ = moved("srtopt.axis_kernels", "srtopt.milo.kernels")
