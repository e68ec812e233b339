"""Terms and proofs of any size the argument limits allow: a 10,000-item list, a term nested as deep as the parser allows (1,000 levels) and a
proof 1,000 steps deep are stored, queried, explained and returned by the Python API, over MCP and by the CLI.
Nothing walks them with Python recursion (the reproducers: lists of 126, 500 and 5,000 items, proofs deeper
than 125 steps, belief status at depth 3,000)."""

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import Memory
from memory.knowledge import proof_view
from memory.terms import format_term, make_list, parse_term
from memory.terms.codec import MAX_JSON_DEPTH, decode_args, encode_args, from_json, to_json
from memory.tools import call_tool
from surfaces import ERAS, cli, run_client

ITEMS = 10_000
LIST = "[" + ",".join(f"i{i}" for i in range(ITEMS)) + "]"
NESTED = "f(" * 998 + "x" + ")" * 998  # with deep(...) around it: the parser's 1,000 levels
DEPTH = 1_000


def _json_depth(value) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _chain(memory: Memory, n: int = DEPTH) -> None:
    memory.add_facts([f"edge(n{i}, n{i + 1})" for i in range(n)] + ["start(n0)"])
    memory.define_rule("reach(X)", "start(X)")
    memory.define_rule("reach(Y)", "reach(X), edge(X, Y)")


def test_the_arguments_fit_the_limits():
    assert len(f"big({LIST})") < 65_536 and len(NESTED) < 65_536


@pytest.mark.sqlite_only("terms of tens of KiB: a PostgreSQL index entry holds about 2,700 bytes "
                         "(test_postgresql.py checks the typed error)")
def test_python_api_stores_queries_and_explains_big_terms(store_file):
    with Memory(store_file) as m:
        m.remember_fact(f"big({LIST})")
        m.remember_fact(f"deep({NESTED})")
        got = m.query_logic("big(X)")
        assert got.total == 1 and format_term(parse_term(got.bindings[0]["X"])) == format_term(parse_term(LIST))
        assert m.query_logic(f"big({LIST})").total == 1  # equality on 10,000 cons cells, without recursion
        assert m.query_logic(f"deep({NESTED})").total == 1
        assert m.explain_why(f"big({LIST})").proven and m.explain_why(f"deep({NESTED})").proven
    with Memory(store_file) as again:  # read back from the file
        assert again.query_logic("big(X)").total == 1 and again.query_logic("deep(X)").total == 1
        with again.store.read() as conn:
            stored = [r[0] for r in conn.execute("SELECT args FROM facts ORDER BY functor")]
    assert all(_json_depth(json.loads(args)) <= MAX_JSON_DEPTH + 4 for args in stored)  # + the args array


def test_a_proof_a_thousand_steps_deep_over_the_api(store_file):
    with Memory(store_file) as m:
        _chain(m, 3_000)
        explained = m.explain_why("reach(n3000)")
        assert explained.proven
        depth, node = 1, explained.proof_tree
        while node["children"]:
            node = node["children"][0]
            depth += 1
        assert depth == 3_002 and node["goal"] == "start(n0)"
        assert m.get_belief_status("reach(n3000)")["status"] == "in"  # failed at depth ~3,000
        nodes = proof_view.flat(explained.proof)
        assert len(nodes) == 6_002 and _json_depth(nodes) <= 4


@pytest.mark.sqlite_only("terms of tens of KiB: a PostgreSQL index entry holds about 2,700 bytes "
                         "(test_postgresql.py checks the typed error)")
@pytest.mark.parametrize("era", ERAS)
def test_big_terms_and_deep_proofs_over_mcp(store_file, era):
    with Memory(store_file) as m:
        _chain(m)

    async def scenario(client):
        return [await client.call_tool("remember_fact", {"fact": f"big({LIST})"}),
                await client.call_tool("remember_fact", {"fact": f"deep({NESTED})"}),
                await client.call_tool("query_logic", {"goal": "big(X)"}),
                await client.call_tool("query_logic", {"goal": "deep(X)"}),
                await client.call_tool("explain_why", {"fact": f"big({LIST})"}),
                await client.call_tool("explain_why", {"fact": f"reach(n{DEPTH})"}),
                await client.call_tool("get_belief_status", {"fact": f"reach(n{DEPTH})"}),
                await client.call_tool("list_facts", {"functor": "big"})]
    results = run_client(store_file, era, scenario)
    for result in results:
        assert not result.is_error, result.content[0].text[:300]
    stored, _, big, deep, explained_big, explained, status, listed = results
    assert stored.content[0].text == f"Asserted: big({LIST.replace(',', ', ')})"  # as stored
    assert parse_term(json.loads(big.content[0].text)[0]["X"]) == parse_term(LIST)
    assert big.structured_content["values"][0]["X"] == {"list": [f"i{i}" for i in range(ITEMS)]}
    assert parse_term(json.loads(deep.content[0].text)[0]["X"]) == parse_term(NESTED)
    assert json.loads(explained_big.content[0].text)["proven"] is True
    text = json.loads(explained.content[0].text)
    assert text["proven"] is True and len(explained.structured_content["proof_nodes"]) == 2 * DEPTH + 2
    goals = [node["goal"] for node in explained.structured_content["proof_nodes"]]
    assert goals[0] == f"reach(n{DEPTH})" and "start(n0)" in goals
    assert json.loads(status.content[0].text)["status"] == "in"
    assert listed.content[0].text.startswith("big([i0, i1") and listed.structured_content["total"] == 1


@pytest.mark.sqlite_only("terms of tens of KiB: a PostgreSQL index entry holds about 2,700 bytes "
                         "(test_postgresql.py checks the typed error)")
def test_big_terms_and_deep_proofs_on_the_cli(store_file):
    with Memory(store_file) as m:
        _chain(m)
    stored = cli(store_file, "remember-fact", "--fact", f"big({LIST})", check=True)
    assert stored.stdout.startswith("Asserted: big([i0, i1")
    queried = json.loads(cli(store_file, "query-logic", "--goal", "big(X)", "--json", check=True).stdout)
    assert len(queried["values"][0]["X"]["list"]) == ITEMS
    explained = json.loads(cli(store_file, "explain-why", "--fact", f"reach(n{DEPTH})", "--json", check=True).stdout)
    assert len(explained["proof_nodes"]) == 2 * DEPTH + 2
    drawn = cli(store_file, "explain-why", "--fact", "reach(n5)", check=True)  # drawn from the flat node list
    assert "start(n0)  fact  (asserted)" in drawn.stdout


@pytest.mark.sqlite_only("terms of tens of KiB: a PostgreSQL index entry holds about 2,700 bytes "
                         "(test_postgresql.py checks the typed error)")
def test_nothing_depends_on_a_raised_recursion_limit(store_file):
    """With Python's default limit of 1,000 frames, a 10,000-item list and a 1,500-step proof still work."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000)
    try:
        with Memory(store_file) as m:
            _chain(m, 1_500)
            m.remember_fact(f"big({LIST})")
            assert m.query_logic(f"big({LIST})").total == 1
            m.remember_fact(f"deep({NESTED})")  # parsed and printed 1,000 levels deep with 1,000 frames to spare
            assert format_term(parse_term(m.query_logic("deep(X)").bindings[0]["X"])) == format_term(parse_term(NESTED))
            assert call_tool(m, "explain_why", {"fact": "reach(n1500)"}).structured["proven"]
            assert call_tool(m, "get_belief_status", {"fact": "reach(n1500)"}).structured["status"] == "in"
            # the engine on big lists: standard order, patterns, rules holding one, proofs through them
            assert m.query_logic("big(X), X @> [i0, i1]").total == 1
            assert m.query_logic("big([i0, i1|T]), T @< [i3]").total == 1
            m.define_rule("whole(Y)", f"big({LIST}), Y = 1")
            m.define_rule("rest(T)", "big([_, _|T])")
            assert m.query_logic("whole(1)").total == 1 and m.query_logic("rest(T)").total == 1
            assert m.explain_why("whole(1)").proven
            m.save_snapshot("big")  # its canonical text is longer than an argument may be: still restorable
            assert m.restore_snapshot("big")["facts"] >= 1 and m.query_logic(f"big({LIST})").total == 1
    finally:
        sys.setrecursionlimit(limit)


terms = st.recursive(
    st.one_of(st.sampled_from(["a", "b", "[]", "x y"]), st.integers(-5, 5)),
    lambda inner: st.one_of(st.lists(inner, max_size=5).map(make_list),
                            st.builds(lambda f, args: parse_term(f) if not args else
                                      __import__("memory.terms", fromlist=["Compound"]).Compound(f, tuple(args)),
                                      st.sampled_from(["f", "g"]), st.lists(inner, min_size=1, max_size=3)),
                            st.builds(lambda items, tail: make_list(items, tail), st.lists(inner, min_size=1,
                                      max_size=3), st.sampled_from(["t", 1]))),
    max_leaves=40)


@settings(max_examples=150, deadline=None)
@given(terms)
def test_the_json_codec_round_trips_every_term(term):
    """Law: decode(encode(t)) == t, for lists (flat, with or without a tail) and nested compounds alike."""
    assert from_json(to_json(term)) == term
    assert decode_args(encode_args((term, term))) == (term, term)


def test_the_codec_keeps_json_shallow_and_reads_the_old_nested_lists():
    deep = parse_term(NESTED)
    assert _json_depth(to_json(deep)) <= MAX_JSON_DEPTH + 3 and from_json(to_json(deep)) == deep
    old = {"functor": ".", "args": ["a", {"functor": ".", "args": ["b", "[]"]}]}  # stored before lists were flat
    assert from_json(old) == parse_term("[a, b]")


def test_terms_deeper_than_the_parser_accepts_print_encode_and_store(store_file):
    """The engine can build terms deeper than text may nest: printing and the codec handle them without recursion."""
    from memory.terms import Compound
    term = "x"
    for _ in range(20_000):
        term = Compound("f", (term,))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000)
    try:
        text = format_term(term)
        encoded = to_json(term)
        assert from_json(json.loads(json.dumps(encoded))) == term
    finally:
        sys.setrecursionlimit(limit)
    assert text == "f(" * 20_000 + "x" + ")" * 20_000
    assert _json_depth(encoded) <= MAX_JSON_DEPTH + 3


@pytest.mark.parametrize("goal", [" ; ".join(f"p({i})" for i in range(1201)),
                                  ", ".join(["X = 1"] * 1100) + ", true"])
def test_a_flat_goal_too_long_to_nest_says_what_counts_and_what_to_do(goal):
    """A goal of more parts than the nesting limit is refused (its operators chain to the right), naming why."""
    m = Memory(":memory:")
    with pytest.raises(Exception) as refused:
        m.query_logic(goal)
    assert "nested more than 1000 levels deep" in str(refused.value)
    assert "more than about 1000 parts is too deep: split it into rules" in str(refused.value)
    assert m.query_logic(" ; ".join(f"X = {i}" for i in range(900))).total == 900  # under the limit: answered
