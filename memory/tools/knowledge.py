"""Knowledge tools: facts, rules, queries, proofs, listings and materialization."""

from __future__ import annotations

from ..sources.context import ADMIN, READ, WRITE_KNOWLEDGE
from ..datalog.proofs import flatten_tree, map_tree
from .registry import Annotations, ToolResult, tool
from .schemas import compact_json, name_arg, BOOLEAN, INTEGER, OBJECT, ROWS, STRING, STRINGS, integer, memory_arg, obj, out, text

MAX_LIMIT = 10_000
MAX_OFFSET = 2 ** 62  # SQLite integers are 64-bit
DEFAULT_QUERY_LIMIT = 1_000  # bounded by default; total and truncated say what was left out
# One node of explain_why's flat proof_nodes list.
PROOF_NODE = {"type": "object", "required": ["goal", "rule_applied", "kind", "children"], "properties": {
    "goal": STRING, "rule_applied": STRING, "kind": STRING, "children": {"type": "array", "items": INTEGER},
    "supports": STRINGS, "truncated": BOOLEAN, "rule_id": INTEGER, "memory": STRING, "memories": ROWS}}


@tool(
    "remember_fact",
    title="Remember fact",
    group="knowledge",
    description=(
        "Assert a ground Prolog fact, e.g. human(socrates). Facts are stored durably; remembering a fact "
        "that is already believed changes nothing but adds the 'asserted' support if it was missing."
    ),
    input_schema=obj({"fact": text('A Prolog fact to assert (e.g. "human(socrates)")'), "memory": memory_arg()},
                     ["fact"]),
    output_schema=out({"fact": STRING, "memory": STRING, "created": BOOLEAN, "supports": STRINGS}),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def remember_fact(api, fact: str, **kw) -> ToolResult:
    change = api.remember_fact(fact, kw.get("memory"))
    return ToolResult(f"Asserted: {fact.strip()}", {
        "fact": change.fact, "memory": change.memory, "created": change.created, "supports": change.supports,
    })


@tool(
    "define_rule",
    title="Define rule",
    group="knowledge",
    description=(
        "Add a Datalog rule Head :- Body. Head and body are parsed separately and the whole program is "
        "checked before anything is stored: every head variable must be bound by a positive body literal, "
        "and negation or aggregation may not go through recursion."
    ),
    input_schema=obj({
        "head": text('The rule head (e.g. "mortal(X)")'),
        "body": text('The rule body (e.g. "human(X)")'),
        "memory": memory_arg(),
        "name": name_arg("Optional rule id, unique in the segment (reason reports rule:<name>)"),
        "confidence": {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                       "description": "Confidence in (0, 1] that reason multiplies in (default 1)"},
    }, ["head", "body"]),
    output_schema=out({"rule": STRING, "memory": STRING, "created": BOOLEAN, "rule_id": INTEGER,
                       "name": STRING, "confidence": {"type": "number"}, "warnings": STRINGS},
                      optional=("name", "warnings")),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def define_rule(api, head: str, body: str, **kw) -> ToolResult:
    change = api.define_rule(head, body, kw.get("memory"), kw.get("name"), kw.get("confidence"))
    return ToolResult(f"Asserted rule: {head.strip()} :- {body.strip()}", {
        "rule": change.rule, "memory": change.memory, "created": change.created, "rule_id": change.rule_id,
        "name": change.name, "confidence": change.confidence, "warnings": change.warnings or None,
    })


@tool(
    "forget_fact",
    title="Forget fact",
    group="knowledge",
    description=(
        "Remove the 'asserted' support of a fact. The fact goes when no support is left; a fact also "
        "supported by an assumption or a source memory stays believed, and the result says why."
    ),
    input_schema=obj({"fact": text('The fact to forget (e.g. "human(socrates)")'), "memory": memory_arg()}, ["fact"]),
    output_schema=out({"fact": STRING, "memory": STRING, "removed": BOOLEAN, "remaining_supports": STRINGS}),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def forget_fact(api, fact: str, **kw) -> ToolResult:
    change = api.forget_fact(fact, kw.get("memory"))
    message = f"Retracted: {fact.strip()}"
    if not change.removed:
        message += f" (still believed: supported by {', '.join(change.supports)})"
    return ToolResult(message, {
        "fact": change.fact, "memory": change.memory, "removed": change.removed, "remaining_supports": change.supports,
    })




@tool(
    "query_logic",
    title="Query",
    group="knowledge",
    description=(
        "Evaluate a goal (any rule body: conjunction, disjunction, negation, comparisons, arithmetic, "
        "aggregate_all) and return all variable bindings as JSON, in the standard order of terms. "
        "[{}] means the goal holds with no variables; [] means no solutions. At most limit solutions "
        f"(default {DEFAULT_QUERY_LIMIT}) are returned; use limit/offset to page: the structured result "
        "always says the total and whether the page was cut."
    ),
    input_schema=obj({
        "goal": text('A goal to query (e.g. "fruit(X)", "parent(john, Y)")'),
        "memory": memory_arg(),
        "limit": integer(f"Maximum number of solutions to return (default {DEFAULT_QUERY_LIMIT})", 0, MAX_LIMIT),
        "offset": integer("Solutions to skip, for paging (default 0)", 0, MAX_OFFSET),
    }, ["goal"]),
    output_schema=out({
        "goal": STRING, "memory": STRING, "variables": STRINGS, "bindings": ROWS, "values": ROWS,
        "total": INTEGER, "truncated": BOOLEAN, "limit": INTEGER, "offset": INTEGER, "warnings": STRINGS,
    }, optional=("limit", "warnings")),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def query_logic(api, goal: str, **kw) -> ToolResult:
    result = api.query_logic(goal, kw.get("memory"), kw.get("limit", DEFAULT_QUERY_LIMIT), kw.get("offset", 0))
    text_rows = [
        {name: (value if isinstance(value, (int, float)) and not isinstance(value, bool) else binding[name])
         for name, value in typed.items()}
        for binding, typed in zip(result.bindings, result.values)
    ]
    return ToolResult(compact_json(text_rows), {
        "goal": result.goal, "memory": result.memory, "variables": result.variables, "bindings": result.bindings,
        "values": result.values, "total": result.total, "truncated": result.truncated,
        "limit": result.limit, "offset": result.offset, "warnings": result.warnings or None,
    })


@tool(
    "explain_why",
    title="Explain why",
    group="knowledge",
    description=(
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
    input_schema=obj({
        "fact": text('The Prolog term to explain (e.g. "risky(deploy_v3)")'),
        "max_depth": integer("Optional maximum proof tree depth (truncates deeper levels)", 1, 100_000),
        "memory": memory_arg(),
        "record_proof": {"type": "boolean", "description": "Also write the proof to the derived and proof_edges "
                                                             "tables for sqlite3 readers (default: false)"},
    }, ["fact"]),
    output_schema=out({"fact": STRING, "memory": STRING, "proven": BOOLEAN,
                       "proof_nodes": {"type": "array", "items": PROOF_NODE}, "warnings": STRINGS,
                       "recorded": OBJECT},
                      optional=("proof_nodes", "warnings", "recorded")),
    capability=READ,
    argument_capabilities={"record_proof": {True: ADMIN}},  # recording writes, as materialize does
    # not read-only: with record_proof it writes (derived, proof_edges and an audit row); without, it reads
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
    evaluates=True,
)
def explain_why(api, fact: str, **kw) -> ToolResult:
    result = api.explain_why(fact, kw.get("max_depth"), kw.get("memory"), kw.get("record_proof", False))
    tree = None if result.detailed_tree is None else map_tree(result.detailed_tree, _text_node, lambda n: n["children"])
    text = compact_json({"fact": result.fact, "proven": result.proven, "proof_tree": tree})
    nodes = None if result.detailed_tree is None else flatten_tree(result.detailed_tree)
    return ToolResult(text, {"fact": result.fact, "memory": result.memory, "proven": result.proven,
                             "proof_nodes": nodes, "warnings": result.warnings or None, "recorded": result.recorded})


def _text_node(node: dict) -> dict:
    """The reference's node (goal, rule_applied, children), plus the supports of a stored fact: the text is what
    most hosts show the model, so it must say what each leaf rests on."""
    out = {"goal": node["goal"], "rule_applied": node["rule_applied"], "children": []}
    if node.get("truncated"):
        out["truncated"] = True
    if "supports" in node:
        out["supports"] = node["supports"]
    return out



def _page(page) -> dict:
    return {"items": page.items, "total": page.total, "limit": page.limit, "offset": page.offset,
            "truncated": page.truncated}


PAGE_SCHEMA = {"items": ROWS, "total": INTEGER, "limit": INTEGER, "offset": INTEGER, "truncated": BOOLEAN}


@tool(
    "list_facts",
    title="List facts",
    group="knowledge",
    description="List stored facts (optionally of one predicate) with their supports, sorted, with paging.",
    input_schema=obj({
        "memory": memory_arg(),
        "functor": text("Only facts of this predicate name", 1024),
        "arity": integer("Only facts of this arity (with functor)", 0, 1024),
        "limit": integer("Page size (default 100)", 0, MAX_LIMIT),
        "offset": integer("Facts to skip (default 0)", 0, MAX_OFFSET),
    }),
    output_schema=out(PAGE_SCHEMA),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_facts(api, **kw) -> ToolResult:
    page = api.list_facts(kw.get("memory"), kw.get("functor"), kw.get("arity"), kw.get("limit"), kw.get("offset", 0))
    lines = [item["fact"] + "." for item in page.items]
    if page.truncated:
        lines.append(f"% {page.total - page.offset - len(page.items)} more (total {page.total})")
    return ToolResult("\n".join(lines), _page(page))


@tool(
    "list_rules",
    title="List rules",
    group="knowledge",
    description="List stored rules in the order they were defined, with their ids, with paging.",
    input_schema=obj({
        "memory": memory_arg(),
        "limit": integer("Page size (default 100)", 0, MAX_LIMIT),
        "offset": integer("Rules to skip (default 0)", 0, MAX_OFFSET),
    }),
    output_schema=out(PAGE_SCHEMA),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_rules(api, **kw) -> ToolResult:
    page = api.list_rules(kw.get("memory"), kw.get("limit"), kw.get("offset", 0))
    lines = [item["rule"] + "." for item in page.items]
    if page.truncated:
        lines.append(f"% {page.total - page.offset - len(page.items)} more (total {page.total})")
    return ToolResult("\n".join(lines), _page(page))


@tool(
    "materialize",
    title="Materialize conclusions",
    group="knowledge",
    description=(
        "Evaluate every rule of a memory segment and write the derived facts, each with the rule that first "
        "derived it, into the SQLite table `derived`, and the premises of that derivation into `proof_edges`, "
        "stamped with the current generation of the inputs. The view `current_derived` shows only rows that "
        "are still current; `proof_steps` shows the proof edges in words."
    ),
    input_schema=obj({"memory": memory_arg()}),
    output_schema=out({"memory": STRING, "generation": INTEGER, "tuples": INTEGER, "seconds": {"type": "number"},
                       "proof_edges": INTEGER}),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
    evaluates=True,
)
def materialize(api, **kw) -> ToolResult:
    result = api.materialize(kw.get("memory"))
    return ToolResult(
        f"Materialized {result.tuples} conclusion(s) in memory '{result.memory}' at generation {result.generation}.",
        {"memory": result.memory, "generation": result.generation, "tuples": result.tuples, "seconds": result.seconds,
         "proof_edges": result.proof_edges},
    )


EDIT_SCHEMA = {"memory": STRING, "removed": STRINGS, "kept": STRINGS, "removed_count": INTEGER}


def _edit(result) -> dict:
    return {"memory": result.memory, "removed": result.removed, "kept": result.kept,
            "removed_count": len(result.removed)}


def _kept_note(result) -> str:
    return f"; still believed through other supports: {', '.join(result.kept)}" if result.kept else ""


@tool(
    "clear_context",
    title="Clear matching facts",
    group="knowledge",
    description=(
        "Remove every fact matching a pattern with wildcards, e.g. project(beta, _) (variables match anything; "
        "a repeated variable must match equal values). Succeeds when nothing matches. Like forget_fact it "
        "removes the 'asserted' support: facts also supported by an assumption or a source stay believed."
    ),
    input_schema=obj({
        "category": text('A pattern to match facts for bulk deletion (e.g. "project(beta, _)", "role(_, _)")'),
        "memory": memory_arg(),
    }, ["category"]),
    output_schema=out({"pattern": STRING, **EDIT_SCHEMA}),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def clear_context(api, category: str, **kw) -> ToolResult:
    result = api.clear_context(category, kw.get("memory"))
    text = f"Cleared all facts matching: {category.strip()} ({len(result.removed)} fact(s) removed{_kept_note(result)})"
    return ToolResult(text, {"pattern": category.strip(), **_edit(result)})


@tool(
    "update_fact",
    title="Update fact",
    group="knowledge",
    description=(
        "Atomically replace a stored fact with another in one transaction: like forget_fact, it removes the "
        "old fact's asserted support (a fact also believed through an assumption or a source memory stays "
        "believed and is listed under kept), then asserts the new one. Fails, changing nothing, when "
        "old_fact is not stored."
    ),
    input_schema=obj({
        "old_fact": text('The fact to replace (e.g. "server(alpha, \\"1.0\\")")'),
        "new_fact": text('The replacement fact (e.g. "server(alpha, \\"2.0\\")")'),
        "memory": memory_arg(),
    }, ["old_fact", "new_fact"]),
    output_schema=out({"old_fact": STRING, "new_fact": STRING, **EDIT_SCHEMA}),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
)
def update_fact(api, old_fact: str, new_fact: str, **kw) -> ToolResult:
    result = api.update_fact(old_fact, new_fact, kw.get("memory"))
    return ToolResult(f"Updated: {old_fact.strip()} -> {new_fact.strip()}{_kept_note(result)}",
                      {"old_fact": old_fact.strip(), "new_fact": result.added, **_edit(result)})


@tool(
    "upsert_fact",
    title="Upsert fact",
    group="knowledge",
    description=(
        "Assert a fact and remove the asserted facts with the same predicate and the same first argument "
        "(the key is read from the parsed term, so lists, strings and nested terms are handled). "
        "Use it for mutable state such as status(task1, done)."
    ),
    input_schema=obj({"fact": text('The fact to upsert (e.g. "deploy(prod, v2)")'), "memory": memory_arg()},
                     ["fact"]),
    output_schema=out({"fact": STRING, "created": BOOLEAN, **EDIT_SCHEMA}),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def upsert_fact(api, fact: str, **kw) -> ToolResult:
    result = api.upsert_fact(fact, kw.get("memory"))
    return ToolResult(f"Upserted: {fact.strip()}", {"fact": result.added, "created": result.created, **_edit(result)})


@tool(
    "trace_dependency",
    title="Trace dependencies",
    group="knowledge",
    description=(
        "List every node reachable from start_node through path/2, i.e. all X with path(start_node, X), "
        "in standard order. Cycles are fine. Define path/2 first, for example "
        "path(X, Y) :- depends_on(X, Y). path(X, Z) :- depends_on(X, Y), path(Y, Z)."
    ),
    input_schema=obj({
        "start_node": text('The starting node (e.g. "a", "module_a")', 4096),
        "memory": memory_arg(),
    }, ["start_node"]),
    output_schema=out({"start_node": STRING, "memory": STRING, "nodes": {"type": "array"}, "total": INTEGER}),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def trace_dependency(api, start_node: str, **kw) -> ToolResult:
    result = api.trace_dependency(start_node, kw.get("memory"))
    return ToolResult(compact_json(result["nodes"]), result)


@tool(
    "verify_consistency",
    title="Verify consistency",
    group="knowledge",
    description=(
        "Return every solution of integrity_violation/N for every arity N defined (or of "
        "integrity_violation_<scope>/N with scope). Arity-1 violations are reported as their value, "
        "others as the whole violation term."
    ),
    input_schema=obj({
        "scope": text('Optional domain scope (e.g. "deployment" checks integrity_violation_deployment/N)', 128),
        "memory": memory_arg(),
    }),
    output_schema=out({"violations": {"type": "array"}, "memory": STRING, "checked": STRINGS, "details": ROWS,
                       "total": INTEGER}),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def verify_consistency(api, **kw) -> ToolResult:
    result = api.verify_consistency(kw.get("scope"), kw.get("memory"))
    return ToolResult(compact_json({"violations": result["violations"]}), result)
