"""The engine's predicate type: canonical, immutable, cheap to compare; auxiliaries never collide."""

import copy
import pickle
import threading

import pytest
from hypothesis import given, strategies as st

from memory.datalog import Normalizer, Pred, parse_program
from memory.datalog.program import Lit
from memory.errors import InvalidProgram

names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)


@given(names, st.integers(0, 5), st.one_of(st.none(), names))
def test_equal_predicates_are_one_object_and_survive_pickling_and_copies(name, arity, segment):
    make = (lambda: Pred.stored(name, arity)) if segment is None else (lambda: Pred.in_segment(name, arity, segment))
    pred = make()
    assert make() is pred and hash(make()) == hash(pred)
    assert pickle.loads(pickle.dumps(pred)) is pred
    assert copy.copy(pred) is pred and copy.deepcopy(pred) is pred
    adorned = Pred.adorned(pred, "b" * arity)
    assert Pred.adorned(pred, "b" * arity) is adorned and pickle.loads(pickle.dumps(adorned)) is adorned
    assert adorned != pred and adorned.original is pred
    assert Pred.magic(pred, "b" * arity) not in (adorned, pred)


def test_kinds_are_told_apart_by_properties_not_by_shape():
    local, other = Pred.stored("edge", 2), Pred.in_segment("edge", 2, "work")
    assert local != other and local.indicator == other.indicator == ("edge", 2)
    assert local.is_local and local.is_stored and not local.is_auxiliary and local.segment is None
    assert other.is_stored and not other.is_local and other.segment == "work"
    adorned = Pred.adorned(local, "bf")
    assert adorned.is_adorned and adorned.is_auxiliary and not adorned.is_stored and adorned.adornment == "bf"
    magic = Pred.magic(local, "bf")
    assert magic.is_magic and magic.arity == 1 and magic.original is magic
    assert Pred.answer(local, "bf").arity == 1 and Pred.answer(local, "bf").original is local
    assert (str(local), str(other), str(adorned)) == ("edge/2", "work:edge/2", "$adorned(edge/2, bf)")
    with pytest.raises(AttributeError):
        local.name = "other"  # type: ignore[misc]


def test_auxiliary_predicates_are_distinct_whatever_their_names():
    first, second = Pred.auxiliary("neg1", 1), Pred.auxiliary("neg1", 1)
    assert first != second and len({first, second}) == 2
    assert first.is_auxiliary and not first.is_stored and str(first) == "$neg1/1"
    # Pickled together (a program sent to another process), an auxiliary keeps its identity within the copy.
    a, b = pickle.loads(pickle.dumps((first, first)))
    assert a is b and a != first


def test_a_program_extended_by_a_second_normalizer_gets_fresh_auxiliary_predicates():
    program = parse_program("p(X) :- q(X), \\+ (r(X), s(X)).")
    first = {rule.head.pred for rule in program.rules if rule.head.pred.is_auxiliary}
    Normalizer(program).add_clause(parse_program("t(X) :- q(X), \\+ (r(X), u(X)).").sources[0].clause)
    second = {rule.head.pred for rule in program.rules if rule.head.pred.is_auxiliary} - first
    assert len(first) == len(second) == 1
    assert {str(p) for p in first} != {str(p) for p in second}  # printed apart too
    bodies = {rule.head.pred: rule.body for rule in program.rules}
    assert [lit.pred.name for lit in bodies[next(iter(second))] if isinstance(lit, Lit)] == ["r", "u"]


def test_threads_asking_for_one_predicate_get_one_object():
    seen: list = []
    barrier = threading.Barrier(8)

    def ask():
        barrier.wait()
        seen.append(Pred.stored("raced_predicate", 3))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(p) for p in seen}) == 1


def test_user_predicates_may_not_take_the_reserved_prefix():
    with pytest.raises(InvalidProgram, match="reserved"):
        parse_program("'$neg1'(X) :- q(X).")


def test_a_pickled_program_and_proof_work_in_the_copy():
    """Programs and proofs may cross a process boundary: the copy evaluates the same, its stored predicates
    are the canonical ones, and its auxiliary predicates still tie each rule to its auxiliary relation."""
    from engine_helpers import answers, proof

    text = "ok(X) :- node(X), \\+ (edge(X, Y), bad(Y)). n(C) :- aggregate_all(count, ok(_), C)."
    facts = {("node", 1): [(1,), (2,), (3,)], ("edge", 2): [(1, 2), (2, 3)], ("bad", 1): [(3,)]}
    original = parse_program(text)
    copy_ = pickle.loads(pickle.dumps(original))
    assert answers(copy_, "ok(X)", facts) == answers(original, "ok(X)", facts) == [(1,), (3,)]
    assert answers(copy_, "n(C)", facts) == [(2,)]
    node = pickle.loads(pickle.dumps(proof(copy_, "n(2)", facts)))
    assert node.pred is Pred.stored("n", 1) and node.to_dict() == proof(original, "n(2)", facts).to_dict()
