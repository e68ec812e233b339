"""Toolsets: every tool belongs to exactly one (its family), and a server lists only the tools of the toolsets it
has enabled, so a model's context holds the tools it needs and not 45.

`default` is not a toolset of its own: it names the compact set an agent starts with (facts and rules, exact
source text, observations and the answer check, and `enable_toolsets`), drawn from several toolsets. A
selection is a comma-separated list: `default`, `all`, toolset names, or `default,beliefs` (GitHub's MCP server
reads its `--toolsets` the same way). The CLI always offers every tool."""

from __future__ import annotations

from typing import Annotated, Iterable

from pydantic import Field

from ..api import Memory
from ..errors import InvalidArguments, InvalidConfiguration
from .models import OutputPart, ToolInput, ToolOutput
from .registry import GROUPS, REGISTRY, TOOLSETS, Annotations, Reply, tool

ENVIRONMENT = "DATALOG_MEMORY_TOOLSETS"


NAMES = GROUPS

# What an agent starts with: what most conversations need, at most 15 tools.
DEFAULT_TOOLS = (
    "remember_fact", "forget_fact", "define_rule", "forget_rule", "query_logic", "explain_why",
    "memory_remember", "memory_get", "memory_search", "memory_forget",
    "remember", "recall", "prove", "verify",
    "enable_toolsets",
)


def tools_of(toolset: str) -> list[str]:
    return [name for name, spec in REGISTRY.items() if spec.group == toolset]


def select(selection: str | Iterable[str]) -> frozenset[str]:
    """The tool names a selection enables: `default`, `all` and toolset names, comma-separated or as a list.
    An unknown name is an InvalidConfiguration that lists the known ones."""
    words = [w.strip() for w in (selection.split(",") if isinstance(selection, str) else selection)]
    words = [w for w in words if w]
    unknown = [w for w in words if w not in ("default", "all") and w not in NAMES]
    if unknown or not words:
        raise InvalidConfiguration(f"unknown toolset {', '.join(unknown) or '(none given)'}: choose from "
                                   f"default, all, {', '.join(NAMES)} (comma-separated)")
    chosen: set[str] = set()
    for word in words:
        if word == "all":
            chosen |= set(REGISTRY)
        elif word == "default":
            chosen |= {name for name in DEFAULT_TOOLS if name in REGISTRY}
        else:
            chosen |= set(tools_of(word))
    return frozenset(chosen)


def from_environment(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The tools a server enables at start: $DATALOG_MEMORY_TOOLSETS, else `default`."""
    import os

    text = (environ if environ is not None else os.environ).get(ENVIRONMENT, "").strip()
    try:
        return select(text or "default")
    except InvalidConfiguration as exc:
        raise InvalidConfiguration(f"invalid {ENVIRONMENT}: {exc.message}") from None


# --- the tool a model enables more with ----------------------------------------------------------------------

class EnableInput(ToolInput):
    enable: Annotated[list[Annotated[str, Field(min_length=1, max_length=32)]], Field(
        max_length=len(NAMES) + 2, description="Toolsets to add (or all); omit to only list them")] | None = None


class ToolsetEntry(OutputPart):
    name: str
    description: str
    tools: list[str]


class EnableOutput(ToolOutput):
    toolsets: list[ToolsetEntry]
    enabled: list[str]  # the toolsets this call asked for
    tools: list[str]  # the tools they hold


@tool(
    "enable_toolsets",
    title="Toolsets",
    group="admin",
    description=(
        "List the toolsets and enable more of them for this connection: beliefs (assumptions), snapshots, "
        "segments, knowledge (listing, bulk edits, rename), memories (symbolic recall), evidence (reason, "
        "detect), admin. Without enable, only lists them."
    ),
    capability=None,
    capability_note="none: it changes only this connection's tool list",
    # not read-only: it changes what this connection may call (a call sent after it must see that)
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def enable_toolsets(api: Memory, args: EnableInput) -> Reply[EnableOutput]:
    requested = list(dict.fromkeys(args.enable or []))
    unknown = [name for name in requested if name not in NAMES and name != "all"]
    if unknown:
        raise InvalidArguments(f"unknown toolset {', '.join(unknown)}: choose from all, {', '.join(NAMES)}",
                               toolsets=list(NAMES))
    catalog = [ToolsetEntry(name=t.name, description=t.description, tools=tools_of(t.name)) for t in TOOLSETS]
    tools = sorted(select(requested)) if requested else []
    if requested:  # what it enabled, not the whole catalogue again
        named = [t for t in catalog if "all" in requested or t.name in requested]
        lines = [f"Enabled {', '.join(requested)}: call their tools by name now (the tool list is refreshed on "
                 "clients that follow list changes)."] + [f"{t.name}: {', '.join(t.tools)}" for t in named]
    else:
        lines = ['Toolsets (enable with {"enable": ["name"]}):'] + [
            f"{t.name}: {t.description} ({', '.join(t.tools)})" for t in catalog]
    return Reply("\n".join(lines), EnableOutput(toolsets=catalog, enabled=requested, tools=tools))
