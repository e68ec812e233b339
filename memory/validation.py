"""Checks on raw text arguments before anything parses or stores them."""

from __future__ import annotations

import re

from .errors import InvalidArguments

MAX_TEXT_CHARS = 65_536
NAME_PATTERN = r"^[a-z][A-Za-z0-9_]*$"
NAME_PATTERN_DOC = "a lowercase letter followed by letters, digits or underscores"
MAX_NAME_CHARS = 128
_NAME = re.compile(NAME_PATTERN)


def require_text(name: str, value: object, *, max_chars: int = MAX_TEXT_CHARS) -> str:
    """A non-blank, NUL-free, valid-Unicode string of bounded size, or InvalidArguments."""
    if value is None:
        raise InvalidArguments(f"'{name}' is required", argument=name)
    if not isinstance(value, str):
        raise InvalidArguments(f"'{name}' must be a string, not {type(value).__name__}", argument=name)
    if not value.strip():
        raise InvalidArguments(f"'{name}' must not be empty or whitespace", argument=name)
    if len(value) > max_chars:
        raise InvalidArguments(
            f"'{name}' is too long ({len(value)} characters; the limit is {max_chars})", argument=name
        )
    if "\x00" in value:
        raise InvalidArguments(f"'{name}' contains a NUL character", argument=name)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArguments(
            f"'{name}' is not valid UTF-8 (unpaired surrogate at position {exc.start})", argument=name
        ) from None
    return value


def require_name(argument: str, value: object) -> str:
    """A name that is a plain atom (segments, snapshots, assumptions, scopes): never a path or an expression."""
    text = require_text(argument, value, max_chars=MAX_NAME_CHARS)
    if not _NAME.match(text):
        raise InvalidArguments(f"'{argument}' must be {NAME_PATTERN_DOC} (at most {MAX_NAME_CHARS} characters)",
                               argument=argument)
    return text


def is_name(text: str) -> bool:
    return bool(_NAME.match(text))
