"""Refactoring: where a predicate is used, and renaming it everywhere in one transaction.

Rules are rewritten on their syntax trees (aware of arity and of `seg:` qualifiers),
never by text substitution, so `status` never touches `task_status` or an atom `status`."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..datalog import Normalizer, Program, analyze
from ..datalog.program import BUILTIN_OPS, reserved_message, reserved_reason
from ..errors import Conflict, InvalidArguments, NotFound, ReadOnly
from ..store.repository import Transaction, Visibility
from ..terms import Compound, Term, format_term, parse_term
from ..terms.operators import ALL_OPERATORS, INFIX, PREFIX
from ..validation import is_name
from .goals import GoalRef, goals, rewrite
from .parsing import parse_name
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


def _parsed(rows: list[tuple[int, str]]) -> list[StoredRule]:
    out = []
    for rule_id, text in rows:
        clause = parse_term(text)
        out.append(StoredRule(rule_id, text, clause.args[0], clause.args[1]))  # type: ignore[union-attr]
    return out


def _rules(tx: Transaction, segment_id: int) -> list[StoredRule]:
    return _parsed(tx.rules.texts(segment_id))


def _segment_rules(kb, tx: Transaction, segment: Segment) -> list[StoredRule]:
    """A segment's rules, read from the global database when it is a mounted global segment."""
    if segment.scope == "global" and kb.global_source is not None:
        return _parsed(kb.global_source().rules_of(segment.name))
    return _rules(tx, segment.id)


def _matches(ref: GoalRef, name: str, arity: int | None) -> bool:
    return ref.name == name and (arity is None or ref.arity == arity)


def find_references(kb, functor: str, arity: int | None, memory: str | None, include_cross: bool = True) -> dict:
    name = parse_name(functor, "functor")
    scope_all = memory == ALL
    with kb.repository.read() as tx:
        scope = tx.segments.all_mounted() if scope_all else [resolve(tx, memory)]
        scope_names = {s.name for s in scope}
        rules, cross, assumptions = [], [], []
        facts_count = 0
        for segment in scope:
            for rule in _segment_rules(kb, tx, segment):
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
            facts_count += tx.facts.count(segment.id, kb.visibility(tx), name, arity)
            assumed = tx.supports.facts_with(segment.id, "assumption", functor=name, arity=arity)
            for text, assumption in sorted(assumed, key=lambda pair: (pair[1], pair[0])):
                assumptions.append({"assumption": assumption, "fact": text, "memory": segment.name})
        if include_cross and not scope_all:
            target = scope[0].name
            for other in tx.segments.all_mounted():
                if other.name in scope_names:
                    continue
                for rule in _segment_rules(kb, tx, other):
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


def _arities(tx: Transaction, segment: Segment, name: str, seen: Visibility | None) -> set:
    """The arities a name is used with in a segment, by facts the caller sees and by rules."""
    return _defined_arities(tx, segment, name, seen) | _called_arities(tx, segment, name)


def _defined_arities(tx: Transaction, segment: Segment, name: str, seen: Visibility | None) -> set:
    """The arities of a name's facts the caller sees and of its rules' heads."""
    return tx.facts.arities(segment.id, name, seen) | set(tx.rules.head_arities(segment.id, name))


def _called_arities(tx: Transaction, segment: Segment, name: str) -> set:
    """The arities a segment's rule bodies call a name with."""
    return {ref.arity for rule in _rules(tx, segment.id) for ref in goals(rule.body)
            if ref.name == name and ref.qualifier in (None, segment.name)}


def _validated_name(text: str, argument: str) -> str:
    name = parse_name(text, argument)
    if not is_name(name):
        if name in PROTECTED:
            return name
        raise InvalidArguments(f"'{argument}' must be a plain atom such as task_status (letters, digits, _)",
                               argument=argument)
    return name


def plan_rename(kb, tx: Transaction, old_functor: str, new_functor: str, arity: int | None, memory: str | None,
                propagate: bool) -> RenamePlan:
    old = _validated_name(old_functor, "old_functor")
    new = _validated_name(new_functor, "new_functor")
    segment = resolve(tx, memory)
    if segment.mode == "ro":
        raise ReadOnly(f"Cannot rename in read-only memory: {segment.name}", memory=segment.name, plain=True)
    if old == new:
        raise InvalidArguments("old_functor and new_functor are identical: self-rename is a no-op", plain=True)
    for name in (old, new):
        implied = arity if arity is not None else (2 if name in INFIX else 1 if name in PREFIX else 0)
        # Operators at any arity (the reference's refusal); a control name only where it is one (true/0, not true/1)
        if name in ALL_OPERATORS or name in PROTECTED and reserved_reason(name, implied) is not None:
            raise InvalidArguments(f"Cannot rename ISO operator: {name}/{implied}", plain=True)
    visible = kb.visibility(tx)
    if arity is None:
        found = sorted(_arities(tx, segment, old, visible))
        if len(found) > 1:
            raise InvalidArguments(
                f"Ambiguous arity for {old}; detected arities: {', '.join(map(str, found))}. Specify arity parameter.",
                arities=found, plain=True)
        if not found:
            raise NotFound(f"Predicate not found: {old} in memory '{segment.name}'", memory=segment.name)
        arity = found[0]
    if arity not in _arities(tx, segment, old, visible):
        raise NotFound(f"Predicate not found: {old}/{arity} in memory '{segment.name}'", memory=segment.name)
    reason = reserved_reason(new, arity)
    if reason is not None:  # the renamed facts could never be queried: refused as remember_fact refuses them
        raise InvalidArguments(reserved_message(new, arity, reason), argument="new_functor")
    if arity in _defined_arities(tx, segment, new, visible):
        raise Conflict(f"Cannot rename: {new}/{arity} already exists in memory '{segment.name}'",
                       memory=segment.name, plain=True)
    if arity in _called_arities(tx, segment, new):
        raise Conflict(f"Cannot rename: {new}/{arity} is called by a rule in memory '{segment.name}', though no fact or "
                       f"rule defines it: renamed to it, {old}/{arity} would change what that rule reads; choose "
                       "another name, or rename the call first", memory=segment.name)
    plan = RenamePlan(segment, old, new, arity)
    projected: list[str] = []
    for fact_id, _, args in tx.facts.rows(segment.id, old, arity, visible):
        supports = tx.supports.rows(fact_id, visible)
        projected += [ref for _, kind, ref in supports if kind == "source"]
        plan.fact_updates.append((fact_id, format_term(Compound(new, args) if args else new), [i for i, _, _ in supports]))
    # Projections the caller sees follow the rename, so it must be allowed to rewrite their memories: otherwise
    # the rename is refused (they are visible, so refusing reveals nothing). Projections it cannot see are
    # left exactly as they are: their facts keep the old name.
    if projected and kb.projection_guard is not None:
        kb.projection_guard(tx, projected, f"Renaming {old}/{arity}")

    def local(ref: GoalRef) -> str | None:
        return new if ref.name == old and ref.arity == arity and ref.qualifier in (None, segment.name) else None

    def remote(ref: GoalRef) -> str | None:
        return new if ref.name == old and ref.arity == arity and ref.qualifier == segment.name else None

    updates = plan.rule_updates.setdefault(segment.id, [])
    for rule in _rules(tx, segment.id):
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
    for other in tx.segments.all_mounted():
        if other.id == segment.id:
            continue
        changes = []
        refs = 0
        for rule in _segment_rules(kb, tx, other):
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
        with kb.repository.read() as tx:  # a read transaction: nothing can be written
            plan = plan_rename(kb, tx, old_functor, new_functor, arity, memory, propagate)
        return _report(plan, dry_run=True)
    with kb.repository.write() as tx:
        plan = plan_rename(kb, tx, old_functor, new_functor, arity, memory, propagate)
        _apply(tx, plan)
        report = _report(plan, dry_run=False)
        tx.audit.record(kb.actor, "rename_predicate", plan.segment.name, report)
    return report


def _apply(tx: Transaction, plan: RenamePlan) -> None:
    for fact_id, text, moving in plan.fact_updates:
        old_text = tx.facts.text_of(fact_id)
        staying = tx.supports.count(fact_id) - len(moving)
        target = tx.facts.id_of(plan.segment.id, text)
        if target is None and not staying:
            tx.facts.rename(fact_id, plan.new, text)
        else:
            # The row is shared with supports the caller cannot see (or the new text's row exists, held only by
            # such supports): the caller's supports move to the renamed fact, the others keep the old one.
            if target is None:
                target = tx.facts.copy_renamed(fact_id, plan.new, text)
            tx.supports.move(moving, target)
            tx.facts.release(fact_id)
        # A fact projected from source memories: their projections follow it, so recall finds the new name.
        tx.supports.follow_rename(moving, old_text, text, plan.new)
    touched = set()
    for segment_id, changes in plan.rule_updates.items():
        for rule_id, text, head in changes:
            name = head if type(head) is str else head.functor
            if tx.rules.duplicate_of(segment_id, text, rule_id) is not None:  # it already exists: keep one copy
                tx.rules.delete(rule_id)
            else:
                tx.rules.rewrite(rule_id, text, name)
        touched.add(segment_id)
    touched.add(plan.segment.id)
    for segment_id in touched:
        tx.segments.bump_generation(segment_id)
        # The renamed program must still be safe and stratified (it is, unless names collide).
        program = Program()
        normalizer = Normalizer(program)
        for rule_id, text in tx.rules.texts(segment_id):
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
