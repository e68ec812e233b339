"""The source-memory families of the repository (source_memories, memory_projections, memory_words, fulltext), on
each store: what they write, what they read back, and what their filters of a read keep."""

from __future__ import annotations

import pytest

from memory.store import open_store
from memory.store.repository import (KeyHolder, MemoryEvent, MemoryListing, NewMemory, NewProjection, ProjectedFact,
                                     ProjectionRow, Repository, StoredMemory, WordOverlap)

T0, T1, T2, T3 = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z"


@pytest.fixture
def repo(store_location):
    store = open_store(store_location)
    yield Repository(store)
    store.close()


def new_memory(n: int, namespace: str = "global", key: str | None = None, at: str = T0, text_words: int = 3,
               valid_to: str | None = None) -> NewMemory:
    return NewMemory(source_id=f"src_{n}", memory_id=f"mem_{n}", text=f"text {n}", sha256=f"digest {n}",
                     principal="ann", source_class="user_explicit", trust="user_explicit", namespace=namespace,
                     lifetime="long_term", kind="text", idempotency_key=key, valid_from=at, valid_to=valid_to, now=at,
                     text_words=text_words, statement_words=0)


def remember(repo: Repository, *memories: NewMemory) -> list[int]:
    """Stores each memory with its first lifecycle event; their seqs."""
    seqs = []
    with repo.write() as tx:
        for m in memories:
            seqs.append(tx.source_memories.add(m))
            tx.source_memories.add_event(m.memory_id, m.now, "active", None, m.principal)
    return seqs


def test_a_memory_is_read_back_with_its_source_by_id_and_by_key(repo):
    seq, = remember(repo, new_memory(1, key="k1"))
    with repo.read() as tx:
        stored = tx.source_memories.by_id("mem_1")
        assert stored == StoredMemory(seq, "mem_1", "src_1", "global", "long_term", "text", "active", None, "k1", "ann",
                                      T0, None, T0, 1, "text 1", "digest 1", "user_explicit", "user_explicit", T0, None)
        assert tx.source_memories.by_key("global", "k1") == stored
        assert tx.source_memories.by_key("session:bob/1", "k1") is None
        assert tx.source_memories.by_id("mem_2") is None
        assert tx.source_memories.source_text("src_1") == "text 1"
        assert tx.source_memories.history("mem_1", T3) == [MemoryEvent(T0, "active", None, "ann")]
        assert tx.source_memories.status_at("mem_1", T0) == "active"
        assert tx.source_memories.status_at("mem_1", "2025-12-31T00:00:00Z") is None


def test_ending_a_memory_records_its_successor_and_its_status_through_time(repo):
    remember(repo, new_memory(1), new_memory(2, at=T1), new_memory(3, at=T1))
    with repo.write() as tx:
        tx.source_memories.end("mem_1", "superseded", "mem_2", T2)
        tx.source_memories.add_event("mem_1", T2, "superseded", "superseded by mem_2", "ann")
        tx.source_memories.end("mem_3", "expired", None, T2)
        tx.source_memories.add_event("mem_3", T2, "expired", "done", "bob")
    with repo.read() as tx:
        first, third = tx.source_memories.by_id("mem_1"), tx.source_memories.by_id("mem_3")
        assert first is not None and (first.status, first.version, first.superseded_by) == ("superseded", 2, "mem_2")
        assert first.valid_to is None  # only an expiry ends the validity
        assert third is not None and (third.status, third.valid_to) == ("expired", T2)
        assert tx.source_memories.superseded_by("mem_2") == ["mem_1"]
        assert tx.source_memories.status_at("mem_1", T1) == "active"
        assert tx.source_memories.status_at("mem_1", T3) == "superseded"
        assert tx.source_memories.history("mem_1", T1) == [MemoryEvent(T0, "active", None, "ann")]
        assert [e.status for e in tx.source_memories.history("mem_1", T3)] == ["active", "superseded"]
        # current now: mem_2 alone (mem_1 superseded, mem_3 expired)
        assert tx.source_memories.current_page(T3, ["global"], 10, 0) == [MemoryListing("mem_2", "text", T1)]
        assert tx.source_memories.current_page(T3, ["session:bob/1"], 10, 0) == []


def test_an_erase_drops_the_text_digest_key_projections_and_terms(repo):
    seq, = remember(repo, new_memory(1, key="k1"))
    with repo.write() as tx:
        tx.memory_projections.add(NewProjection("proj_1", "mem_1", 0, "owns", ["ann", "house"], "Ann owns a house",
                                                "exact", "owns(ann, house)", T0))
        tx.fulltext.add(seq, "text 1", "Ann owns a house")
        tx.memory_words.add(seq, [("text", 1, 0), ("1", 1, 0), ("own", 0, 1)])
    with repo.write() as tx:
        assert tx.memory_projections.contents("mem_1") == [("Ann owns a house", "owns(ann, house)", ["ann", "house"])]
        tx.source_memories.erase_source("src_1", T1)
        tx.memory_projections.erase("mem_1")
        tx.source_memories.forget_key("mem_1")
        tx.fulltext.erase(seq)
        tx.memory_words.erase(seq)
    with repo.read() as tx:
        stored = tx.source_memories.by_id("mem_1")
        assert stored is not None
        assert (stored.text, stored.sha256, stored.erased_at, stored.idempotency_key) == (None, "", T1, None)
        assert tx.source_memories.by_key("global", "k1") is None
        assert tx.memory_projections.of("mem_1") == [ProjectionRow("proj_1", "", [], None, "exact", "", T0)]
        assert tx.memory_words.texts() == []
        assert tx.memory_words.newest_holders("text", T2, ["global"], 0, 10) == []
        assert tx.source_memories.current_page(T2, ["global"], 10, 0) == []  # erased: not listed


def test_projections_read_back_in_order_by_quality_and_by_fact_range(repo):
    first, second = remember(repo, new_memory(1), new_memory(2, namespace="session:bob/1", at=T1))
    with repo.write() as tx:
        tx.memory_projections.add(NewProjection("proj_1", "mem_1", 0, "deploy_target", ["api", "staging"],
                                                "api deploys to staging", "exact", "deploy_target(api, staging)", T0))
        tx.memory_projections.add(NewProjection("proj_2", "mem_1", 1, "mood", ["ann", "café"], "Ann is at the café",
                                                "lossy", "mood(ann, 'café')", T0))
        tx.memory_projections.add(NewProjection("proj_3", "mem_2", 0, "deploy_target", ["api", "production"],
                                                "api deploys to production", "exact",
                                                "deploy_target(api, production)", T1))
    with repo.read() as tx:
        assert tx.memory_projections.of("mem_1") == [
            ProjectionRow("proj_1", "deploy_target", ["api", "staging"], "api deploys to staging", "exact",
                          "deploy_target(api, staging)", T0),
            ProjectionRow("proj_2", "mood", ["ann", "café"], "Ann is at the café", "lossy", "mood(ann, 'café')", T0)]
        assert tx.memory_projections.facts("mem_1") == [("proj_1", "deploy_target(api, staging)"),
                                                        ("proj_2", "mood(ann, 'café')")]
        assert tx.memory_projections.lossy(["mem_1", "mem_2", "mem_9"]) == {"mem_1"}
        assert tx.memory_projections.lossy([]) == set()
        facts = tx.memory_projections.settled_facts(["global", "session:bob/1"], T2)
        assert [(f.memory.id, f.fact, f.quality) for f in facts] == [
            ("mem_1", "deploy_target(api, staging)", "exact"), ("mem_1", "mood(ann, 'café')", "lossy"),
            ("mem_2", "deploy_target(api, production)", "exact")]
        assert isinstance(facts[0], ProjectedFact) and facts[0].memory == tx.source_memories.by_id("mem_1")
        assert [f.memory.id for f in tx.memory_projections.settled_facts(["global", "session:bob/1"], T0)] == \
            ["mem_1", "mem_1"]  # mem_2 was recorded later
        held = tx.memory_projections.with_fact_in("deploy_target", "deploy_target(api, ", "deploy_target(api,!", 2,
                                                  T2, ["global", "session:bob/1"], 20)
        assert held == [KeyHolder(second, "mem_2", "session:bob/1", "text 2", ["api", "production"],
                                  "deploy_target(api, production)"),
                        KeyHolder(first, "mem_1", "global", "text 1", ["api", "staging"],
                                  "deploy_target(api, staging)")]
        assert tx.memory_projections.with_fact_in("deploy_target", "deploy_target(api, ", "deploy_target(api,!", 2,
                                                  T2, ["global"], 20) == held[1:]
        assert tx.memory_projections.with_fact_in("deploy_target", "deploy_target(api, ", "deploy_target(api,!", 3,
                                                  T2, ["global"], 20) == []


def test_terms_are_stored_found_by_word_and_replaced_with_their_analyzer(repo):
    seqs = remember(repo, new_memory(1, text_words=2), new_memory(2, text_words=1), new_memory(3, text_words=2),
                    new_memory(4, namespace="session:bob/1", text_words=2))
    with repo.write() as tx:
        assert tx.memory_words.analyzer() == ""
        for seq in seqs:
            tx.fulltext.add(seq, f"text {seq}", "")
        tx.memory_words.add(seqs[0], [("deploy", 1, 0), ("api", 1, 1)])
        tx.memory_words.add(seqs[1], [("deploy", 1, 0)])
        tx.memory_words.add(seqs[2], [("deploy", 0, 2), ("api", 1, 0)])
        tx.memory_words.add(seqs[3], [("deploy", 1, 0), ("api", 1, 0)])
        tx.memory_words.name_analyzer("2:english")
        tx.memory_words.name_analyzer("3:english")  # named already: kept
        assert tx.memory_words.analyzer() == "2:english"
    with repo.read() as tx:
        # newest first, visible ones only, long enough for `least`, at most `limit`
        assert tx.memory_words.newest_holders("deploy", T1, ["global"], 0, 10) == [seqs[2], seqs[1], seqs[0]]
        assert tx.memory_words.newest_holders("deploy", T1, ["global"], 3, 10) == [seqs[2], seqs[0]]
        assert tx.memory_words.newest_holders("deploy", T1, ["global"], 0, 1) == [seqs[2]]
        assert tx.memory_words.newest_holders("deploy", T1, ["global", "session:bob/1"], 0, 1) == [seqs[3]]
        overlaps = sorted(tx.memory_words.overlaps(seqs[:3], {"deploy", "api", "other"}, 10), key=lambda o: o.seq)
        assert overlaps == [WordOverlap(seqs[0], "mem_1", "global", "src_1", 2, 2),
                            WordOverlap(seqs[1], "mem_2", "global", "src_2", 1, 1),
                            WordOverlap(seqs[2], "mem_3", "global", "src_3", 1, 1)]  # in the text only
        assert tx.memory_words.overlaps([seqs[0]], {"deploy"}, 1)[0].size == 1  # counted up to the cap
        assert tx.memory_words.texts() == [(seq, f"text {seq}", "") for seq in seqs]
    with repo.write() as tx:
        tx.memory_words.replace([(seqs[0], "text", 1, 0)], [(1, 0, seqs[0]), (0, 0, seqs[1])])
        tx.memory_words.set_analyzer("3:english")
    with repo.read() as tx:
        assert tx.memory_words.analyzer() == "3:english"
        assert tx.memory_words.newest_holders("deploy", T1, ["global", "session:bob/1"], 0, 10) == []
        assert tx.memory_words.newest_holders("text", T1, ["global"], 0, 10) == [seqs[0]]
        assert tx.memory_words.newest_holders("text", T1, ["global"], 3, 10) == []  # its length is 1 now
