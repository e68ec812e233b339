"""Strict parsing: every argument that is parsed as Prolog text holds exactly one term (a final '.' allowed);
text after it is a SyntaxError with its position, and nothing changes. Found over the whole registry."""

import pytest

from conftest import snapshot_counts
from memory.errors import DatalogMemoryError, TermSyntaxError
from memory.terms import parse_term
from memory.tools import REGISTRY, call_tool

# Valid arguments for each tool with required ones; any other string argument is probed on top of these.
BASE = {
    "echo": {"message": "hi"},
    "assume_fact": {"fact": "p(a)", "assumption": "a1"},
    "get_belief_status": {"fact": "p(a)"},
    "get_justification": {"assumption": "a1"},
    "retract_assumption": {"assumption": "a1"},
    "retract_assumptions": {"pattern": "a*"},
    "remember": {"members": ["host:a", "account:b"]},
    "forget_observation": {"hedge_tags": ["HEDGE-1"]},
    "verify": {"answer": "nothing [HEDGE-1]."},
    "remember_fact": {"fact": "p(a)"},
    "define_rule": {"head": "h(X)", "body": "p(X)"},
    "forget_fact": {"fact": "p(a)"},
    "query_logic": {"goal": "p(X)"},
    "explain_why": {"fact": "p(a)"},
    "clear_context": {"category": "p(_)"},
    "update_fact": {"old_fact": "p(a)", "new_fact": "p(b)"},
    "upsert_fact": {"fact": "p(a)"},
    "trace_dependency": {"start_node": "a"},
    "save_snapshot": {"name": "s1"},
    "restore_snapshot": {"name": "s1"},
    "find_predicate_references": {"functor": "p"},
    "rename_predicate": {"old_functor": "p", "new_functor": "q"},
    "create_memory": {"name": "m1"},
    "mount_memory": {"name": "m1"},
    "unmount_memory": {"name": "m1"},
    "memory_remember": {"memory": "x"},
    "memory_get": {"id": "mem_x"},
    "memory_search": {"query": "x"},
    "memory_recall": {"predicate": "p"},
}


def _outcome(mem, name, args):
    try:
        call_tool(mem, name, args)
        return None
    except DatalogMemoryError as exc:
        return exc


def _parsed_arguments(mem):
    """(tool, argument) pairs whose text goes through the term parser: an unclosed term there is a syntax error."""
    found = []
    for name, spec in REGISTRY.items():
        for argument, schema in spec.input_schema["properties"].items():
            if schema.get("type") != "string" or "enum" in schema or "pattern" in schema:
                continue
            error = _outcome(mem, name, {**BASE.get(name, {}), argument: "p(a"})
            if error is not None and "line 1, column" in error.message:
                found.append((name, argument))
    return found


def test_the_registry_probe_finds_every_known_parsed_argument(mem):
    found = set(_parsed_arguments(mem))
    assert {("remember_fact", "fact"), ("define_rule", "head"), ("define_rule", "body"), ("query_logic", "goal"),
            ("forget_fact", "fact"), ("clear_context", "category"), ("update_fact", "old_fact"),
            ("update_fact", "new_fact"), ("explain_why", "fact"), ("assume_fact", "fact"),
            ("trace_dependency", "start_node"), ("find_predicate_references", "functor")} <= found


@pytest.mark.parametrize("extra", ["p(a). p(b).", "p(a). evil(1)", "p(a) . q(Y)", "p(a).\n:- evil."])
def test_text_after_the_first_term_is_a_syntax_error_everywhere_and_changes_nothing(mem, extra):
    mem.remember_fact("p(a)")
    for name, argument in _parsed_arguments(mem):
        before = snapshot_counts(mem)
        error = _outcome(mem, name, {**BASE.get(name, {}), argument: extra})
        assert error is not None, (name, argument, extra)
        assert "line " in error.message and "column" in error.message, (name, argument, error.message)
        assert snapshot_counts(mem) == before, (name, argument)


def test_one_term_with_or_without_a_final_stop():
    assert parse_term("p(a)") == parse_term("p(a).") == parse_term("  p(a) .  % note\n")
    with pytest.raises(TermSyntaxError) as info:
        parse_term("p(a). p(b).")
    assert info.value.column == 7 and "more text" in info.value.message


def test_reproducers_from_the_issue(mem):
    """`remember_fact p(a). p(b).` answered `Asserted: p(a). p(b).` and stored only p(a)."""
    for name, args in [("remember_fact", {"fact": "p(a). p(b)."}), ("define_rule", {"head": "h(X). evil(1)", "body": "p(X)"}),
                       ("query_logic", {"goal": "p(X). q(Y)"}), ("forget_fact", {"fact": "p(a). p(b)."}),
                       ("clear_context", {"category": "p(_). q(_)"})]:
        error = _outcome(mem, name, args)
        assert error is not None and error.code == "syntax_error", (name, error)
    assert mem.query_logic("p(X)").total == 0
