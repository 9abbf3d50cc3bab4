"""Spec strings: ``"name:key=value,key=value"``, the clone-safe, grid-searchable form of a
configured part (a solver, a loss, a penalty, a working-set rule)."""

from __future__ import annotations

import ast


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"name:key=value,key=value"`` -> (name, {key: value}); values are Python literals, else
    strings; the name is lower-cased.

    >>> parse_spec("Huber:delta=0.5")
    ('huber', {'delta': 0.5})
    """
    name, _, rest = spec.partition(":")
    options = {}
    for item in filter(None, (part.strip() for part in _top_level(rest))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"bad option {item!r} in {spec!r}; expected key=value")
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
