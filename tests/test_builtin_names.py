"""Predicates named like Prolog built-ins: one rule (memory.datalog.program.reserved_reason) at every write and
query. A name the engine evaluates or refuses in a query is refused by every write with the same message; any
other name (open, write, assert, halt, ...) is a plain predicate: stored, derived, renamed and queried."""

import pytest

from memory import Memory
from memory.datalog.builtin_table import BUILTINS
from memory.datalog.program import CONTROL_ATOMS, CONTROL_NAMES, UNSUPPORTED, reserved_message, reserved_reason
from memory.errors import DatalogMemoryError
from memory.terms import Compound, Var, format_term, indicator, parse_term
from memory.knowledge.refactor import PROTECTED
from memory.terms.operators import ALL_OPERATORS
from memory.tools import call_tool
from surfaces import cli_process

# The names of the report (15 tried: stored, then never readable), the rest of Prolog's I/O and database
# built-ins, and every name the engine evaluates or refuses.
REPORTED = ["open", "read", "write", "print", "assert", "retract", "nl", "halt", "consult", "see", "tell", "format",
            "abolish", "shell", "writeln"]
NAMES = sorted(set(REPORTED) | {"asserta", "assertz", "retractall", "read_term", "close", "get_char", "put_char",
                                "aggregate_all", "is", "not"} | set(UNSUPPORTED) | set(BUILTINS)
               | set(CONTROL_NAMES) | set(CONTROL_ATOMS))
CASES = [(name, arity) for name in NAMES for arity in (0, 1, 2)]


def _term(name: str, arity: int, first: str = "item_42") -> str:
    args = tuple([first] + [f"v{i}" for i in range(1, arity)])
    return format_term(Compound(name, args) if arity else name)


def _outcome(call) -> str | None:
    """None when the write was accepted, else its error's message."""
    try:
        call()
    except DatalogMemoryError as exc:
        return exc.message
    return None


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    m = Memory.open(str(tmp_path_factory.mktemp("names") / "memory.db"))
    yield m
    m.close()


def test_the_reported_names_are_plain_predicates():
    assert all(reserved_reason(name, arity) is None for name in REPORTED for arity in range(4))
    assert reserved_reason("is", 2) and reserved_reason("findall", 3) and reserved_reason("true", 0)
    assert reserved_reason("is", 1) is None  # only the arity the engine evaluates is a built-in


@pytest.mark.parametrize("name,arity", CASES, ids=[f"{n}/{a}" for n, a in CASES])
def test_one_rule_at_every_write_and_query(memory, name, arity):
    segment = f"s{NAMES.index(name)}_{arity}"  # a segment per case: no case sees another's facts
    call_tool(memory, "create_memory", {"name": segment})
    call_tool(memory, "mount_memory", {"name": segment})
    fact, assumed = _term(name, arity), _term(name, arity, "assumed_1")
    call_tool(memory, "remember_fact", {"fact": "source(derived_1, v)", "memory": segment})
    call_tool(memory, "remember_fact", {"fact": _term("renamed_from", arity, "renamed_1"), "memory": segment})
    head = format_term(Compound(name, (Var("X"), *[f"v{i}" for i in range(1, arity)])) if arity else name)
    writes = {
        "rename_predicate": lambda: call_tool(memory, "rename_predicate", {
            "old_functor": "renamed_from", "new_functor": name, "arity": arity, "memory": segment}),
        "remember_fact": lambda: call_tool(memory, "remember_fact", {"fact": fact, "memory": segment}),
        "assume_fact": lambda: call_tool(memory, "assume_fact", {"fact": assumed, "assumption": "a",
                                                                  "memory": segment}),
        "define_rule": lambda: call_tool(memory, "define_rule", {"head": head, "body": "source(X, v)",
                                                                  "memory": segment}),
        # parenthesized: an operator's name alone (`(->).`) is a clause only so
        "import": lambda: memory.import_program(f"({_term(name, arity, 'imported_1')}).\n", segment),
    }
    outcomes = {write: _outcome(call) for write, call in writes.items()}
    reason = reserved_reason(name, arity)
    if reason is None:
        if name in ALL_OPERATORS:  # the reference's refusal to rename an operator, at any arity
            assert outcomes.pop("rename_predicate") == f"Cannot rename ISO operator: {name}/{arity}"
            writes.pop("rename_predicate")
        assert outcomes == dict.fromkeys(writes), outcomes
        firsts = ["item_42", "assumed_1", "imported_1"] + ["derived_1"] * bool(arity) \
            + ["renamed_1"] * ("rename_predicate" in writes)
        for first in firsts:
            ground = _term(name, arity, first) if arity else name
            answer = call_tool(memory, "query_logic", {"goal": ground, "memory": segment}).structured
            assert answer["bindings"] == [{}], (ground, answer)
        return
    message = reserved_message(name, arity)
    # a term whose text does not read back as name/arity (`a , b` is a conjunction, `:- a` a rule or a
    # directive, `,` alone no term) is refused, or read, as what it reads as: never stored under the name
    reads_back = _reads_as(_term(name, arity), name, arity) and name != ":-"  # `:-`: refused as rule syntax
    for write in ("remember_fact", "assume_fact", "define_rule", "import"):
        got = outcomes[write]
        if reads_back:
            assert got is not None and message in got, (write, got)
    # rename keeps the reference's own refusal of operators and control constructs ("Cannot rename ISO
    # operator", or a name that is no plain atom); any other reserved name: the same message
    assert outcomes["rename_predicate"] is not None
    if name not in PROTECTED:
        assert message in outcomes["rename_predicate"]


def _reads_as(text: str, name: str, arity: int) -> bool:
    try:
        term = parse_term(text)
    except DatalogMemoryError:
        return False
    return indicator(term) == (name, arity)


def test_a_query_reads_an_io_named_fact_and_refuses_a_construct_with_its_reason(memory):
    call_tool(memory, "remember_fact", {"fact": "open(issue_42)"})
    assert call_tool(memory, "query_logic", {"goal": "open(X)"}).structured["bindings"] == [{"X": "issue_42"}]
    with pytest.raises(DatalogMemoryError, match="findall/3 is not supported: use aggregate_all"):
        call_tool(memory, "query_logic", {"goal": "findall(X, open(X), L)"})


def test_through_the_command_line(db_path):
    """As a user runs it: the reported case stores and reads back; a refused name says why, the same way twice."""
    stored = cli_process(db_path, "remember-fact", "open(item_42)", check=True)
    assert stored.stdout.startswith("Asserted: open(item_42)")
    assert cli_process(db_path, "query-logic", "open(X)", check=True).stdout == "item_42\n"
    first = cli_process(db_path, "remember-fact", "--fact", "findall(a, b, c)")
    second = cli_process(db_path, "define-rule", "findall(X, b, c)", "--body", "open(X)")
    message = reserved_message("findall", 3)
    assert first.returncode == second.returncode == 1
    assert message in first.stderr and message in second.stderr
