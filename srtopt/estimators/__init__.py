"""scikit-learn estimators, thin over the layers below."""

from .milo import MILOTreeRegressor
from .orrt import ORRTRegressor
from .srt import SoftRegressionTree

__all__ = ["MILOTreeRegressor", "ORRTRegressor", "SoftRegressionTree"]
