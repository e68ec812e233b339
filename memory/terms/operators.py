"""The standard operator table (ISO with SWI-Prolog's `:` and `->`), fixed: no `op/3`."""

from __future__ import annotations

# name -> (priority, type)
INFIX: dict[str, tuple[int, str]] = {
    ":-": (1200, "xfx"),
    "-->": (1200, "xfx"),
    ";": (1100, "xfy"),
    "|": (1100, "xfy"),
    "->": (1050, "xfy"),
    "*->": (1050, "xfy"),
    ",": (1000, "xfy"),
    **{op: (700, "xfx") for op in (
        "=", "\\=", "==", "\\==", "@<", "@>", "@=<", "@>=", "=..", "is",
        "=:=", "=\\=", "<", ">", "=<", ">=",
    )},
    **{op: (500, "yfx") for op in ("+", "-", "/\\", "\\/", "xor")},
    **{op: (400, "yfx") for op in ("*", "/", "//", "mod", "rem", "<<", ">>", "div")},
    "**": (200, "xfx"),
    "^": (200, "xfy"),
    ":": (200, "xfy"),
}

PREFIX: dict[str, tuple[int, str]] = {
    ":-": (1200, "fx"),
    "?-": (1200, "fx"),
    "\\+": (900, "fy"),
    "-": (200, "fy"),
    "+": (200, "fy"),
    "\\": (200, "fy"),
}

ALL_OPERATORS = frozenset(INFIX) | frozenset(PREFIX)


def infix_argument_limits(priority: int, kind: str) -> tuple[int, int]:
    """Maximum priorities of the left and right arguments of an infix operator."""
    left = priority if kind == "yfx" else priority - 1
    right = priority if kind == "xfy" else priority - 1
    return left, right


def prefix_argument_limit(priority: int, kind: str) -> int:
    return priority if kind == "fy" else priority - 1
