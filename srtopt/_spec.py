"""Spec strings: ``"name:key=value,key=value"``, the clone-safe, grid-searchable form of a
configured part (a solver, a loss, a penalty, a working-set rule)."""

from __future__ import annotations

import ast


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"name:key=value,key=value"`` -> (name, {key: value}); values are Python literals, else
    strings; the name is lower-cased.  A key given twice is refused (which value was meant is unknown).

    >>> parse_spec("Huber:delta=0.5")
    ('huber', {'delta': 0.5})
    """
    name, _, rest = spec.partition(":")
    options = {}
    for item in filter(None, (part.strip() for part in _top_level(rest))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"bad option {item!r} in {spec!r}; expected key=value")
        if key.strip() in options:
            raise ValueError(f"option {key.strip()!r} is given twice in {spec!r}; give it once")
        try:
            options[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            options[key.strip()] = value.strip()
    return name.strip().lower(), options


def _top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes (an option's value may be a list or a
    dict: ``"ipopt:options={'mu_init':1e-4,'max_cpu_time':5}"``)."""
    parts, depth, quote, start = [], 0, None, 0
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


class Registry(dict):
    """Names of one kind of part (a loss, a penalty, a constraint, a solver, a working-set rule)
    -> their factories, and the parts made from spec strings: ``registry.make("huber:delta=0.5")``
    is ``registry["huber"](delta=0.5)``.

    Parameters
    ----------
    kind : str
        What the registry holds, as an error message names it ("loss", "bn solver", ...).
    entries : dict, default={}
        The built-in names and factories.
    alternatives : str, default=""
        What else the argument may be, appended to the message for an unknown name.
    listing : callable or None, default=None
        Returns the text that follows "unknown <kind> <spec>; " in that message, computed when it is
        made (e.g. the solvers installed); None: "use one of" the names, then ``alternatives``.
    error : type, default=ValueError
        The exception class of an unknown name.
    plugins : str or None, default=None
        An entry-point group (``importlib.metadata``) whose entries add names: an installed package
        declares ``NAME = "module:factory"`` in it, and a name not registered otherwise is looked up
        there (its factory loaded) when a spec first uses it.

    Examples
    --------
    >>> sizes = Registry("size", {"small": lambda scale=1: 10 * scale})
    >>> sizes.make("small:scale=3")
    30
    >>> sizes.make("large")
    Traceback (most recent call last):
    ...
    ValueError: unknown size 'large'; use one of 'small'
    """

    def __init__(self, kind: str, entries=(), alternatives="", listing=None, error=ValueError, plugins=None):
        super().__init__(entries)
        self.kind, self.alternatives, self.listing, self.error = kind, alternatives, listing, error
        self.plugins = plugins

    def register(self, name: str, factory) -> None:
        """Make ``name`` (stripped, lower-cased; an existing entry is replaced) build ``factory(**options)``."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a {self.kind} needs a non-empty name, got {name!r}")
        if not callable(factory):
            raise ValueError(f"the factory of {self.kind} {name!r} must be callable, got {factory!r}")
        self[name.strip().lower()] = factory

    def factory(self, spec: str):
        """The factory of the name of ``spec`` (registered, or an entry point of ``plugins``), else the
        registry's error naming the known ones."""
        name = parse_spec(spec)[0]
        if name not in self:
            for entry in self._entry_points():
                if entry.name.strip().lower() == name:
                    self.register(name, entry.load())
        if name not in self:
            raise self.error(f"unknown {self.kind} {spec!r}; {self._listed()}")
        return self[name]

    def _entry_points(self) -> list:
        if not self.plugins:
            return []
        from importlib.metadata import entry_points

        return list(entry_points(group=self.plugins))

    def names(self) -> list[str]:
        """The registered names, then those of ``plugins`` not registered yet."""
        return list(self) + sorted({e.name.strip().lower() for e in self._entry_points()} - set(self))

    def _listed(self) -> str:
        if self.listing is not None:
            return self.listing()
        alternatives = f", {self.alternatives}" if self.alternatives else ""
        return f"use one of {', '.join(map(repr, self.names()))}{alternatives}"

    def make(self, spec: str, **options):
        """The part of a spec ``"name:key=value,..."``; ``options`` override the spec's."""
        factory = self.factory(spec)
        name, parsed = parse_spec(spec)
        try:
            return factory(**{**parsed, **options})
        except TypeError as exc:
            raise ValueError(f"bad options for {self.kind} {name!r}: {exc}") from None
