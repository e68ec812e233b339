"""Law: whatever arguments a client sends, every tool either answers or fails with a typed error; it never
crashes with an untyped exception, and a refused call changes nothing."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import snapshot_counts
from memory import Memory
from memory.errors import DatalogMemoryError
from memory.tools import REGISTRY, call_tool

TRICKY_TEXT = st.sampled_from([
    "", " ", "p(a)", "X", "mem_00000000-0000-4000-8000-000000000000", "HEDGE-1", "HEDGE-0", "a:b", "account:admin",
    "last 999999999999 years", "between 0001-01-01 and 9999-12-31", "since 9999-12-31", "yesterday", "2026-02-30",
    "9999-12-31T23:59:59+14:00", "0001-01-01", "1e400", "'); DROP TABLE facts; --", '"', "NEAR(a b)", "p :- q",
    "\u202e\u0000", "é" * 300, "x" * 5000, "default", "global", "auto", "session", "project", "delete",
])
SCALAR = st.one_of(TRICKY_TEXT, st.text(max_size=40), st.integers(-(2 ** 70), 2 ** 70),
                   st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none())


TYPED = {
    "string": st.one_of(TRICKY_TEXT, st.text(min_size=1, max_size=40)),
    "integer": st.one_of(st.integers(-(2 ** 64), 2 ** 64), st.integers(-5, 2_000_000_000)),
    "number": st.one_of(st.floats(0, 1), st.floats(allow_nan=False, allow_infinity=False)),
    "boolean": st.booleans(),
    "null": st.none(),
    "object": st.dictionaries(TRICKY_TEXT, SCALAR, max_size=3),
}


def _typed(prop: dict):
    """Values of the declared type and shape, so that calls get past the schema to the handler."""
    kinds = prop.get("type", "string")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    if "pattern" in prop:
        return st.one_of(st.from_regex(prop["pattern"], fullmatch=True), TRICKY_TEXT)
    options = [TYPED[k] for k in kinds if k in TYPED]
    if "array" in kinds:
        items = prop.get("items", {})
        if items.get("type") == "string" or "pattern" in items:
            element = st.one_of(TYPED["string"], st.sampled_from(["HEDGE-1", "HEDGE-2", "mem_x", "drone:d1"]))
        elif items.get("type") == "object" or "properties" in items:
            element = st.fixed_dictionaries({"predicate": st.sampled_from(["p", "q", "Bad", "is"]),
                                             "arguments": st.lists(SCALAR, max_size=3), "statement": TRICKY_TEXT})
        else:
            element = SCALAR
        options.append(st.lists(element, min_size=1, max_size=4))
    return st.one_of(*options)


def _arguments(tool, typed: bool):
    props = tool.input_schema["properties"]
    required = set(tool.input_schema.get("required", []))
    value = _typed if typed else (lambda prop: st.one_of(_typed(prop), SCALAR))
    return st.fixed_dictionaries({name: value(props[name]) for name in required},
                                 optional={name: value(prop) for name, prop in props.items() if name not in required})


@pytest.fixture(scope="module")
def memory(module_store_location):
    m = Memory(module_store_location, actor="fuzzer")
    m.remember_fact("p(a)")
    m.define_rule("q(X)", "p(X)")
    m.remember(["drone:d1", "sector:s1"], 1_780_000_000, 0.9)
    m.memory_remember("a note", projections=[{"predicate": "p", "arguments": ["b"], "statement": "p of b"}])
    yield m
    m.close()


@pytest.mark.parametrize("typed", [True, False], ids=["well-typed", "anything"])
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_no_argument_crashes_a_tool(memory, name, typed):
    tool = REGISTRY[name]

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_arguments(tool, typed))
    def check(arguments):
        before = snapshot_counts(memory)
        try:
            call_tool(memory, name, arguments)
        except DatalogMemoryError:
            assert snapshot_counts(memory) == before  # a refused call changes nothing
    check()
