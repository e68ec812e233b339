"""memory_search matches words by what they mean to a reader: inflections and plurals (Snowball stems), words
inside Chinese, Japanese and Korean text, compounds written joined, apart or hyphenated, and questions whose
stop words would otherwise match everything; on SQLite and PostgreSQL alike."""

import pytest
from hypothesis import given, settings, strategies as st

from memory import Memory
from memory.errors import InvalidConfiguration
from memory.access import CallerContext
from memory.sources import SourceMemories, reindex
from memory.access.context import DEFAULT_CAPABILITIES, WRITE_GLOBAL
from memory.sources.stemming import LANGUAGE_VARIABLE, language_setting, stem
from memory.sources.words import analyze, count_words, query_terms

ALL = frozenset(DEFAULT_CAPABILITIES | {WRITE_GLOBAL})
ANN = CallerContext("ann", "s1", "https://example.org/one", capabilities=ALL)
BOB = CallerContext("bob", "s2", "https://example.org/two", capabilities=ALL)


def _ids(found: dict) -> list[str]:
    return [r["id"] for r in found["results"]]


def _store(location: str, texts: list[str]) -> tuple[Memory, list[str]]:
    m = Memory(location, context=ANN)
    return m, [m.memory_remember(t, scope="project")["id"] for t in texts]


def test_inflections_and_plurals_find_each_other(store_location):
    m, (deployed, deployments, deploys, cats, other) = _store(store_location, [
        "We deployed the fix on Monday", "Two deployments failed", "Deploys are automatic now",
        "The cats sat on the mat", "Nothing relevant here"])
    with m:
        for query in ("deploy", "deployment", "DEPLOYED", "deploying"):
            assert set(_ids(m.memory_search(query))) == {deployed, deployments, deploys}, query
        assert _ids(m.memory_search("cat")) == [cats]
        why = {r["id"]: r["why"] for r in m.memory_search("deployment")["results"]}
        assert why[deployed] == ["text matches deployment as deployed"]
        assert why[deployments] == ["text matches deployment as deployments"]


def test_words_inside_chinese_japanese_and_korean_text(store_location):
    m, (chinese, japanese, korean, hokkaido) = _store(store_location, [
        "我们在北京大学见面", "昨日東京に行きました", "우리는 서울에서 만났다", "北海道は寒い"])
    with m:
        assert _ids(m.memory_search("北京")) == [chinese]
        assert _ids(m.memory_search("大学")) == [chinese]
        assert _ids(m.memory_search("東京")) == [japanese]
        assert _ids(m.memory_search("서울")) == [korean]
        assert _ids(m.memory_search("北海道")) == [hokkaido]  # shares 北 with 北京, but no character pair
        assert m.memory_search("北京")["results"][0]["why"] == ["text matches 北京"]


def test_compounds_joined_apart_or_hyphenated(store_location):
    m, (joined, apart, hyphen, rolled, email, setup, unrelated) = _store(store_location, [
        "We did a rollback at noon", "Please roll back the release", "The roll-back went fine",
        "They rolled back the deploy", "Send me an e-mail", "I will set up the server",
        "We roll the dice and come back"])
    with m:
        assert set(_ids(m.memory_search("rollback"))) == {joined, apart, hyphen, rolled}
        found = _ids(m.memory_search("roll back"))
        assert set(found) == {joined, apart, hyphen, rolled, unrelated}
        assert set(found[:3]) == {apart, hyphen, rolled}  # both words and their joined form
        assert _ids(m.memory_search("email")) == [email]
        assert _ids(m.memory_search("setup")) == [setup]
        why = {r["id"]: r["why"] for r in m.memory_search("rollback")["results"]}
        assert why[apart] == ["text matches rollback as roll back"]
        assert unrelated not in _ids(m.memory_search("rollback"))


def test_a_question_drops_its_stop_words(store_location):
    m, (deploy, weather, band) = _store(store_location, [
        "The deploy is on Friday", "What is the weather like", "The Who played last night"])
    with m:
        assert _ids(m.memory_search("When is the deploy?")) == [deploy]
        # Only stop words: they are all the question has, so they are searched.
        assert set(_ids(m.memory_search("the who"))) == {band, weather, deploy}
        assert _ids(m.memory_search("the who"))[0] == band


def test_accents_and_case_still_fold(store_location):
    m, (cafe,) = _store(store_location, ["Meet at the Café Noir"])
    with m:
        assert _ids(m.memory_search("cafe noir")) == [cafe]
        assert _ids(m.memory_search("CAFÉ")) == [cafe]


def test_hidden_memories_change_no_score(store_location):
    """Another caller's memories holding the same terms change neither what ann finds nor its scores."""
    with Memory(store_location, context=ANN) as m:
        mine = m.memory_remember("the deployment failed twice", scope="project")["id"]
        m.memory_remember("a deploy note", scope="project")
        before = m.memory_search("deploy fails")
        bob = SourceMemories(m.repository, BOB)
        for i in range(5):
            bob.remember(f"deploy deployed deployment {i}", scope="session")
        after = m.memory_search("deploy fails")
        assert after["results"] == before["results"] and after["total"] == before["total"] == 2
        assert after["results"][0]["id"] == mine


def test_a_store_indexed_otherwise_is_indexed_again_before_search(store_location):
    """A database whose terms another analysis made (migration 0014 marks existing ones '1') is re-indexed
    once, in one write, before the next search; erased memories stay without terms."""
    with Memory(store_location, context=ANN) as m:
        kept = m.memory_remember("Deployments went well")["id"]
        erased = m.memory_remember("deployed secrets")["id"]
        m.memory_forget(ids=[erased], action="delete", erase=True)
        with m.store.write() as conn:  # as a database from before 0014 stands: unstemmed words
            conn.execute("UPDATE memory_words SET word = 'deployments' WHERE word = 'deploy'")
            conn.execute("UPDATE search_index_state SET analyzer = '1' WHERE id = 1")
        reindex._checked.pop(m.store, None)  # this process checked the store already
        assert _ids(m.memory_search("deploy")) == [kept]
        with m.store.read() as conn:
            assert conn.execute("SELECT analyzer FROM search_index_state").fetchone()[0] == reindex.analyzer_tag()
            words = {w for (w,) in conn.execute("SELECT word FROM memory_words")}
        assert words == {t.term for t in analyze("Deployments went well")}
        assert reindex.ensure_terms(m.kb.repository, "ann") is False  # done once
        with m.store.read() as conn:  # the re-index was one write with its audit row
            audited = conn.execute("SELECT payload FROM audit_log WHERE operation = 'reindex_search'").fetchall()
        assert len(audited) == 1 and '"was":"1"' in audited[0][0].replace(" ", "")


def test_the_stemming_language_is_configured_by_name(monkeypatch):
    monkeypatch.setenv(LANGUAGE_VARIABLE, "German")
    assert language_setting() == "german"
    assert stem("hauser", "german") == stem("haus", "german")
    monkeypatch.setenv(LANGUAGE_VARIABLE, "klingon")
    with pytest.raises(InvalidConfiguration) as refused:
        language_setting()
    assert LANGUAGE_VARIABLE in str(refused.value) and "english" in str(refused.value)
    # A word's own script names its language whatever is configured: Russian is stemmed as Russian.
    assert stem("книги", "english") == stem("книга", "english")


words = st.lists(st.sampled_from(["deploy", "Deployed", "roll", "back", "rollback", "the", "is", "北京大学", "東京",
                                  "서울에서", "café", "e-mail", "x1", "42", "foo_bar", "set", "up", "ÄRGER"]),
                 min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(words, st.sampled_from([" ", ", ", "-", "\n"]))
def test_a_text_holds_every_term_of_itself_as_a_query(ws, separator):
    """Law: every term a question made of a text's own words asks for is one of that text's terms, so a memory
    is always found by its own words; and the counts ranking stores agree with the analysis."""
    text = separator.join(ws)
    terms = {t.term for t in analyze(text)}
    assert {t.term for t in query_terms(text)} <= terms
    counts = count_words(text, "")
    assert {w for w, _, _ in counts.occurrences} == terms
    assert counts.text_words == sum(1 for t in analyze(text) if not t.joined)


@settings(max_examples=15, deadline=None)
@given(words)
def test_a_memory_is_found_by_its_own_text(ws):
    text = " ".join(ws)
    with Memory(":memory:", context=ANN) as m:
        ident = m.memory_remember(text)["id"]
        m.memory_remember("unrelated words entirely")
        assert ident in _ids(m.memory_search(text))
