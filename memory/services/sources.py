"""Source memories: remembered exactly, read, searched, recalled (through rules too) and forgotten."""

from __future__ import annotations

from ..errors import NotFound
from ..knowledge.consequences import Consequences
from ..knowledge.parsing import parse_fact
from ..knowledge.segments import DEFAULT, resolve
from ..sources import SourceMemories, recall, search
from ..sources.derived import derived_recall
from ..sources.memories import FORGET_LISTED, SUPPORT_KIND
from ..sources.search import render_recall
from ..terms import indicator
from .bases import KnowledgeBases


class SourceService:
    def __init__(self, bases: KnowledgeBases, memories: SourceMemories) -> None:
        self.bases = bases
        self.memories = memories

    def memory_remember(self, memory: str, scope: str = "auto", retention: str = "long_term", kind: str = "text",
                        projections: list | None = None, idempotency_key: str | None = None,
                        supersedes: list | None = None, valid_from: str | None = None,
                        valid_to: str | None = None) -> dict:
        return self.memories.remember(memory, scope, retention, kind, projections, idempotency_key, supersedes,
                                      valid_from, valid_to)

    def memory_get(self, id: str, as_of: str | None = None) -> dict:
        return self.memories.get(id, as_of)

    def memory_search(self, query: str, scope: str = "all_visible", history: bool = False, limit: int | None = None,
                      kind: str | None = None, as_of: str | None = None, mode: str = "auto") -> dict:
        return search(self.memories, query, scope, history, limit, kind, as_of, mode)

    def memory_recall(self, predicate: str, arguments: list | None = None, include_source: bool = False,
                      limit: int | None = None, as_of: str | None = None, scope: str = "all_visible") -> dict:
        """Projections matching predicate(arguments…); when rules define the predicate, also the conclusions
        they derive from the caller's memories (as they stood at `as_of`, if given), under `derived`."""
        result = recall(self.memories, predicate, arguments, include_source, limit, as_of, scope)
        if scope == "all_visible":
            derived = derived_recall(self.bases.project, self.memories, predicate, arguments, include_source,
                                     result["limit"], result["as_of"])
            result["derived"] = derived[:result["limit"]]
            result["truncated"] = result["truncated"] or len(derived) > result["limit"]
            result["content"] = render_recall(result["memories"], result["pattern"], result["derived"])
            if result["as_of"] is not None and result["derived"]:
                result["content"] += (f"\n\nDerived with the rules as they are now, over the memories current at "
                                      f"{result['as_of']} and the facts that rest on no memory.")
        return result

    def memory_forget(self, ids: list | None = None, query: str | None = None, action: str = "expire",
                      reason: str | None = None, erase: bool = False, dry_run: bool = False,
                      limit: int | None = None, superseded_by: str | None = None) -> dict:
        """Forget memories by id; the result also says which conclusions resting on their projections fell. A
        query only previews (one search): what it lists is then forgotten by id."""
        listed = FORGET_LISTED if limit is None else limit
        if dry_run or query is not None:
            return self.memories.forget(ids, query, action, reason, erase, True, listed, superseded_by)
        plan = self.memories.forget(ids, None, action, reason, erase, True, listed, superseded_by)  # checked
        kb = self.bases.project
        with kb.repository.read() as tx:
            segment = resolve(tx, DEFAULT)
            projected = [text for target in plan["targets"]
                         for text, _ in tx.supports.facts_with(segment.id, SUPPORT_KIND, target["id"])]
        consequences = Consequences(kb, DEFAULT, {indicator(parse_fact(t)) for t in projected})
        result = self.memories.forget(ids, None, action, reason, erase, False, listed, superseded_by)
        return {**result, **consequences.withdrawn(result["removed_facts"]).to_dict()}

    # --- browsing (the resources and the explorer) -------------------------------------------
    def listing(self, offset: int, limit: int) -> list[dict]:
        """The caller's current memories (id, kind, recorded_at), oldest first, one page."""
        return self.memories.listing(offset, limit)

    def not_found(self, ident: object) -> NotFound:
        """The one error for an unknown or invisible memory id."""
        return self.memories.not_found(ident)
