"""What the server teaches a model about its own use: the `initialize` instructions (a routing guide), the
prompts, and the conventions resource. The conventions are read from what the code and the database use
(the formation rules table, verify's relation words, detect's thresholds), so they cannot drift from them.

Plain text and records; the MCP adapter maps them onto instructions, prompts and resources."""

from __future__ import annotations

from dataclasses import dataclass, field

INSTRUCTIONS = (
    "Durable, explainable memory; pick the family by what you hold. A stable truth: remember_fact, define_rule, "
    "then query_logic and explain_why (proofs end in stored facts). Exact text (a quote, a decision and its "
    "reasons): memory_remember, optionally with projections that become facts, then memory_search and "
    "memory_get. A time-stamped event: remember with type:id members (host:db01, account:admin), then recall, "
    "prove, and verify an answer before giving it (cite HEDGE-, RULE-, STEP- tags from recall and prove). "
    "Reply lines starting with % are notes: warnings, cut pages, what was not understood. More tools "
    "(assumptions, snapshots, segments, bulk edits): enable_toolsets. Conventions (formations, verify's "
    "words, detect's thresholds, the Datalog dialect): the datalog-memory://guide/conventions resource. Memories "
    "go to the session's namespace unless the host names a project (DATALOG_MEMORY_PROJECT_REMOTE)."
)


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str
    required: bool = True


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str
    description: str
    template: str  # str.format with the arguments
    arguments: tuple[PromptArgument, ...] = field(default_factory=tuple)

    def render(self, arguments: dict[str, str] | None) -> str:
        given = dict(arguments or {})
        missing = [a.name for a in self.arguments if a.required and not given.get(a.name)]
        if missing:
            raise KeyError(", ".join(missing))
        values = {a.name: given.get(a.name, "") for a in self.arguments}
        return self.template.format(**values)


PROMPTS: tuple[Prompt, ...] = (
    Prompt("use_memory", "Use this memory", "How to store and find facts, texts and events here, and check answers",
           INSTRUCTIONS + "\n\nBefore answering from memory: query or recall first, and say what was not found "
           "rather than guessing; an empty answer with a % warning means the question was misspelled, not "
           "answered."),
    Prompt("explain_conclusion", "Explain a conclusion", "Why a conclusion holds, down to the stored evidence",
           "Explain why {fact} holds. Call explain_why with fact \"{fact}\". If proven is false, say so and call "
           "query_logic on its predicate with variables to show what does hold. Otherwise walk the proof from the "
           "root: name each rule applied and end every branch at its stored facts and their supports "
           "(asserted, assumption:<name>, source:<memory id>); for a source memory, quote it with memory_get. "
           "Say which assumptions the conclusion rests on (get_belief_status, after enable_toolsets beliefs).",
           (PromptArgument("fact", "A ground fact, e.g. risky(deploy_v3)"),)),
    Prompt("incident_summary", "Write an incident summary that passes verify",
           "A summary of observations whose every sentence verify keeps",
           "Write an incident summary about: {topic}. First call recall with query \"{topic}\" and prove with the "
           "same query. Write one claim per sentence, each ending with the tags of the observations or proof "
           "steps it rests on, e.g. [HEDGE-12] or [STEP-3]. Use the evidence's own words: the entity names as "
           "stored (host:db01), the formation's verbs (see datalog-memory://guide/conventions), a conclusion's "
           "predicate or rule name, counts as 'N times' counted over the cited observations, and times or dates "
           "instead of 'then' or 'after'. Then call verify with the answer and the same query; read each % "
           "stripped line, rewrite or drop those sentences, and verify again. Give only what verify kept.",
           (PromptArgument("topic", "What happened, with entities and a time window, e.g. host:db01 yesterday"),)),
)


def prompt(name: str) -> Prompt | None:
    return next((p for p in PROMPTS if p.name == name), None)


def conventions(memory) -> str:
    """The conventions resource: Markdown a model reads once, from the live tables and constants."""
    from .evidence.claims import RELATIONS
    from .evidence.detect import thresholds
    from .evidence.observations import DEFAULT_FORMATION

    lines = ["# Conventions", "", "## Observations (remember)", "",
             "A member is type:id (host:db01, account:admin, ip:203.0.113.7); its type is the part before the "
             "colon. The structural formation is the first rule that matches the members' types; rules see it "
             "as hedge(E, Formation, Ts, Weight), with member(E, Entity) and entity_type(Entity, Type), every "
             "name a quoted atom: hedge(E, 'AUTH_EVENT', T, _), member(E, 'host:db01'), entity_type(A, account). "
             "Your own formation label is kept, shown by recall and accepted by verify as words, but rules do "
             "not see it: to reason over an outcome, make it a member (outcome:failed).", "",
             "| formation | member types | meaning |", "| --- | --- | --- |"]
    lines += [f"| {f} | {' + '.join(types)} | {meaning} |" for f, types, meaning in memory.observations.formation_rules()]
    lines += [f"| {DEFAULT_FORMATION} | anything else | no rule matched |", "", "## verify's words", "",
              "A factual sentence is kept when it cites allowed tags (HEDGE-<id> from recall, RULE-<id> and "
              "STEP-<n> from prove) and says only what they carry: the cited observations' entities and types, "
              "their dates and times, counts over them ('3 times', 'in 3 observations'), the relation words of "
              "their formation below, your label's words, and a conclusion's predicate and rule names. Order "
              "words (then, after) and negation are stripped; a sentence without a claim is kept as it is.", ""]
    lines += [f"- {formation}: {words}" for formation, words in RELATIONS.items()]
    lines += ["", "## detect's thresholds (sensitivity 1; above 1 finds more)", ""]
    lines += [f"- {pattern}: " + ", ".join(f"{k} {v}" for k, v in values.items())
              for pattern, values in thresholds().items()]
    lines += ["", "## The Datalog dialect", "",
              "Prolog syntax: atoms, 'quoted atoms', \"strings\", integers, floats, Variables, compound terms, "
              "lists. Rules Head :- Body with , ; \\+ (negation), = \\= == \\== < > =< >= @< @> @=< @>=, "
              "X is Expr, aggregate_all(count|sum(E)|max(E)|min(E)|bag(E)|set(E), Goal, Result); seg:pred(...) "
              "reads another mounted segment. A rule must be safe (every head variable bound by a positive "
              "literal; a variable only inside a negation or aggregate is local to it) and stratified (no "
              "negation or aggregate through recursion); a negation or aggregate that shares a variable bound "
              "only after it is refused with a reason (move it after the literal that binds the variable).", "",
              "## Scopes of source memories", "",
              "scope auto writes to the project when the host names one (DATALOG_MEMORY_PROJECT_REMOTE), else to "
              "the session's namespace; global needs the memory_write_global capability. Projections become "
              "facts of the default segment, supported by their memory; they are not part of snapshots."]
    return "\n".join(lines) + "\n"
