"""Prolog text in and out of a segment: import, export and named snapshots.

One serializer serves all three, so a snapshot is exactly what `export` writes:
asserted facts as clauses (sorted), rules (in definition order), then
`:- assume(Fact, Name).` for every assumption support (sorted). A rule with a name
or confidence is written `:- rule((Head :- Body), [name(N), confidence(C)]).`
Importing that text back and exporting again gives the same bytes. Facts projected
from source memories are not the segment's own: export skips them and a restore
keeps them (they live and end with their memories)."""

from __future__ import annotations

import os

from ..datalog import Normalizer, analyze
from ..datalog.program import check_user_predicate
from ..errors import Conflict, InvalidArguments, NotFound, ReadOnly
from ..store import utc_now
from ..store.repository import new_fact
from ..terms import NIL, Compound, Float, Term, format_term, indicator, list_items, parse_clauses
from ..validation import require_name
from .beliefs import check_assumption
from .integrity import last_check
from .parsing import check_fact
from .segments import bump_generation, resolve



def _rule_options(directive: Compound) -> tuple[Term, str | None, float]:
    """`:- rule((Head :- Body), [name(N), confidence(C)])`: a rule with its name and confidence."""
    clause, options = directive.args
    items, tail = list_items(options)
    name, confidence = None, 1.0
    if tail != NIL or not (type(clause) is Compound and clause.functor == ":-" and len(clause.args) == 2):
        raise InvalidArguments(f"expected :- rule((Head :- Body), [name(N), confidence(C)]): {format_term(directive)}")
    for item in items:
        if type(item) is Compound and item.functor == "name" and len(item.args) == 1 and type(item.args[0]) is str:
            name = require_name("name", item.args[0])
        elif type(item) is Compound and item.functor == "confidence" and len(item.args) == 1 \
                and type(item.args[0]) in (int, Float) and 0 < getattr(item.args[0], "value", item.args[0]) <= 1:
            confidence = float(getattr(item.args[0], "value", item.args[0]))
        else:
            raise InvalidArguments(f"unknown rule option {format_term(item)} (use name(N), confidence(C))")
    return clause, name, confidence


def _split(text: str) -> tuple[list[Term], list[tuple[Term, str | None, float]], list[tuple[Term, str]]]:
    facts, rules, assumed = [], [], []
    for clause in parse_clauses(text):
        if type(clause) is Compound and clause.functor == ":-" and len(clause.args) == 1:
            directive = clause.args[0]
            if type(directive) is Compound and directive.functor == "assume" and len(directive.args) == 2 \
                    and type(directive.args[1]) is str:
                assumed.append((check_fact(directive.args[0]), check_assumption(directive.args[1])))
                continue
            if type(directive) is Compound and directive.functor == "rule" and len(directive.args) == 2:
                rules.append(_rule_options(directive))
                continue
            raise InvalidArguments("directives other than :- assume(Fact, Name) and :- rule(Clause, Options) are "
                                   f"not supported: {format_term(clause)}")
        if type(clause) is Compound and clause.functor == ":-":
            rules.append((clause, None, 1.0))
        else:
            facts.append(check_fact(clause))
    return facts, rules, assumed


def import_program(kb, text: str, memory: str | None = None, replace: bool = False) -> dict:
    """Load facts, rules and assumptions, all or nothing; with replace, the segment becomes exactly the text."""
    facts, rules, assumed = _split(text)
    with kb.repository.write() as tx:
        segment = resolve(tx, memory, write=True)
        if replace:
            # The segment's own knowledge goes; facts projected from source memories stay with their memories.
            tx.facts.clear_all_but(segment.id, "source")
            tx.rules.delete_all(segment.id)
        added_facts, _ = kb.add_facts(facts, segment.name, "import_program")
        program = kb.build_program(tx, segment)
        normalizer = Normalizer(program)
        existing = {text for _, text in tx.rules.texts(segment.id)}
        names = tx.rules.names(segment.id)
        new_rules = []
        for clause, rule_name, confidence in rules:
            rule_text = format_term(clause)
            if rule_text in existing:
                continue
            if rule_name is not None and rule_name in names:
                raise Conflict(f"Rule name '{rule_name}' is already used in memory '{segment.name}'", name=rule_name)
            existing.add(rule_text)
            names.add(rule_name)
            check_user_predicate(clause.args[0], "rule head")  # type: ignore[union-attr]
            normalizer.add_clause(clause, rule_text)
            new_rules.append((clause, rule_text, rule_name, confidence))
        analyze(program)
        for clause, rule_text, rule_name, confidence in new_rules:
            functor, arity = indicator(clause.args[0])  # type: ignore[union-attr]
            tx.rules.add(segment.id, functor, arity, rule_text, rule_name, confidence)
        for term, assumption in assumed:
            tx.facts.support(segment.id, new_fact(term), "assumption", assumption, kb.actor)
        bump_generation(tx, segment)
        result = {"memory": segment.name, "facts_added": added_facts, "rules_added": len(new_rules),
                  "assumptions": len(assumed), "replaced": replace}
        tx.audit.record(kb.actor, "import_program", segment.name, result)
    return result


def export_program(kb, memory: str | None = None) -> str:
    with kb.repository.read() as tx:
        facts, rules, assumed = _clauses(tx, resolve(tx, memory))
    lines = [f"% datalog-memory: {len(facts)} fact(s), {len(rules)} rule(s), {len(assumed)} assumption(s)"]
    return "\n".join(lines + facts + rules + assumed) + "\n"


def _clauses(tx, segment) -> tuple[list[str], list[str], list[str]]:
    """A segment's asserted facts, rules and assumptions as the lines of a program, in its order."""
    facts = [f"{text}." for text in tx.facts.texts_with_support(segment.id, "asserted")]
    rules = [_rule_line(rule.text, rule.name, rule.confidence) for rule in tx.rules.all(segment.id)]
    assumed = [f":- assume({text}, {name})." for text, name in tx.supports.facts_with(segment.id, "assumption")]
    return facts, rules, assumed


def _rule_line(text: str, name: str | None, confidence: float) -> str:
    """A rule as export writes it: plain, or as a rule/2 directive when it has a name or a confidence."""
    if name is None and confidence == 1.0:
        return f"{text}."
    options = ([f"name({format_term(name)})"] if name is not None else []) + \
              ([f"confidence({format_term(Float(confidence))})"] if confidence != 1.0 else [])
    return f":- rule(({text}), [{', '.join(options)}])."


def check_snapshot_name(name: object) -> str:
    return require_name("name", name)


def save_snapshot(kb, name: str, memory: str | None = None, content: str | None = None) -> dict:
    """Store the segment (or, with content, a given program text) under a name; says if it replaced one."""
    name = check_snapshot_name(name)
    with kb.repository.write() as tx:
        segment = resolve(tx, memory)
        if content is None:
            content = export_program(kb, segment.name)
        facts, rules, assumed = _split(content)  # also validates imported text
        replaced = tx.snapshots.exists(segment.id, name)
        tx.snapshots.save(segment.id, name, len(facts), len(rules), len(assumed), content)
        info = {"name": name, "memory": segment.name, "replaced": replaced, "facts": len(facts),
                "rules": len(rules), "assumptions": len(assumed)}
        tx.audit.record(kb.actor, "save_snapshot", segment.name, info)
    return info


def snapshot_content(kb, name: str, memory: str | None = None) -> str:
    name = check_snapshot_name(name)
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        content = tx.snapshots.content(segment.id, name)
    if content is None:
        raise NotFound(f"Snapshot not found: {name}", snapshot=name, plain=True)
    return content


def restore_snapshot(kb, name: str, memory: str | None = None) -> dict:
    with kb.repository.write() as tx:
        segment = resolve(tx, memory)
        if segment.mode == "ro":
            raise ReadOnly("Memory is read-only", memory=segment.name, plain=True)
        content = snapshot_content(kb, name, segment.name)
        before = [line for part in _clauses(tx, segment) for line in part]
        result = import_program(kb, content, segment.name, replace=True)
        after = [line for part in _clauses(tx, segment) for line in part]
        tx.audit.record(kb.actor, "restore_snapshot", segment.name, {"name": name, **result})
    kept = set(before) & set(after)  # what the restore changed, in program order: said, so nothing goes unnoticed
    return {"name": name, "memory": segment.name, "facts": result["facts_added"], "rules": result["rules_added"],
            "assumptions": result["assumptions"], "dropped": [c for c in before if c not in kept],
            "brought_back": [c for c in after if c not in kept]}


def list_snapshots(kb, memory: str | None = None) -> dict:
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        items = [row._asdict() for row in tx.snapshots.of(segment.id)]
    return {"memory": segment.name, "snapshots": items}


def persistence_status(kb, check_integrity: bool = False) -> dict:
    """Health of the database file: mode, WAL size, schema version, last snapshot, integrity, and the last
    invariant check (`datalog-memory check`)."""
    path = kb.store.path
    on_disk = kb.store.is_file  # a file with a WAL beside it
    if check_integrity:
        with kb.repository.write() as tx:
            result = tx.quick_check(20)
            tx.audit.record(kb.actor, "integrity_check", None, {"result": result})
    with kb.repository.read(status=True) as tx:  # a database that cannot be created is reported, not refused
        journal_mode = tx.journal_mode()
        version = tx.schema_version()
        last = tx.snapshots.latest()
        check = tx.audit.last("integrity_check")
        invariants = last_check(tx)
    wal = path + "-wal"
    wal_bytes = os.path.getsize(wal) if on_disk and os.path.exists(wal) else 0
    checkpoint = kb.store.checkpoint()
    problem = kb.store.writable()
    integrity = None
    if check:
        payload = check.payload["result"]
        integrity = {"at": check.at, "ok": payload == ["ok"], "result": payload}
    return {
        "status": "active" if problem is None else "degraded",
        "problem": problem,
        "database": kb.store.display,
        # PostgreSQL: the server's URL (without a password) stands where a file's folder would.
        "directory": os.path.dirname(os.path.abspath(path)) if on_disk else ":memory:" if path == ":memory:"
        else kb.store.display,
        "journal_mode": journal_mode,
        "synchronous": kb.store.synchronous,
        "wal_bytes": wal_bytes,
        "schema_version": version,
        "last_snapshot": {"name": last[0], "memory": last[1], "created_at": last[2]} if last else None,
        "last_checkpoint": None if checkpoint is None else {
            "at": utc_now(kb.store.clock), "busy": bool(checkpoint[0]), "wal_frames": checkpoint[1],
            "checkpointed_frames": checkpoint[2]},
        "integrity": integrity,
        "invariants": invariants,
    }
