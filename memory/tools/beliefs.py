"""Truth-maintenance tools: assumptions, belief status, justification, retraction."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..api import Memory
from ..knowledge.beliefs import Retraction
from ..access.context import READ, WRITE_KNOWLEDGE
from .models import SegmentInput, Segment, Strings, ToolInput, ToolOutput, name_field, text_field
from .registry import Annotations, Reply, tool
from .json_text import compact_json
from .notes import listed_line


class AssumeInput(ToolInput):
    fact: Annotated[str, text_field('A fact to assume (e.g. "available(server_a)")')]
    assumption: Annotated[str, name_field('The assumption justifying this fact (e.g. "infra_healthy")')]
    memory: Segment | None = None


class AssumeOutput(ToolOutput):
    fact: str
    assumption: str
    memory: str
    created: bool
    added: bool


@tool(
    "assume_fact",
    title="Assume fact",
    group="beliefs",
    description=(
        "Believe a fact under a named assumption (e.g. infra_healthy), so retract_assumption can withdraw it "
        "later with everything that rested only on it."
    ),
    details=(
        "Believe a fact under a named assumption (lowercase letter, then letters, digits, _). Assuming the "
        "same fact under the same assumption again changes nothing. Retracting the assumption later removes "
        "the facts it alone supported."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def assume_fact(api: Memory, args: AssumeInput) -> Reply[AssumeOutput]:
    result = AssumeOutput.model_validate(api.beliefs.assume_fact(args.fact, args.assumption, args.memory))
    return Reply(f"Assumed: {args.fact.strip()} under assumption '{result.assumption}'", result)


class BeliefInput(ToolInput):
    fact: Annotated[str, text_field('The fact to check (e.g. "available(server_a)")')]
    memory: Segment | None = None


class BeliefOutput(ToolOutput):
    status: Literal["in", "out"]
    justifications: Strings
    source: str
    fact: str
    memory: str
    supports: Strings
    derived: bool


@tool(
    "get_belief_status",
    title="Belief status",
    group="beliefs",
    description="Whether a fact or conclusion is believed (in/out) and which assumptions it rests on.",
    details=(
        "Whether a fact is believed ('in') or not ('out'), and which assumptions justify it. Works for "
        "derived conclusions too: they are in when provable, and their justifications are the assumptions "
        "at the leaves of the proof. source says why: interactive (asserted), assumption, derived, ..."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def get_belief_status(api: Memory, args: BeliefInput) -> Reply[BeliefOutput]:
    result = BeliefOutput.model_validate(api.beliefs.get_belief_status(args.fact, args.memory))
    text = compact_json({"status": result.status, "justifications": result.justifications, "source": result.source})
    others = [s for s in result.supports if not s.startswith("assumption:")]
    if others and result.justifications:  # retracting its assumptions would not make it go: said, as explain_why does
        text += f"\n% supports: {', '.join(result.supports)}"
    return Reply(text, result)


class AssumptionInput(ToolInput):
    assumption: Annotated[str, name_field('The assumption to query (e.g. "infra_healthy")')]
    memory: Segment | None = None


class JustificationOutput(ToolOutput):
    assumption: str
    memory: str
    facts: Strings


@tool(
    "get_justification",
    title="Justification",
    group="beliefs",
    description="The facts an assumption supports now.",
    details="All facts currently supported by an assumption.",
    capability=READ,
    annotations=Annotations(read_only=True),
)
def get_justification(api: Memory, args: AssumptionInput) -> Reply[JustificationOutput]:
    result = JustificationOutput.model_validate(api.beliefs.get_justification(args.assumption, args.memory))
    return Reply(compact_json({"facts": result.facts}), result)


class AssumptionsOutput(ToolOutput):
    assumptions: Strings
    memory: str


@tool(
    "list_assumptions",
    title="List assumptions",
    group="beliefs",
    description="The assumptions that support at least one fact, oldest first.",
    details="The assumptions that currently support at least one fact, each once, oldest first.",
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_assumptions(api: Memory, args: SegmentInput) -> Reply[AssumptionsOutput]:
    result = AssumptionsOutput.model_validate(api.beliefs.list_assumptions(args.memory))
    return Reply(compact_json({"assumptions": result.assumptions}), result)


class RetractionOutput(ToolOutput):
    memory: str
    assumptions: Strings
    removed: Strings
    kept: Strings
    withdrawn: Strings
    withdrawn_total: int | None = None
    withdrawn_note: str | None = None


def _retraction(result: Retraction) -> dict[str, Any]:
    return {"memory": result.memory, "assumptions": result.assumptions, "removed": result.removed,
            "kept": result.kept, **result.withdrawn.to_dict()}


def _retraction_text(first: str, result: Retraction) -> str:
    """What a retraction removed, kept and withdrew: the facts by name, then the conclusions."""
    lines = [first]
    if result.removed:
        lines.append(listed_line("removed", result.removed))
    if result.kept:
        lines.append(f"% still believed through other supports: {', '.join(result.kept[:20])}")
    lines.append(result.withdrawn.text())
    return "\n".join(lines)


class RetractInput(ToolInput):
    assumption: Annotated[str, name_field('The assumption to retract (e.g. "infra_healthy")')]
    memory: Segment | None = None


@tool(
    "retract_assumption",
    title="Retract assumption",
    group="beliefs",
    description=(
        "Withdraw an assumption: the facts only it supported go, and the reply lists them and the conclusions "
        "that stopped holding; facts supported otherwise stay."
    ),
    details=(
        "Withdraw an assumption: its supports go, every fact left without support goes (no cap), facts "
        "also asserted or assumed otherwise stay, and conclusions resting on removed facts stop holding."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
    evaluates=True,  # it says which conclusions stopped holding: they are evaluated before and after
)
def retract_assumption(api: Memory, args: RetractInput) -> Reply[RetractionOutput]:
    result = api.beliefs.retract_assumption(args.assumption, args.memory)
    return Reply(_retraction_text(f"Retracted assumption '{args.assumption}': {len(result.removed)} fact(s) "
                                  "removed", result), RetractionOutput(**_retraction(result)))


class RetractPatternInput(ToolInput):
    pattern: Annotated[str, Field(min_length=1, max_length=128, pattern="^[a-z*?][A-Za-z0-9_*?]*$",
                                  description='A glob over assumption names (e.g. "infra_*")')]
    memory: Segment | None = None


class RetractPatternOutput(RetractionOutput):
    pattern: str


@tool(
    "retract_assumptions",
    title="Retract assumptions by pattern",
    group="beliefs",
    description=(
        "Retract every assumption whose name matches a glob (* any run, ? one character), as retract_assumption "
        "does."
    ),
    details="Retract every assumption whose name matches a glob (* any run, ? one character), as retract_assumption.",
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
    evaluates=True,  # it says which conclusions stopped holding: they are evaluated before and after
)
def retract_assumptions(api: Memory, args: RetractPatternInput) -> Reply[RetractPatternOutput]:
    result = api.beliefs.retract_assumptions(args.pattern, args.memory)
    return Reply(_retraction_text(f"Retracted pattern '{args.pattern}': {len(result.assumptions)} assumption(s) "
                                  "removed", result), RetractPatternOutput(pattern=args.pattern, **_retraction(result)))
