"""The builtin table: every entry is complete, and every reader of it (analysis, planning, demand, the
compiled evaluation, the proof check) agrees on it."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memory.datalog import explain, solve
from memory.datalog.analysis import bound_variables
from memory.datalog.builtin_table import BUILTINS, NUMBER, TERM, builtin, check_builtin, compile_builtin
from memory.datalog.planner import order_body
from memory.datalog.program import Builtin, check_user_predicate, parse_program
from memory.errors import EvaluationError, InvalidProgram
from memory.terms import Compound, Float, String, Var, format_term, parse_term

from engine_helpers import loader, program

A, B, X = Var("A"), Var("B"), Var("X")
ENTRIES = sorted(BUILTINS.values(), key=lambda e: e.name)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_each_entry_is_complete(entry):
    assert builtin(entry.name, entry.arity) is entry and builtin(entry.name, entry.arity + 1) is None
    assert entry.arity == len(entry.reads) == 2
    assert set(entry.reads) <= {TERM, NUMBER} and callable(entry.relation)
    assert entry.inputs in ("variable", "arithmetic input")
    for mode in entry.modes:
        assert mode.needs and mode.binds not in mode.needs and set(mode.needs) | {mode.binds} <= {0, 1}
        assert callable(mode.value) or (mode.value is None and len(mode.needs) == 1)
    # The parser knows it: it is a builtin literal in a body and cannot be defined as a predicate.
    goal = Compound(entry.name, (A, B))
    (rule,) = parse_program(f"p(A, B) :- v(A), v(B), {format_term(goal)}.").rules
    assert isinstance(rule.body[-1], Builtin) and rule.body[-1].op == entry.name
    assert rule.body[-1].args == (A, B)
    with pytest.raises(InvalidProgram):
        check_user_predicate(goal, "rule head")


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_analysis_planning_and_demand_agree_on_each_mode(entry):
    """With both arguments bound the builtin is a test; in each binding mode, only its `needs` argument is
    bound by the body and the builtin binds the other one: analysis accepts exactly that, the planner puts it
    after its inputs, and evaluation with and without the demand rewrite and the proof agree."""
    sample = {NUMBER: 3, TERM: parse_term("f(a)")}
    literal = Builtin(entry.name, (A, B))
    assert bound_variables((literal,), {A, B}) == {A, B}
    for mode in entry.modes:
        args = [A, B]
        args[mode.binds] = X
        lit = Builtin(entry.name, tuple(args))
        (needs,) = [args[i] for i in mode.needs]
        assert bound_variables((lit,), {needs}) == {needs, X}
        assert bound_variables((lit,), set()) == set()
        text = f"p({needs.name}, X) :- v({needs.name}), {format_term(Compound(entry.name, tuple(args)))}."
        prog = program(text)
        (rule,) = prog.rules
        assert order_body(rule, set(), lambda p: 1) == [0, 1]
        facts = {("v", 1): [(sample[entry.reads[mode.needs[0]]],)]}
        full = solve(prog, parse_term(f"p({needs.name}, X)"), loader(facts), demand=False).rows
        assert len(full) == 1
        assert solve(prog, parse_term(f"p({needs.name}, X)"), loader(facts)).rows == full
        fact = Compound("p", full[0])
        node = explain(prog, fact, loader(facts))
        assert node is not None and node.kind == "rule" and len(node.children) == 2
    # No mode runs with nothing bound: analysis names the missing inputs.
    with pytest.raises(InvalidProgram, match=entry.inputs):
        program(f"p(B) :- v(B), {format_term(Compound(entry.name, (Var('Z'), Var('Y'))))}.")


values = st.recursive(
    st.one_of(st.integers(-5, 5), st.builds(Float, st.sampled_from([0.5, -1.5, 2.0])),
              st.sampled_from(["a", "b"]), st.builds(String, st.sampled_from(["s", "t"]))),
    lambda inner: st.builds(lambda f, args: Compound(f, tuple(args)), st.sampled_from(["f", "g", "+", "*"]),
                            st.lists(inner, min_size=1, max_size=2)),
    max_leaves=4,
)


def _compiled(lit, varmap, row):
    """Rows out of the compiled step, or the evaluation error it raised."""
    try:
        return compile_builtin(lit, varmap, len(row)).run([row])
    except EvaluationError:
        return EvaluationError


def _checked(lit, binding):
    try:
        return check_builtin(lit, binding)
    except EvaluationError:
        return EvaluationError


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ENTRIES), values, values, st.booleans())
def test_compiled_evaluation_and_proof_check_agree_on_ground_arguments(entry, a, b, negated):
    lit = Builtin(entry.name, (A, B), negated)
    rows = _compiled(lit, {A: 0, B: 1}, (a, b))
    checked = _checked(lit, {A: a, B: b})
    if rows is EvaluationError or checked is EvaluationError:
        assert rows is checked  # both refuse, with a typed error
        return
    holds, _, text = checked
    assert (rows == [(a, b)]) == holds and rows in ([], [(a, b)])
    assert text.startswith("\\+ ") == negated


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([e for e in ENTRIES if e.modes]), values, st.data())
def test_compiled_binding_modes_and_proof_check_bind_the_same_value(entry, given_value, data):
    mode = data.draw(st.sampled_from(entry.modes))
    args = [A, A]
    args[mode.binds] = X
    lit = Builtin(entry.name, tuple(args))
    rows = _compiled(lit, {A: 0}, (given_value,))
    checked = _checked(lit, {A: given_value})
    if rows is EvaluationError or checked is EvaluationError:
        assert rows is checked
        return
    holds, binding, _ = checked
    assert holds == bool(rows)
    if holds:
        assert rows == [(given_value, binding[X])]


def test_a_builtin_is_added_by_one_entry(monkeypatch):
    """`plus(X, Y, Z)` (X + Y = Z) declared by one entry, with a mode per argument it can compute: the
    parser, analysis, planner, demand rewrite, evaluation and proofs all take it up."""
    from memory.datalog.builtin_table import BuiltinPredicate, Mode
    from memory.datalog.builtins import from_number

    plus = BuiltinPredicate(
        "plus", 3, (NUMBER, NUMBER, NUMBER), lambda x, y, z: x + y == z,
        (Mode(needs=(0, 1), binds=2, value=lambda x, y: from_number(x + y)),
         Mode(needs=(0, 2), binds=1, value=lambda x, z: from_number(z - x)),
         Mode(needs=(1, 2), binds=0, value=lambda y, z: from_number(z - y))),
        inputs="arithmetic input")
    monkeypatch.setitem(BUILTINS, "plus", plus)
    prog = program("sum(X, Y, Z) :- n(X), n(Y), plus(X, Y, Z). "
                   "diff(Z, X, Y) :- n(Z), n(X), plus(X, Y, Z), Y >= 0. "
                   "check(X) :- n(X), \\+ plus(X, X, 4).")
    facts = {("n", 1): [(1,), (2,), (3,)]}
    assert solve(prog, parse_term("sum(2, Y, Z)"), loader(facts)).rows == [(1, 3), (2, 4), (3, 5)]
    assert solve(prog, parse_term("diff(3, X, Y)"), loader(facts)).rows == [(1, 2), (2, 1), (3, 0)]
    assert solve(prog, parse_term("diff(3, X, Y)"), loader(facts), demand=False).rows == \
        solve(prog, parse_term("diff(3, X, Y)"), loader(facts)).rows
    assert solve(prog, parse_term("check(X)"), loader(facts)).rows == [(1,), (3,)]
    node = explain(prog, parse_term("diff(3, 1, 2)"), loader(facts))
    assert [child.goal for child in node.children] == ["n(3)", "n(1)", "plus(1, 2, 3)", "2 >= 0"]
    with pytest.raises(InvalidProgram, match="arithmetic input"):
        program("bad(Z) :- n(Z), plus(X, Y, Z).")
    with pytest.raises(InvalidProgram, match="built-in"):
        program("plus(1, 2, 3).")
