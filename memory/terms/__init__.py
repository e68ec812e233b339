"""Values and terms, the Prolog-syntax parser, and canonical printing."""

import sys

from .parser import MAX_NESTING

# Parsing and printing recurse once per nesting level (a few frames each); terms may
# nest MAX_NESTING deep, so the interpreter's default limit of 1000 is too low.
if sys.getrecursionlimit() < 5 * MAX_NESTING + 1000:
    sys.setrecursionlimit(5 * MAX_NESTING + 1000)

from .model import (
    LIST_FUNCTOR,
    NIL,
    Compound,
    Float,
    String,
    Term,
    Var,
    indicator,
    is_atom,
    is_callable,
    is_ground,
    is_number,
    list_items,
    make_list,
    map_leaves,
    variables,
    variant,
)
from .parser import parse_clauses, parse_term
from .printer import format_atom, format_term

__all__ = [
    "LIST_FUNCTOR", "NIL", "Compound", "Float", "String", "Term", "Var", "format_atom",
    "format_term", "indicator", "is_atom", "is_callable", "is_ground", "is_number",
    "list_items", "make_list", "map_leaves", "parse_clauses", "parse_term", "variables", "variant",
]
