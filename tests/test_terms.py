"""The term language: parsing, error positions, canonical printing and its round trip."""

import pytest
from hypothesis import given, settings, strategies as st

from memory.datalog.builtins import order_key
from memory.errors import TermSyntaxError
from memory.terms.codec import decode_args, decode_many, encode_args
from memory.terms import (
    NIL, Compound, Float, String, Var, format_atom, format_term, list_items, make_list, parse_clauses,
    is_ground, parse_term, variant,
)


def c(f, *args):
    return Compound(f, tuple(args))


@pytest.mark.parametrize("text, expected", [
    ("human(socrates)", c("human", "socrates")),
    ("'hello world'", "hello world"),
    ("'it''s'", "it's"),
    (r"'a\nb\\c\'d'", "a\nb\\c'd"),
    ('"a string"', String("a string")),
    (r'"tab\there"', String("tab\there")),
    ("42", 42),
    ("-7", -7),
    ("3.25", Float(3.25)),
    ("1.0e10", Float(1e10)),
    ("0x1F", 31),
    ("0'a", 97),
    ("[]", NIL),
    ("[a, b | T]", make_list(["a", "b"], Var("T"))),
    ("[1,2,3]", make_list([1, 2, 3])),
    ("f(-1)", c("f", -1)),
    ("a - 1", c("-", "a", 1)),
    ("- 1", c("-", 1)),
    ("-(1)", c("-", 1)),
    ("- a", c("-", "a")),
    ("X is 1 + 2 * 3", c("is", Var("X"), c("+", 1, c("*", 2, 3)))),
    ("1 - 2 - 3", c("-", c("-", 1, 2), 3)),
    ("2 ^ 3 ^ 4", c("^", 2, c("^", 3, 4))),
    ("a :- b, c ; d", c(":-", "a", c(";", c(",", "b", "c"), "d"))),
    ("a :- (b -> c ; d)", c(":-", "a", c(";", c("->", "b", "c"), "d"))),
    ("\\+ p(X)", c("\\+", c("p", Var("X")))),
    ("seg:pred(x)", c(":", "seg", c("pred", "x"))),
    ("X \\== Y", c("\\==", Var("X"), Var("Y"))),
    ("X @=< Y", c("@=<", Var("X"), Var("Y"))),
    ("{a, b}", c("{}", c(",", "a", "b"))),
    ("f(a, (b, c))", c("f", "a", c(",", "b", "c"))),
    ("p % comment\n", "p"),
    ("/* block */ p", "p"),
    ("p.", "p"),
    ("a | b", c(";", "a", "b")),
    ("f(;, !)", c("f", ";", "!")),
    ("X = \\+", c("=", Var("X"), "\\+")),
])
def test_parses(text, expected):
    assert variant(parse_term(text), expected)


def test_variables_share_by_name_and_anonymous_ones_do_not():
    term = parse_term("f(X, X, _, _)")
    x1, x2, a1, a2 = term.args
    assert x1 is x2 or x1 == x2
    assert a1 != a2


def test_clauses_scope_variables_per_clause():
    clauses = parse_clauses("p(X) :- q(X).\nr(X).\n")
    assert len(clauses) == 2
    assert format_term(clauses[1]) == "r(X)"


@pytest.mark.parametrize("text, line, column, fragment", [
    ("foo(", 1, 5, "expected a term, found end of input"),
    ("foo(a b)", 1, 7, "expected ',' or ')'"),
    ("p :-\n  q(,)", 2, 5, "expected a term, found ','"),
    ("'unterminated", 1, 1, "unterminated quoted text"),
    ("[a, b", 1, 6, "expected ',', '|' or ']'"),
    ("a b", 1, 3, "expected an operator or the end of the term"),
    ("f(a))", 1, 5, "expected an operator or the end of the term"),
    ("/* open", 1, 1, "unterminated block comment"),
    ('"bad \\q escape"', 1, 6, "unknown escape sequence"),
    ("12abc", 1, 3, "expected an operator or punctuation after a number"),
    ("a :- b\nc.", 2, 1, "expected an operator or the end of the term"),
])
def test_errors_name_line_and_column(text, line, column, fragment):
    with pytest.raises(TermSyntaxError) as info:
        parse_term(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert fragment in info.value.message
    assert info.value.code == "syntax_error"
    assert f"line {line}, column {column}" in str(info.value)


def test_program_requires_final_period():
    with pytest.raises(TermSyntaxError) as info:
        parse_clauses("p(a).\nq(b)")
    assert "expected '.'" in info.value.message


def test_nesting_limit_is_an_error_not_a_crash():
    deep = "f(" * 5000 + "a" + ")" * 5000
    with pytest.raises(TermSyntaxError) as info:
        parse_term(deep)
    assert "nested more than" in info.value.message


@pytest.mark.parametrize("atom, text", [
    ("abc", "abc"), ("Abc", "'Abc'"), ("hello world", "'hello world'"), ("[]", "[]"), ("", "''"),
    ("it's", "'it\\'s'"), ("a\nb", "'a\\nb'"), ("+", "+"), ("=..", "=.."), ("_x", "'_x'"), ("é", "é"),
    ("1a", "'1a'"), (",", "','"), ("|", "'|'"),
])
def test_atom_quoting(atom, text):
    assert format_term(atom) == text or (atom in (",", "|") and format_term(atom) == text)
    assert parse_term(format_term(atom)) == atom


def test_canonical_text_of_rules():
    assert format_term(parse_term("risky(X):-untested(X),in_production(X)")) == "risky(X) :- untested(X), in_production(X)"
    assert format_term(parse_term("p(X) :- X is (A+B)*2")) == "p(X) :- X is (A + B) * 2"
    assert format_term(parse_term("f(- 1, -1, -(-(1)))")) == "f(-(1), -1, - -(1))"


# --- round trip: format_term(t) parses back to t ------------------------------

atoms = st.one_of(
    st.sampled_from(["a", "foo_bar", "[]", "{}", "!", ";", "+", "-", "*", "=..", "is", "mod", ",", "|", "\\+", ":-",
                     "Abc", "hello world", "it's", "", "é", "a\nb", "tab\t", "\\", "'", '"', "%", "/*x", ".", "..", "q\x01"]),
    st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=8),
)
numbers = st.one_of(
    st.integers(min_value=-10**30, max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False).map(Float),
)
strings = st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=10).map(String)
var_names = st.sampled_from(["X", "Y", "Zed", "_A"])
anonymous = st.integers(min_value=1, max_value=10**12).map(lambda serial: Var("_", serial))


@st.composite
def terms(draw, depth=0):
    kinds = ["atom", "number", "string", "var"] + (["compound", "list", "op"] if depth < 4 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "atom":
        return draw(atoms)
    if kind == "number":
        return draw(numbers)
    if kind == "string":
        return draw(strings)
    if kind == "var":
        return draw(st.one_of(st.builds(Var, var_names), anonymous))
    if kind == "list":
        items = draw(st.lists(terms(depth + 1), max_size=3))
        tail = draw(st.one_of(st.just(NIL), st.builds(Var, var_names), atoms))
        return make_list(items, tail)
    if kind == "op":
        op = draw(st.sampled_from([",", ";", "->", ":-", "=", "is", "<", "+", "-", "*", "/", "^", "**", ":", "mod",
                                   "\\+", "-u", "+u", "\\u"]))
        if op.endswith("u") and len(op) == 2 or op == "\\+":
            return Compound(op[0] if op != "\\+" else op, (draw(terms(depth + 1)),))
        return Compound(op, (draw(terms(depth + 1)), draw(terms(depth + 1))))
    name = draw(atoms)
    args = draw(st.lists(terms(depth + 1), min_size=1, max_size=3))
    return Compound(name, tuple(args))


@settings(max_examples=600, deadline=None)
@given(terms())
def test_round_trip(term):
    text = format_term(term)
    back = parse_term(text)
    assert variant(back, term), text
    assert format_term(back) == text


def test_list_helpers():
    items, tail = list_items(parse_term("[a, b | T]"))
    assert items == ["a", "b"] and tail == Var("T")


def test_floats_and_integers_are_different_terms():
    assert parse_term("1") != parse_term("1.0")
    assert len({parse_term("1"), parse_term("1.0")}) == 2
    assert format_term(Float(1e100)) == "1.0e+100"
    assert format_atom("a b") == "'a b'"


def test_negative_zero_is_a_term_of_its_own_as_its_text_is():
    """`p(0.0)` and `p(-0.0)` are two facts (their texts differ), so the engine keeps them apart too, as Prolog's
    `0.0 == -0.0` fails; standard order puts -0.0 first."""
    zero, negative = parse_term("0.0"), parse_term("-0.0")
    assert format_term(negative) == "-0.0" and negative != zero and len({zero, negative}) == 2
    assert Float(-0.0) == negative and hash(Float(-0.0)) == hash(negative)
    assert order_key(negative) < order_key(zero) < order_key(0)


def test_a_term_copied_into_another_process_equals_the_same_term_made_there():
    """Hashes of text differ between processes (PYTHONHASHSEED): a pickled term must not carry its maker's."""
    import os
    import pickle
    import subprocess
    import sys

    terms = [Float(1.5), Float(-0.0), String("s"), parse_term("f(a, [1, 2.5, \"x\"], g(-0.0))")]
    script = ("import pickle, sys\nfrom memory.terms import Float, String, parse_term\n"
              "got = pickle.loads(sys.stdin.buffer.read())\n"
              "made = [Float(1.5), Float(-0.0), String('s'), parse_term('f(a, [1, 2.5, \"x\"], g(-0.0))')]\n"
              "print(got == made, len(set(got) | set(made)), {t: 1 for t in made}.get(got[3]))")
    done = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(terms), capture_output=True,
                          env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True)
    assert done.stdout.decode().split() == ["True", "4", "1"]


# --- arbitrary text never crashes the parser ----------------------------------------

prolog_ish = st.text(alphabet=st.sampled_from(list("abcXY_019 ()[]{},.|;:-+*/\\=<>@#&$?!'\"%\n\t`^~")), max_size=40)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(prolog_ish, st.text(max_size=40)))
def test_arbitrary_text_parses_or_fails_with_a_position(text):
    from memory.errors import TermSyntaxError
    try:
        term = parse_term(text)
    except TermSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1
        return
    assert variant(parse_term(format_term(term)), term)


@given(st.lists(st.lists(terms(), max_size=4), max_size=30))
def test_many_argument_lists_decode_as_each_one_does(rows):
    ground = [tuple(row) for row in rows if all(is_ground(t) for t in row)]
    texts = [encode_args(row) for row in ground]
    assert decode_many(texts) == [decode_args(text) for text in texts] == ground
