"""Knowledge tools: facts, rules, queries, proofs, listings and materialization."""

from __future__ import annotations

import json

from .registry import Annotations, ToolResult, tool
from .schemas import BOOLEAN, INTEGER, NULLABLE_INTEGER, ROWS, STRING, STRINGS, integer, memory_arg, obj, out, text

MAX_LIMIT = 10_000


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@tool(
    "remember_fact",
    title="Remember fact",
    description=(
        "Assert a ground Prolog fact, e.g. human(socrates). Facts are stored durably; remembering a fact "
        "that is already believed changes nothing but adds the 'asserted' support if it was missing."
    ),
    input_schema=obj({"fact": text('A Prolog fact to assert (e.g. "human(socrates)")'), "memory": memory_arg()},
                     ["fact"]),
    output_schema=out({"fact": STRING, "memory": STRING, "created": BOOLEAN, "supports": STRINGS}),
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def remember_fact(api, fact: str, **kw) -> ToolResult:
    change = api.remember_fact(fact, kw.get("memory"))
    return ToolResult(f"Asserted: {change.fact}", {
        "fact": change.fact, "memory": change.memory, "created": change.created, "supports": change.supports,
    })


@tool(
    "define_rule",
    title="Define rule",
    description=(
        "Add a Datalog rule Head :- Body. Head and body are parsed separately and the whole program is "
        "checked before anything is stored: every head variable must be bound by a positive body literal, "
        "and negation or aggregation may not go through recursion."
    ),
    input_schema=obj({
        "head": text('The rule head (e.g. "mortal(X)")'),
        "body": text('The rule body (e.g. "human(X)")'),
        "memory": memory_arg(),
    }, ["head", "body"]),
    output_schema=out({"rule": STRING, "memory": STRING, "created": BOOLEAN, "rule_id": INTEGER}),
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def define_rule(api, head: str, body: str, **kw) -> ToolResult:
    change = api.define_rule(head, body, kw.get("memory"))
    return ToolResult(f"Asserted rule: {change.rule}", {
        "rule": change.rule, "memory": change.memory, "created": change.created, "rule_id": change.rule_id,
    })


@tool(
    "forget_fact",
    title="Forget fact",
    description=(
        "Remove the 'asserted' support of a fact. The fact goes when no support is left; a fact also "
        "supported by an assumption or a source memory stays believed, and the result says why."
    ),
    input_schema=obj({"fact": text('The fact to forget (e.g. "human(socrates)")'), "memory": memory_arg()}, ["fact"]),
    output_schema=out({"fact": STRING, "memory": STRING, "removed": BOOLEAN, "remaining_supports": STRINGS}),
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def forget_fact(api, fact: str, **kw) -> ToolResult:
    change = api.forget_fact(fact, kw.get("memory"))
    message = f"Retracted: {change.fact}"
    if not change.removed:
        message += f" (still believed: supported by {', '.join(change.supports)})"
    return ToolResult(message, {
        "fact": change.fact, "memory": change.memory, "removed": change.removed, "remaining_supports": change.supports,
    })




@tool(
    "query_logic",
    title="Query",
    description=(
        "Evaluate a goal (any rule body: conjunction, disjunction, negation, comparisons, arithmetic, "
        "aggregate_all) and return all variable bindings as JSON, in the standard order of terms. "
        "[{}] means the goal holds with no variables; [] means no solutions. Use limit/offset to page: "
        "the structured result always says the total and whether the page was cut."
    ),
    input_schema=obj({
        "goal": text('A goal to query (e.g. "fruit(X)", "parent(john, Y)")'),
        "memory": memory_arg(),
        "limit": integer("Maximum number of solutions to return (default: all)", 0, MAX_LIMIT),
        "offset": integer("Solutions to skip, for paging (default 0)", 0),
    }, ["goal"]),
    output_schema=out({
        "goal": STRING, "memory": STRING, "variables": STRINGS, "bindings": ROWS, "values": ROWS,
        "total": INTEGER, "truncated": BOOLEAN, "limit": NULLABLE_INTEGER, "offset": INTEGER,
    }),
    annotations=Annotations(read_only=True),
)
def query_logic(api, goal: str, **kw) -> ToolResult:
    result = api.query_logic(goal, kw.get("memory"), kw.get("limit"), kw.get("offset", 0))
    text_rows = [
        {name: (value if isinstance(value, (int, float)) and not isinstance(value, bool) else binding[name])
         for name, value in typed.items()}
        for binding, typed in zip(result.bindings, result.values)
    ]
    return ToolResult(_json(text_rows), {
        "goal": result.goal, "memory": result.memory, "variables": result.variables, "bindings": result.bindings,
        "values": result.values, "total": result.total, "truncated": result.truncated,
        "limit": result.limit, "offset": result.offset,
    })


@tool(
    "explain_why",
    title="Explain why",
    description=(
        "Return the proof tree of a ground fact: each node has goal, rule_applied (\"fact\" for stored "
        "facts, the rule text for derived ones, or builtin/negation/aggregate) and children. Proofs end "
        "in stored facts and are finite even for recursive rules. proven is false when no proof exists. "
        "The structured result adds detailed_tree: the same tree with each node's kind, the rule id, and "
        "the supports of every stored fact (asserted, assumption:<name>, ...)."
    ),
    input_schema=obj({
        "fact": text('The Prolog term to explain (e.g. "risky(deploy_v3)")'),
        "max_depth": integer("Optional maximum proof tree depth (truncates deeper levels)", 1, 100_000),
        "memory": memory_arg(),
    }, ["fact"]),
    output_schema=out({"fact": STRING, "memory": STRING, "proven": BOOLEAN,
                       "proof_tree": {"type": ["object", "null"]}, "detailed_tree": {"type": ["object", "null"]}}),
    annotations=Annotations(read_only=True),
)
def explain_why(api, fact: str, **kw) -> ToolResult:
    result = api.explain_why(fact, kw.get("max_depth"), kw.get("memory"))
    body = {"fact": result.fact, "proven": result.proven, "proof_tree": result.proof_tree}
    return ToolResult(_json(body), {**body, "memory": result.memory, "detailed_tree": result.detailed_tree})


def _page(page) -> dict:
    return {"items": page.items, "total": page.total, "limit": page.limit, "offset": page.offset,
            "truncated": page.truncated}


PAGE_SCHEMA = {"items": ROWS, "total": INTEGER, "limit": INTEGER, "offset": INTEGER, "truncated": BOOLEAN}


@tool(
    "list_facts",
    title="List facts",
    description="List stored facts (optionally of one predicate) with their supports, sorted, with paging.",
    input_schema=obj({
        "memory": memory_arg(),
        "functor": text("Only facts of this predicate name", 1024),
        "arity": integer("Only facts of this arity (with functor)", 0, 1024),
        "limit": integer("Page size (default 100)", 0, MAX_LIMIT),
        "offset": integer("Facts to skip (default 0)", 0),
    }),
    output_schema=out(PAGE_SCHEMA),
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
    description="List stored rules in the order they were defined, with their ids, with paging.",
    input_schema=obj({
        "memory": memory_arg(),
        "limit": integer("Page size (default 100)", 0, MAX_LIMIT),
        "offset": integer("Rules to skip (default 0)", 0),
    }),
    output_schema=out(PAGE_SCHEMA),
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
    description=(
        "Evaluate every rule of a memory segment and write the derived facts, each with the rule that first "
        "derived it, into the SQLite table `derived`, stamped with the current generation of the inputs. "
        "The view `current_derived` shows only rows that are still current."
    ),
    input_schema=obj({"memory": memory_arg()}),
    output_schema=out({"memory": STRING, "generation": INTEGER, "tuples": INTEGER, "seconds": {"type": "number"}}),
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def materialize(api, **kw) -> ToolResult:
    result = api.materialize(kw.get("memory"))
    return ToolResult(
        f"Materialized {result.tuples} conclusion(s) in memory '{result.memory}' at generation {result.generation}.",
        {"memory": result.memory, "generation": result.generation, "tuples": result.tuples, "seconds": result.seconds},
    )
