"""Loading stored arguments in bulk (`codec.decode_many`): the same tuples as decoding each row alone, whatever
the mix of terms; a bulk relation's atoms shared between its rows."""

from hypothesis import given, settings, strategies as st

from memory.terms import Compound, Float, String
from memory.terms.codec import DECODE_RUN, decode_args, decode_many, encode_args

TERMS = st.one_of(st.integers(-10**15, 10**15), st.sampled_from(["a", "b", "node 7", "ü", "x" * 40]),
                  st.floats(allow_nan=False, allow_infinity=False).map(Float), st.text(max_size=5).map(String),
                  st.tuples(st.integers(0, 3)).map(lambda t: Compound("f", t)))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(TERMS, min_size=0, max_size=3).map(tuple), max_size=40))
def test_decode_many_is_decode_args_of_each_row(rows):
    texts = [encode_args(r) for r in rows]
    assert decode_many(texts) == [decode_args(t) for t in texts]


def test_a_bulk_relations_atoms_are_one_object_each_and_plain_runs_keep_their_types():
    texts = [encode_args((f"n{i % 7}", i)) for i in range(DECODE_RUN + 5)]  # two runs
    rows = decode_many(texts)
    assert rows == [(f"n{i % 7}", i) for i in range(DECODE_RUN + 5)]
    assert len({id(a) for a, _ in rows}) == 7
    assert decode_many(['[1,"1"]', '[1.0,1]']) == [(1, "1"), (Float(1.0), 1)]
    assert decode_many(['[1]', '[1,2]', '[]']) == [(1,), (1, 2), ()]
