"""Values and terms, the Prolog-syntax parser, and canonical printing."""

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
    variables,
    variant,
)
from .parser import parse_clauses, parse_term
from .printer import format_atom, format_term

__all__ = [
    "LIST_FUNCTOR", "NIL", "Compound", "Float", "String", "Term", "Var", "format_atom",
    "format_term", "indicator", "is_atom", "is_callable", "is_ground", "is_number",
    "list_items", "make_list", "parse_clauses", "parse_term", "variables", "variant",
]
