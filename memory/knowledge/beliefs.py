"""Truth maintenance: facts believed under named assumptions, belief status, retraction.

A fact is believed while it has a support. `assume_fact` adds an `assumption`
support; retracting the assumption removes those supports and every fact left with
none, so a fact that was also asserted directly stays. Conclusions need no
bookkeeping: they are derived on demand, so one resting on a retracted fact is
simply no longer provable, and its belief status names the assumptions at the
leaves of its proof."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..datalog import explain
from ..errors import InvalidArguments, NotFound
from ..store.repository import Transaction, Visibility, new_fact
from ..terms import format_term, indicator
from .consequences import Consequences, Withdrawn
from ..validation import require_name, require_text
from .parsing import parse_fact
from .segments import Segment, bump_generation, resolve

GLOB = re.compile(r"^[a-z*?][A-Za-z0-9_*?]*$")
SOURCE_OF_KIND = {"asserted": "interactive", "snapshot": "snapshot", "assumption": "assumption",
                  "source": "source", "observation": "observation"}


def check_assumption(name: object) -> str:
    return require_name("assumption", name)


@dataclass
class Retraction:
    memory: str
    assumptions: list[str]
    removed: list[str] = field(default_factory=list)  # facts that lost their last support
    kept: list[str] = field(default_factory=list)  # facts still believed through another support
    withdrawn: Withdrawn = field(default_factory=Withdrawn)  # conclusions that stopped holding


def _consequences(kb, names: list[str], memory: str | None) -> Consequences:
    """Taken before retracting these assumptions: the conclusions that read what they support."""
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        texts = [text for name in names for text, _ in tx.supports.facts_with(segment.id, "assumption", name)]
    return Consequences(kb, memory, {indicator(parse_fact(text)) for text in texts})


def assume_fact(kb, fact: str, assumption: str, memory: str | None) -> dict:
    name = check_assumption(assumption)
    term = parse_fact(fact)
    text = format_term(term)
    with kb.repository.write() as tx:
        segment = resolve(tx, memory, write=True)
        _, created, added = tx.facts.support(segment.id, new_fact(term), "assumption", name, kb.actor,
                                             kb.visibility(tx))
        if added:
            bump_generation(tx, segment)
        if added:  # assuming the same fact under the same assumption again writes nothing
            tx.audit.record(kb.actor, "assume_fact", segment.name, {"fact": text, "assumption": name})
    return {"fact": text, "assumption": name, "memory": segment.name, "created": created, "added": added}


def _stored_supports(kb, tx: Transaction, segment: Segment, text: str) -> list[tuple[str, str]] | None:
    """The supports of a stored fact the caller sees, or None when it sees no such fact."""
    seen = kb.visibility(tx)
    fact_id = tx.facts.find(segment.id, text, seen)
    if fact_id is None:
        return None
    return [(kind, ref) for kind, _, ref in (s.partition(":") for s in tx.supports.of(fact_id, seen))]


def belief_status(kb, fact: str, memory: str | None) -> dict:
    term = parse_fact(fact)
    text = format_term(term)
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        supports = _stored_supports(kb, tx, segment, text)
        if supports:
            assumptions = sorted({ref for kind, ref in supports if kind == "assumption"})
            return {"status": "in", "justifications": assumptions,
                    "source": SOURCE_OF_KIND.get(supports[0][0], "unknown"), "fact": text, "memory": segment.name,
                    "supports": [kind if not ref else f"{kind}:{ref}" for kind, ref in supports], "derived": False}
        program = kb.program(tx, segment)
    # Evaluated outside the transaction, so a long proof search holds up no other call.
    proof = explain(program, term, kb.detached_loader(segment), budget=kb.new_budget())
    if proof is None:
        return {"status": "out", "justifications": [], "source": "unknown", "fact": text,
                "memory": segment.name, "supports": [], "derived": False}
    with kb.repository.read() as tx:
        steps = kb.proof_steps(tx, segment, proof)
    assumptions = sorted({s.split(":", 1)[1] for leaf in steps.leaves() for s in leaf.supports or ()
                          if s.startswith("assumption:")})
    return {"status": "in", "justifications": assumptions, "source": "derived", "fact": text,
            "memory": segment.name, "supports": [], "derived": True}


def justification(kb, assumption: str, memory: str | None) -> dict:
    name = check_assumption(assumption)
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        facts = [text for text, _ in tx.supports.facts_with(segment.id, "assumption", name)]
    return {"assumption": name, "memory": segment.name, "facts": facts}


def assumptions(kb, memory: str | None) -> dict:
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        names = tx.supports.refs(segment.id, "assumption")
    return {"assumptions": names, "memory": segment.name}


def _retract(tx: Transaction, segment: Segment, names: list[str], result: Retraction,
             seen: Visibility | None) -> None:
    for name in names:
        removed, kept = tx.supports.withdraw(segment.id, "assumption", name, seen)
        result.removed.extend(removed)
        result.kept.extend(kept)


def retract_assumption(kb, assumption: str, memory: str | None) -> Retraction:
    name = check_assumption(assumption)
    consequences = _consequences(kb, [name], memory)
    with kb.repository.write() as tx:
        segment = resolve(tx, memory, write=True)
        if not tx.supports.exists(segment.id, "assumption", name):
            raise NotFound(f"Unknown assumption '{name}'", assumption=name, plain=True)
        result = Retraction(segment.name, [name])
        _retract(tx, segment, [name], result, kb.visibility(tx))
        bump_generation(tx, segment)
        tx.audit.record(kb.actor, "retract_assumption", segment.name,
                        {"assumption": name, "removed": result.removed, "kept": result.kept})
    result.withdrawn = consequences.withdrawn(result.removed)
    return result


def retract_assumptions(kb, pattern: str, memory: str | None) -> Retraction:
    glob = require_text("pattern", pattern, max_chars=128)
    if not GLOB.match(glob):
        raise InvalidArguments("'pattern' may use letters, digits, _ and the wildcards * and ?, "
                               "starting with a lowercase letter or a wildcard", argument="pattern")
    matcher = re.compile("^" + "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob) + "$")
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        matching = [ref for ref in sorted(tx.supports.refs(segment.id, "assumption")) if matcher.match(ref)]
    consequences = _consequences(kb, matching, memory)
    with kb.repository.write() as tx:
        segment = resolve(tx, memory, write=True)
        names = [ref for ref in sorted(tx.supports.refs(segment.id, "assumption")) if matcher.match(ref)]
        result = Retraction(segment.name, names)
        if names:
            _retract(tx, segment, names, result, kb.visibility(tx))
            bump_generation(tx, segment)
            tx.audit.record(kb.actor, "retract_assumptions", segment.name,
                            {"pattern": glob, "assumptions": names, "removed": result.removed, "kept": result.kept})
    result.withdrawn = consequences.withdrawn(result.removed)
    return result
