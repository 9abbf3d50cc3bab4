"""scikit-learn estimators, thin over the layers below."""

from .srt import SoftRegressionTree

__all__ = ["SoftRegressionTree"]
