"""Truth-maintenance tools: assumptions, belief status, justification, retraction."""

from __future__ import annotations

from ..sources.context import READ, WRITE_KNOWLEDGE
from .registry import Annotations, ToolResult, tool
from .schemas import name_arg, BOOLEAN, STRING, STRINGS, compact_json, memory_arg, obj, out, text

RETRACTION = {"memory": STRING, "assumptions": STRINGS, "removed": STRINGS, "kept": STRINGS}


@tool(
    "assume_fact",
    title="Assume fact",
    group="beliefs",
    description=(
        "Believe a fact under a named assumption (lowercase letter, then letters, digits, _). Assuming the "
        "same fact under the same assumption again changes nothing. Retracting the assumption later removes "
        "the facts it alone supported."
    ),
    input_schema=obj({
        "fact": text('A fact to assume (e.g. "available(server_a)")'),
        "assumption": name_arg('The assumption justifying this fact (e.g. "infra_healthy")'),
        "memory": memory_arg(),
    }, ["fact", "assumption"]),
    output_schema=out({"fact": STRING, "assumption": STRING, "memory": STRING, "created": BOOLEAN, "added": BOOLEAN}),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def assume_fact(api, fact: str, assumption: str, **kw) -> ToolResult:
    result = api.assume_fact(fact, assumption, kw.get("memory"))
    return ToolResult(f"Assumed: {fact.strip()} under assumption '{result['assumption']}'", result)


@tool(
    "get_belief_status",
    title="Belief status",
    group="beliefs",
    description=(
        "Whether a fact is believed ('in') or not ('out'), and which assumptions justify it. Works for "
        "derived conclusions too: they are in when provable, and their justifications are the assumptions "
        "at the leaves of the proof. source says why: interactive (asserted), assumption, derived, ..."
    ),
    input_schema=obj({"fact": text('The fact to check (e.g. "available(server_a)")'), "memory": memory_arg()},
                     ["fact"]),
    output_schema=out({"status": {"enum": ["in", "out"]}, "justifications": STRINGS, "source": STRING,
                       "fact": STRING, "memory": STRING, "supports": STRINGS, "derived": BOOLEAN}),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def get_belief_status(api, fact: str, **kw) -> ToolResult:
    result = api.get_belief_status(fact, kw.get("memory"))
    return ToolResult(compact_json({k: result[k] for k in ("status", "justifications", "source")}), result)


@tool(
    "get_justification",
    title="Justification",
    group="beliefs",
    description="All facts currently supported by an assumption.",
    input_schema=obj({
        "assumption": name_arg('The assumption to query (e.g. "infra_healthy")'),
        "memory": memory_arg(),
    }, ["assumption"]),
    output_schema=out({"assumption": STRING, "memory": STRING, "facts": STRINGS}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def get_justification(api, assumption: str, **kw) -> ToolResult:
    result = api.get_justification(assumption, kw.get("memory"))
    return ToolResult(compact_json({"facts": result["facts"]}), result)


@tool(
    "list_assumptions",
    title="List assumptions",
    group="beliefs",
    description="The assumptions that currently support at least one fact, each once, oldest first.",
    input_schema=obj({"memory": memory_arg()}),
    output_schema=out({"assumptions": STRINGS, "memory": STRING}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_assumptions(api, **kw) -> ToolResult:
    result = api.list_assumptions(kw.get("memory"))
    return ToolResult(compact_json({"assumptions": result["assumptions"]}), result)


def _retraction(result) -> dict:
    return {"memory": result.memory, "assumptions": result.assumptions, "removed": result.removed, "kept": result.kept}


@tool(
    "retract_assumption",
    title="Retract assumption",
    group="beliefs",
    description=(
        "Withdraw an assumption: its supports go, every fact left without support goes (no cap), facts "
        "also asserted or assumed otherwise stay, and conclusions resting on removed facts stop holding."
    ),
    input_schema=obj({
        "assumption": name_arg('The assumption to retract (e.g. "infra_healthy")'),
        "memory": memory_arg(),
    }, ["assumption"]),
    output_schema=out(RETRACTION),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def retract_assumption(api, assumption: str, **kw) -> ToolResult:
    result = api.retract_assumption(assumption, kw.get("memory"))
    return ToolResult(f"Retracted assumption '{assumption}': {len(result.removed)} fact(s) removed",
                      _retraction(result))


@tool(
    "retract_assumptions",
    title="Retract assumptions by pattern",
    group="beliefs",
    description="Retract every assumption whose name matches a glob (* any run, ? one character), as retract_assumption.",
    input_schema=obj({
        "pattern": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[a-z*?][A-Za-z0-9_*?]*$",
                    "description": 'A glob over assumption names (e.g. "infra_*")'},
        "memory": memory_arg(),
    }, ["pattern"]),
    output_schema=out({"pattern": STRING, **RETRACTION}),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def retract_assumptions(api, pattern: str, **kw) -> ToolResult:
    result = api.retract_assumptions(pattern, kw.get("memory"))
    return ToolResult(f"Retracted pattern '{pattern}': {len(result.assumptions)} assumption(s) removed",
                      {"pattern": pattern, **_retraction(result)})
