"""The answer gate: keep a factual sentence only if what it asserts is carried by the evidence it cites.

The answer is split into sentences and list items (`sentences`), and each is read into a
claim (`claims`: entities, types, numbers with their roles, dates and times, relation words,
negation, unknown names and words). A sentence with no claim at all ("Here is what I found.",
"Should we alert the team?"), a heading or a table's header row (`layout`) is kept as it is. Every other sentence must cite an allowed tag
(HEDGE-n, RULE-n, STEP-n from this query's recall and proofs) and then pass every check, or
it is stripped with the first reason that failed:

1. no impossible date, no negation (evidence records what happened, never what did not), no
   unknown name, no ordering word (before, after, first, …: not checked, state the times);
2. every entity and entity type it names is in the cited evidence, and the entities it names
   are related by the cited items: each pair joined by an item holding both, or by a chain
   of such items ("drone:x1 and drone:x2 were at sector:q" cites two sightings, each with
   sector:q; "drone:x1 was seen with admin" citing a sighting and a login is stripped);
3. every relation word is expressed by a cited item: an observation expresses the generic words
   (seen, observed, recorded, …), its formation's words (DRONE_EVENT: entered, flew, sighted,
   …; AUTH_EVENT: logged in, accessed, …; see claims.RELATIONS) and its own label's words; a
   proved conclusion expresses its predicate's and its rule's name words ("coordinated
   threat", "converged") and the proof words (derived, indicates, …); words are compared through
   the lemma table (`lexicon`: derived forms, synonyms, phrasal verbs). Citing every observation
   a proof rests on cites its conclusion too (the reference's "The two drones converged into a
   coordinated threat [HEDGE-0]."). A word no cited item expresses is stripped, however harmless
   it looks: the vocabulary is closed;
4. every relation word must be carried by cited items that, together, involve every entity and
   type the sentence names; a date, time or number only by the cited items that express every
   relation word of the sentence and each involve every entity and type it names (`_bearing`:
   a time of one drone's observation does not vouch for another drone, a sighting's weight of
   0.9 is not the threat's confidence), or, when the sentence joins several entities of one
   type that no cited item holds together, by items holding one of them that together hold
   all. A conclusion's times are those of the observations it rests on, each its own. The dates
   and times of one sentence must hold together on one cited event (`_at`: "at 14:30 on
   2026-03-26" is one login's time and day, never one login's time and another's day), and its
   counts and numbers are taken over the events that hold them;
5. numbers by role, over those bound items only, never over everything cited: a plain number
   is a weight, confidence (STEP-n's proved value), timestamp, member count or fact argument,
   exactly or rounded to the written precision when that is two decimals or more (never a member
   count: that counts no event); a percentage is a weight or confidence (80 % = 0.8); "2 drones at sector:q" counts the distinct drones of
   the cited observations at sector:q, "drone:x1 was seen 3 times" drone:x1's cited
   observations, "4 minutes apart" a gap between two of them, "within 10 minutes" the span of
   all of them; a relation only a conclusion says ("converged twice") counts conclusions, not the
   observations under them; a count of none is a negation.

`require_proof` allows only tags from proofs and abstains when nothing is proved."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import combinations

from ..terms import Compound, parse_term
from ..terms.codec import to_json
from ..validation import require_name, require_text
from .claims import (GENERIC_STEMS, PROOF_STEMS, RELATION_STEMS, RULE_STEM, RULE_VERB_STEMS, Claim, Names, Number,
                     is_question_to_user, plain_words, read_claim, stem, stems)
from .layout import is_layout
from .limits import MAX_ANSWER_CHARS
from .observations import entity_type
from .reasoning import proofs_of, run
from .recall import check_now
from .sentences import TAG, joined_lines, split_lines

ABSTAIN_TEXT = "I cannot answer this from verified memory."
KNOWN_STEMS = GENERIC_STEMS | PROOF_STEMS | RULE_VERB_STEMS | set().union(*RELATION_STEMS.values())


@dataclass
class Item:
    """One thing a tag vouches for: an observation, or a proved conclusion."""

    kind: str
    entities: set[str] = field(default_factory=set)
    types: set[str] = field(default_factory=set)
    numbers: set[float] = field(default_factory=set)
    moments: list[int] = field(default_factory=list)
    words: set[str] = field(default_factory=set)
    edges: frozenset = frozenset()
    says: str = ""
    requires: frozenset = frozenset()  # tags that must all be cited for this item to count (a proof's evidence)

    def involves(self, name: str) -> bool:
        return name in self.entities or any(e.split(":", 1)[-1] == name for e in self.entities)


def observation_item(edge: dict) -> Item:
    ts = edge.get("timestamp", edge.get("event_ts"))
    members = [m.lower() for m in edge["members"]]
    formation = edge["formation"]
    return Item("observation", set(members), {entity_type(m) for m in members},
                {float(ts), float(edge["weight"])}, [ts],  # never its member count: that counts no events
                GENERIC_STEMS | RELATION_STEMS.get(formation, stems(formation)) | stems(edge.get("label") or ""),
                frozenset((edge.get("id", edge.get("edge_id")),)), formation)


def fact_item(node: dict, kind: str) -> Item:
    """What a proof node's fact says: its predicate's words, and its arguments as entities or numbers."""
    item = Item(kind, says=node["fact"])
    term = parse_term(node["fact"])
    if isinstance(term, Compound):
        item.words |= stems(term.functor)
        for arg in term.args:
            value = to_json(arg)
            if isinstance(value, bool):
                continue
            if isinstance(value, (int, float)):
                item.numbers.add(float(value))
            else:
                name = (value if isinstance(value, str) else json.dumps(value)).lower()
                item.entities.add(name)
                item.types.add(entity_type(name))
                item.words |= stems(name) if entity_type(name) == "entity" else set()  # an atom's own words
    return item


def conclusion_item(node: dict, below: list[Item]) -> Item:
    item = fact_item(node, "conclusion")
    item.words |= stems(node.get("rule_id", "").removeprefix("rule:")) | PROOF_STEMS | GENERIC_STEMS
    item.numbers.add(float(node["confidence"]))
    # What a conclusion is about includes who its evidence involves; not when: its observations' times are
    # each one's own (the support items carry them), and pooled they would date one drone by another's sighting.
    for child in below:
        item.entities |= child.entities
        item.types |= child.types
        item.edges |= child.edges
    return item


def items_by_tag(recalled: list[dict], proofs: dict, proofs_only: bool) -> dict[str, list[Item]]:
    tags: dict[str, list[Item]] = {}
    held: dict[str, set[int]] = {}  # per tag, the items it already holds (by identity)

    def add(tag: str, items: list[Item]) -> None:
        ids = held.setdefault(tag, set())
        for item in items:
            if id(item) not in ids:
                ids.add(id(item))
                tags.setdefault(tag, []).append(item)

    observations: dict[str, Item] = {}
    if not proofs_only:
        for edge in recalled:
            observations[edge["hedge_tag"]] = observation_item(edge)
            add(edge["hedge_tag"], [observations[edge["hedge_tag"]]])
    for proof in proofs["proofs"]:
        below: dict[str, list[Item]] = {}  # node id -> its item and every item under it
        evidence: dict[str, set[str]] = {}  # node id -> the tags of the observations under it
        for node in proof["nodes"]:  # post-order: children come first
            linked = [link["from"] for link in proof["edges"] if link["to"] == node["id"]]
            children = [item for child in linked for item in below[child]]
            evidence[node["id"]] = set().union(*(evidence[child] for child in linked))
            if node["kind"] == "evidence":
                item = observations.setdefault(node["hedge_tag"], observation_item(node))
                add(node["hedge_tag"], [item])
                below[node["id"]] = [item]
                evidence[node["id"]] = {node["hedge_tag"]}
            elif node["kind"] == "conclusion":
                item = conclusion_item(node, children)
                # The conclusion's observations, saying its words too, carry its times: "converged at 20:26"
                # is the time of the sightings it rests on. They carry no numbers: a weight is no confidence.
                supports = [Item("support", o.entities, o.types, set(), o.moments, o.words | item.words, o.edges,
                                 o.says) for o in children if o.kind == "observation"]
                below[node["id"]] = [item, *children, *supports]
                add(node["step_tag"], below[node["id"]])
                add(node["rule_tag"], below[node["id"]])
                # Citing every observation a proof rests on cites its conclusion too, as the reference's own
                # example does ("The two drones converged into a coordinated threat [HEDGE-0]."): the
                # conclusion's items count only when all of those tags are cited.
                tags_under = frozenset(evidence[node["id"]])
                if tags_under:
                    joint = [Item(i.kind, i.entities, i.types, i.numbers, i.moments, i.words, i.edges, i.says,
                                  tags_under) for i in (item, *supports)]
                    for tag in tags_under:
                        add(tag, joint)
            elif node["kind"] == "fact":  # a stored fact the proof rests on: what it says is evidence too
                below[node["id"]] = [fact_item(node, "fact"), *children]
            else:
                below[node["id"]] = children
    return tags


def cited_items(tags: dict[str, list[Item]], cited: list[str]) -> list[Item]:
    """What the cited tags vouch for together: each item once, and a proof's conclusion only when every
    observation it rests on is cited."""
    given, seen, items = set(cited), set(), []
    for tag in cited:
        for item in tags[tag]:
            if id(item) not in seen and item.requires <= given:
                seen.add(id(item))
                items.append(item)
    return items


def _involving(items: list[Item], claim: Claim) -> bool:
    """Whether the items, together, involve every entity and type the claim names."""
    return all(any(i.involves(e) for i in items) for e in claim.entities) and \
        all(any(t in i.types for i in items) for t in claim.types)


def _unrelated(claim: Claim, items: list[Item]) -> list[list[str]]:
    """The groups of named entities that no cited item (nor chain of items) relates, when there are several:
    "drone:x1 was seen with admin" cites a sighting and a login, and neither holds both."""
    group = {e: e for e in claim.entities}

    def root(e: str) -> str:
        while group[e] != e:
            e = group[e]
        return e

    for item in items:
        held = [e for e in claim.entities if item.involves(e)]
        for e in held[1:]:
            group[root(e)] = root(held[0])
    groups: dict[str, list[str]] = {}
    for e in sorted(claim.entities):
        groups.setdefault(root(e), []).append(e)
    return list(groups.values()) if len(groups) > 1 else []


def _conjoined(groups: list[list[str]], items: list[Item]) -> bool:
    """Whether the unrelated names are a plain conjunction of entities of one type and nothing else ("account:dave
    and account:mallory logged in at 10:00"): each is then checked on its own items, as two sentences would be.
    "drone:x1 was seen with admin" joins two types, and "drone:x3 and drone:x1 were at sector:q" names a sector
    only one of them was at: neither is a conjunction."""
    return all(len(group) == 1 for group in groups) and len({_kind(group[0], items) for group in groups}) == 1


def _plain_conjunction(claim: Claim, groups: list[list[str]], items: list[Item]) -> bool:
    # Without numbers only: "drone:x1 and drone:x3 were seen 2 times" may mean each or both.
    return not claim.numbers and _conjoined(groups, items)


def _named(claim: Claim) -> str:
    return ", ".join(sorted(claim.entities | claim.types)) or "the subject"


def _saying(items: list[Item], claim: Claim) -> list[Item]:
    """The items that express every relation word of the claim: only they carry its numbers and times."""
    return [i for i in items if all(_says(i, root, claim) for root in claim.relations)]


def _says(item: Item, root: str, claim: Claim) -> bool:
    """Whether the item expresses the relation word: its own words, or, for a conclusion in a sentence about a
    rule, the verbs that say a rule produced it ("the converge rule fired")."""
    return root in item.words or \
        (item.kind == "conclusion" and root in RULE_VERB_STEMS and RULE_STEM in claim.relations)


def _kind(name: str, items: list[Item]) -> str:
    """The type of an entity the sentence names: its own, or, for a bare name ("admin"), the cited one's."""
    if ":" in name:
        return entity_type(name)
    return min((entity_type(e) for i in items for e in i.entities if e.split(":", 1)[-1] == name), default="entity")


def _bearing(items: list[Item], claim: Claim, counted: str | None = None) -> list[Item]:
    """The items a number, date or time of the claim may come from: those that express its relation words and
    each involve every entity and type the sentence names (the type counted aside). Only when no such item is
    cited, because the sentence joins several entities of one type ("drone:x1 and drone:x2 were at sector:q",
    two sightings), does an item involving one of each type's named entities bear on it; callers then check
    that those items, together, involve them all. Never all cited items: "drone:x1 was seen 3 times" counts
    drone:x1's sightings, not the sightings cited."""
    saying = [i for i in _saying(items, claim) if all(t in i.types for t in claim.types - {counted})]
    full = [i for i in saying if all(i.involves(e) for e in claim.entities)]
    if full:
        return full
    joined: dict[str, list[str]] = {}
    for e in claim.entities:
        joined.setdefault(_kind(e, items), []).append(e)
    if all(len(names) < 2 for names in joined.values()):
        return []
    return [i for i in saying if all(any(i.involves(e) for e in names) for names in joined.values())]


def _at(items: list[Item], claim: Claim) -> list[Item]:
    """The items that carry every date and time the claim states, each on one of its own events: a count or
    a number of a sentence that gives a date is over what happened then ("Two accounts logged in on
    2026-03-20" counts the logins of that day, not all those cited)."""
    return [i for i in items if all(any(m.holds(ts) for ts in i.moments) for m in claim.moments)]


def _number_reason(number: Number, claim: Claim, items: list[Item]) -> str | None:
    # Counts and gaps are over events and the entities they hold: a conclusion holds all of its evidence's
    # entities at once, so they are taken from the observations (and their proof-step copies) instead.
    events = [i for i in items if i.kind in ("observation", "support")]
    if number.role in ("count", "observations") and number.value == 0:
        return f"'{number.text}' says what did not happen: the evidence records what happened"
    if number.role == "count":
        distinct = {e for i in _bearing(events, claim, number.unit) for e in i.entities
                    if entity_type(e) == number.unit}
        return None if len(distinct) == number.value else \
            f"{number.text} {number.unit}(s): the cited evidence has {len(distinct)} for {_named(claim)}"
    if number.role == "observations":
        # A relation only a conclusion says ("converged twice") happened once per conclusion, whatever the number
        # of observations it rests on: count the distinct sets of evidence behind the conclusions that say it.
        concluded = [root for root in claim.relations
                     if not any(_says(i, root, claim) for i in items if i.kind == "observation")]
        if concluded:
            found = {i.edges for i in items if i.kind == "conclusion" and all(_says(i, r, claim) for r in concluded)
                     and all(i.involves(e) for e in claim.entities) and claim.types <= i.types}
            return None if len(found) == number.value else \
                f"{number.text} time(s): the cited conclusions say it {len(found)} time(s) for {_named(claim)}"
        edges = {e for i in _bearing(events, claim) for e in i.edges}
        return None if len(edges) == number.value else \
            f"{number.text} observation(s): the cited evidence has {len(edges)} for {_named(claim)}"
    if number.role in ("duration", "within"):
        bearing = [i for i in _bearing(events, claim) if i.moments]
        if number.role == "within":
            moments = sorted({ts for i in bearing for ts in i.moments})
            ok = len(moments) > 1 and _involving(bearing, claim) and moments[-1] - moments[0] <= \
                number.value * number.unit
        else:  # a gap between two events that, together, involve everything the sentence names
            ok = any(round(abs(b - a) / number.unit, number.decimals) == number.value
                     for i, j in combinations(bearing, 2) if i.edges != j.edges and _involving([i, j], claim)
                     for a in i.moments for b in j.moments)
        return None if ok else f"duration '{number.text}' is not between cited events of {_named(claim)}"
    carrying = [i for i in items if any(number.matches(v) for v in i.numbers)]
    if not carrying:
        return f"number {number.text} is not in the cited evidence"
    if not _saying(carrying, claim):
        return f"number {number.text} is in the cited evidence, but not as what the sentence says it is"
    carrying = [i for i in _bearing(items, claim) if any(number.matches(v) for v in i.numbers)]
    if not carrying or not _involving(carrying, claim):
        return f"number {number.text} is in the cited evidence, but not for {_named(claim)}"
    return None


def aligned(claim: Claim, items: list[Item]) -> str | None:
    """Why the claim is not carried by the items, or None when it is."""
    if claim.invalid:
        return claim.invalid
    if claim.negation:
        return f"negation ('{claim.negation}'): the evidence records what happened, not what did not"
    for name in claim.unknown_names:  # a proved fact may name one: owner('host:db01', alice)
        if not any(stem(name) in i.words for i in items):
            return f"unknown name '{name}': not in the cited evidence"
    if claim.ordering:
        return f"order of events ('{claim.ordering}') is not checked: state the times instead"
    for entity in sorted(claim.entities):
        if not any(i.involves(entity) for i in items):
            return f"entity {entity} is not in the cited evidence"
    for kind in sorted(claim.types):
        if not any(kind in i.types for i in items):
            return f"no {kind} in the cited evidence"
    apart = _unrelated(claim, items)
    if apart and not _plain_conjunction(claim, apart, items):
        return f"no cited evidence relates {' and '.join(', '.join(group) for group in apart)}"
    for root, word in claim.relations.items():
        saying = [i for i in items if _says(i, root, claim)]
        if not saying:
            if root not in KNOWN_STEMS:
                return f"'{word}' is not something the cited evidence can say"
            return f"'{word}' is not what the cited evidence says ({', '.join(sorted({i.says for i in items}))})"
        if not _involving(saying, claim):
            return f"'{word}' is in the cited evidence, but not for {_named(claim)}"
    for moment in claim.moments:
        holding = [i for i in items if any(moment.holds(ts) for ts in i.moments)]
        if not holding:
            return f"date or time '{moment.text}' is not in the cited evidence"
        if not _saying(holding, claim):
            return f"date or time '{moment.text}' is in the cited evidence, but not of what the sentence says"
        holding = [i for i in _bearing([i for i in items if i.moments], claim)
                   if any(moment.holds(ts) for ts in i.moments)]
        if not holding or not _involving(holding, claim):
            return f"date or time '{moment.text}' is in the cited evidence, but not for {_named(claim)}"
    if len(claim.moments) > 1:  # "at 14:30 on 2026-03-26": one event's date and time, never two events' parts
        together = _at(_bearing([i for i in items if i.moments], claim), claim)
        if not together or not _involving(together, claim):
            return f"dates and times {', '.join(repr(m.text) for m in claim.moments)} are not of one cited " \
                   f"event of {_named(claim)}"
    for number in claim.numbers:
        reason = _number_reason(number, claim, _at(items, claim))
        if reason:
            return reason
    return None


def verify(kb, answer: str, query: str = "", require_proof: bool = False, goal_pred: str | None = None,
           top_k: int | None = None, memory: str | None = None, now: object = None) -> dict:
    answer = require_text("answer", answer, max_chars=MAX_ANSWER_CHARS)
    if goal_pred is not None:
        require_name("goal_pred", goal_pred)
    moment = check_now(now, kb.store.clock)
    reasoning = run(kb, query, top_k, memory, moment)  # recalls the query's edges once, for proofs and tags alike
    proofs = proofs_of(kb, reasoning, query, goal_pred)
    with kb.repository.read() as tx:
        tags = items_by_tag([e.to_dict() for e in reasoning.edges.values()], proofs, require_proof)
        types = tx.entities.types()
        proved = proofs["count"] > 0
        allowed = sorted(tags, key=lambda t: (t.split("-")[0], int(t.split("-")[1])))
        sentences, kept, names = [], [], Names(tx)
        numbered = split_lines(answer)
        units = [unit for _, unit in numbered]
        for position, (line, unit) in enumerate(numbered):
            claim = read_claim(names, unit, moment, types)
            words = plain_words(unit)
            following = units[position + 1] if position + 1 < len(units) else None
            factual = claim.is_factual and not is_question_to_user(claim, words) \
                and not is_layout(unit, following, claim, words, types)
            cited = list(dict.fromkeys(TAG.findall(unit)))
            reason = None
            if factual:
                usable = [t for t in cited if t in tags]
                if not cited:
                    reason = "no citation"
                elif not usable:
                    reason = f"cites no allowed tag ({', '.join(cited)})"
                else:
                    reason = aligned(claim, cited_items(tags, usable))
            sentences.append({"text": unit, "factual": factual, "tags": cited, "kept": reason is None,
                              "reason": reason})
            if reason is None:
                kept.append((line, unit))
    factual = [s for s in sentences if s["factual"]]
    supported = [s for s in factual if s["kept"]]
    stripped = [{"sentence": s["text"], "reason": s["reason"]} for s in factual if not s["kept"]]
    coverage = len(supported) / len(factual) if factual else 1.0
    if require_proof and not proved:
        outcome, why = "abstained", "require_proof: nothing was proved"
    elif factual and not supported:
        outcome, why = "abstained", "no factual sentence is supported"
    else:
        outcome, why = ("supported" if not stripped else "stripped"), None
    text = ABSTAIN_TEXT if outcome == "abstained" else joined_lines(answer, kept)
    return {"outcome": outcome, "abstained": outcome == "abstained", "abstain_reason": why,
            "coverage": round(coverage, 6), "supported_count": len(supported), "stripped_count": len(stripped),
            "stripped": stripped, "answer": text, "allowed_tags": allowed, "proved": proved,
            "derived_count": proofs["derived_count"], "sentences": sentences}
