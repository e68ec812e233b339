"""Settings an operator gives in the environment: read once at start, refused by the variable's name when
they do not parse, so a typo stops the process instead of running it with another limit."""

from __future__ import annotations

from typing import Mapping

from .errors import InvalidConfiguration


def positive(env: Mapping[str, str], name: str, kind: type, default):
    """`name` as a positive finite `kind` (int or float); unset or blank gives `default`."""
    text = env.get(name)
    if text is None or text.strip() == "":
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not 0 < value < float("inf"):
        what = "number of seconds" if kind is float else "whole number"
        raise InvalidConfiguration(f"invalid {name}={text[:20]!r}: a positive {what}")
    return value
