"""What every constraint shares: the tolerances, the user's units, the Constraint base."""

from __future__ import annotations

import copy
import numbers
from dataclasses import dataclass

import numpy as np

from ..terms.base import Term

#: a row of a split block whose probability of reaching the subproblem's root is below this keeps
#: its current contribution (a change of at most REACH_FLOOR times |v|)
REACH_FLOOR = 1e-10
#: a constraint holds when its violation is at most this (training units: standardized y)
FEASIBILITY_TOL = 1e-6


@dataclass(frozen=True)
class TrainingUnits:
    """How the user's units map to the training problem's: feature j is x_j / x_scale[j] (plus a
    shift), y is (y - y_mean) / y_std, the loss is homogeneous of degree ``loss_degree`` (None: not
    homogeneous, bounds on it are taken in standardized units).

    Parameters
    ----------
    feature_names : tuple of str
        The names of the features, in the order of X's columns.
    x_scale : ndarray of shape (p,)
        The span of each feature (scaled x_j = (x_j - min_j) / x_scale_j).
    y_std : float
        The standard deviation of y (standardized y = (y - mean) / y_std).
    loss_degree : int or None, default=2
        Degree of homogeneity of the training loss (2 for squared, 1 for absolute).
    classes : tuple, default=()
        A classifier's class labels, in the order of their codes 0..K-1 (empty for regression).
    y_mean : float, default=0.0
        The mean of y (a classifier's: 0).
    x_min : ndarray of shape (p,) or None, default=None
        The minimum of each feature (scaled x_j = (x_j - x_min_j) / x_scale_j); None: 0.
    """

    feature_names: tuple
    x_scale: np.ndarray
    y_std: float = 1.0
    loss_degree: int | None = 2
    classes: tuple = ()
    y_mean: float = 0.0
    x_min: np.ndarray | None = None

    def standardized_y(self, value):
        """A level in y's units (a prediction, a target, a cap on them) in training units:
        (value - y_mean) / y_std.  A difference of two levels (a gap, a bias) is value / y_std."""
        return (value - self.y_mean) / self.y_std

    def class_code(self, label, owner: str) -> int:
        """The code of a class label (its position in ``classes``)."""
        if not self.classes:
            raise ValueError(f"{owner} constrains a class: it needs a classifier (SoftClassificationTree)")
        matches = [k for k, c in enumerate(self.classes) if c == label or str(c) == str(label)]
        if not matches:
            listed = ", ".join(map(repr, self.classes[:12]))
            raise ValueError(f"{owner}: class {label!r} is not a class of y (classes: {listed})")
        return matches[0]

    def positive_code(self, label, owner: str):
        """The code of the class whose probability a classifier's soft mean averages: ``label``'s, or without
        one the second class's (two classes); None for a regression tree, which takes no label."""
        if not self.classes:
            if label is not None:
                raise ValueError(f"{owner}: pos_label={label!r} names a class; a regression tree has none (drop it)")
            return None
        if label is None:
            if len(self.classes) != 2:
                raise ValueError(f"{owner}: with {len(self.classes)} classes, name the class whose probability it "
                                 f"averages (pos_label=LABEL)")
            return 1
        return self.class_code(label, owner)

    @classmethod
    def identity(cls, n_features: int) -> "TrainingUnits":
        """The units of a problem built by hand: features x0, x1, ..., nothing scaled."""
        return cls(tuple(f"x{j}" for j in range(n_features)), np.ones(n_features), 1.0, None)

    def feature(self, reference, owner: str) -> int:
        """The column index of a feature given by name or by index."""
        if isinstance(reference, str):
            if reference in self.feature_names:
                return self.feature_names.index(reference)
            listed = ", ".join(self.feature_names[:12]) + (", ..." if len(self.feature_names) > 12 else "")
            raise ValueError(f"{owner}: feature {reference!r} is not a column of X (columns: {listed})")
        if isinstance(reference, numbers.Integral) and not isinstance(reference, bool) \
                and 0 <= reference < len(self.feature_names):
            return int(reference)
        raise ValueError(f"{owner}: feature {reference!r} is neither a column name of X nor an index in "
                         f"0..{len(self.feature_names) - 1}")


class Constraint(Term):
    """A constraint on (omega, beta) of the SRT problem (module docstring)."""

    name = "constraint"
    #: whether the constraint compares protected groups (``fit(..., sensitive_features=...)``)
    needs_groups = False
    #: the trees it applies to: "regression" (a SoftRegressionTree's), "classification" or both
    tasks = ("regression", "classification")
    #: whether it bounds rates of ``predict()``'s decisions, which ``repair_decisions`` (srtopt.training.feasibility)
    #: makes hold after training
    decides = False

    def __sklearn_clone__(self) -> "Constraint":
        """A copy, for scikit-learn's ``clone`` of an estimator that holds the constraint (its
        ``__init__`` normalizes the arguments, which ``clone``'s parameter check refuses)."""
        return copy.deepcopy(self)

    def in_training_units(self, units: TrainingUnits) -> "Constraint":
        """A copy in the training problem's units, features as indices."""
        return copy.deepcopy(self)

    def bind(self, problem) -> "Constraint":
        """A copy with what it needs of the training data of ``problem`` (an SRTProblem)."""
        return copy.copy(self)

    def repair_predictions(self, problem, omega, beta):
        """beta changed so that ``predict()`` meets the constraint on the training data where the soft
        model's guarantee does not carry over to it (none by default: ``beta`` unchanged)."""
        return beta

    def describe(self) -> str:
        """The constraint as a spec string."""
        options = ",".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in self.get_params().items()
                           if v is not None)
        return f"{self.name}:{options}" if options else self.name
