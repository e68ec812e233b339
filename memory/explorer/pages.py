"""The explorer's pages: each one filled from the registry's read-only tools (or a read-only domain function
where no tool gives the piece), rendered with memory.explorer.html.

A page is `(view, params) -> Page`; `params` are the request's query parameters. Every value shown goes
through the escaping builders; links carry their arguments in the query string."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..errors import DatalogMemoryError, InvalidArguments, NotFound
from ..evidence.timeline import MAX_PAGE, observation_timeline
from ..knowledge import proof_view
from ..knowledge.consequences import Consequences, Withdrawn
from ..knowledge.proof_view import ProofStep
from ..sources.audit_trail import AuditFilter, audit_events
from ..terms import Compound, Var, format_term, indicator, is_ground, map_leaves, parse_term
from ..tools import REGISTRY, call_tool
from ..tools.registry import error_text
from .charts import MAX_ENTITIES, activity_svg, entity_svg, finding_marks, thresholds_table
from .graph import NOT_PREDICATES, dependency_svg, legend
from .html import Markup, definitions, h, join, link, table, url

PAGE_SIZE = 50
# The HTTP status of a page that could not be filled, by the error's stable code (others: 500).
STATUS = {"invalid_arguments": 400, "syntax_error": 400, "invalid_program": 400, "not_found": 404,
          "permission_denied": 403, "budget_exceeded": 422, "evaluation_error": 422}
MAX_RULES_DRAWN = 300
MAX_DRAWN = 50_000  # observations the Observations page draws (the newest)
MAX_WITHDRAWN = 500  # conclusions a dry run lists (the total counts them all)
STORED_SCAN = 1000  # a predicate with rules and up to this many stored facts: its stored ones read in one list
CONTROL = {(",", 2), (";", 2), ("->", 2), ("\\+", 1), ("not", 1)}


@dataclass
class Page:
    title: str
    body: Markup
    status: int = 200


class View:
    """What a page may call: read-only registry tools and read-only domain reads, for one principal."""

    def __init__(self, memory) -> None:
        self.memory = memory
        self._detected: tuple[int, dict] | None = None
        self._observed: tuple[int, tuple[list[dict], int]] | None = None

    def detect(self) -> dict:
        """detect's findings over every observation, computed again only when the store changed since (the
        explorer never writes, so a new data_version means another connection committed)."""
        version = self.memory.store.data_version()
        if self._detected is None or self._detected[0] != version:
            self._detected = (version, self.tool("detect"))
        return self._detected[1]

    def observed(self) -> tuple[list[dict], int]:
        """Every observation (newest first, at most MAX_DRAWN) and how many there are, for the Observations
        page's pictures; read again only when the store changed, like detect's findings."""
        version = self.memory.store.data_version()
        if self._observed is None or self._observed[0] != version:
            items: list[dict] = []
            total = 0
            while len(items) < MAX_DRAWN:
                page = observation_timeline(self.memory.repository, self.context, limit=MAX_PAGE, offset=len(items))
                items += page["items"]
                total = page["total"]
                if len(page["items"]) < MAX_PAGE:
                    break
            self._observed = (version, (items[:MAX_DRAWN], max(total, len(items))))
        return self._observed[1]

    def tool(self, name: str, **arguments: Any) -> dict:
        spec = REGISTRY[name]
        # explain_why is read-only unless it records the proof; the explorer never asks it to.
        if not spec.annotations.read_only and not (name == "explain_why" and not arguments.get("record_proof")):
            raise PermissionError(f"the explorer does not call {name}")
        return call_tool(self.memory, name, {k: v for k, v in arguments.items() if v is not None}).structured

    @property
    def context(self):
        return self.memory.context


# --- parameters ---------------------------------------------------------------------------------------------
def text(params: Mapping[str, str], name: str, limit: int = 65536) -> str | None:
    value = params.get(name)
    if value is None or value.strip() == "":
        return None
    if len(value) > limit:
        raise InvalidArguments(f"'{name}' is too long ({len(value)} characters; the limit is {limit})",
                               argument=name)
    return value


def number(params: Mapping[str, str], name: str, default: int | None = 0, low: int = 0,
           high: int = 10**9) -> int | None:
    value = text(params, name, 12)
    if value is None:
        return default
    if not (value.isascii() and value.isdigit()) or not low <= int(value) <= high:  # not '²' nor '-1'
        raise InvalidArguments(f"'{name}' must be a whole number from {low} to {high}", argument=name)
    return int(value)


def failure(exc: DatalogMemoryError) -> tuple[Markup, int]:
    """A tool's refusal shown where its answer would be, worded as on every surface, and the page's status."""
    return h("p", {"class": "error"}, error_text(exc)), STATUS.get(exc.code, 500)


# --- shared pieces ------------------------------------------------------------------------------------------
def pager(path: str, params: Mapping[str, str], offset: int, shown: int, total: int, size: int = PAGE_SIZE) -> Markup:
    keep = {k: v for k, v in params.items() if k not in ("offset", "token")}
    parts = [h("span", None, f"{offset + 1 if shown else 0}–{offset + shown} of {total}")]
    if offset > 0:
        parts.append(link(url(path, **keep, offset=max(0, offset - size)), "← previous"))
    if offset + shown < total:
        parts.append(link(url(path, **keep, offset=offset + size), "next →"))
    return h("nav", {"class": "pager"}, parts)


def form(path: str, fields: list[Markup], submit: str = "Show") -> Markup:
    return h("form", {"method": "get", "action": url(path), "class": "filters"}, fields,
             h("button", {"type": "submit"}, submit))


def field_input(label: str, name: str, value: object, example: str = "", size: int = 20) -> Markup:
    """A text field; `example` shows in an empty one as a placeholder, worded and styled as an example (grey,
    italic, "e.g."), so an empty field never looks filled in."""
    return h("label", None, label, " ", h("input", {"type": "text", "name": name, "value": value or "",
                                                    "placeholder": f"e.g. {example}" if example else None,
                                                    "size": size}))


def field_select(label: str, name: str, value: str | None, options: list[str], any_label: str = "any") -> Markup:
    return h("label", None, label, " ", h("select", {"name": name}, h("option", {"value": ""}, any_label),
                                          [h("option", {"value": o, "selected": o == value}, o) for o in options]))


def why_link(fact: str, memory: str | None = None, label: object = None) -> Markup:
    return link(url("/why", fact=fact, memory=memory), label if label is not None else fact)


def support(item: str, memory: str | None = None) -> Markup:
    """One support, as list_facts and explain_why spell it, linked to what it names."""
    kind, _, ref = item.partition(":")
    if kind == "assumption":
        return h("span", {"class": "support assumption"}, "assumption ",
                 link(url("/beliefs", assumption=ref, memory=memory), ref))
    if kind == "source":
        return h("span", {"class": "support source"}, "memory ", link(url(f"/memories/{ref}"), ref))
    if kind == "observation":
        return h("span", {"class": "support observation"}, "observation ", link(url("/observations", tag=ref), ref))
    return h("span", {"class": f"support {kind}"}, item)


def supports(items: list[str], memory: str | None = None) -> Markup:
    return join([support(s, memory), " "] for s in items)


def code(value: object) -> Markup:
    return h("code", None, value)


def segment_choice(view: View, chosen: str | None) -> Markup:
    mounted = [m["name"] for m in view.tool("list_memories")["memories"] if m["mounted"]]
    return field_select("Segment", "memory", chosen, [m for m in mounted if m != "default"], "default")


# --- Knowledge ----------------------------------------------------------------------------------------------
def knowledge(view: View, params: Mapping[str, str]) -> Page:
    memory = text(params, "memory", 128)
    schema = view.tool("get_knowledge_schema", memory=memory)
    segments = view.tool("list_memories")["memories"]
    rules = view.tool("list_rules", memory=memory, limit=MAX_RULES_DRAWN)
    predicates = table(
        ["predicate", "defined by", "clauses"],
        [[link(url("/facts", memory=memory, functor=p["name"], arity=p["arity"]), f"{p['name']}/{p['arity']}"),
          p["type"], p["count"]]
         for p in schema["predicates"]], class_="predicates")
    graph = dependency_svg([r["rule"] for r in rules["items"]], "/facts", memory)
    rule_rows = table(["id", "rule", "name", "defined"],
                      [[h("span", {"id": f"rule-{r['id']}"}, r["id"]), code(r["rule"]), r.get("name") or "",
                        r["created_at"]] for r in rules["items"]], class_="rules")
    segment_rows = table(
        ["segment", "scope", "mounted", "mode"],
        [[link(url("/", memory=s["name"]), s["name"]) if s["mounted"] else s["name"], s["scope"],
          "yes" if s["mounted"] else "no", s.get("mode") or "—"] for s in segments], class_="segments")
    body = join([
        form("/", [segment_choice(view, memory)]),
        h("section", None, h("h2", None, f"Predicates of {schema['memory']} ({schema['total']})"),
          predicates if schema["predicates"] else h("p", None, "No predicates yet."),
          h("p", None, link(url("/facts", memory=memory), "All facts →"))),
        h("section", None, h("h2", None, f"Rules ({rules['total']})"),
          h("p", {"class": "hint"}, "Each arrow goes from a predicate a rule's body uses to the predicate it "
                                    "defines; click a predicate to see its stored facts or, for one rules define, "
                                    "what it holds for."),
          join([h("div", {"class": "graph-box"}, graph), legend()]) if graph else h("p", None, "No rules yet."),
          rule_rows if rules["items"] else "",
          h("p", {"class": "hint"}, f"The graph shows the first {MAX_RULES_DRAWN} rules.")
          if rules["truncated"] else ""),
        h("section", None, h("h2", None, "Segments and mounts"), segment_rows),
    ])
    return Page("Knowledge", body)


def facts(view: View, params: Mapping[str, str]) -> Page:
    """A predicate's facts; for one rules define, its answers first (what holds, each with its proof), each
    marked derived or stored, then the facts stored under its name, if any."""
    memory, functor = text(params, "memory", 128), text(params, "functor", 256)
    arity = number(params, "arity", None, 0, 1024)
    offset = number(params, "offset")
    parts = [form("/facts", [segment_choice(view, memory), field_input("Predicate", "functor", functor, "risky"),
                             field_input("Arity", "arity", params.get("arity"), "1", 4)], "Filter")]
    kinds: dict[int, str] = {}
    if functor:
        kinds = {p["arity"]: p["type"] for p in view.tool("get_knowledge_schema", memory=memory)["predicates"]
                 if p["name"] == functor and (arity is None or p["arity"] == arity)}
    for n in sorted(a for a, kind in kinds.items() if kind in ("rule", "both")):
        assert functor is not None
        try:
            parts.append(derived_answers(view, params, memory, functor, n, kinds[n], offset))
        except DatalogMemoryError as exc:
            shown, failed = failure(exc)
            return Page("Facts", join([*parts, shown]), failed)
    page = view.tool("list_facts", memory=memory, functor=functor, arity=arity if functor else None,
                     limit=PAGE_SIZE, offset=offset)
    rows = [[why_link(f["fact"], memory), supports(f["supports"], memory), f["created_at"]] for f in page["items"]]
    derived_only = bool(kinds) and all(kind == "rule" for kind in kinds.values())
    if derived_only and not rows:
        parts.append(h("p", {"class": "hint"}, "No stored facts: rules define this predicate (its answers are "
                                                "above)."))
    else:
        parts += [h("h2", None, h("span", {"class": "kind stored"}, "stored"), " Stored facts") if kinds else "",
                  table(["fact", "supports", "stored"], rows, class_="facts") if rows
                  else h("p", None, "No facts match."),
                  pager("/facts", params, offset, len(rows), page["total"])]
    return Page("Facts", join(parts))


def derived_answers(view: View, params: Mapping[str, str], memory: str | None, functor: str, arity: int,
                    kind: str, offset: int) -> Markup:
    """The answers of a rule-defined predicate, paged, each linked to its proof and marked derived or stored
    (a predicate with both rules and stored facts answers with both)."""
    goal = format_term(Compound(functor, tuple(Var(f"A{i}") for i in range(arity))) if arity else functor)
    result = view.tool("query_logic", goal=goal, memory=memory, limit=PAGE_SIZE, offset=offset)
    answers = []
    for b in result["bindings"]:
        values = tuple(parse_term(b[f"A{i}"]) for i in range(arity))
        answers.append(format_term(Compound(functor, values)) if arity else functor)
    stored: set[str] = set()
    if kind == "both" and answers:
        listed = view.tool("list_facts", memory=memory, functor=functor, arity=arity, limit=STORED_SCAN)
        if listed["total"] <= STORED_SCAN:
            stored = {f["fact"] for f in listed["items"]}
        else:  # too many stored to list: ask about this page's answers one by one
            stored = {a for a in answers if not view.tool("get_belief_status", fact=a, memory=memory)["derived"]}
    rows = [[why_link(a, memory), h("span", {"class": "kind stored" if a in stored else "kind derived"},
                                    "stored" if a in stored else "derived"),
             why_link(a, memory, "why")] for a in answers]
    return h("section", {"class": "derived-answers"},
             h("h2", None, h("span", {"class": "kind derived"}, "derived"), f" What {functor}/{arity} holds for "
                           f"({result['total']})"),
             h("p", {"class": "hint"}, "Computed now from the rules that define it (and its stored facts, if any); "
                                       "nothing here is stored. Each answer's proof is one click away."),
             [h("p", {"class": "warning"}, w) for w in result.get("warnings", [])],
             table(["answer", "", "proof"], rows, class_="derived") if rows
             else h("p", None, "Nothing holds: no answer can be derived now."),
             pager("/facts", params, offset, len(rows), result["total"]))


# --- Query and why ------------------------------------------------------------------------------------------
def _literals(goal) -> list:
    """The positive calls of a goal that explain_why can prove: conjuncts and disjuncts, not negations."""
    out, stack = [], [goal]
    while stack:
        g = stack.pop()
        if type(g) is Compound and (g.functor, len(g.args)) in CONTROL:
            if g.functor not in ("\\+", "not"):
                stack.extend(reversed(g.args))
            continue
        name = g.functor if type(g) is Compound else g
        if isinstance(name, str) and name not in NOT_PREDICATES and name != "aggregate_all":
            out.append(g)
    return out


def answer_links(goal_text: str, binding: Mapping[str, str], memory: str | None) -> list[Markup]:
    """The goal with an answer's values put in, one "why" link per call it made."""
    values = {name: parse_term(value) for name, value in binding.items()}
    goal = map_leaves(parse_term(goal_text), lambda t: values.get(t.name, t) if type(t) is Var else t)
    # A call left with a variable (an anonymous `_`) names no single fact: it gets no link.
    return [why_link(format_term(lit), memory, f"why {format_term(lit)}") for lit in _literals(goal) if is_ground(lit)]


def query(view: View, params: Mapping[str, str]) -> Page:
    goal, memory = text(params, "goal"), text(params, "memory", 128)
    offset = number(params, "offset")
    parts = [form("/query", [field_input("Goal", "goal", goal, "risky(X)", 48), segment_choice(view, memory)],
                  "Run")]
    if goal:
        try:
            result = view.tool("query_logic", goal=goal, memory=memory, limit=PAGE_SIZE, offset=offset)
        except DatalogMemoryError as exc:
            shown, failed = failure(exc)
            return Page("Query and why", join([*parts, shown]), failed)
        variables = result["variables"]
        rows = [[*[code(b.get(v, "")) for v in variables], join(answer_links(goal, b, memory))]
                for b in result["bindings"]]
        parts += [h("p", {"class": "warning"}, w) for w in result.get("warnings", [])]
        if not result["bindings"]:
            parts.append(h("p", None, "No answers: the goal does not hold."))
        else:
            parts.append(table([*variables, "proof"], rows, class_="answers"))
            parts.append(pager("/query", params, offset, len(rows), result["total"]))
    return Page("Query and why", join(parts))


def _node(view: View, step: ProofStep, memory: str | None, seen: set[int]) -> Markup:
    if id(step) in seen:  # a step shared by two parents is drawn once
        return h("div", {"class": "node"}, code(step.goal), " (shown above)")
    seen.add(id(step))
    kind = step.kind
    head = [h("span", {"class": f"kind {kind}"}, kind), " ", code(step.goal)]
    if kind == "rule":
        head += [" ", h("span", {"class": "rule"}, "by ", code(step.rule_applied))]
    if step.truncated:
        head.append(h("span", {"class": "warning"}, " (deeper steps cut at max depth)"))
    inner = [leaf_supports(view, step, memory)] if step.supports else []
    inner += [_node(view, child, memory, seen) for child in step.children]
    return h("details", {"open": True, "class": f"node {kind}"}, h("summary", None, head), inner)


def leaf_supports(view: View, step: ProofStep, memory: str | None) -> Markup:
    """What a stored fact rests on: asserted, an assumption, a source memory's exact text, an observation."""
    texts = {m["id"]: m for m in step.memories or []}
    items = []
    for item in step.supports or []:
        kind, _, ref = item.partition(":")
        if kind == "source" and ref in texts:
            found = texts[ref]
            items.append(h("li", {"class": "support source"}, "from memory ", link(url(f"/memories/{ref}"), ref),
                           f" ({found['namespace'].get('type')}, {found['status']})",
                           h("blockquote", {"class": "source-text"}, found["source_text"])))
        elif kind == "observation":
            seen = observation_timeline(view.memory.repository, view.context, tag=ref, limit=1)["items"]
            when = seen[0]["event_time"] if seen else "?"
            items.append(h("li", {"class": "support observation"}, "observation ",
                           link(url("/observations", tag=ref), ref), f" at {when}",
                           f" ({', '.join(seen[0]['members'])})" if seen else ""))
        else:
            items.append(h("li", None, support(item, memory)))
    return h("ul", {"class": "supports"}, items)


def why(view: View, params: Mapping[str, str]) -> Page:
    fact, memory = text(params, "fact"), text(params, "memory", 128)
    depth = number(params, "depth", 40, 1, 1000)
    parts = [form("/why", [field_input("Fact", "fact", fact, "risky(deploy_v3)", 48), segment_choice(view, memory)],
                  "Explain")]
    if fact:
        try:
            status = view.tool("get_belief_status", fact=fact, memory=memory)
            explained = view.tool("explain_why", fact=fact, memory=memory, max_depth=depth)
        except DatalogMemoryError as exc:
            shown, failed = failure(exc)
            return Page("Why", join([*parts, shown]), failed)
        parts.append(definitions([
            ("believed", h("strong", {"class": f"status {status['status']}"}, status["status"])),
            ("because", status["source"] + (" (derived)" if status["derived"] and status["source"] != "derived"
                                            else "")),
            ("assumptions", join([link(url("/beliefs", assumption=a, memory=memory), a), " "]
                                 for a in status["justifications"]) or "none"),
        ]))
        parts += [h("p", {"class": "warning"}, w) for w in explained.get("warnings", [])]
        root = proof_view.from_flat(explained.get("proof_nodes") or [])
        if explained["proven"] and root is not None:
            parts.append(h("section", {"class": "proof"}, h("h2", None, "Proof"), _node(view, root, memory, set())))
        else:
            parts.append(h("p", None, "No proof: the fact is not believed."))
    return Page("Why", join(parts))


# --- Beliefs ------------------------------------------------------------------------------------------------
def beliefs(view: View, params: Mapping[str, str]) -> Page:
    memory, chosen = text(params, "memory", 128), text(params, "assumption", 128)
    names = view.tool("list_assumptions", memory=memory)["assumptions"]
    justified = {a: view.tool("get_justification", assumption=a, memory=memory)["facts"] for a in names}
    parts = [form("/beliefs", [segment_choice(view, memory)]),
             table(["assumption", "facts resting on it", ""],
                   [[code(a), len(justified[a]), link(url("/beliefs", assumption=a, memory=memory), "what rests on it")]
                    for a in names], class_="assumptions") if names else h("p", None, "No assumptions.")]
    if chosen and chosen not in justified and not view.tool("get_justification", assumption=chosen,
                                                             memory=memory)["facts"]:
        parts.append(h("section", {"id": "dry-run"}, h("p", None, "No assumption ", code(chosen),
                                                        " supports anything here: retracting it would change nothing.")))
    elif chosen:
        facts_of = justified.get(chosen)
        if facts_of is None:
            facts_of = view.tool("get_justification", assumption=chosen, memory=memory)["facts"]
        gone, kept = [], []
        for fact in facts_of:  # a dry run: read each fact's supports, retract nothing
            others = [s for s in view.tool("get_belief_status", fact=fact, memory=memory)["supports"]
                      if s != f"assumption:{chosen}"]
            (kept if others else gone).append((fact, others))
        withdrawn = would_withdraw(view, memory, facts_of, [f for f, _ in gone])
        parts.append(h("section", {"id": "dry-run"},
            h("h2", None, "If ", code(chosen), " were retracted (dry run)"),
            h("p", {"class": "hint"}, "Computed from each fact's supports and by evaluating again, with those facts "
                                      "left out, every rule that reads them; nothing is retracted."),
            h("h3", None, f"Stored facts that would go ({len(gone)})"),
            h("ul", {"class": "gone"}, [h("li", None, why_link(f, memory)) for f, _ in gone]) if gone
            else h("p", None, "Nothing: every fact it supports has another support."),
            h("h3", None, "Conclusions that would stop holding (" +
              (str(withdrawn.total) if withdrawn.total is not None else "not computed") + ")"),
            withdrawn_list(withdrawn, memory),
            h("h3", None, f"Would stay, supported otherwise ({len(kept)})"),
            h("ul", {"class": "kept"}, [h("li", None, why_link(f, memory), " — ", supports(o, memory))
                                        for f, o in kept]) if kept else h("p", None, "None.")))
    return Page("Beliefs", join(parts))


def would_withdraw(view: View, memory: str | None, supported: list[str], gone: list[str]) -> Withdrawn:
    """The conclusions that would stop holding if `gone` (stored facts) went: the domain's consequence
    computation (the one retract_assumption reports with), asked as a dry run. Read-only: it evaluates and
    writes nothing."""
    if not gone:
        return Withdrawn()
    predicates = {indicator(parse_term(f)) for f in supported}
    return Consequences(view.memory.bases.serving(memory), memory, predicates).if_gone(gone, MAX_WITHDRAWN)


def withdrawn_list(withdrawn: Withdrawn, memory: str | None) -> Markup:
    if withdrawn.total is None:
        return h("p", {"class": "warning"}, f"Not computed: {withdrawn.note}.")
    if not withdrawn.total:
        return h("p", None, "None: no rule-derived conclusion rests on them alone.")
    more = withdrawn.total - len(withdrawn.listed)
    return join([h("ul", {"class": "withdrawn"}, [h("li", None, why_link(f, memory)) for f in withdrawn.listed]),
                 h("p", {"class": "hint"}, f"The first {len(withdrawn.listed)} are listed; {more} more.")
                 if more else ""])


# --- Memories -----------------------------------------------------------------------------------------------
def _snippet(value: str | None, size: int = 160) -> str:
    if value is None:
        return "(erased)"
    return value if len(value) <= size else value[:size] + "…"


def memories(view: View, params: Mapping[str, str]) -> Page:
    q, as_of, scope = text(params, "q", 4096), text(params, "as_of", 64), text(params, "scope", 16)
    history = params.get("history") == "1"
    offset = number(params, "offset")
    parts = [form("/memories", [
        field_input("Search", "q", q, "words", 32),
        field_select("In", "scope", scope, ["session", "project", "global"], "every namespace you may read"),
        field_input("As of", "as_of", as_of, "2026-05-01T12:00", 18),
        h("label", None, h("input", {"type": "checkbox", "name": "history", "value": "1", "checked": history}),
          " include superseded, expired, forgotten")], "Search")]
    if q:
        try:
            found = view.tool("memory_search", query=q, history=history, as_of=as_of, limit=PAGE_SIZE, scope=scope)
        except DatalogMemoryError as exc:
            shown, failed = failure(exc)
            return Page("Memories", join([*parts, shown]), failed)
        rows = [[link(url(f"/memories/{r['id']}", as_of=as_of), r["id"]), r["namespace"].get("type"), r["status"],
                 r["recorded_at"], _snippet(r.get("memory")), "; ".join(r.get("why", []))] for r in found["results"]]
        parts.append(table(["memory", "namespace", "status", "recorded", "text", "why it matched"], rows,
                           class_="memories") if rows else h("p", None, "No memory matches."))
        if found["truncated"]:
            parts.append(h("p", {"class": "hint"}, f"The best {found['limit']} of {found['total']} are shown."))
    else:
        listed = view.memory.sources.listing(offset, PAGE_SIZE + 1)
        rows = []
        for item in listed[:PAGE_SIZE]:
            try:  # as_of: each memory as it stood then; one not recorded yet is not listed
                got = view.tool("memory_get", id=item["id"], as_of=as_of)
            except NotFound:
                continue
            rows.append([link(url(f"/memories/{item['id']}", as_of=as_of), item["id"]), got["namespace"].get("type"),
                         got["status"], item["recorded_at"], _snippet(got.get("source_text"))])
        parts.append(h("p", {"class": "hint"}, f"Memories you may read as they stood at {as_of}, oldest first."
                       if as_of else "Current memories you may read, oldest first."))
        parts.append(table(["memory", "namespace", "status", "recorded", "text"], rows, class_="memories")
                     if rows else h("p", None, "No memories you may read."))
        keep = {k: v for k, v in params.items() if k not in ("offset", "token")}
        nav = [link(url("/memories", **keep, offset=max(0, offset - PAGE_SIZE)), "← previous")] if offset else []
        if len(listed) > PAGE_SIZE:
            nav.append(link(url("/memories", **keep, offset=offset + PAGE_SIZE), "next →"))
        parts.append(h("nav", {"class": "pager"}, nav))
    return Page("Memories", join(parts))


def memory_page(view: View, params: Mapping[str, str], ident: str) -> Page:
    as_of = text(params, "as_of", 64)
    got = view.tool("memory_get", id=ident, as_of=as_of)
    ns = got["namespace"]
    linked = lambda ids: join([link(url(f"/memories/{i}"), i), " "] for i in ids) or "—"  # noqa: E731
    parts = [
        form(f"/memories/{got['id']}", [field_input("As of", "as_of", as_of, "2026-05-01T12:00", 18)], "Show"),
        h("h2", None, "Exact text"),
        h("pre", {"class": "source-text"}, got["source_text"]) if got.get("source_text") is not None
        else h("p", {"class": "warning"}, "The text was erased; the id and history remain."),
        definitions([
            ("id", code(got["id"])), ("namespace", f"{ns.get('type')}" + (f" {ns['id']}" if ns.get("id") else "")),
            ("kind", got["kind"]), ("lifetime", got.get("lifetime") or "—"),
            ("status", h("strong", None, got["status"])),
            ("current", "yes" if got["current"] else "no"), ("recorded", got["recorded_at"]),
            ("valid", f"{got.get('valid_from') or '—'} → {got.get('valid_to') or 'open'}"),
            ("by", f"{got['principal']} ({got['trust']})"), ("version", got["version"]),
            ("supersedes", linked(got.get("supersedes") or [])),
            ("superseded by", linked([got["superseded_by"]] if got.get("superseded_by") else [])),
            ("as of", got.get("as_of") or "now"),
        ]),
        h("h2", None, "History"),
        table(["at", "status", "reason", "by"], [[e["at"], e["status"], e.get("reason") or "", e.get("principal") or ""]
                                                 for e in got["history"]], class_="history"),
        h("h2", None, "Projections (facts it states)"),
        table(["fact", "statement", "quality"], [[why_link(p["fact"]) if p.get("fact") else "", p.get("statement"),
                                                  p.get("quality")] for p in got["projections"]], class_="projections")
        if got["projections"] else h("p", None, "None."),
    ]
    return Page(f"Memory {got['id']}", join(parts))


# --- Observations -------------------------------------------------------------------------------------------
def observations(view: View, params: Mapping[str, str]) -> Page:
    entity, tag = text(params, "entity", 512), text(params, "tag", 64)
    formation, per = text(params, "formation", 128), text(params, "per", 8)
    if per not in (None, "hour", "day"):
        raise InvalidArguments("'per' must be hour or day", argument="per")
    offset = number(params, "offset")
    found = view.detect()
    everything, total_seen = view.observed()
    marks: dict[str, list[str]] = {}
    for finding in found["findings"]:
        for hedge in finding.get("hedge_tags", []):
            marks.setdefault(hedge, []).append(finding["pattern"])
    if formation is None:
        timeline = observation_timeline(view.memory.repository, view.context, entity=entity, tag=tag, limit=PAGE_SIZE,
                                        offset=offset)
        listed, total = timeline["items"], timeline["total"]
    else:  # the store filters by entity and tag only: the rest from the listing kept for the chart
        chosen = [o for o in everything if o["formation"] == formation and (entity is None or entity in o["members"])
                  and (tag is None or o["hedge_tag"] == tag)]
        listed, total = chosen[offset:offset + PAGE_SIZE], len(chosen)
    rows = []
    for o in listed:
        flagged = marks.get(o["hedge_tag"], [])
        rows.append(h("tr", {"class": "flagged" if flagged else ("retracted" if o["retracted_at"] else None)},
                      h("td", None, o["event_time"]), h("td", {"id": o["hedge_tag"]}, o["hedge_tag"]),
                      h("td", None, o["formation"]),
                      h("td", None, join([link(url("/observations", entity=m), m), " "] for m in o["members"])),
                      h("td", None, o["weight"]),
                      h("td", None, join([h("span", {"class": "finding"}, p), " "] for p in sorted(set(flagged))),
                        "retracted" if o["retracted_at"] else "")))
    findings = table(
        ["pattern", "score", "entities", "observations", "certainty"],
        [[f["pattern"], f["score"],
          join([link(url("/observations", entity=n), n), " "] for n in f["nodes"][:12]) if f["nodes"] else
          join([link(url("/observations", tag=t), t), " "] for t in f.get("hedge_tags", [])[:6]),
          f.get("edge_count", len(f.get("hedge_tags", []))),
          h("span", {"class": "uncertain"}, "uncertain: the store is too small for this detector — ",
            f["details"]["small_store"]) if f.get("details", {}).get("small_store") else "as the thresholds say"]
         for f in found["findings"]], class_="findings")
    summary = found["summary"]
    # The pictures: every observation the filter keeps (retracted ones left out, as detect leaves them out).
    drawn = [o for o in everything if o["retracted_at"] is None and (entity is None or entity in o["members"])
             and (formation is None or o["formation"] == formation)]
    time_of = {o["hedge_tag"]: o["event_ts"] for o in everything}
    drawn_tags = {o["hedge_tag"] for o in drawn}
    relevant = [f for f in found["findings"] if (entity is None and formation is None)
                or entity in f.get("nodes", []) or drawn_tags & set(f.get("hedge_tags", []))]
    chart = activity_svg([o["event_ts"] for o in drawn], {o["event_ts"] for o in drawn if o["hedge_tag"] in marks},
                         finding_marks(relevant, time_of), per)
    in_findings = {n for f in relevant for n in f.get("nodes", [])}
    graph, left_out = entity_svg(drawn, in_findings, entity)
    cut = total_seen - len(everything)
    formations = sorted({o["formation"] for o in everything if o["formation"]})
    parts = [
        form("/observations", [field_input("Entity", "entity", entity, "host:web1", 24),
                               field_select("Formation", "formation", formation, formations),
                               field_select("Per", "per", per, ["hour", "day"], "auto"),
                               field_input("Tag", "tag", tag, "HEDGE-1", 12)], "Filter"),
        h("section", None, h("h2", None, f"Activity over time ({len(drawn)} observations)"),
          h("p", {"class": "hint"}, "Observations per bar; orange bars hold observations a finding cites; red spans "
                                    "mark when each finding happened (a ? after its name: the store is too small "
                                    "for that detector to be sure)."
                                    + (f" Drawn from the newest {len(everything)} of {total_seen} observations."
                                       if cut else "")),
          h("div", {"class": "graph-box"}, chart) if chart else h("p", None, "No observations to draw.")),
        h("section", None, h("h2", None, f"What detect found ({summary['findings']}; risk "
                                         f"{summary['risk_score']}, {summary['edges_scanned']} observations scanned)"),
          findings if found["findings"] else h("p", None, "No findings."),
          h("details", {"class": "thresholds"}, h("summary", None, "The thresholds each pattern must cross "
                                                                   f"(sensitivity {summary['sensitivity']})"),
            thresholds_table(summary.get("thresholds", {})))),
        h("section", None, h("h2", None, "Who was observed with what"),
          h("p", {"class": "hint"}, "Each line joins two entities observed together, as thick as the number of "
                                    "observations they share; orange: in a finding. Click one to filter by it."
                                    + (f" The {MAX_ENTITIES} most observed are drawn; {left_out} more are not."
                                       if left_out else "")),
          h("div", {"class": "graph-box"}, graph) if graph else h("p", None, "No entities to draw.")),
        h("section", None, h("h2", None, f"Timeline ({total})"),
          h("p", {"class": "hint"}, "Newest first; rows detect flagged are marked."),
          h("table", {"class": "timeline"},
            h("thead", None, h("tr", None, [h("th", None, c) for c in
                                            ("time", "tag", "formation", "members", "weight", "marks")])),
            h("tbody", None, rows)) if rows else h("p", None, "No observations match."),
          pager("/observations", params, offset, len(rows), total)),
    ]
    return Page("Observations", join(parts))


# --- Audit --------------------------------------------------------------------------------------------------
def changed(row: dict) -> Markup:
    """A link to what an audit row changed, from its payload."""
    try:
        payload = json.loads(row["payload"])
    except ValueError:
        return Markup("")
    op, segment = row["operation"], row["memory"]
    segment = None if segment == "default" else segment
    if not isinstance(payload, dict) or payload.get("redacted_at"):
        return h("span", {"class": "hint"}, "redacted")
    if op in ("remember_fact", "forget_fact", "upsert_fact", "assume_fact", "record_proof") and \
            isinstance(payload.get("fact"), str):
        return why_link(payload["fact"], segment)
    if op == "update_fact" and isinstance(payload.get("new"), str):
        return why_link(payload["new"], segment)
    if op == "define_rule" and payload.get("rule_id") is not None:
        return link(url("/", memory=segment) + f"#rule-{int(payload['rule_id'])}", f"rule {payload['rule_id']}")
    if op in ("retract_assumption",) and isinstance(payload.get("assumption"), str):
        return link(url("/beliefs", assumption=payload["assumption"], memory=segment), payload["assumption"])
    if op == "memory_remember" and isinstance(payload.get("id"), str):
        return link(url(f"/memories/{payload['id']}"), payload["id"])
    if op == "memory_forget" and isinstance(payload.get("ids"), list):
        return join([link(url(f"/memories/{i}"), i), " "] for i in payload["ids"] if isinstance(i, str))
    if op == "remember" and isinstance(payload.get("edge_id"), int):
        tag = f"HEDGE-{payload['edge_id']}"
        return link(url("/observations", tag=tag), tag)
    if op in ("remember_observations", "forget_observation"):
        return link(url("/observations"), "observations")
    if op in ("create_memory", "mount_memory", "unmount_memory", "materialize", "import_facts", "import_program",
              "rename_predicate", "clear_context", "restore_snapshot") and row["memory"]:
        return link(url("/", memory=segment), row["memory"])
    return Markup("")


def audit(view: View, params: Mapping[str, str]) -> Page:
    chosen = AuditFilter(text(params, "actor", 256), text(params, "operation", 64), text(params, "since", 64),
                         text(params, "until", 64))
    offset = number(params, "offset")
    log = audit_events(view.memory.repository, view.context, chosen, PAGE_SIZE, offset)
    rows = [[e["id"], e["at"], e["actor"], e["operation"], e["memory"] or "", e["summary"], changed(e)]
            for e in log["items"]]
    parts = [
        form("/audit", [field_select("Actor", "actor", chosen.actor, log["actors"]),
                        field_select("Operation", "operation", chosen.operation, log["operations"]),
                        field_input("Since", "since", chosen.since, "2026-05-01", 14),
                        field_input("Until", "until", chosen.until, "2026-06-01", 14)], "Filter"),
        table(["#", "at (UTC)", "actor", "operation", "segment", "what happened", "changed"], rows, class_="audit")
        if rows else h("p", None, "No change matches."),
        pager("/audit", params, offset, len(rows), log["total"]),
    ]
    return Page("Audit", join(parts))


PAGES: dict[str, Callable[[View, Mapping[str, str]], Page]] = {
    "/": knowledge, "/facts": facts, "/query": query, "/why": why, "/beliefs": beliefs, "/memories": memories,
    "/observations": observations, "/audit": audit,
}
# Pages reached from another page highlight that one in the navigation.
NAV_PARENT = {"/facts": "/", "/why": "/query"}
NAV = [("/", "Knowledge"), ("/query", "Query and why"), ("/beliefs", "Beliefs"), ("/memories", "Memories"),
       ("/observations", "Observations"), ("/audit", "Audit")]
