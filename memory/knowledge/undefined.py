"""Warnings for goals that call a predicate nothing defines.

In Datalog such a call is simply empty, so a typo (`edg(X, Y)` for `edge(X, Y)`) answers `[]` without
a word. A Prolog user expects "unknown procedure edg/2", so queries and rules say it, as a warning
(the call still runs), with the nearest names that exist. Defined means: the segment has visible
facts or rules for it, it is a computed relation (hedge/4, member/2, entity_type/2 in the default
segment), or it is a builtin; calls into other segments (`seg:p(...)`) are not checked here.
"""

from __future__ import annotations

import difflib
from typing import Iterable

from ..datalog.program import BUILTIN_OPS, UNSUPPORTED
from ..terms import Term
from .goals import goals

CONTROL_ATOMS = {"true", "fail", "false"}
MAX_SUGGESTIONS = 3


def known_predicates(conn, segment_id: int, visible: tuple[str, list], computed: Iterable[tuple] = ()) -> set:
    """(name, arity) of every predicate with facts the caller may see or with rules in the segment."""
    clause, params = visible
    known = {(f, a) for f, a in conn.execute(
        f"SELECT DISTINCT functor, arity FROM facts AS f WHERE segment_id = ? AND {clause}", (segment_id, *params))}
    known.update(conn.execute("SELECT DISTINCT head_functor, head_arity FROM rules WHERE segment_id = ?",
                              (segment_id,)))
    known.update(computed)
    return known


def _builtin(name: str, arity: int) -> bool:
    return (name in BUILTIN_OPS and arity == 2) or (name in CONTROL_ATOMS and arity == 0) or name in UNSUPPORTED


def undefined_warnings(body: Term, known: set, also_defined: Iterable[tuple] = ()) -> list[str]:
    """One warning per called predicate that nothing defines, in call order, each with its nearest names."""
    defined = known | set(also_defined)
    warnings: list[str] = []
    seen: set = set()
    for ref in goals(body):
        key = (ref.name, ref.arity)
        if ref.qualifier is not None or key in defined or key in seen or _builtin(*key):
            continue
        seen.add(key)
        warnings.append(_warning(ref.name, ref.arity, defined))
    return warnings


def _warning(name: str, arity: int, defined: set) -> str:
    """The message, with the nearest names: the same name at another arity, else names spelled alike
    with the same arity, else names spelled alike at any arity."""
    preds = sorted((n, a) for n, a in defined if not n.startswith("$"))
    nearest = [p for p in preds if p[0] == name] or _alike(name, [p for p in preds if p[1] == arity]) \
        or _alike(name, preds)
    nearest = [f"{n}/{a}" for n, a in nearest][:MAX_SUGGESTIONS]
    if nearest:
        return f"unknown procedure {name}/{arity}; did you mean {' or '.join(nearest)}"
    return f"unknown procedure {name}/{arity} (no facts or rules define it)"


def _alike(name: str, preds: list) -> list:
    close = difflib.get_close_matches(name, sorted({n for n, _ in preds}), n=MAX_SUGGESTIONS, cutoff=0.6)
    return [p for c in close for p in preds if p[0] == c]
