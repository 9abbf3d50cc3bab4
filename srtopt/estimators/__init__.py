"""scikit-learn estimators, thin over the layers below."""

from .classification import SoftClassificationTree
from .cv import SoftClassificationTreeCV, SoftRegressionTreeCV
from .orct import ORCTClassifier
from .orrt import ORRTRegressor
from .srt import SoftRegressionTree

__all__ = ["MILOTreeRegressor", "ORCTClassifier", "ORRTRegressor", "SoftClassificationTree",
           "SoftClassificationTreeCV", "SoftRegressionTree", "SoftRegressionTreeCV"]


def __getattr__(name):
    if name == "MILOTreeRegressor":  # Pyomo takes seconds to import: load it on first use
        from .milo import MILOTreeRegressor

        return MILOTreeRegressor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
