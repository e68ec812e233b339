"""Prolog text in and out of a segment: import, export and named snapshots.

One serializer serves all three, so a snapshot is exactly what `export` writes:
asserted facts as clauses (sorted), rules (in definition order), then
`:- assume(Fact, Name).` for every assumption support (sorted). A rule with a name
or confidence is written `:- rule((Head :- Body), [name(N), confidence(C)]).`
Importing that text back and exporting again gives the same bytes. Facts projected
from source memories are not the segment's own: export skips them and a restore
keeps them (they live and end with their memories)."""

from __future__ import annotations

import json
import os

from ..datalog import Normalizer, analyze
from ..datalog.program import check_user_predicate
from ..errors import Conflict, InvalidArguments, NotFound, ReadOnly
from ..store import current_version, record_audit, utc_now
from ..terms import NIL, Compound, Float, Term, format_term, indicator, list_items, parse_clauses
from ..validation import require_name
from .beliefs import check_assumption
from .integrity import last_check
from .parsing import check_fact
from .rows import support_fact
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
    with kb.store.write() as conn:
        segment = resolve(conn, memory, write=True)
        if replace:
            # The segment's own knowledge goes; facts projected from source memories stay with their memories.
            conn.execute("DELETE FROM supports WHERE kind <> 'source' AND fact_id IN "
                         "(SELECT id FROM facts WHERE segment_id = ?)", (segment.id,))
            conn.execute("DELETE FROM facts WHERE segment_id = ? AND NOT EXISTS "
                         "(SELECT 1 FROM supports AS s WHERE s.fact_id = facts.id)", (segment.id,))
            conn.execute("DELETE FROM rules WHERE segment_id = ?", (segment.id,))
        added_facts, _ = kb.add_facts(facts, segment.name, "import_program")
        program = kb._build_program(conn, segment)
        normalizer = Normalizer(program)
        existing = {row[0] for row in conn.execute("SELECT text FROM rules WHERE segment_id = ?", (segment.id,))}
        names = {row[0] for row in conn.execute("SELECT name FROM rules WHERE segment_id = ? AND name IS NOT NULL",
                                                (segment.id,))}
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
        now = utc_now(conn.clock)
        for clause, rule_text, rule_name, confidence in new_rules:
            functor, arity = indicator(clause.args[0])  # type: ignore[union-attr]
            conn.execute("INSERT INTO rules (segment_id, head_functor, head_arity, text, created_at, name, confidence) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)", (segment.id, functor, arity, rule_text, now, rule_name,
                                                          confidence))
        for term, assumption in assumed:
            support_fact(conn, segment, term, "assumption", assumption, kb.actor)
        bump_generation(conn, segment)
        result = {"memory": segment.name, "facts_added": added_facts, "rules_added": len(new_rules),
                  "assumptions": len(assumed), "replaced": replace}
        record_audit(conn, kb.actor, "import_program", segment.name, result)
    return result


def export_program(kb, memory: str | None = None) -> str:
    with kb.store.read() as conn:
        segment = resolve(conn, memory)
        facts = [r[0] for r in conn.execute(
            "SELECT f.text FROM facts AS f WHERE f.segment_id = ? AND EXISTS (SELECT 1 FROM supports AS s "
            "WHERE s.fact_id = f.id AND s.kind = 'asserted') ORDER BY f.functor, f.arity, f.text", (segment.id,))]
        rules = [_rule_line(text, name, confidence) for text, name, confidence in conn.execute(
            "SELECT text, name, confidence FROM rules WHERE segment_id = ? ORDER BY id", (segment.id,))]
        assumed = conn.execute(
            "SELECT f.text, s.ref FROM facts AS f JOIN supports AS s ON s.fact_id = f.id "
            "WHERE f.segment_id = ? AND s.kind = 'assumption' ORDER BY f.functor, f.arity, f.text, s.ref",
            (segment.id,)).fetchall()
    lines = [f"% datalog-memory: {len(facts)} fact(s), {len(rules)} rule(s), {len(assumed)} assumption(s)"]
    lines += [f"{text}." for text in facts]
    lines += rules
    lines += [f":- assume({text}, {name})." for text, name in assumed]
    return "\n".join(lines) + "\n"


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
    with kb.store.write() as conn:
        segment = resolve(conn, memory)
        if content is None:
            content = export_program(kb, segment.name)
        facts, rules, assumed = _split(content)  # also validates imported text
        replaced = conn.execute("SELECT 1 FROM snapshots WHERE segment_id = ? AND name = ?",
                                (segment.id, name)).fetchone() is not None
        conn.execute(
            "INSERT INTO snapshots (segment_id, name, created_at, facts, rules, assumptions, content) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (segment_id, name) DO UPDATE SET created_at = excluded.created_at, "
            "facts = excluded.facts, rules = excluded.rules, assumptions = excluded.assumptions, "
            "content = excluded.content",
            (segment.id, name, utc_now(conn.clock), len(facts), len(rules), len(assumed), content))
        info = {"name": name, "memory": segment.name, "replaced": replaced, "facts": len(facts),
                "rules": len(rules), "assumptions": len(assumed)}
        record_audit(conn, kb.actor, "save_snapshot", segment.name, info)
    return info


def snapshot_content(kb, name: str, memory: str | None = None) -> str:
    name = check_snapshot_name(name)
    with kb.store.read() as conn:
        segment = resolve(conn, memory)
        row = conn.execute("SELECT content FROM snapshots WHERE segment_id = ? AND name = ?", (segment.id, name)).fetchone()
    if row is None:
        raise NotFound(f"Snapshot not found: {name}", snapshot=name, plain=True)
    return row[0]


def restore_snapshot(kb, name: str, memory: str | None = None) -> dict:
    with kb.store.write() as conn:
        segment = resolve(conn, memory)
        if segment.mode == "ro":
            raise ReadOnly("Memory is read-only", memory=segment.name, plain=True)
        content = snapshot_content(kb, name, segment.name)
        result = import_program(kb, content, segment.name, replace=True)
        record_audit(conn, kb.actor, "restore_snapshot", segment.name, {"name": name, **result})
    return {"name": name, "memory": segment.name, "facts": result["facts_added"], "rules": result["rules_added"],
            "assumptions": result["assumptions"]}


def list_snapshots(kb, memory: str | None = None) -> dict:
    with kb.store.read() as conn:
        segment = resolve(conn, memory)
        items = [{"name": n, "created_at": c, "facts": f, "rules": r, "assumptions": a}
                 for n, c, f, r, a in conn.execute(
                     "SELECT name, created_at, facts, rules, assumptions FROM snapshots WHERE segment_id = ? "
                     "ORDER BY id", (segment.id,))]
    return {"memory": segment.name, "snapshots": items}


def persistence_status(kb, check_integrity: bool = False) -> dict:
    """Health of the database file: mode, WAL size, schema version, last snapshot, integrity, and the last
    invariant check (`datalog-memory check`)."""
    path = kb.store.path
    on_disk = path != ":memory:"
    if check_integrity:
        with kb.store.write() as conn:
            result = [r[0] for r in conn.execute("PRAGMA quick_check(20)")]
            record_audit(conn, kb.actor, "integrity_check", None, {"result": result})
    with kb.store.read(status=True) as conn:  # a database that cannot be created is reported, not refused
        journal_mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        version = current_version(conn)
        last = conn.execute("SELECT s.name, g.name, s.created_at FROM snapshots AS s JOIN segments AS g "
                            "ON g.id = s.segment_id ORDER BY s.id DESC LIMIT 1").fetchone()
        check = conn.execute("SELECT at, payload FROM audit_log WHERE operation = 'integrity_check' "
                             "ORDER BY id DESC LIMIT 1").fetchone()
        invariants = last_check(conn)
    wal = path + "-wal"
    wal_bytes = os.path.getsize(wal) if on_disk and os.path.exists(wal) else 0
    checkpoint = kb.store.checkpoint()
    problem = kb.store.writable()
    integrity = None
    if check:
        payload = json.loads(check[1])["result"]
        integrity = {"at": check[0], "ok": payload == ["ok"], "result": payload}
    return {
        "status": "active" if problem is None else "degraded",
        "problem": problem,
        "database": path,
        "directory": os.path.dirname(os.path.abspath(path)) if on_disk else ":memory:",
        "journal_mode": journal_mode,
        "synchronous": "full",
        "wal_bytes": wal_bytes,
        "schema_version": version,
        "last_snapshot": {"name": last[0], "memory": last[1], "created_at": last[2]} if last else None,
        "last_checkpoint": None if checkpoint is None else {
            "at": utc_now(kb.store.clock), "busy": bool(checkpoint[0]), "wal_frames": checkpoint[1],
            "checkpointed_frames": checkpoint[2]},
        "integrity": integrity,
        "invariants": invariants,
    }
