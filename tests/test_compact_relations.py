"""Compact stored relations (memory/datalog/compact.py): id columns with array indexes read exactly as the dict of
tuples they replace, through random changes, forks and refreezing; and the engine, maintenance and the warm
relations give the same answers over them."""

from __future__ import annotations

from contextlib import contextmanager
from itertools import islice

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memory.datalog.compact as compact
from memory.datalog.compact import CompactIndexes, CompactRelation
from memory.datalog.relations import Relations, StoredRelation, build_index, index_key
from memory.datalog.predicates import Pred
from memory.terms import Compound, Float, String

# Terms that are equal under some other notion but distinct here: 1 and Float(1.0), the atom and the string; -1
# and -2 share a hash.
terms = st.sampled_from([0, 1, 2, 3, -7, -1, -2, 10**20, "a", "b", "1", Float(1.0), String("a"), Compound("f", ("a",)),
                         Compound("f", (1,)), ()])
tuples2 = st.tuples(terms, terms)
tuple_lists = st.lists(tuples2, max_size=30)


@contextmanager
def compact_from(size: int, kept: int | None = None):
    """Relations of `size` tuples or more kept compact (and, with `kept`, a delta frozen anew past `kept`)."""
    saved = compact.COMPACT_TUPLES, compact.DELTA_KEPT
    compact.COMPACT_TUPLES = size
    if kept is not None:
        compact.DELTA_KEPT = kept
    try:
        yield
    finally:
        compact.COMPACT_TUPLES, compact.DELTA_KEPT = saved


def check_reads_as(relation: CompactRelation, expected: dict) -> None:
    """Every way the engine reads a relation agrees with the plain dict `expected` (tuple -> 0, in order)."""
    assert len(relation) == len(expected)
    assert list(relation) == list(expected)  # insertion order, as a dict keeps it
    assert list(reversed(relation)) == list(reversed(expected))
    assert list(islice(reversed(relation), 2)) == list(islice(reversed(expected), 2))
    assert set(relation.keys()) == set(expected)
    assert dict(relation.items()) == expected and relation.copy() == expected and type(relation.copy()) is dict
    for t in list(expected)[:10]:
        assert t in relation and relation.get(t) == 0 and relation[t] == 0
    indexes = CompactIndexes(relation)
    for columns in ((0,), (1,), (0, 1), (1, 0)):
        built = build_index(expected, columns)
        index = indexes.get(columns)
        assert columns in indexes
        for key, bucket in built.items():
            assert index.get(key, ()) == bucket and key in index
        assert index.get("absent", None) is None and "absent" not in index
    if expected:
        t = next(iter(expected))
        assert indexes[(0,)][index_key((t[0],))] == build_index(expected, (0,))[t[0]]


@settings(max_examples=300, deadline=None)
@given(tuple_lists, st.lists(st.tuples(st.lists(tuples2, max_size=6), st.lists(tuples2, max_size=6),
                                       st.booleans()), max_size=8),
       st.integers(1, 6))
def test_a_compact_relation_reads_as_a_dict_through_changes(start, steps, kept):
    """Random removals and additions (in place, or in a fork while the original is kept), with the delta frozen
    anew now and then: the relation and every fork read as the dict changed the same way, and a fork leaves the
    relation it came from as it was."""
    tuples = list(dict.fromkeys(start))
    if not tuples:
        tuples = [(0, 0)]
    with compact_from(1, kept):
        relation = CompactRelation.of([tuples[:3], tuples[3:]], 2)
        expected = dict.fromkeys(tuples, 0)
        check_reads_as(relation, expected)
        for gone, new, fork in steps:
            gone_now = [t for t in dict.fromkeys(gone) if t in expected]
            fresh = [t for t in dict.fromkeys(new) if t not in expected or t in gone_now]
            if fork:
                before = dict.fromkeys(relation, 0)
                original, relation = relation, relation.fork()
            relation.change(frozenset(t for t in gone_now if t not in fresh), [t for t in fresh if t not in expected])
            for t in gone_now:
                if t not in fresh:
                    del expected[t]
            expected.update(dict.fromkeys((t for t in fresh if t not in expected), 0))
            check_reads_as(relation, expected)
            if fork:
                assert dict.fromkeys(original, 0) == before


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tuple_lists, st.lists(st.tuples(st.sampled_from(["grow", "change", "pinned"]), st.lists(tuples2, max_size=5),
                                       st.lists(tuples2, max_size=5)), max_size=8))
def test_a_stored_relation_kept_compact_follows_its_changes(start, steps):
    """A StoredRelation kept compact (or a dict that grows past the threshold into a compact copy) holds what a
    set changed the same way holds, and a follower learns what came and went (`changes_to`)."""
    with compact_from(4, kept=3):
        relation = StoredRelation(start)
        current = set(start)
        followers = [(relation, relation.position, set(current))]
        for kind, gone, new in steps:
            if kind == "grow":
                relation = relation.grown(new)
                current |= set(new)
            else:
                if kind == "pinned":
                    relation.users += 1
                    read = relation
                    before = set(read.tuples)
                changed = relation.changed(gone, new)
                current = (current - set(gone)) | set(new)
                if kind == "pinned":
                    assert set(read.tuples) == before  # the one read stays as it was
                    read.users -= 1
                relation = changed
            assert set(relation.tuples) == current and len(relation) == len(current)
            assert (type(relation.tuples) is CompactRelation) == (len(relation.tuples) >= 4 or
                                                                  type(relation.tuples) is CompactRelation)
            followers.append((relation, relation.position, set(current)))
        for read, position, seen in followers:
            since = read.changes_to(relation, position)
            if since is not None:
                gained, lost = since
                assert (seen - lost) | set(gained) == current


def test_a_big_stored_relation_is_compact_and_read_in_runs():
    with compact_from(10):
        runs = [[(i, i + 1) for i in range(k, k + 4)] for k in range(0, 20, 4)]
        relation = StoredRelation.read(iter(runs))
        assert type(relation.tuples) is CompactRelation and type(relation.indexes) is CompactIndexes
        assert list(relation.tuples) == [t for run in runs for t in run]
        small = StoredRelation.read(iter(runs[:2]))
        assert type(small.tuples) is dict and list(small.tuples) == [t for run in runs[:2] for t in run]
        assert type(StoredRelation.read(iter([])).tuples) is dict
        repeated = StoredRelation.read(iter([[(1, 2)] * 12, [(3, 4), (1, 2)]]))
        assert list(repeated.tuples) == [(1, 2), (3, 4)]


def test_an_evaluation_reads_a_compact_relation_in_place():
    """Relations.load shares a compact relation (no copy), serves its indexes, and a rule deriving into the same
    predicate gets its own plain dict."""
    with compact_from(2):
        stored = StoredRelation([(1, 2), (2, 3), (3, 4)])
        rels = Relations()
        pred = Pred.stored("e", 2)
        rels.load(pred, stored)
        assert rels.get(pred) is stored.tuples and pred in rels.shared
        assert rels.index(pred, (0,)).get(2) == [(2, 3)]
        assert rels.index(pred, (1,)).get(2) == [(1, 2)]
        own = rels.writable(pred)
        assert type(own) is dict and own == {(1, 2): 0, (2, 3): 0, (3, 4): 0}
        rels.release()
        assert stored.users == 0


PROGRAM = """
path(X, Y) :- edge(X, Y).
path(X, Z) :- path(X, Y), edge(Y, Z).
back(Y, X) :- edge(X, Y), \\+ edge(Y, X).
pair(X, C) :- edge(X, Y), colour(Y, C).
degree(X, N) :- colour(X, _), aggregate_all(count, edge(X, _), N).
"""


def _answers(path: str, threshold: int) -> dict:
    from memory.api import Memory

    with compact_from(threshold), Memory(path) as m:
        m.add_facts([f"edge(n{i}, n{(i * 7) % 50})" for i in range(50)] + [f"edge(n{i}, n{i + 1})" for i in range(40)]
                    + [f"colour(n{i}, c{i % 3})" for i in range(50)])
        for line in PROGRAM.strip().splitlines():
            head, body = line.rstrip(".").split(" :- ")
            m.define_rule(head, body)
        answers = {}
        for goal in ("path(n1, X)", "edge(X, n7)", "edge(n3, n4)", "back(X, Y)", "pair(n2, C)", "path(X, n9)",
                     "degree(n5, N)"):
            answers[goal] = sorted(map(str, m.query_logic(goal).bindings))
        m.remember_fact("edge(n49, n0)")
        answers["after a write"] = sorted(map(str, m.query_logic("path(n49, X)").bindings))
        answers["bound after a write"] = sorted(map(str, m.query_logic("edge(X, n0)").bindings))
        m.forget_fact("edge(n1, n2)")
        answers["after a forget"] = sorted(map(str, m.query_logic("path(n1, X)").bindings))
        answers["bound after a forget"] = sorted(map(str, m.query_logic("edge(X, n2)").bindings))
        answers["explain"] = m.explain_why("path(n3, n5)").proof_tree
        warm = m.kb.warm
        edge = next(c.relation for k, c in warm._copies.items() if k[1] == "edge")
        assert (type(edge.tuples) is CompactRelation) == (threshold == 1)
    return answers


def test_answers_warm_writes_and_proofs_over_compact_relations(tmp_path):
    """The same store answers the same with every relation compact as with none: bulk and bound queries, a
    negation, an aggregate, after writes (new rows, a forget), and an explanation."""
    compact_answers = _answers(str(tmp_path / "compact.db"), 1)
    assert compact_answers == _answers(str(tmp_path / "dicts.db"), 10**9)
    assert compact_answers["after a write"] and compact_answers["explain"]
