"""Budgets in process: random explosive programs never overshoot a limit by more than 10 %, the memory
limit stops an evaluation and the memory comes back, cancellation stops it, arithmetic is bounded
before it is computed, and materialize evaluates outside its write transaction."""

from __future__ import annotations

import gc
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import Memory
from memory.datalog import Budget, Pred, analyze, evaluate, explain, parse_program, solve
from memory.datalog.budget import Cancellation, cancellable, resident_mb
from memory.datalog.relations import release
from memory.errors import BudgetExceeded, Cancelled, EvaluationError, TermSyntaxError
from memory.terms import parse_term

# Rules that blow up in different ways: quadratic and cubic closures, cross products, an infinite
# arithmetic chain, wide fan-out into a three-place head, aggregation over an exploding relation.
EXPLOSIVE = [
    "p(X,Y) :- e(X,Y).",
    "p(X,Y) :- p(X,Z), p(Z,Y).",
    "p(X,Y) :- p(X,Z), e(Z,Y).",
    "p(X,Y) :- e(X,Z), p(Z,Y).",
    "q(X,Y) :- v(X), v(Y).",
    "r(X,Y,Z) :- v(X), v(Y), v(Z).",
    "r(X,Y,Z) :- p(X,Y), v(Z).",
    "n(Y) :- n(X), Y is X + 1.",
    "n(Y) :- v(X), n(Z), Y is X * Z + 1, Y < 1000000000000.",
    "k(X,C) :- v(X), aggregate_all(count, r(X,_,_), C).",
    "s(X,Y) :- q(X,Y), \\+ e(X,Y).",
]
GOALS = ["p(X,Y)", "p(1,Y)", "p(X,3)", "q(X,Y)", "r(X,Y,Z)", "r(1,Y,Z)", "n(X)", "k(X,C)", "s(X,Y)"]


@st.composite
def explosive_programs(draw):
    rules = draw(st.lists(st.sampled_from(EXPLOSIVE), min_size=1, max_size=5, unique=True))
    heads = {r.split("(")[0] for r in rules}
    goals = [g for g in GOALS if g.split("(")[0] in heads]
    nodes = draw(st.integers(20, 400))
    edges = draw(st.lists(st.tuples(st.integers(0, nodes), st.integers(0, nodes)), min_size=5, max_size=300))
    facts = {Pred.stored("e", 2): sorted(set(edges)), Pred.stored("v", 1): [(i,) for i in range(draw(st.integers(5, 300)))],
             Pred.stored("n", 1): [(0,), (1,)]}
    budget = Budget(timeout_s=0.3, max_tuples=draw(st.integers(500, 60_000)), max_rows=draw(st.integers(20_000, 400_000)))
    how = draw(st.sampled_from(["model", "query", "explain"]))
    return " ".join(rules), facts, budget, how, draw(st.sampled_from(goals)) if goals else None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(explosive_programs())
def test_random_explosive_programs_never_overshoot_their_budget_by_more_than_a_tenth(case):
    text, facts, budget, how, goal = case
    program = parse_program(text)
    analyze(program)
    load = lambda preds: {p: facts[p] for p in preds if p in facts}  # noqa: E731
    # The law is about the engine's own work: CPU time of this thread. Wall time also counts the
    # moments a shared machine gives the thread no processor, which no budget check can see. The objects
    # earlier tests left in this process are frozen out of the collection that gives a failed model back:
    # walking them (3 million objects: +0.23 s) is no work of this evaluation's.
    gc.freeze()
    started = time.thread_time()
    try:
        if how == "model" or goal is None:
            model = evaluate(program, load({p for p in facts}), budget=budget)
            assert model.derived <= budget.max_tuples
        elif how == "query":
            solve(program, parse_term(goal), load, budget=budget)
        else:
            explain(program, parse_term(goal.replace("X", "1").replace("Y", "2").replace("Z", "3")
                                        .replace("C", "4")), load, budget=budget)
    except BudgetExceeded as exc:
        kind, reached = exc.details["limit_kind"], exc.details["reached"]
        limit = {"seconds": budget.timeout_s, "tuples": budget.max_tuples, "rows": budget.max_rows}[kind]
        if kind != "seconds":  # seconds reached are wall time: the CPU bound below is that law
            assert reached <= limit * 1.1, (kind, reached, limit)
    except EvaluationError:
        pass  # arithmetic out of range in the n/1 chain: a typed error, as it should be
    elapsed = time.thread_time() - started
    gc.unfreeze()
    # + giving the failed model back (its gc.collect() and malloc_trim)
    assert elapsed <= budget.timeout_s * 1.1 + 0.15, elapsed


def cube(n: int):
    program = parse_program("c(A,B,C) :- v(A), v(B), v(C).")
    analyze(program)
    return program, {Pred.stored("v", 1): [(i,) for i in range(n)]}


def test_memory_limit_stops_an_evaluation_and_the_memory_comes_back():
    program, facts = cube(400)
    before = resident_mb()
    budget = Budget(timeout_s=30, max_tuples=100_000_000, max_memory_mb=int(before) + 80)
    with pytest.raises(BudgetExceeded) as info:
        evaluate(program, facts, budget=budget)
    assert info.value.details["limit_kind"] == "memory_mb"
    assert "DATALOG_MEMORY_MAX_MEMORY_MB" in info.value.message
    # Resident memory is sampled between join slices; on a loaded machine a slice can grow further
    # before the next sample, so the bound allows a slice's worth (the runaway it stops is gigabytes).
    assert info.value.details["reached"] <= budget.max_memory_mb + 50
    assert resident_mb() < before + 25  # given back, not kept at the peak


def test_memory_limit_comes_from_the_environment_and_defaults_below_a_quarter_of_the_machine():
    import os

    assert Budget.from_env({"DATALOG_MEMORY_MAX_MEMORY_MB": "300"}).max_memory_mb == 300
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 20)
    assert Budget.from_env({}).max_memory_mb <= min(4096, physical / 4)
    with pytest.raises(ValueError):
        Budget.from_env({"DATALOG_MEMORY_MAX_MEMORY_MB": "0"})


def test_each_limit_names_the_setting_that_raises_it():
    program, facts = cube(200)
    for budget, kind, setting in [
        (Budget(timeout_s=0.05, max_tuples=10**9), "seconds", "DATALOG_MEMORY_TIMEOUT_S"),
        (Budget(max_tuples=1000), "tuples", "DATALOG_MEMORY_MAX_TUPLES"),
        (Budget(max_rows=5000), "rows", "DATALOG_MEMORY_MAX_ROWS"),
    ]:
        with pytest.raises(BudgetExceeded) as info:
            evaluate(program, facts, budget=budget)
        assert info.value.details["limit_kind"] == kind and info.value.details["setting"] == setting
        assert setting in info.value.message


def test_cancellation_stops_a_running_evaluation():
    program, facts = cube(1000)
    token = Cancellation()
    outcome = {}

    def run():
        with cancellable(token):
            try:
                evaluate(program, facts, budget=Budget(timeout_s=30, max_tuples=10**9))
            except Exception as exc:  # noqa: BLE001 - the test inspects it
                outcome["error"] = exc
        outcome["at"] = time.monotonic()

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.2)
    cancelled_at = time.monotonic()
    token.cancel()
    worker.join(10)
    assert isinstance(outcome["error"], Cancelled) and outcome["error"].code == "cancelled"
    assert outcome["at"] - cancelled_at < 2.0  # slices are ~5 ms; the evaluation alone would run 30 s


def test_an_evaluation_without_a_cancellation_is_not_affected_by_another_ones():
    program, facts = cube(10)
    token = Cancellation()
    token.cancel()
    with cancellable(token):
        pass
    assert len(evaluate(program, facts).tuples(Pred.stored("c", 3))) == 1000


@pytest.mark.parametrize("goal", [
    "X is (7 ** 100000) ** 1000", "X is 10 ** 4000", "X is 1 << 100000", "X is 1 >> -100000",
    "X is -1 ** 0.5", "X is (-8.0) ** 0.5", "X is 2.0 ** 100000", "X is 1.0e308 * 10.0 + 1",
    "X is 10 ** 3999 * 10", "X is 10 ** 3999 + 1.0", "X is sqrt(10 ** 3999)", "X is 1 // 0", "X is 1 mod 0",
    "X is 0.0 ** -1", "X is float(10 ** 3999)",
])
def test_arithmetic_failures_are_typed_evaluation_errors(mem, goal):
    started = time.monotonic()
    with pytest.raises(EvaluationError):
        mem.query_logic(goal)
    assert time.monotonic() - started < 0.5


@pytest.mark.parametrize("goal, value", [
    ("X is 10 ** 3999", "1" + "0" * 3999), ("X is 2 ** -1", "0.5"), ("X is 5 >> -3", "40"),
    ("X is 7 << 3", "56"), ("X is (-8) ** 3", "-512"), ("X is 4 ** 0.5", "2.0"),
])
def test_arithmetic_within_bounds_still_works(mem, goal, value):
    assert mem.query_logic(goal).bindings == [{"X": value}]


@pytest.mark.parametrize("literal", ["9" * 4001, "0x" + "f" * 3400, "0b1" + "0" * 13300])
def test_integer_literals_beyond_4000_digits_are_syntax_errors(mem, literal):
    with pytest.raises(TermSyntaxError, match="4000 digits"):
        mem.remember_fact(f"big({literal})")


def test_release_empties_nested_containers_without_touching_shared_contents():
    shared = [(1, 2)]
    relations = {"a": {(i, i): 1 for i in range(50_000)}, "b": {"x": {1, 2}}, "c": set(range(40_000))}
    release(relations, shared[:0])
    assert relations == {} and shared == [(1, 2)]


def test_materialize_evaluates_outside_its_write_and_follows_a_change_made_meanwhile(db_path, monkeypatch):
    from memory.knowledge.base import KnowledgeBase

    with Memory(db_path) as m:
        m.add_facts([f"edge({i},{i + 1})" for i in range(50)])
        m.define_rule("path(X,Y)", "edge(X,Y)")
        m.define_rule("path(X,Z)", "path(X,Y), edge(Y,Z)")
        evaluate_all = KnowledgeBase.evaluate_all
        seen = []

        def meanwhile(self, program, load, budget=None):
            seen.append(self.store._depth)  # no transaction open while evaluating
            if len(seen) == 1:
                with Memory(db_path) as other:  # another writer gets in during the evaluation
                    other.remember_fact("edge(50,51)")
            return evaluate_all(self, program, load, budget)

        monkeypatch.setattr(KnowledgeBase, "evaluate_all", meanwhile)
        result = m.materialize()
        assert seen == [0, 0]  # evaluated again after the change
        with m.store.read() as conn:
            generation = conn.execute("SELECT generation FROM segments WHERE name = 'default'").fetchone()[0]
            derived = conn.execute("SELECT count(*) FROM derived").fetchone()[0]
        assert result.generation == generation and derived == result.tuples == 51 * 52 // 2


def test_a_writer_waits_longer_than_any_evaluation_budget(db_path):
    with Memory(db_path, budget=Budget(timeout_s=60)) as m:
        assert m.store.busy_timeout_ms >= 66_000
        m.remember_fact("x(1)")
        with m.store.read() as conn:
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == m.store.busy_timeout_ms


def test_evaluations_of_one_call_share_its_time_budget(mem):
    """A tool that evaluates several times (a query, then a proof per answer) gets one time budget."""
    mem.add_facts([f"v({i})" for i in range(200)])
    mem.define_rule("c(A,B,C)", "v(A), v(B), v(C)")
    token = Cancellation()
    token.started -= mem.kb.budget.timeout_s  # the call began a whole budget ago
    with cancellable(token):
        with pytest.raises(BudgetExceeded) as info:
            mem.query_logic("c(1, 2, X)")
    assert info.value.details["limit_kind"] == "seconds"
    assert mem.query_logic("c(1, 2, 3)").total == 1  # outside that call: a budget of its own


QUERY, SERVE = ("query-logic", "--goal", "p(X)"), ("serve",)


@pytest.mark.parametrize("command, setting, value", [
    (command, setting, value) for setting, value in (("DATALOG_MEMORY_TIMEOUT_S", "soon"),
                                                     ("DATALOG_MEMORY_MAX_TUPLES", "-3")) for command in (QUERY, SERVE)
] + [(SERVE, "DATALOG_MEMORY_WORKERS", "two")])  # only the server starts workers
def test_an_unusable_setting_is_refused_by_name_with_a_usage_status(tmp_path, command, setting, value):
    """A bad environment variable was reported as `InternalError: ValueError` (a bug's wording, exit 1)."""
    from surfaces import cli

    ran = cli(str(tmp_path / "m.db"), *command, extra_env={setting: value})
    assert ran.returncode == 2, ran
    assert ran.stderr.startswith("InvalidConfiguration: invalid "), ran.stderr
    assert setting in ran.stderr and "Internal" not in ran.stderr
