"""Warnings for goals that call a predicate nothing defines.

In Datalog such a call is simply empty, so a typo (`edg(X, Y)` for `edge(X, Y)`) answers `[]` without
a word. A Prolog user expects "unknown procedure edg/2", so queries and rules say it, as a warning
(the call still runs), with the nearest names that exist. Defined means: the segment has visible
facts or rules for it, it is a computed relation (hedge/4, member/2, entity_type/2 in the default
segment), or it is a builtin; calls into other segments (`seg:p(...)`) are not checked here.
Suggestions come only from predicates the caller may read.
"""

from __future__ import annotations

import difflib
from typing import Iterable

from ..datalog.builtin_table import builtin
from ..datalog.predicates import is_reserved
from ..datalog.program import UNSUPPORTED
from ..store.repository import Transaction, Visibility
from ..terms import Term
from .goals import goals

CONTROL_ATOMS = {"true", "fail", "false"}
MAX_SUGGESTIONS = 3


def _builtin(name: str, arity: int) -> bool:
    return builtin(name, arity) is not None or (name in CONTROL_ATOMS and arity == 0) or name in UNSUPPORTED


def undefined_warnings(tx: Transaction, segment_id: int, body: Term, visibility: Visibility | None,
                       defined: Iterable[tuple] = ()) -> list[str]:
    """One warning per predicate `body` calls that nothing defines, in call order, each with its nearest
    names. `defined`: predicates known without looking (computed relations, the head of a rule being
    defined). Each call costs one indexed lookup; all names are read only when one is missing."""
    calls = list(dict.fromkeys((ref.name, ref.arity) for ref in goals(body)
                               if ref.qualifier is None and not _builtin(ref.name, ref.arity)))
    known = set(defined)
    calls = [call for call in calls if call not in known]
    if not calls:
        return []
    known.update(tx.rules.head_counts(segment_id))
    missing = [(name, arity) for name, arity in calls
               if (name, arity) not in known and not tx.facts.exists(segment_id, name, arity, visibility)]
    if not missing:
        return []
    known.update(tx.facts.predicates(segment_id, visibility))
    return [_warning(name, arity, known) for name, arity in missing]


def _warning(name: str, arity: int, defined: set) -> str:
    """The message, with the nearest names: the same name at another arity, else names spelled alike
    with the same arity, else names spelled alike at any arity."""
    preds = sorted((n, a) for n, a in defined if not is_reserved(n))
    nearest = [p for p in preds if p[0] == name] or _alike(name, [p for p in preds if p[1] == arity]) \
        or _alike(name, preds)
    suggestions = [f"{n}/{a}" for n, a in nearest][:MAX_SUGGESTIONS]
    if suggestions:
        return f"unknown procedure {name}/{arity}; did you mean {' or '.join(suggestions)}"
    return f"unknown procedure {name}/{arity} (no facts or rules define it)"


def unknown_name(kind: str, name: str, known: Iterable[str], what: str) -> str:
    """`goal_pred was_dwn is no predicate a rule defines; did you mean was_down`: a name that is none of
    `known`, with the nearest of them."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=MAX_SUGGESTIONS, cutoff=0.6)
    return f"{kind} {name} {what}" + (f"; did you mean {' or '.join(close)}" if close else "")


def _alike(name: str, preds: list) -> list:
    close = difflib.get_close_matches(name, sorted({n for n, _ in preds}), n=MAX_SUGGESTIONS, cutoff=0.6)
    return [p for c in close for p in preds if p[0] == c]
