"""Values and terms, the Prolog-syntax parser, and canonical printing."""

import sys

from .parser import MAX_NESTING

# Parsing, printing, the JSON codec and the engine's term walks use explicit stacks. Rule analysis
# still recurses on a rule's goal structure (conjunctions, negations), which text nests at most
# MAX_NESTING deep, a few frames per level: the interpreter's default limit of 1000 is too low for that.
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
from .printer import call_prefix, continued_range, format_atom, format_term, plain_call

__all__ = [
    "LIST_FUNCTOR", "NIL", "Compound", "Float", "String", "Term", "Var", "call_prefix", "continued_range", "format_atom",
    "format_term", "indicator", "is_atom", "is_callable", "is_ground", "is_number",
    "list_items", "make_list", "map_leaves", "parse_clauses", "parse_term", "plain_call", "variables", "variant",
]
