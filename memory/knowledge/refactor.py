"""Refactoring: where a predicate is used, and renaming it everywhere in one transaction.

Rules are rewritten on their syntax trees (aware of arity and of `seg:` qualifiers),
never by text substitution, so `status` never touches `task_status` or an atom `status`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..datalog import Normalizer, Program, analyze
from ..datalog.program import BUILTIN_OPS
from ..errors import Conflict, InvalidArguments, NotFound, ReadOnly
from ..store import record_audit
from ..terms import Compound, Term, format_term, parse_term
from ..terms.codec import decode_args
from ..terms.operators import ALL_OPERATORS, INFIX, PREFIX
from ..validation import is_name
from .goals import GoalRef, goals, rewrite
from .parsing import parse_name
from .rows import release
from .segments import Segment, resolve

ALL = "__all__"
# Control constructs and builtins whose renaming would corrupt the language itself.
PROTECTED = set(ALL_OPERATORS) | set(BUILTIN_OPS) | {"!", "true", "fail", "false", "not", "aggregate_all", "call"}


@dataclass
class StoredRule:
    id: int
    text: str
    head: Term
    body: Term


def _rules(conn, segment_id: int) -> list[StoredRule]:
    out = []
    for rule_id, text in conn.execute("SELECT id, text FROM rules WHERE segment_id = ? ORDER BY id", (segment_id,)):
        clause = parse_term(text)
        out.append(StoredRule(rule_id, text, clause.args[0], clause.args[1]))  # type: ignore[union-attr]
    return out


def _mounted(conn) -> list[Segment]:
    return [Segment(*row) for row in conn.execute(
        "SELECT id, name, mode, generation, scope FROM segments WHERE mounted = 1 ORDER BY name")]


def _segment_rules(kb, conn, segment: Segment) -> list[StoredRule]:
    """A segment's rules, read from the global database when it is a mounted global segment."""
    if segment.scope == "global" and kb.global_source is not None:
        shared = kb.global_source()
        with shared.store.read() as global_conn:
            return _rules(global_conn, resolve(global_conn, segment.name).id)
    return _rules(conn, segment.id)


def _matches(ref: GoalRef, name: str, arity: int | None) -> bool:
    return ref.name == name and (arity is None or ref.arity == arity)


def find_references(kb, functor: str, arity: int | None, memory: str | None, include_cross: bool = True) -> dict:
    name = parse_name(functor, "functor")
    scope_all = memory == ALL
    with kb.store.read() as conn:
        scope = _mounted(conn) if scope_all else [resolve(conn, memory)]
        scope_names = {s.name for s in scope}
        rules, cross, assumptions = [], [], []
        facts_count = 0
        for segment in scope:
            for rule in _segment_rules(kb, conn, segment):
                local = qualified = None
                for ref in goals(rule.body):
                    if not _matches(ref, name, arity):
                        continue
                    if ref.qualifier is None or ref.qualifier == segment.name:
                        local = True
                    elif scope_all:
                        qualified = ref.qualifier
                entry = {"head": format_term(rule.head), "body": format_term(rule.body), "memory": segment.name}
                if local:
                    rules.append(entry)
                if qualified and include_cross:
                    cross.append({**entry, "qualifier": qualified})
            where, params = "f.segment_id = ? AND f.functor = ?", [segment.id, name]
            if arity is not None:
                where += " AND f.arity = ?"
                params.append(arity)
            visible, visible_params = kb.visible(conn)
            facts_count += conn.execute(f"SELECT count(*) FROM facts AS f WHERE {where} AND {visible}",
                                        [*params, *visible_params]).fetchone()[0]
            for assumption, text in conn.execute(
                    f"SELECT s.ref, f.text FROM facts AS f JOIN supports AS s ON s.fact_id = f.id "
                    f"WHERE s.kind = 'assumption' AND {where} ORDER BY s.ref, f.text", params):
                assumptions.append({"assumption": assumption, "fact": text, "memory": segment.name})
        if include_cross and not scope_all:
            target = scope[0].name
            for other in _mounted(conn):
                if other.name in scope_names:
                    continue
                for rule in _segment_rules(kb, conn, other):
                    if any(_matches(ref, name, arity) and ref.qualifier == target for ref in goals(rule.body)):
                        cross.append({"head": format_term(rule.head), "body": format_term(rule.body),
                                      "memory": other.name, "qualifier": target})
    return {
        "target": f"{name}/{arity}" if arity is not None else name,
        "memory": ALL if scope_all else scope[0].name,
        "rules": rules,
        "direct_facts_count": facts_count,
        "facts_referenced_in_assumptions": assumptions,
        "cross_memory_refs": cross,
    }


@dataclass
class RenamePlan:
    segment: Segment
    old: str
    new: str
    arity: int
    fact_updates: list = field(default_factory=list)  # (fact id, new text, the visible supports' ids)
    rule_updates: dict = field(default_factory=dict)  # segment id -> [(rule id, new text, new head)]
    renamed_rule_heads: list = field(default_factory=list)
    rewritten_bodies: list = field(default_factory=list)  # head texts in the target segment
    rewritten: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    skipped_readonly: list = field(default_factory=list)


def _arities(conn, segment: Segment, name: str, visible: tuple[str, list]) -> set:
    """The arities a name is used with in a segment, by facts the caller sees and by rules."""
    found = {r[0] for r in conn.execute(
        f"SELECT arity FROM facts AS f WHERE segment_id = ? AND functor = ? AND {visible[0]} UNION "
        "SELECT head_arity FROM rules WHERE segment_id = ? AND head_functor = ?",
        (segment.id, name, *visible[1], segment.id, name))}
    for rule in _rules(conn, segment.id):
        found |= {ref.arity for ref in goals(rule.body) if ref.name == name and ref.qualifier in (None, segment.name)}
    return found


def _validated_name(text: str, argument: str) -> str:
    name = parse_name(text, argument)
    if not is_name(name):
        if name in PROTECTED:
            return name
        raise InvalidArguments(f"'{argument}' must be a plain atom such as task_status (letters, digits, _)",
                               argument=argument)
    return name


def plan_rename(kb, conn, old_functor: str, new_functor: str, arity: int | None, memory: str | None,
                propagate: bool) -> RenamePlan:
    old = _validated_name(old_functor, "old_functor")
    new = _validated_name(new_functor, "new_functor")
    segment = resolve(conn, memory)
    if segment.mode == "ro":
        raise ReadOnly(f"Cannot rename in read-only memory: {segment.name}", memory=segment.name, plain=True)
    if old == new:
        raise InvalidArguments("old_functor and new_functor are identical: self-rename is a no-op", plain=True)
    for name in (old, new):
        if name in PROTECTED:
            implied = arity if arity is not None else (2 if name in INFIX else 1 if name in PREFIX else 0)
            raise InvalidArguments(f"Cannot rename ISO operator: {name}/{implied}", plain=True)
    visible = kb.visible(conn)
    if arity is None:
        found = sorted(_arities(conn, segment, old, visible))
        if len(found) > 1:
            raise InvalidArguments(
                f"Ambiguous arity for {old}; detected arities: {', '.join(map(str, found))}. Specify arity parameter.",
                arities=found, plain=True)
        if not found:
            raise NotFound(f"Predicate not found: {old} in memory '{segment.name}'", memory=segment.name)
        arity = found[0]
    if arity not in _arities(conn, segment, old, visible):
        raise NotFound(f"Predicate not found: {old}/{arity} in memory '{segment.name}'", memory=segment.name)
    if arity in _arities(conn, segment, new, visible):
        raise Conflict(f"Cannot rename: {new}/{arity} already exists in memory '{segment.name}'",
                       memory=segment.name, plain=True)
    plan = RenamePlan(segment, old, new, arity)
    seen, seen_params = kb.seen(conn)
    projected: list[str] = []
    for fact_id, args_text in conn.execute(
            f"SELECT f.id, f.args FROM facts AS f WHERE f.segment_id = ? AND f.functor = ? AND f.arity = ? "
            f"AND {visible[0]}", (segment.id, old, arity, *visible[1])).fetchall():
        args = decode_args(args_text)
        supports = conn.execute(f"SELECT s.id, s.kind, s.ref FROM supports AS s WHERE s.fact_id = ? AND {seen}",
                                (fact_id, *seen_params)).fetchall()
        projected += [ref for _, kind, ref in supports if kind == "source"]
        plan.fact_updates.append((fact_id, format_term(Compound(new, args) if args else new), [i for i, _, _ in supports]))
    # Projections the caller sees follow the rename, so it must be allowed to rewrite their memories: otherwise
    # the rename is refused (they are visible, so refusing reveals nothing). Projections it cannot see are
    # left exactly as they are: their facts keep the old name.
    if projected and kb.projection_guard is not None:
        kb.projection_guard(conn, projected, f"Renaming {old}/{arity}")

    def local(ref: GoalRef) -> str | None:
        return new if ref.name == old and ref.arity == arity and ref.qualifier in (None, segment.name) else None

    def remote(ref: GoalRef) -> str | None:
        return new if ref.name == old and ref.arity == arity and ref.qualifier == segment.name else None

    updates = plan.rule_updates.setdefault(segment.id, [])
    for rule in _rules(conn, segment.id):
        head = rule.head
        head_renamed = (head == old and arity == 0) or (type(head) is Compound and head.functor == old
                                                          and len(head.args) == arity)
        if head_renamed:
            head = new if arity == 0 else Compound(new, head.args)  # type: ignore[union-attr]
        body, changed = rewrite(rule.body, local)
        if head_renamed or changed:
            text = format_term(Compound(":-", (head, body)))
            updates.append((rule.id, text, head))
            if head_renamed:
                plan.renamed_rule_heads.append(format_term(head))
            if changed:
                plan.rewritten_bodies.append(format_term(head))
    for other in _mounted(conn):
        if other.id == segment.id:
            continue
        changes = []
        refs = 0
        for rule in _segment_rules(kb, conn, other):
            body, changed = rewrite(rule.body, remote)
            if changed:
                refs += changed
                changes.append((rule.id, format_term(Compound(":-", (rule.head, body))), rule.head))
        if not refs:
            continue
        if other.mode == "ro":
            plan.skipped_readonly.append({"memory": other.name, "refs": refs, "reason": "read-only"})
        elif other.scope == "global":
            # Shared with other projects, and in another database: never rewritten from one project.
            plan.warnings.append({"memory": other.name, "refs": refs, "reason": "global segment, not rewritten"})
        elif propagate:
            plan.rule_updates[other.id] = changes
            plan.rewritten.append({"memory": other.name, "rules_updated": len(changes)})
        else:
            plan.warnings.append({"memory": other.name, "refs": refs, "reason": "propagate_cross_memory_refs=false"})
    return plan


def rename_predicate(kb, old_functor: str, new_functor: str, arity: int | None, memory: str | None,
                     dry_run: bool, propagate: bool) -> dict:
    if arity is not None and (type(arity) is not int or arity < 0):
        raise InvalidArguments("'arity' must be a non-negative integer", argument="arity")
    if dry_run:
        with kb.store.read() as conn:  # a read transaction: nothing can be written
            plan = plan_rename(kb, conn, old_functor, new_functor, arity, memory, propagate)
        return _report(plan, dry_run=True)
    with kb.store.write() as conn:
        plan = plan_rename(kb, conn, old_functor, new_functor, arity, memory, propagate)
        _apply(kb, conn, plan)
        report = _report(plan, dry_run=False)
        record_audit(conn, kb.actor, "rename_predicate", plan.segment.name, report)
    return report


def _apply(kb, conn, plan: RenamePlan) -> None:
    for fact_id, text, moving in plan.fact_updates:
        old_text, args, created_at = conn.execute("SELECT text, args, created_at FROM facts WHERE id = ?",
                                                  (fact_id,)).fetchone()
        staying = conn.execute("SELECT count(*) FROM supports WHERE fact_id = ?", (fact_id,)).fetchone()[0] - len(moving)
        target = conn.execute("SELECT id FROM facts WHERE segment_id = ? AND text = ?",
                              (plan.segment.id, text)).fetchone()
        if target is None and not staying:
            conn.execute("UPDATE facts SET functor = ?, text = ? WHERE id = ?", (plan.new, text, fact_id))
        else:
            # The row is shared with supports the caller cannot see (or the new text's row exists, held only by
            # such supports): the caller's supports move to the renamed fact, the others keep the old one.
            if target is None:
                conn.execute("INSERT INTO facts (segment_id, functor, arity, text, args, created_at) "
                             "VALUES (?, ?, ?, ?, ?, ?)", (plan.segment.id, plan.new, plan.arity, text, args, created_at))
                target = (conn.last_insert_rowid(),)
            conn.execute("UPDATE supports SET fact_id = ? WHERE id IN (SELECT value FROM json_each(?))",
                         (target[0], json.dumps(moving)))
            release(conn, fact_id)
        # A fact projected from source memories: their projections follow it, so recall finds the new name.
        conn.execute("UPDATE memory_projections SET predicate = ?, fact = ? WHERE fact = ? AND memory_id IN "
                     "(SELECT ref FROM supports WHERE kind = 'source' AND id IN (SELECT value FROM json_each(?)))",
                     (plan.new, text, old_text, json.dumps(moving)))
    touched = set()
    for segment_id, changes in plan.rule_updates.items():
        for rule_id, text, head in changes:
            name = head if type(head) is str else head.functor
            duplicate = conn.execute("SELECT id FROM rules WHERE segment_id = ? AND text = ? AND id != ?",
                                     (segment_id, text, rule_id)).fetchone()
            if duplicate:  # the rewritten rule already exists: keep one copy
                conn.execute("DELETE FROM rules WHERE id = ?", (rule_id,))
            else:
                conn.execute("UPDATE rules SET text = ?, head_functor = ? WHERE id = ?", (text, name, rule_id))
        touched.add(segment_id)
    touched.add(plan.segment.id)
    for segment_id in touched:
        conn.execute("UPDATE segments SET generation = generation + 1 WHERE id = ?", (segment_id,))
        # The renamed program must still be safe and stratified (it is, unless names collide).
        program = Program()
        normalizer = Normalizer(program)
        for rule_id, text in conn.execute("SELECT id, text FROM rules WHERE segment_id = ? ORDER BY id", (segment_id,)):
            normalizer.add_clause(parse_term(text), text, rule_id)
        analyze(program)


def _report(plan: RenamePlan, dry_run: bool) -> dict:
    return {
        "renamed_facts": len(plan.fact_updates),
        "rewritten_rule_bodies": len(plan.rewritten_bodies),
        "affected_rule_ids": plan.rewritten_bodies,
        "cross_memory_impact": {"rewritten": plan.rewritten, "warnings": plan.warnings,
                                "skipped_readonly": plan.skipped_readonly},
        "is_error": False,
        "renamed_rule_heads": plan.renamed_rule_heads,
        "old_functor": plan.old,
        "new_functor": plan.new,
        "arity": plan.arity,
        "memory": plan.segment.name,
        "dry_run": dry_run,
    }
