"""Search by meaning: the packaged all-MiniLM-L6-v2 run in NumPy gives sentence-transformers' vectors; vectors
are written after the acknowledgement, fused with the words' ranking over visible memories only, erased with
their memory, made again for another model, and never make a closed store reopen; on SQLite and PostgreSQL."""

import json
import threading
import time

import numpy as np
import pytest

from memory import Memory
from memory.access import CallerContext
from memory.access.context import DEFAULT_CAPABILITIES, WRITE_GLOBAL
from memory.errors import InvalidConfiguration
from memory.sources import embedding, semantic
from memory.store.repository import vectors
from memory.sources.embedding import HASHED, MINILM, SETTING, HashedWords, MiniLM, current_embedder, minilm_folder
from conftest import by_hand
from surfaces import call_checked, cli_process, run_client

ALL = frozenset(DEFAULT_CAPABILITIES | {WRITE_GLOBAL})
ANN = CallerContext("ann", "s1", "https://example.org/one", capabilities=ALL)
BOB = CallerContext("bob", "s2", "https://example.org/two", capabilities=ALL)

# The first six components, the 101st and the last of sentence-transformers' normalized embedding of each text
# (all-MiniLM-L6-v2, sentence-transformers 5 on torch 2.13, rounded to 4 places).
REFERENCE = {
    "I deployed the service yesterday": ([0.0106, -0.0217, 0.0299, -0.066, 0.0051, -0.0562], 0.0557, -0.0427),
    "My automobile broke down on the highway": ([-0.0312, 0.0188, 0.1067, 0.039, -0.0043, -0.0314], 0.0003, -0.0079),
    "我们在北京大学见面": ([0.0261, 0.0803, 0.1176, -0.0142, 0.0263, 0.0477], 0.0245, -0.0726),
}
needs_model = pytest.mark.skipif(minilm_folder() is None, reason="the semantic extra is not installed")


@pytest.fixture(scope="module")
def minilm():
    folder = minilm_folder()
    if folder is None:
        pytest.skip("the semantic extra is not installed")
    return MiniLM(folder)


def _with(monkeypatch, choice: str):
    monkeypatch.setenv(SETTING, choice)
    return current_embedder()


def _settled(m: Memory) -> None:
    """Wait for the background indexer to give every memory its vector."""
    embedder = current_embedder()
    assert embedder is not None
    index = semantic.index_of(m.repository.store, embedder)
    index.kick("test")
    assert index.wait(60), "the indexer did not finish"


def _ids(found: dict) -> list[str]:
    return [r["id"] for r in found["results"]]


# --- the embedders ----------------------------------------------------------------------------------------
def test_minilm_in_numpy_gives_sentence_transformers_vectors(minilm):
    vectors = minilm.embed(list(REFERENCE))
    for vector, (first, middle, last) in zip(vectors, REFERENCE.values()):
        assert np.allclose(vector[:6], first, atol=1.5e-4)
        assert abs(vector[100] - middle) < 1.5e-4 and abs(vector[383] - last) < 1.5e-4
        assert abs(np.linalg.norm(vector) - 1.0) < 1e-5


def test_minilm_batches_alike_and_takes_any_text(minilm):
    texts = ["x", "", "a " * 600, "The cat sat on the mat", "Le chat était assis"]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    assert together.shape == (5, 384) and together.dtype == np.float32
    assert np.allclose(together, alone, atol=1e-5)  # padding never changes a text's vector
    car, automobile, banana = minilm.embed(["car", "automobile", "banana"])
    assert car @ automobile > car @ banana + 0.2


def test_hashed_words_stand_in_is_deterministic_and_shares_words():
    embedder = HashedWords()
    a, b, c = embedder.embed(["deploy the service", "the service deploys", "bananas at the market"])
    assert np.array_equal(embedder.embed(["deploy the service"])[0], a)
    assert a @ b > a @ c
    assert embedder.embed([""])[0].any() == False  # noqa: E712 (an empty text is the zero vector)


def test_the_setting_is_checked(monkeypatch):
    assert _with(monkeypatch, "off") is None
    assert _with(monkeypatch, HASHED).name == HASHED
    monkeypatch.setenv(SETTING, "word2vec")
    with pytest.raises(InvalidConfiguration, match="invalid DATALOG_MEMORY_EMBEDDER='word2vec': one of auto, off"):
        current_embedder()
    monkeypatch.setattr(embedding, "minilm_folder", lambda: None)
    embedding._loaded.clear()
    try:
        assert _with(monkeypatch, "auto") is None  # no extra: words only
        monkeypatch.setenv(SETTING, MINILM)
        with pytest.raises(InvalidConfiguration, match=r"needs the semantic extra"):
            current_embedder()
    finally:
        embedding._loaded.clear()


# --- search -----------------------------------------------------------------------------------------------
@needs_model
def test_meaning_finds_what_shares_no_word(store_location, monkeypatch):
    _with(monkeypatch, MINILM)
    with Memory(store_location, context=ANN) as m:
        car, bananas, deploy = (m.memory_remember(t, scope="project")["id"] for t in (
            "My automobile broke down on the highway", "I bought bananas at the market", "Deploy on Friday"))
        _settled(m)
        found = m.memory_search("vehicle repair")
        assert found["semantic"] == MINILM and "semantic_indexing" not in found
        assert _ids(found)[0] == car
        assert found["results"][0]["why"][0].startswith("meaning is close to the query (similarity 0.")
        words = m.memory_search("bananas")
        assert _ids(words)[0] == bananas
        assert words["results"][0]["why"][0] == "text matches bananas"  # words first, meaning beside them
        assert any(w.startswith("meaning is close") for w in words["results"][0]["why"])
        assert m.memory_search("bananas", mode="exact")["semantic"] is None  # exact and symbolic: no meaning
        assert deploy not in _ids(m.memory_search("vehicle repair", limit=1))


def test_hidden_memories_change_no_score(store_kind, tmp_path, monkeypatch):
    from conftest import fresh_location
    _with(monkeypatch, HASHED)
    texts = ["deploy the service on friday", "the service deploys itself", "rollback of the service"]
    seen = []
    for with_other in (False, True):
        location = fresh_location(store_kind, tmp_path / str(with_other))
        with Memory(location, context=ANN) as ann:
            for t in texts:
                ann.memory_remember(t, scope="project")
            if with_other:
                with Memory(location, context=BOB) as bob:
                    for t in ["deploy the service", "service service service", "friday deploy", *texts]:
                        bob.memory_remember(t, scope="project")
            _settled(ann)
            found = ann.memory_search("service deploy")
            seen.append([(r["memory"], r["score"], r["why"]) for r in found["results"]])
    assert seen[0] == seen[1] and len(seen[0]) == 3


def test_vectors_come_after_the_acknowledgement(store_location, monkeypatch):
    release, started = threading.Event(), threading.Event()

    class Held(HashedWords):
        def embed(self, texts):
            started.set()
            release.wait(30)
            return super().embed(texts)

    monkeypatch.setattr(embedding, "current_embedder", lambda: Held())
    monkeypatch.setattr(semantic, "index_of", _fresh_index_of(Held()))
    with Memory(store_location, context=ANN) as m:
        done = threading.Event()
        threading.Thread(target=lambda: (m.memory_remember("first", scope="project"), done.set()),
                         daemon=True).start()
        assert done.wait(30), "remember waited for its vector"
        assert started.wait(30)  # the indexer is embedding it meanwhile
        with m.repository.read() as tx:
            assert tx.vectors.shape(HASHED) == (0, 0)
        release.set()


def _fresh_index_of(embedder):
    indexes = {}

    def index_of(store, _embedder=None):
        if store not in indexes:
            indexes[store] = semantic.SemanticIndex(store, embedder)
        return indexes[store]
    return index_of


def test_memories_stored_without_vectors_are_said_to_be_indexing(store_location, monkeypatch):
    """Memories another process stored (here: with the embedder off) have no vectors: the first search by
    meaning says so, and once the indexer is done it does not."""
    _with(monkeypatch, "off")
    with Memory(store_location, context=ANN) as m:
        m.memory_remember("the red car", scope="project")
        _with(monkeypatch, HASHED)
        assert m.memory_search("red car")["semantic_indexing"] is True
        _settled(m)
        found = m.memory_search("red car")
        assert "semantic_indexing" not in found and found["results"][0]["why"][-1].startswith("meaning is close")


def test_an_interrupted_indexing_pass_is_said_to_be_indexing(store_location, monkeypatch):
    """An indexer embeds the newest memories first: one stopped midway (its process ended) leaves the newest with
    vectors and older ones without. A later process's first search by meaning says vectors are being written,
    and once they are, it does not."""
    _with(monkeypatch, "off")
    with Memory(store_location, context=ANN) as m:
        older = m.memory_remember("the red car", scope="project")["id"]
        m.memory_remember("the blue car", scope="project")
        embedder = _with(monkeypatch, HASHED)
        with m.repository.write() as tx:  # what the interrupted pass wrote: the newest memory's vector only
            seq = max(seq for seq, _ in tx.vectors.missing(HASHED, 10))
            tx.vectors.put(HASHED, [(seq, embedder.embed(["the blue car"])[0].astype("<f4").tobytes())])
        assert m.memory_search("red car")["semantic_indexing"] is True
        _settled(m)
        found = m.memory_search("red car")
        assert "semantic_indexing" not in found and found["results"][0]["id"] == older


def test_searches_in_a_stream_let_the_indexing_pass_end(store_location, monkeypatch):
    """A search while the indexer's pass is under way leaves it to finish (that pass reads what was written
    before it ends) instead of asking for another: searches coming faster than a pass must not keep the indexer
    scanning beside them for as long as they come."""
    embedder = _with(monkeypatch, HASHED)
    looked, passes = vectors.Vectors.missing, []

    def slow_missing(self, *args):  # each look for memories without vectors takes this long at least
        passes.append(None)
        time.sleep(0.02)
        return looked(self, *args)

    monkeypatch.setattr(vectors.Vectors, "missing", slow_missing)
    with Memory(store_location, context=ANN) as m:
        m.memory_remember("the red car", scope="project")
        ends = time.monotonic() + 0.6
        while time.monotonic() < ends:  # about 30 passes' time
            m.memory_search("red car")
        assert semantic.index_of(m.repository.store, embedder).wait(10)
        with m.repository.read() as tx:
            assert tx.vectors.shape(HASHED)[0] == 1
    assert len(passes) <= 3, f"the indexer looked {len(passes)} times for memories without vectors"


def test_vectors_another_process_replaced_are_written_again(store_file, monkeypatch):
    """Another process embedding with another model replaces this model's vectors (one per memory): the next
    search here says vectors are being written, and they are, though every memory was covered before."""
    _with(monkeypatch, HASHED)
    with Memory(store_file, context=ANN) as m:
        for text in ("the red car", "the blue car"):
            m.memory_remember(text, scope="project")
        _settled(m)
        assert "semantic_indexing" not in m.memory_search("red car")

        class Other(HashedWords):
            name = "other-model"
        with Memory(store_file, context=ANN) as other:  # another process, another model
            with other.repository.read():  # its store opened (an indexer never opens one)
                pass
            index = semantic.index_of(other.repository.store, Other())
            index.kick("test")
            assert index.wait(30)
        with m.repository.read() as tx:
            assert tx.vectors.shape(HASHED)[0] == 0
        assert m.memory_search("red car")["semantic_indexing"] is True
        _settled(m)
        with m.repository.read() as tx:
            assert tx.vectors.shape(HASHED)[0] == 2


def test_erasing_a_memory_erases_its_vector(store_location, monkeypatch):
    _with(monkeypatch, HASHED)
    with Memory(store_location, context=ANN) as m:
        keep, gone = (m.memory_remember(t, scope="project")["id"] for t in ("the red car", "the red bicycle"))
        _settled(m)
        assert set(_ids(m.memory_search("red"))) == {keep, gone}
        m.memory_forget(ids=[gone], action="delete", erase=True)
        with m.repository.read() as tx:
            assert tx.vectors.shape(HASHED)[0] == 1
        for history in (False, True):
            assert gone not in _ids(m.memory_search("bicycle red", history=history))


def test_another_model_embeds_again(store_location, monkeypatch):
    _with(monkeypatch, HASHED)
    with Memory(store_location, context=ANN) as m:
        m.memory_remember("the red car", scope="project")
        _settled(m)

        class Other(HashedWords):
            name = "other-model"
        other = Other()
        monkeypatch.setattr(semantic, "current_embedder", lambda: other, raising=False)
        index = semantic.index_of(m.repository.store, other)
        index.kick("test")
        assert index.wait(30)
        with m.repository.read() as tx:
            assert tx.vectors.shape("other-model")[0] == 1 and tx.vectors.shape(HASHED)[0] == 0


def test_a_closed_store_is_never_reopened(db_path, monkeypatch):
    _with(monkeypatch, HASHED)
    m = Memory(db_path, context=ANN)
    m.memory_remember("the red car", scope="project")
    _settled(m)
    store = m.repository.store
    m.close()
    index = semantic.index_of(store, current_embedder())
    assert index.embed_missing() == 0
    with store.while_open() as open_:
        assert not open_


def test_search_by_meaning_over_mcp(store_file):
    async def scenario(client):
        await call_checked(client, "memory_remember", {"memory": "The deploy script lives in tools/ship.sh"})
        first = await call_checked(client, "memory_search", {"query": "ship script"})
        for _ in range(100):  # the vector comes after the acknowledgement
            found = await call_checked(client, "memory_search", {"query": "ship script"})
            if not found.structured_content.get("semantic_indexing"):
                return first, found
        return first, found
    first, found = run_client(store_file, "legacy", scenario, {SETTING: HASHED})
    assert found.structured_content["semantic"] == HASHED
    why = found.structured_content["results"][0]["why"]
    assert why[0] == "text matches ship, script" and why[1].startswith("meaning is close to the query")
    if first.structured_content.get("semantic_indexing"):
        assert "meaning vectors are still being written" in first.content[0].text


def _vectors(location: str) -> int:
    with by_hand(location) as conn:
        return conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0]


def test_a_cli_call_writes_the_vectors_its_memories_need_before_it_ends(store_file):
    """A CLI call ends right after its reply: the vectors of what it stored, and of what its search found without
    one, are written before the process exits (they were left unwritten by every call, so a CLI user never had
    search by meaning)."""
    hashed, off = {"DATALOG_MEMORY_EMBEDDER": HASHED}, {"DATALOG_MEMORY_EMBEDDER": "off"}
    cli_process(store_file, "memory-remember", "We deploy on Fridays.", check=True, extra_env=hashed)
    assert _vectors(store_file) == 1
    cli_process(store_file, "memory-remember", "My automobile broke down on the highway.", check=True, extra_env=off)
    cli_process(store_file, "memory-remember", "The rollback took ten minutes.", check=True, extra_env=off)
    assert _vectors(store_file) == 1
    found = json.loads(cli_process(store_file, "memory-search", "automobile highway", "--json", check=True,
                                   extra_env=hashed).stdout)
    assert found["semantic_indexing"] is True  # this search ran beside the pass that now writes them
    assert _vectors(store_file) == 3
    found = json.loads(cli_process(store_file, "memory-search", "automobile highway", "--json", check=True,
                                   extra_env=hashed).stdout)
    assert found.get("semantic_indexing") is not True and found["results"]


def test_finishing_with_nothing_stored_or_searched_loads_no_model(db_path, monkeypatch):
    _with(monkeypatch, HASHED)
    with Memory(db_path) as m:
        m.add_facts(["edge(a, b)"])
        assert m.finish_background_writes(5.0) is True
        assert semantic._indexes.get(m.store) is None
