"""What every term of a formulation shares: parameters, a key, equality."""

from __future__ import annotations


class Term:
    """What losses and penalties share: parameters as public attributes (``get_params``,
    as scikit-learn estimators), and a ``key`` from the name and parameters that identifies
    the term in the structure keys of rendered models and in equality."""

    name = "term"

    def get_params(self, deep=True) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    @property
    def key(self) -> tuple:
        return (self.name, *sorted(self.get_params().items()))

    def __eq__(self, other):
        return type(other) is type(self) and other.key == self.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
