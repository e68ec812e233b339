"""Warm relations: stored predicates kept in memory across calls, current through the store's change feed.

The law: after any sequence of writes (by this process, by another one, by a caller in another project
whose projections this one may not see, by hand in sqlite3), a long-lived service answers every query
exactly as a service opened fresh on the file does: through its warm relations, its kept answers and its
kept evaluations brought up to date (incremental maintenance), whichever each query takes."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import by_hand, fresh_location
from memory import Memory
from memory.datalog.predicates import Pred
from memory.errors import DatalogMemoryError
from memory.datalog.relations import Relations, StoredRelation, build_index
from memory.access import CallerContext
from memory.access.context import KNOWN_CAPABILITIES

ME = CallerContext(principal="me", session_id="s1", project_remote="https://example.org/mine",
                   capabilities=KNOWN_CAPABILITIES)
STRANGER = CallerContext(principal="stranger", session_id="s9", project_remote="https://example.org/theirs",
                         capabilities=KNOWN_CAPABILITIES)
RULES = [("r(X, Y)", "p(X, Y), q(Y)"), ("t(X, Y)", "p(X, Y)"), ("t(X, Z)", "t(X, Y), p(Y, Z)"),
         ("u(X)", "q(X), \\+ p(X, X)")]
QUERIES = ["p(X, Y)", "q(X)", "r(X, Y)", "t(a, X)", "t(X, Y)", "u(X)", "p(a, X)", "p(a, b)", "aggregate_all(count, p(X, Y), N)"]
VALUES = ["a", "b", "c", "1"]

value = st.sampled_from(VALUES)
p_fact = st.builds(lambda x, y: f"p({x}, {y})", value, value)
q_fact = st.builds(lambda x: f"q({x})", value)
fact = st.one_of(p_fact, q_fact)
operation = st.one_of(
    st.tuples(st.just("remember"), st.sampled_from(["warm", "other"]), fact),
    st.tuples(st.just("forget"), st.sampled_from(["warm", "other"]), fact),
    st.tuples(st.just("assume"), fact, st.sampled_from(["h1", "h2"])),
    st.tuples(st.just("retract"), st.sampled_from(["h1", "h2"])),
    st.tuples(st.just("project"), st.sampled_from(["warm", "stranger"]), value, value),
    st.tuples(st.just("erase_projections"), st.sampled_from(["warm", "stranger"])),
    st.tuples(st.just("update"), p_fact, p_fact),
    st.tuples(st.just("rename_away_and_back")),
    st.tuples(st.just("delete_newest_by_hand")),
    st.tuples(st.just("insert_in_a_hole_by_hand"), value, value),
    st.tuples(st.just("snapshot_restore"), st.lists(fact, max_size=3)),
)


def answers(m: Memory) -> dict:
    return {q: m.query_logic(q).bindings for q in QUERIES}


def apply(op: tuple, path: str, warm: Memory, other: Memory, stranger: Memory) -> None:
    try:
        _apply(op, path, warm, other, stranger)
    except DatalogMemoryError:  # refused (a fact that is not there, an unknown assumption): nothing changed
        pass


def _apply(op: tuple, path: str, warm: Memory, other: Memory, stranger: Memory) -> None:
    kind = op[0]
    by = {"warm": warm, "other": other, "stranger": stranger}
    if kind == "remember":
        by[op[1]].remember_fact(op[2])
    elif kind == "forget":
        by[op[1]].forget_fact(op[2])
    elif kind == "assume":
        other.assume_fact(op[1], op[2])
    elif kind == "retract":
        other.retract_assumption(op[1])
    elif kind == "project":
        by[op[1]].memory_remember(f"{op[2]} relates to {op[3]}", projections=[
            {"predicate": "p", "arguments": [op[2], op[3]], "statement": "relates"}])
    elif kind == "erase_projections":
        who = by[op[1]]
        found = who.memory_search("relates", limit=50)
        ids = [item["id"] for item in found.get("results", found.get("memories", []))]
        if ids:
            who.memory_forget(ids=ids, erase=True)
    elif kind == "update":
        other.update_fact(op[1], op[2])
    elif kind == "rename_away_and_back":
        other.rename_predicate("q", "q_moved", 1)
        other.rename_predicate("q_moved", "q", 1)
    elif kind == "delete_newest_by_hand":
        with by_hand(path) as conn:
            conn.execute("DELETE FROM facts WHERE id = (SELECT max(id) FROM facts WHERE functor = 'p')")
    elif kind == "insert_in_a_hole_by_hand":
        with by_hand(path) as conn:
            hole = conn.execute("SELECT min(id) + 1 FROM facts WHERE id + 1 NOT IN (SELECT id FROM facts) "
                                "AND id + 1 < (SELECT max(id) FROM facts)").fetchone()[0]
            text = f"p({op[1]}, {op[2]})"
            if hole is None or conn.execute("SELECT 1 FROM facts WHERE text = ?", (text,)).fetchone():
                return
            conn.execute("INSERT INTO facts (id, segment_id, functor, arity, text, args, created_at) VALUES "
                         "(?, 1, 'p', 2, ?, ?, '2026-01-01T00:00:00Z')",
                         (hole, text, json.dumps([v if v != "1" else 1 for v in op[1:3]])))
            conn.execute("INSERT INTO supports (fact_id, kind, ref, actor, created_at) VALUES "
                         "(?, 'asserted', '', 'me', '2026-01-01T00:00:00Z')", (hole,))
    elif kind == "snapshot_restore":
        other.save_snapshot("s")
        for text in op[1]:
            other.remember_fact(text)
        other.restore_snapshot("s")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operation, min_size=1, max_size=12))
def test_warm_answers_equal_a_fresh_service_after_any_writes(tmp_path_factory, store_kind, ops):
    path = fresh_location(store_kind, tmp_path_factory.mktemp("warm"))
    with Memory(path, context=ME) as warm, Memory(path, context=ME) as other, \
            Memory(path, context=STRANGER) as stranger:
        for fact_text in ("p(a, b)", "p(b, c)", "q(b)", "q(c)"):
            warm.remember_fact(fact_text)
        for head, body in RULES:
            warm.define_rule(head, body)
        answers(warm)  # every predicate warm from here on
        for op in ops:
            apply(op, path, warm, other, stranger)
            with Memory(path, context=ME) as fresh:
                assert answers(warm) == answers(fresh), op
                assert warm.explain_why("t(a, c)").proof_tree == fresh.explain_why("t(a, c)").proof_tree


def test_a_write_to_one_predicate_leaves_the_others_warm(store_file):
    with Memory(store_file) as m:
        m.add_facts([f"edge({i}, {i + 1})" for i in range(200)])
        m.define_rule("path(X, Y)", "edge(X, Y)")
        m.define_rule("path(X, Z)", "path(X, Y), edge(Y, Z)")
        assert m.query_logic("path(5, X)").total == 195
        warm = m.kb.warm
        edge = next(c.relation for k, c in warm._copies.items() if k[1] == "edge")
        assert edge.indexes, "the evaluation filed its index with the stored relation"
        m.remember_fact("note(1)")
        assert m.query_logic("path(5, X)").total == 195
        assert next(c.relation for k, c in warm._copies.items() if k[1] == "edge") is edge  # not read again
        m.remember_fact("edge(200, 201)")  # new rows: added in place, indexes kept current
        assert m.query_logic("path(5, X)").total == 196
        grown = next(c.relation for k, c in warm._copies.items() if k[1] == "edge")
        assert grown is edge and len(edge) == 201
        columns, index = next(iter(edge.indexes.items()))
        assert sum(len(bucket) for bucket in index.values()) == 201
        position = edge.position
        m.forget_fact("edge(0, 1)")  # a removal: taken in place too, indexes kept current
        assert m.query_logic("path(0, X)").total == 0
        assert next(c.relation for k, c in warm._copies.items() if k[1] == "edge") is edge and len(edge) == 200
        assert sum(len(bucket) for bucket in edge.indexes[columns].values()) == 200
        assert edge.changes_to(edge, position) == ([], {(0, 1)})
        assert edge.changes_to(edge, 0) == ([(200, 201)], {(0, 1)})  # what it gained, then lost


def _full_reads(monkeypatch) -> list:
    """The whole-predicate reads (no `after`) the warm relations make from now on."""
    from memory.store.repository.facts import Facts
    reads, real, real_runs = [], Facts.tuples, Facts.tuple_runs
    monkeypatch.setattr(Facts, "tuples", lambda self, seg, functor, arity, visibility=None, after=0: (
        reads.append(functor) if not after else None) or real(self, seg, functor, arity, visibility, after))
    monkeypatch.setattr(Facts, "tuple_runs", lambda self, seg, functor, arity, visibility=None, after=0, **kw: (
        reads.append(functor) if not after else None) or real_runs(self, seg, functor, arity, visibility, after, **kw))
    return reads


def test_the_feed_names_the_facts_a_change_touched(store_file):
    """A forget, a row slipped in by hand below the newest, a support gone while another stays, a rename, an id
    used again: the warm copy takes the facts the feed names, without reading the predicate again, and answers
    as a fresh service does."""
    path = store_file

    def slip_in() -> None:
        with by_hand(path) as conn:  # p(a, b)'s id, below the newest
            conn.execute("INSERT INTO facts (id, segment_id, functor, arity, text, args, created_at) VALUES "
                         "(1, 1, 'p', 2, 'p(y, y)', '[\"y\", \"y\"]', '2026-01-01T00:00:00Z')")
            conn.execute("INSERT INTO supports (fact_id, kind, ref, actor, created_at) VALUES "
                         "(1, 'asserted', '', 'me', '2026-01-01T00:00:00Z')")

    with Memory(path) as m:
        m.add_facts(["p(a, b)", "p(b, c)", "p(c, d)"])
        m.assume_fact("p(b, c)", "h1")  # a second support
        assert m.query_logic("p(X, Y)").total == 3
        copy = next(c.relation for k, c in m.kb.warm._copies.items() if k[1] == "p")
        steps = [lambda: m.forget_fact("p(a, b)"),
                 slip_in,
                 lambda: m.forget_fact("p(b, c)"),  # the assumption still holds it
                 lambda: m.retract_assumption("h1"),
                 lambda: m.update_fact("p(c, d)", "p(c, e)"),
                 lambda: m.forget_fact("p(c, e)"),  # the newest row: its id comes free ...
                 lambda: m.remember_fact("p(z, z)")]  # ... and is taken again
        for step in steps:
            position = copy.position
            step()
            with Memory(path) as fresh:
                assert m.query_logic("p(X, Y)").bindings == fresh.query_logic("p(X, Y)").bindings
            now = next(c.relation for k, c in m.kb.warm._copies.items() if k[1] == "p")
            assert copy.changes_to(now, position) is not None  # changed step by step, never read whole again
            copy = now
        assert m.query_logic("p(X, Y)").bindings == [{"X": "y", "Y": "y"}, {"X": "z", "Y": "z"}]


def test_a_copy_older_than_the_feed_reaches_back_is_read_again(store_file, monkeypatch):
    path = store_file
    with Memory(path) as m:
        m.add_facts(["p(a, b)", "p(b, c)", "q(1)", "q(2)", "q(3)"])
        assert m.query_logic("p(X, Y)").total == 2
        with by_hand(path) as conn:
            conn.execute("UPDATE change_counter SET kept_changes = 2")
        for value in (1, 2, 3):  # three changes elsewhere: the feed forgets the first
            m.forget_fact(f"q({value})")
        m.forget_fact("p(a, b)")
        reads = _full_reads(monkeypatch)
        assert m.query_logic("p(X, Y)").bindings == [{"X": "b", "Y": "c"}]
        assert reads == ["p"]


def test_a_relation_an_evaluation_reads_is_copied_not_grown_under_it():
    stored = StoredRelation([(1, 2), (2, 3)])
    stored.indexes[(0,)] = {1: [(1, 2)], 2: [(2, 3)]}
    rels = Relations()
    pred = Pred.stored("e", 2)
    rels.load(pred, stored)
    assert rels.rel[pred] is stored.tuples and stored.users == 1
    copy = stored.grown([(3, 4)])
    assert copy is not stored and (3, 4) in copy.tuples and (3, 4) not in stored.tuples
    assert rels.writable(pred) is not stored.tuples  # an evaluation that derives into it works on its own copy
    rels.release()
    assert stored.users == 0
    assert stored.grown([(3, 4)]) is stored and stored.indexes[(0,)][3] == [(3, 4)]


small = st.lists(st.integers(0, 12).map(lambda i: (i,)), max_size=5)
relation_steps = st.lists(st.one_of(st.tuples(st.just("grow"), small), st.tuples(st.just("change"), small, small),
                                    st.tuples(st.just("pinned change"), small, small), st.tuples(st.just("follow"))),
                          max_size=12)


@settings(max_examples=200, deadline=None)
@given(small, relation_steps)
def test_a_follower_catches_up_with_a_relation_through_its_steps(start, steps):
    """Whatever a stored relation went through (growth in place, replacement, a copy made because an evaluation
    was reading it), a model that read it at some point learns exactly what came and went since, or is told
    that it cannot (then it is evaluated afresh)."""
    import memory.datalog.relations as relations
    relation = StoredRelation(start)
    relation.indexes[(0,)] = build_index(relation.tuples, (0,))
    followers = [(relation, relation.position, set(relation.tuples))]
    original = relations.LOGGED_KEPT
    relations.LOGGED_KEPT = 4  # forget early, to check that forgetting is told
    try:
        for step in steps:
            if step[0] == "grow":
                relation = relation.grown(step[1])
            elif step[0] == "change":
                relation = relation.changed(step[1], step[2])
            elif step[0] == "pinned change":  # an evaluation is reading it: a copy takes the change
                relation.users += 1
                before = dict(relation.tuples), {c: {k: list(b) for k, b in idx.items()}
                                                  for c, idx in relation.indexes.items()}
                changed = relation.changed(step[1], step[2])
                assert (relation.tuples, relation.indexes) == before  # the one read stays as it was
                relation.users -= 1
                relation = changed
            else:
                followers.append((relation, relation.position, set(relation.tuples)))
    finally:
        relations.LOGGED_KEPT = original
    for read, position, seen in followers:
        steps_since = read.changes_to(relation, position)
        if steps_since is None:
            continue
        gained, lost = steps_since
        assert (seen - lost) | set(gained) == set(relation.tuples)
    assert relation.indexes[(0,)] == build_index(relation.tuples, (0,))  # indexes kept current throughout


def test_a_finalizer_that_unpins_may_run_during_a_change(monkeypatch):
    """A collection that starts inside a change made under the pin lock finalizes an evaluation's relations,
    which unpin under the same lock: that must not wait for itself (it hung a test run)."""
    import gc
    import threading
    import memory.datalog.relations as relations
    other = StoredRelation([(1,)])
    held = Relations()
    held.load(Pred.stored("other", 1), other)
    held.cycle = held  # only the cycle collector frees it
    del held
    real = relations.refile
    monkeypatch.setattr(relations, "refile", lambda *args: (gc.collect(), real(*args))[1])
    relation = StoredRelation([(1,), (2,)])
    relation.indexes[(0,)] = build_index(relation.tuples, (0,))
    done = threading.Thread(target=relation.changed, args=([(1,)], [(3,)]), daemon=True)
    done.start()
    done.join(10)
    assert not done.is_alive() and set(relation.tuples) == {(2,), (3,)} and other.users == 0


def test_pins_end_with_the_evaluation_that_took_them():
    stored = StoredRelation([(1,)])
    rels = Relations()
    rels.load(Pred.stored("e", 1), stored)
    assert stored.users == 1
    del rels
    assert stored.users == 0


def test_the_change_feed_announces_everything_but_new_rows(store_file):
    path = store_file
    with Memory(path) as m:
        m.remember_fact("p(a)")
        with m.repository.read() as tx:
            first = tx.facts.state(1, "p", 1)
        m.remember_fact("p(b)")
        with m.repository.read() as tx:
            grown = tx.facts.state(1, "p", 1)
        assert grown.reshaped == first.reshaped and grown.newest > first.newest
        m.assume_fact("p(b)", "h")  # a second support on an existing row
        with m.repository.read() as tx:
            supported = tx.facts.state(1, "p", 1)
        assert supported.reshaped > grown.reshaped
        m.forget_fact("p(a)")
        with m.repository.read() as tx:
            removed = tx.facts.state(1, "p", 1)
        assert removed.reshaped > supported.reshaped
        m.retract_assumption("h")
        m.forget_fact("p(b)")
        with m.repository.read() as tx:
            empty = tx.facts.state(1, "p", 1)
            names = tx.connection.execute("SELECT count(*) FROM predicate_versions WHERE functor = 'p'").fetchone()
        assert empty.newest == 0 and empty.vacated > removed.reshaped and names == (0,)


def test_answers_are_kept_while_nothing_they_read_changes_and_maintained_when_it_does(store_file, monkeypatch):
    import memory.knowledge.queries as queries
    from memory.datalog import Evaluation
    evaluations, updates = [], []
    real, update = queries.solve_kept, Evaluation.update
    monkeypatch.setattr(queries, "solve_kept", lambda *a, **k: evaluations.append(a[1]) or real(*a, **k))
    monkeypatch.setattr(Evaluation, "update", lambda self, changes, budget=None: updates.append(changes)
                        or update(self, changes, budget))
    with Memory(store_file) as m:
        m.add_facts([f"edge({i}, {i + 1})" for i in range(50)])
        m.define_rule("path(X, Y)", "edge(X, Y)")
        m.define_rule("path(X, Z)", "path(X, Y), edge(Y, Z)")
        assert m.query_logic("path(5, X)").total == 45
        assert m.query_logic("path(5, X)", limit=3, offset=2).bindings == [{"X": "8"}, {"X": "9"}, {"X": "10"}]
        assert len(evaluations) == 1 and not updates  # the second page came from the kept answers
        m.remember_fact("note(1)")  # another predicate: the answers stand
        assert m.query_logic("path(5, X)").total == 45 and len(evaluations) == 1 and not updates
        m.remember_fact("edge(50, 51)")  # an input grew: the kept evaluation takes the new row
        assert m.query_logic("path(5, X)").total == 46 and len(evaluations) == 1
        edge = Pred.stored("edge", 2)
        assert [c[edge].added for c in updates] == [[(50, 51)]] and not updates[0][edge].removed
        m.forget_fact("edge(10, 11)")  # a row went: deleted and rederived
        assert m.query_logic("path(5, X)").total == 5 and len(evaluations) == 1
        assert updates[-1][edge].removed == {(10, 11)}
        m.define_rule("path(X, X)", "edge(X, _)")  # the rules changed: evaluated again
        assert m.query_logic("path(5, X)").total == 6 and len(evaluations) == 2
        m.create_memory("other")
        m.mount_memory("other")
        m.remember_fact("edge(1, 2)", memory="other")
        for _ in range(2):  # another segment's facts: that name can be mounted elsewhere, not kept
            assert m.query_logic("other:edge(X, Y)").total == 1
        assert len(evaluations) == 4


def test_a_kept_evaluation_takes_rows_its_relation_gained_before_it_was_read_anew(store_file):
    """The relation a kept evaluation read grew in place for another query, then was read anew (a row
    went): the update must take both the row that went and the one that came in between."""
    path = store_file
    with Memory(path) as m:
        m.add_facts(["edge(0, 1)", "edge(1, 2)", "edge(5, 6)"])
        m.define_rule("path(X, Y)", "edge(X, Y)")
        m.define_rule("path(X, Z)", "path(X, Y), edge(Y, Z)")
        assert m.query_logic("path(0, X)").total == 2
        m.remember_fact("edge(2, 3)")
        assert m.query_logic("edge(X, Y)").total == 4  # grows the warm relation in place
        m.forget_fact("edge(5, 6)")  # read anew: a new relation
        kept = m.query_logic("path(0, X)").bindings
        with Memory(path) as fresh:
            assert kept == fresh.query_logic("path(0, X)").bindings == [{"X": "1"}, {"X": "2"}, {"X": "3"}]


def test_the_caches_let_the_least_recently_used_go_by_size():
    from memory.knowledge.lru import SizedLRU
    cache = SizedLRU(5, len)
    cache.put("a", [1, 2])
    cache.put("b", [1, 2, 3])
    assert cache.get("a") == [1, 2]  # now the most recently used
    cache.put("c", [1])  # 6 > 5: b, the least recently used, goes
    assert [key for key, _ in cache.items()] == ["a", "c"]
    cache.put("a", [1, 2, 3, 4])  # a grew: measured again when put back (4 + 1: still within 5)
    assert [key for key, _ in cache.items()] == ["c", "a"]
    cache.put("a", [1, 2, 3, 4, 5])  # 5 + 1: c goes
    assert [key for key, _ in cache.items()] == ["a"] and cache.get("c") is None
    cache.put("d", list(range(9)))  # bigger than the whole: kept alone, the newest always stays
    assert [key for key, _ in cache.items()] == ["d"]


def test_a_served_memory_keeps_and_maintains_answers_as_a_fresh_one_would(tmp_path):
    """Through `serve` and its evaluation workers (the mcp package's client): after each write a query asked
    again is answered from the worker's kept evaluation, brought up to date, and equals what a service opened
    fresh on the file answers after the same writes."""
    import shutil
    from surfaces import run_client

    db = str(tmp_path / "m.db")
    with Memory(db) as m:
        m.add_facts([f"edge({i}, {i + 1})" for i in range(12)] + ["edge(3, 9)", "blocked(5)"])
        m.define_rule("path(X, Y)", "edge(X, Y)")
        m.define_rule("path(X, Z)", "path(X, Y), edge(Y, Z)")
        m.define_rule("unblocked(X)", "path(0, X), \\+ blocked(X)")
    shutil.copy(db, tmp_path / "replay.db")
    writes = [("forget_fact", "edge(4, 5)"), ("remember_fact", "edge(0, 20)"), ("remember_fact", "blocked(9)"),
              ("forget_fact", "edge(3, 9)"), ("remember_fact", "edge(20, 4)"), ("forget_fact", "blocked(5)"),
              ("remember_fact", "edge(4, 5)"), ("forget_fact", "edge(0, 20)")]
    goals = ["path(0, X)", "unblocked(X)", "aggregate_all(count, path(X, Y), N)"]

    async def scenario(client):
        answered = [[(await client.call_tool("query_logic", {"goal": g})).structured_content["bindings"]
                     for g in goals]]
        for tool, fact in writes:
            assert not (await client.call_tool(tool, {"fact": fact})).is_error
            answered.append([(await client.call_tool("query_logic", {"goal": g})).structured_content["bindings"]
                             for g in goals])
        return answered

    served = run_client(db, "legacy", scenario, {"DATALOG_MEMORY_WORKERS": "1"})
    replay = str(tmp_path / "replay.db")
    expected = []
    for step in range(len(writes) + 1):
        if step:
            tool, fact = writes[step - 1]
            with Memory(replay) as writer:
                getattr(writer, tool)(fact)
        with Memory(replay) as fresh:
            expected.append([fresh.query_logic(g).bindings for g in goals])
    assert served == expected
