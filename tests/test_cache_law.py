"""Law: a long-lived Memory (with its program and fact caches) answers exactly like a fresh one
loaded from the same final state, whatever sequence of changes led there."""

from hypothesis import HealthCheck, given, settings, strategies as st

from memory import Memory
from memory.errors import DatalogMemoryError

NODES = ["a", "b", "c", "d"]
RULES = [
    ("path(X, Y)", "edge(X, Y)"),
    ("path(X, Z)", "edge(X, Y), path(Y, Z)"),
    ("lonely(X)", "node(X), \\+ path(X, _)"),
    ("fanout(X, N)", "node(X), aggregate_all(count, edge(X, _), N)"),
]
GOALS = ["path(X, Y)", "lonely(X)", "fanout(X, N)", "edge(X, Y)"]

edge = st.tuples(st.sampled_from(NODES), st.sampled_from(NODES)).map(lambda t: f"edge({t[0]}, {t[1]})")
op = st.one_of(
    st.tuples(st.just("remember"), edge),
    st.tuples(st.just("forget"), edge),
    st.tuples(st.just("assume"), edge, st.sampled_from(["h1", "h2"])),
    st.tuples(st.just("retract"), st.sampled_from(["h1", "h2"])),
    st.tuples(st.just("rule"), st.sampled_from(range(len(RULES)))),
    st.tuples(st.just("query"), st.sampled_from(GOALS)),
    st.tuples(st.just("clear"), st.sampled_from(NODES)),
)


def answers(m: Memory) -> dict:
    return {goal: m.query_logic(goal).bindings for goal in GOALS}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=25))
def test_cached_answers_equal_a_fresh_load(ops):
    live = Memory(":memory:")
    for node in NODES:
        live.remember_fact(f"node({node})")
    for step in ops:
        try:
            if step[0] == "remember":
                live.remember_fact(step[1])
            elif step[0] == "forget":
                live.forget_fact(step[1])
            elif step[0] == "assume":
                live.assume_fact(step[1], step[2])
            elif step[0] == "retract":
                live.retract_assumption(step[1])
            elif step[0] == "rule":
                live.define_rule(*RULES[step[1]])
            elif step[0] == "clear":
                live.clear_context(f"edge({step[1]}, _)")
            else:
                live.query_logic(step[1])  # warms the caches mid-sequence
        except DatalogMemoryError:
            pass  # forgetting what is not there, retracting an unknown assumption: refused, nothing changed
    fresh = Memory(":memory:")
    fresh.import_program(live.export_program())
    assert answers(live) == answers(fresh)
    live.close()
    fresh.close()
