"""Knowledge tools: facts, rules, queries, proofs, listings and materialization."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..api import Memory
from ..knowledge import proof_view
from ..access.context import ADMIN, READ, WRITE_KNOWLEDGE
from .models import OutputPart, SegmentInput, Rows, Segment, Strings, ToolInput, ToolOutput, about, int_field, name_field, shaped, text_field
from .registry import Annotations, Reply, tool
from .json_text import compact_json
from .notes import page_line, warning_lines, with_notes

MAX_LIMIT = 10_000
MAX_OFFSET = 2 ** 62  # SQLite integers are 64-bit
DEFAULT_QUERY_LIMIT = 1_000  # bounded by default; total and truncated say what was left out


class ProofNode(OutputPart):
    """One node of explain_why's flat proof_nodes list."""

    goal: str
    rule_applied: str
    kind: str
    children: list[int]
    supports: Strings | None = None
    truncated: bool | None = None
    rule_id: int | None = None
    memory: str | None = None
    memories: Rows | None = None


class FactInput(ToolInput):
    fact: Annotated[str, text_field('A ground fact, e.g. "human(socrates)"')]
    memory: Segment | None = None


class RememberFactOutput(ToolOutput):
    fact: str
    memory: str
    created: bool
    supports: Strings


@tool(
    "remember_fact",
    title="Remember fact",
    group="knowledge",
    description=(
        "Store a ground fact such as depends_on(api, db) (a stable truth; for exact text use memory_remember, for "
        "a time-stamped event remember). Storing it again changes nothing."
    ),
    details=(
        "Assert a ground Prolog fact, e.g. human(socrates). Facts are stored durably; remembering a fact "
        "that is already believed changes nothing but adds the 'asserted' support if it was missing."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def remember_fact(api: Memory, args: FactInput) -> Reply[RememberFactOutput]:
    change = api.knowledge.remember_fact(args.fact, args.memory)
    text = f"Asserted: {change.fact}"  # as stored: no end dot or comment the input had
    if not change.added:
        text += " (already stored: nothing changed)"
    return Reply(text, RememberFactOutput(
        fact=change.fact, memory=change.memory, created=change.created, supports=change.supports))


class DefineRuleInput(ToolInput):
    head: Annotated[str, text_field('e.g. "mortal(X)"')]
    body: Annotated[str, text_field('e.g. "human(X), \\+ god(X)"')]
    memory: Segment | None = None
    name: Annotated[str, name_field("An id, unique in the segment")] | None = None
    confidence: Annotated[float, Field(gt=0, le=1, description="In (0, 1], for reason (default 1)")] | None = None


class DefineRuleOutput(ToolOutput):
    rule: str
    memory: str
    created: bool
    rule_id: int
    name: str | None = None
    confidence: float
    warnings: Strings | None = None


@tool(
    "define_rule",
    title="Define rule",
    group="knowledge",
    description=(
        "Add a Datalog rule Head :- Body (Prolog syntax: , ; \\+ comparisons, X is Expr, aggregate_all). Refused, "
        "with the reason, unless every head variable is bound by a positive literal and negation does not go "
        "through recursion."
    ),
    details=(
        "Add a Datalog rule Head :- Body. Head and body are parsed separately and the whole program is "
        "checked before anything is stored: every head variable must be bound by a positive body literal, "
        "and negation or aggregation may not go through recursion."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def define_rule(api: Memory, args: DefineRuleInput) -> Reply[DefineRuleOutput]:
    change = api.knowledge.define_rule(args.head, args.body, args.memory, args.name, args.confidence)
    text = with_notes(f"Asserted rule: {args.head.strip()} :- {args.body.strip()}",
                      [f"% rule_id {change.rule_id}" + (f", name {change.name}" if change.name else "")
                       + ("" if change.created else " (already defined)"), *warning_lines(change.warnings)])
    return Reply(text, DefineRuleOutput(
        rule=change.rule, memory=change.memory, created=change.created, rule_id=change.rule_id,
        name=change.name, confidence=change.confidence, warnings=change.warnings or None))


class ForgetRuleInput(ToolInput):
    rule: Annotated[str, text_field('Head :- Body, e.g. "mortal(X) :- human(X)"')] | None = None
    rule_id: Annotated[int, int_field("Its id (from define_rule or list_rules)", 1)] | None = None
    name: Annotated[str, name_field("Its name")] | None = None
    memory: Segment | None = None


class ForgetRuleOutput(ToolOutput):
    rule: str
    rule_id: int
    memory: str
    name: str | None = None
    head: str
    withdrawn: Strings
    withdrawn_total: int | None = None
    withdrawn_note: str | None = None


@tool(
    "forget_rule",
    title="Forget rule",
    group="knowledge",
    description=(
        "Remove a rule, named by its text, rule_id or name (exactly one). The reply lists the conclusions that "
        "stopped holding. To replace a rule, forget it, then define_rule the new one."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
    evaluates=True,  # the conclusions resting on the rule are evaluated before and after, to say which fell
)
def forget_rule(api: Memory, args: ForgetRuleInput) -> Reply[ForgetRuleOutput]:
    removal = api.knowledge.forget_rule(args.memory, rule=args.rule, rule_id=args.rule_id, name=args.name)
    return Reply(f"Forgot rule {removal.rule_id}: {removal.rule}\n{removal.withdrawn.text()}", ForgetRuleOutput(
        rule=removal.rule, rule_id=removal.rule_id, memory=removal.memory, name=removal.name, head=removal.head,
        **removal.withdrawn.to_dict()))


class ForgetFactInput(ToolInput):
    fact: Annotated[str, text_field('The fact, e.g. "human(socrates)"')]
    memory: Segment | None = None


class ForgetFactOutput(ToolOutput):
    fact: str
    memory: str
    removed: bool
    remaining_supports: Strings


@tool(
    "forget_fact",
    title="Forget fact",
    group="knowledge",
    description=(
        "Withdraw a fact you asserted. It stays believed while an assumption or a source memory still supports it "
        "(the reply says which); conclusions resting on it stop holding."
    ),
    details=(
        "Remove the 'asserted' support of a fact. The fact goes when no support is left; a fact also "
        "supported by an assumption or a source memory stays believed, and the result says why."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def forget_fact(api: Memory, args: ForgetFactInput) -> Reply[ForgetFactOutput]:
    change = api.knowledge.forget_fact(args.fact, args.memory)
    message = f"Retracted: {change.fact}"
    if not change.removed:
        message += f" (still believed: supported by {', '.join(change.supports)})"
    return Reply(message, ForgetFactOutput(fact=change.fact, memory=change.memory, removed=change.removed,
                                           remaining_supports=change.supports))


class QueryInput(ToolInput):
    goal: Annotated[str, text_field('A goal, e.g. "parent(john, Y), \\+ adult(Y)"')]
    memory: Segment | None = None
    limit: Annotated[int, int_field(f"Default {DEFAULT_QUERY_LIMIT}", 0, MAX_LIMIT)] | None = None
    offset: Annotated[int, int_field("Answers to skip (default 0)", 0, MAX_OFFSET)] | None = None


class QueryOutput(ToolOutput):
    goal: str
    memory: str
    variables: Strings
    bindings: Rows
    values: Rows
    total: int
    truncated: bool
    limit: int | None = None
    offset: int
    warnings: Strings | None = None


@tool(
    "query_logic",
    title="Query",
    group="knowledge",
    description=(
        "Answer a goal (any rule body) from facts and rules: the bindings as JSON, [{}] when it holds without "
        "variables, [] when it does not. At most limit answers (default 1,000); the text says when it was cut and "
        "warns of unknown predicates."
    ),
    details=(
        "Evaluate a goal (any rule body: conjunction, disjunction, negation, comparisons, arithmetic, "
        "aggregate_all) and return all variable bindings as JSON, in the standard order of terms. "
        "[{}] means the goal holds with no variables; [] means no solutions. At most limit solutions "
        f"(default {DEFAULT_QUERY_LIMIT}) are returned; use limit/offset to page: the structured result "
        "always says the total and whether the page was cut."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def query_logic(api: Memory, args: QueryInput) -> Reply[QueryOutput]:
    limit = DEFAULT_QUERY_LIMIT if args.limit is None else args.limit
    result = api.knowledge.query_logic(args.goal, args.memory, limit, args.offset or 0)
    text_rows = [
        {name: (value if isinstance(value, (int, float)) and not isinstance(value, bool) else binding[name])
         for name, value in typed.items()}
        for binding, typed in zip(result.bindings, result.values)
    ]
    text = with_notes(compact_json(text_rows), [*warning_lines(result.warnings),
                                                 page_line(len(text_rows), result.total, result.offset)])
    return Reply(text, QueryOutput(
        goal=result.goal, memory=result.memory, variables=result.variables, bindings=result.bindings,
        values=result.values, total=result.total, truncated=result.truncated, limit=result.limit,
        offset=result.offset, warnings=result.warnings or None))


class ExplainInput(ToolInput):
    fact: Annotated[str, text_field('A ground fact, e.g. "risky(deploy_v3)"')]
    max_depth: Annotated[int, int_field("Cut the proof below this depth", 1, 100_000)] | None = None
    memory: Segment | None = None
    record_proof: Annotated[bool, about("Also write it to the derived and proof_edges tables")] | None = None


class ExplainOutput(ToolOutput):
    fact: str
    memory: str
    proven: bool
    proof_nodes: list[Annotated[dict[str, Any], shaped(ProofNode)]] | None = None
    warnings: Strings | None = None
    recorded: dict[str, Any] | None = None


@tool(
    "explain_why",
    title="Explain why",
    group="knowledge",
    description=(
        "The proof of a ground fact: each step, the rule used and, at the leaves, the stored facts with their "
        "supports (asserted, assumption:<name>, source:<memory id>). proven is false when no proof exists."
    ),
    details=(
        "Return the proof tree of a ground fact: each node has goal, rule_applied (\"fact\" for stored "
        "facts, the rule text for derived ones, or builtin/negation/aggregate) and children. Proofs end "
        "in stored facts and are finite even for recursive rules. proven is false when no proof exists. "
        "Each stored fact's leaf also names its supports (asserted, assumption:<name>, source:<memory id>, "
        "observation supports). The structured result has proof_nodes: the same proof as a flat list (root "
        "first, children as indexes into the list, so a proof of any depth stays shallow JSON) with each "
        "node's kind, the rule id and supports; a fact projected from a source memory also lists that "
        "memory with its exact text under memories. "
        "With record_proof, the proof's conclusions and their premises are also written to the SQLite tables "
        "`derived` and `proof_edges` (as materialize writes them for every conclusion), and recorded says what "
        "was written; a proof cut by max_depth records only its whole sub-proofs (recorded.complete is false)."
    ),
    capability=READ,
    argument_capabilities={"record_proof": {True: ADMIN}},  # recording writes, as materialize does
    # not read-only: with record_proof it writes (derived, proof_edges and an audit row); without, it reads
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
    evaluates=True,
)
def explain_why(api: Memory, args: ExplainInput) -> Reply[ExplainOutput]:
    result = api.knowledge.explain_why(args.fact, args.max_depth, args.memory, bool(args.record_proof))
    tree = None if result.proof is None else proof_view.text_tree(result.proof)
    text = with_notes(compact_json({"fact": result.fact, "proven": result.proven, "proof_tree": tree}),
                      warning_lines(result.warnings))
    nodes = None if result.proof is None else proof_view.flat(result.proof)
    return Reply(text, ExplainOutput(fact=result.fact, memory=result.memory, proven=result.proven, proof_nodes=nodes,
                                     warnings=result.warnings or None, recorded=result.recorded))


class PageOutput(ToolOutput):
    items: Rows
    total: int
    limit: int
    offset: int
    truncated: bool


def _page(page: Any, key: str) -> Reply[PageOutput]:
    lines = [item[key] + "." for item in page.items]
    if page.truncated:
        lines.append(f"% {page.total - page.offset - len(page.items)} more (total {page.total}); next page: "
                     f"offset {page.offset + len(page.items)}")
    return Reply("\n".join(lines), PageOutput(items=page.items, total=page.total, limit=page.limit,
                                              offset=page.offset, truncated=page.truncated))


class ListFactsInput(ToolInput):
    memory: Segment | None = None
    functor: Annotated[str, text_field("Only facts of this predicate name", 1024)] | None = None
    arity: Annotated[int, int_field("Only facts of this arity (with functor)", 0, 1024)] | None = None
    limit: Annotated[int, int_field("Page size (default 100)", 0, MAX_LIMIT)] | None = None
    offset: Annotated[int, int_field("Facts to skip (default 0)", 0, MAX_OFFSET)] | None = None


@tool(
    "list_facts",
    title="List facts",
    group="knowledge",
    description="List stored facts (of one predicate with functor and arity), sorted, paged, each with its supports.",
    details="List stored facts (optionally of one predicate) with their supports, sorted, with paging.",
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_facts(api: Memory, args: ListFactsInput) -> Reply[PageOutput]:
    return _page(api.knowledge.list_facts(args.memory, args.functor, args.arity, args.limit, args.offset or 0), "fact")


class ListRulesInput(ToolInput):
    memory: Segment | None = None
    limit: Annotated[int, int_field("Page size (default 100)", 0, MAX_LIMIT)] | None = None
    offset: Annotated[int, int_field("Rules to skip (default 0)", 0, MAX_OFFSET)] | None = None


@tool(
    "list_rules",
    title="List rules",
    group="knowledge",
    description="List the rules in definition order, paged, with their ids and names (forget_rule takes either).",
    details="List stored rules in the order they were defined, with their ids, with paging.",
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_rules(api: Memory, args: ListRulesInput) -> Reply[PageOutput]:
    return _page(api.knowledge.list_rules(args.memory, args.limit, args.offset or 0), "rule")


class MaterializeOutput(ToolOutput):
    memory: str
    generation: int
    tuples: int
    seconds: float
    proof_edges: int


@tool(
    "materialize",
    title="Materialize conclusions",
    group="knowledge",
    description=(
        "Write every conclusion of a segment, with the rule and premises that first derived it, to the SQLite "
        "tables derived and proof_edges, for readers using sqlite3."
    ),
    details=(
        "Evaluate every rule of a memory segment and write the derived facts, each with the rule that first "
        "derived it, into the SQLite table `derived`, and the premises of that derivation into `proof_edges`, "
        "stamped with the current generation of the inputs. The view `current_derived` shows only rows that "
        "are still current; `proof_steps` shows the proof edges in words."
    ),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
    evaluates=True,
)
def materialize(api: Memory, args: SegmentInput) -> Reply[MaterializeOutput]:
    result = api.knowledge.materialize(args.memory)
    return Reply(
        f"Materialized {result.tuples} conclusion(s) in memory '{result.memory}' at generation {result.generation}.",
        MaterializeOutput(memory=result.memory, generation=result.generation, tuples=result.tuples,
                          seconds=result.seconds, proof_edges=result.proof_edges))


class EditOutput(ToolOutput):
    """What a bulk or replacing edit removed, and what stayed believed through other supports."""

    memory: str
    removed: Strings
    kept: Strings
    removed_count: int


def _edit(result: Any) -> dict[str, Any]:
    return {"memory": result.memory, "removed": result.removed, "kept": result.kept,
            "removed_count": len(result.removed)}


def _kept_note(result: Any) -> str:
    return f"; still believed through other supports: {', '.join(result.kept)}" if result.kept else ""


class ClearContextInput(ToolInput):
    category: Annotated[str, text_field('A pattern to match facts for bulk deletion (e.g. "project(beta, _)", '
                                        '"role(_, _)")')]
    memory: Segment | None = None


class ClearContextOutput(ToolOutput):
    pattern: str
    memory: str
    removed: Strings
    kept: Strings
    removed_count: int


@tool(
    "clear_context",
    title="Clear matching facts",
    group="knowledge",
    description=(
        "Withdraw every asserted fact matching a pattern such as project(beta, _) (variables match anything). "
        "Facts also supported otherwise stay believed."
    ),
    details=(
        "Remove every fact matching a pattern with wildcards, e.g. project(beta, _) (variables match anything; "
        "a repeated variable must match equal values). Succeeds when nothing matches. Like forget_fact it "
        "removes the 'asserted' support: facts also supported by an assumption or a source stay believed."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def clear_context(api: Memory, args: ClearContextInput) -> Reply[ClearContextOutput]:
    result = api.knowledge.clear_context(args.category, args.memory)
    pattern = args.category.strip()
    text = f"Cleared all facts matching: {pattern} ({len(result.removed)} fact(s) removed{_kept_note(result)})"
    return Reply(text, ClearContextOutput(pattern=pattern, **_edit(result)))


class UpdateFactInput(ToolInput):
    old_fact: Annotated[str, text_field('The fact to replace (e.g. "server(alpha, \\"1.0\\")")')]
    new_fact: Annotated[str, text_field('The replacement fact (e.g. "server(alpha, \\"2.0\\")")')]
    memory: Segment | None = None


class UpdateFactOutput(ToolOutput):
    old_fact: str
    new_fact: str
    memory: str
    removed: Strings
    kept: Strings
    removed_count: int


@tool(
    "update_fact",
    title="Update fact",
    group="knowledge",
    description=(
        "Replace one stored fact with another in one transaction (the old fact's asserted support goes). Fails, "
        "changing nothing, when old_fact is not stored."
    ),
    details=(
        "Atomically replace a stored fact with another in one transaction: like forget_fact, it removes the "
        "old fact's asserted support (a fact also believed through an assumption or a source memory stays "
        "believed and is listed under kept), then asserts the new one. Fails, changing nothing, when "
        "old_fact is not stored."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
)
def update_fact(api: Memory, args: UpdateFactInput) -> Reply[UpdateFactOutput]:
    result = api.knowledge.update_fact(args.old_fact, args.new_fact, args.memory)
    assert result.added is not None  # an update always asserts its new fact
    return Reply(f"Updated: {args.old_fact.strip()} -> {args.new_fact.strip()}{_kept_note(result)}",
                 UpdateFactOutput(old_fact=args.old_fact.strip(), new_fact=result.added, **_edit(result)))


class UpsertFactInput(ToolInput):
    fact: Annotated[str, text_field('The fact to upsert (e.g. "deploy(prod, v2)")')]
    memory: Segment | None = None


class UpsertFactOutput(ToolOutput):
    fact: str
    created: bool
    memory: str
    removed: Strings
    kept: Strings
    removed_count: int


@tool(
    "upsert_fact",
    title="Upsert fact",
    group="knowledge",
    description=(
        "Assert a fact and withdraw the asserted facts with the same predicate and first argument: for state such "
        "as status(task1, done)."
    ),
    details=(
        "Assert a fact and remove the asserted facts with the same predicate and the same first argument "
        "(the key is read from the parsed term, so lists, strings and nested terms are handled). "
        "Use it for mutable state such as status(task1, done)."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def upsert_fact(api: Memory, args: UpsertFactInput) -> Reply[UpsertFactOutput]:
    result = api.knowledge.upsert_fact(args.fact, args.memory)
    assert result.added is not None  # an upsert always asserts its fact
    return Reply(f"Upserted: {args.fact.strip()}",
                 UpsertFactOutput(fact=result.added, created=result.created, **_edit(result)))


class TraceInput(ToolInput):
    start_node: Annotated[str, text_field('The starting node (e.g. "a", "module_a")', 4096)]
    memory: Segment | None = None


class TraceOutput(ToolOutput):
    start_node: str
    memory: str
    nodes: list[Any]
    total: int


@tool(
    "trace_dependency",
    title="Trace dependencies",
    group="knowledge",
    description=(
        "Every X with path(start_node, X), in standard order (define path/2 first). For the reverse, query_logic "
        "path(Y, X)."
    ),
    details=(
        "List every node reachable from start_node through path/2, i.e. all X with path(start_node, X), "
        "in standard order. Cycles are fine. Define path/2 first, for example "
        "path(X, Y) :- depends_on(X, Y). path(X, Z) :- depends_on(X, Y), path(Y, Z)."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def trace_dependency(api: Memory, args: TraceInput) -> Reply[TraceOutput]:
    result = api.knowledge.trace_dependency(args.start_node, args.memory)
    return Reply(compact_json(result["nodes"]), TraceOutput.model_validate(result))


class ConsistencyInput(ToolInput):
    scope: Annotated[str, text_field('Optional domain scope (e.g. "deployment" checks '
                                     'integrity_violation_deployment/N)', 128)] | None = None
    memory: Segment | None = None


class ConsistencyOutput(ToolOutput):
    violations: list[Any]
    memory: str
    checked: Strings
    details: Rows
    total: int


@tool(
    "verify_consistency",
    title="Verify consistency",
    group="knowledge",
    description="Every solution of the integrity_violation/N rules you defined (or integrity_violation_<scope>/N).",
    details=(
        "Return every solution of integrity_violation/N for every arity N defined (or of "
        "integrity_violation_<scope>/N with scope). Arity-1 violations are reported as their value, "
        "others as the whole violation term."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def verify_consistency(api: Memory, args: ConsistencyInput) -> Reply[ConsistencyOutput]:
    result = api.knowledge.verify_consistency(args.scope, args.memory)
    return Reply(compact_json({"violations": result["violations"]}), ConsistencyOutput.model_validate(result))
