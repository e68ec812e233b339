"""Recall benchmark: how well memory_search finds the turns that answer a question, on LoCoMo.

    python benchmarks/recall.py [--data PATH] [--latency-memories 10000] [--latency-calls 300] [--no-dense]

Dataset: LoCoMo (snap-research/locomo, "Evaluating Very Long-Term Conversational Memory of LLM Agents"): ten
long multi-session conversations. `--data` takes `locomo10.json` (a list of samples), the repository's
`data/locomo10.zip`, or a folder of one JSON file per conversation (the zip's `locomo10_v2/`); without it the
script downloads `data/locomo10.json` from GitHub into a temporary folder (never into the checkout).

Each dialogue turn is one source memory (`Speaker: text`, valid from its session's date), one store per
conversation (about 600 memories each), in a temporary folder (HOME, XDG_DATA_HOME and the database all
there). Every question with labelled evidence turns (1,536: the adversarial category 5 has none) is given to
memory_search as it is, through the Memory API in process (not over MCP). recall@k is the share of a
question's evidence turns in the top k, averaged over questions; MRR the mean of 1/rank of the first evidence
turn (0 when none is in the top 20).

Rows: ours (memory_search by words alone, the default install); ours with the semantic extra (words and
meaning: all-MiniLM-L6-v2 in NumPy, memory/sources/embedding.py); BM25 (Okapi, k1 1.5, b 0.75, as rank_bm25's
BM25Okapi) over plain lower-case words; the same over Snowball-stemmed words without English stop words; dense
(all-MiniLM-L6-v2 cosine: the same model, whose vectors equal sentence-transformers', tests/test_semantic.py);
and reciprocal-rank fusion (k = 60) of dense and stemmed BM25. The rows that need the model are skipped (and
said so) when the semantic extra is not installed.

Latency: p50 and p99 of memory_search at `--latency-memories` memories in one store (the conversations' turns,
repeated as needed), questions drawn from the dataset, through the Memory API in process, by words alone and
with meaning; and memory_remember while filling the store, with and without vectors being written behind it.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

MINILM = "all-MiniLM-L6-v2"
URL = "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json"
KS = (5, 10, 20)
RRF_K = 60


@dataclass
class Turn:
    dia_id: str
    text: str
    valid_from: str


@dataclass
class Question:
    text: str
    evidence: set[str]


@dataclass
class Conversation:
    turns: list[Turn]
    questions: list[Question]


# --- the dataset ------------------------------------------------------------------------------------------
def _samples(path: Path | None) -> list[dict]:
    if path is None:
        with urllib.request.urlopen(URL, timeout=60) as response:  # noqa: S310 (a fixed https address)
            return json.loads(response.read())
    if path.is_dir():
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(path.glob("*.json"))]
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            names = sorted(n for n in archive.namelist() if n.endswith(".json"))
            return [json.load(io.TextIOWrapper(archive.open(n), encoding="utf-8")) for n in names]
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def _instant(date_time: str) -> str:
    """LoCoMo's '1:56 pm on 8 May, 2023' as an ISO instant."""
    return datetime.strptime(date_time.strip(), "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M:%SZ")


def load(path: Path | None) -> list[Conversation]:
    conversations = []
    for sample in _samples(path):
        dialogue = sample.get("conversation", sample)  # locomo10.json nests it; the per-file form does not
        turns = []
        for key, value in dialogue.items():
            if key.startswith("session_") and isinstance(value, list):
                when = _instant(dialogue[f"{key}_date_time"])
                turns += [Turn(t["dia_id"], f"{t['speaker']}: {t['text']}", when) for t in value]
        questions = []
        for qa in sample["qa"]:
            evidence = {e.strip() for item in qa.get("evidence") or [] for e in item.replace(";", " ").split()}
            if qa.get("category") != 5 and evidence:
                questions.append(Question(qa["question"], evidence))
        conversations.append(Conversation(turns, questions))
    return conversations


# --- the baselines ----------------------------------------------------------------------------------------
def plain_words(text: str) -> list[str]:
    import re
    return re.findall(r"\w+", text.lower())


def stemmed_words(text: str) -> list[str]:
    import snowballstemmer

    from memory.sources.stemming import ENGLISH_STOP_WORDS
    stemmer = snowballstemmer.stemmer("english")
    return stemmer.stemWords([w for w in plain_words(text) if w not in ENGLISH_STOP_WORDS])


class BM25:
    """Okapi BM25 as rank_bm25's BM25Okapi computes it (idf floor epsilon x mean idf)."""

    def __init__(self, documents: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25):
        self.k1, self.b, self.docs = k1, b, [Counter(d) for d in documents]
        self.lengths = [len(d) for d in documents]
        self.average = sum(self.lengths) / max(1, len(documents))
        holding = Counter(w for d in self.docs for w in d)
        n = len(documents)
        self.idf = {w: math.log(n - h + 0.5) - math.log(h + 0.5) for w, h in holding.items()}
        floor = epsilon * sum(self.idf.values()) / max(1, len(self.idf))
        self.idf = {w: (v if v >= 0 else floor) for w, v in self.idf.items()}

    def ranking(self, query: list[str]) -> list[int]:
        scores = []
        for i, (doc, length) in enumerate(zip(self.docs, self.lengths)):
            s = 0.0
            for w in query:
                tf = doc.get(w, 0)
                if tf:
                    s += self.idf[w] * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / self.average))
            scores.append((s, i))
        return [i for s, i in sorted(scores, key=lambda x: (-x[0], x[1])) if s > 0]


def dense_model():
    """all-MiniLM-L6-v2 from the semantic extra, or None when it is not installed."""
    from memory.sources.embedding import MiniLM, minilm_folder
    folder = minilm_folder()
    return None if folder is None else MiniLM(folder)


def fuse(*rankings: list[int]) -> list[int]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, i in enumerate(ranking):
            scores[i] = scores.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=lambda i: (-scores[i], i))


# --- ours -------------------------------------------------------------------------------------------------
def isolate(folder: Path) -> None:
    """Nothing of the user's is read or written: HOME, XDG_DATA_HOME and the database under `folder`."""
    for name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        os.environ[name] = str(folder / name.lower())
        Path(os.environ[name]).mkdir(parents=True, exist_ok=True)
    os.environ["DATALOG_MEMORY_DB"] = str(folder / "unused.db")


def ours_store(path: Path, turns: list[Turn], semantic: bool = False):
    """A store of these turns; with `semantic`, once the background indexer has given each its vector."""
    from memory import Memory
    from memory.access import CallerContext
    from memory.access.context import DEFAULT_CAPABILITIES
    os.environ["DATALOG_MEMORY_EMBEDDER"] = MINILM if semantic else "off"
    m = Memory(str(path), context=CallerContext("bench", "s1", "https://example.org/locomo",
                                                capabilities=frozenset(DEFAULT_CAPABILITIES)))
    ids = [m.memory_remember(t.text, scope="project", valid_from=t.valid_from)["id"] for t in turns]
    if semantic:
        settle(m)
    return m, ids


def settle(m) -> None:
    from memory.sources.embedding import current_embedder
    from memory.sources.semantic import index_of
    index = index_of(m.repository.store, current_embedder())
    index.kick("bench")
    index.wait()


def search(m, query: str, semantic: bool, limit: int) -> list[dict]:
    os.environ["DATALOG_MEMORY_EMBEDDER"] = MINILM if semantic else "off"
    return m.memory_search(query, limit=limit)["results"]


class Scores:
    def __init__(self) -> None:
        self.recall = {k: [] for k in KS}
        self.reciprocal: list[float] = []

    def add(self, ranked: list[str], evidence: set[str]) -> None:
        for k in KS:
            self.recall[k].append(len(evidence & set(ranked[:k])) / len(evidence))
        first = next((r for r, d in enumerate(ranked[:max(KS)], 1) if d in evidence), None)
        self.reciprocal.append(1.0 / first if first else 0.0)

    def row(self) -> list[str]:
        return [f"{statistics.fmean(self.recall[k]):.3f}" for k in KS] + [f"{statistics.fmean(self.reciprocal):.3f}"]


OURS, OURS_SEMANTIC = "ours, memory_search (lexical, default install)", "ours, memory_search with the semantic extra"
DENSE, FUSION = "dense, all-MiniLM-L6-v2 cosine", "RRF of dense and stemmed BM25"


def run(conversations: list[Conversation], folder: Path, dense: bool) -> dict[str, Scores]:
    model = dense_model() if dense else None
    names = [OURS] + ([OURS_SEMANTIC] if model else []) + ["BM25, plain words",
                                                           "BM25, Snowball stems, no English stop words"]
    rows = {name: Scores() for name in names + ([DENSE, FUSION] if model else [])}
    for n, conversation in enumerate(conversations):
        turns, dia = conversation.turns, [t.dia_id for t in conversation.turns]
        m, ids = ours_store(folder / f"locomo{n}.db", turns, semantic=model is not None)
        by_id = dict(zip(ids, dia))
        plain = BM25([plain_words(t.text) for t in turns])
        stemmed = BM25([stemmed_words(t.text) for t in turns])
        if model is not None:
            import numpy as np
            vectors = model.embed([t.text for t in turns])
            asked = model.embed([q.text for q in conversation.questions])
        for qi, q in enumerate(conversation.questions):
            for name, semantic in ((OURS, False), (OURS_SEMANTIC, True)):
                if name in rows:
                    found = search(m, q.text, semantic, max(KS))
                    rows[name].add([by_id[r["id"]] for r in found], q.evidence)
            rows["BM25, plain words"].add([dia[i] for i in plain.ranking(plain_words(q.text))], q.evidence)
            bm25 = stemmed.ranking(stemmed_words(q.text))
            rows["BM25, Snowball stems, no English stop words"].add([dia[i] for i in bm25], q.evidence)
            if model is not None:
                cosine = vectors @ asked[qi]
                ranked = [int(i) for i in np.argsort(-cosine, kind="stable")[:200]]
                rows[DENSE].add([dia[i] for i in ranked], q.evidence)
                rows[FUSION].add([dia[i] for i in fuse(ranked, bm25[:200])], q.evidence)
        m.close()
    return rows


def latency(conversations: list[Conversation], folder: Path, size: int, calls: int,
            semantic: bool) -> list[tuple[str, float, float, float]]:
    """(what, p50 ms wall, p99 ms wall, p50 ms CPU) of memory_remember while filling and of memory_search."""
    turns = [t for c in conversations for t in c.turns]
    many = [turns[i % len(turns)] for i in range(size)]
    questions = [q.text for c in conversations for q in c.questions]
    random.Random(7).shuffle(questions)
    rows = []

    def timed(what: str, call, items) -> None:
        times, cpu = [], []
        for item in items:
            t0, c0 = time.perf_counter(), time.process_time()
            call(item)
            times.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)  # this process's CPU (the indexer's thread included)
        times.sort()
        rank = max(0, math.ceil(len(times) * 0.99) - 1)  # nearest rank: the largest of fewer than 100
        rows.append((what, statistics.median(times), times[rank], statistics.median(cpu)))

    from memory import Memory
    from memory.access import CallerContext
    from memory.access.context import DEFAULT_CAPABILITIES
    for name, embedder in (("latency.db", "off"), ("latency-semantic.db", MINILM))[:2 if semantic else 1]:
        os.environ["DATALOG_MEMORY_EMBEDDER"] = embedder
        m = Memory(str(folder / name), context=CallerContext("bench", "s1", "https://example.org/locomo",
                                                             capabilities=frozenset(DEFAULT_CAPABILITIES)))
        behind = "vectors written behind it" if embedder != "off" else "words only"
        timed(f"memory_remember, filling to {size:,} ({behind})",
              lambda t, m=m: m.memory_remember(t.text, scope="project", valid_from=t.valid_from), many)
        if embedder != "off":
            settle(m)
        m.memory_search(questions[0])  # the first search of a process checks the index's analyzer
        signals = "words only" if embedder == "off" else "words and meaning"
        timed(f"memory_search at {size:,}, {signals}", lambda q, m=m: m.memory_search(q, limit=10), questions[:calls])
        m.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="locomo10.json, locomo10.zip or a folder of conversations")
    parser.add_argument("--latency-memories", type=int, default=10_000)
    parser.add_argument("--latency-calls", type=int, default=300)
    parser.add_argument("--no-dense", action="store_true", help="skip the rows that need the semantic extra")
    parser.add_argument("--no-recall", action="store_true", help="measure only the latency")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as tmp:
        folder = Path(tmp)
        isolate(folder)
        conversations = load(args.data)
        questions = sum(len(c.questions) for c in conversations)
        print(f"LoCoMo: {len(conversations)} conversations, {sum(len(c.turns) for c in conversations)} turns, "
              f"{questions} questions with evidence; {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}")
        if not args.no_recall:
            started = time.perf_counter()
            rows = run(conversations, folder, not args.no_dense)
            print(f"(ranked in {time.perf_counter() - started:.0f} s)\n")
            if DENSE not in rows:
                print("rows needing the model skipped: install the semantic extra "
                      "(pip install 'datalog-memory[semantic]')\n")
            print("| engine | R@5 | R@10 | R@20 | MRR |\n| --- | --- | --- | --- | --- |")
            for name, scores in rows.items():
                print(f"| {name} | " + " | ".join(scores.row()) + " |")
        if args.latency_memories:
            measured = latency(conversations, folder, args.latency_memories, args.latency_calls,
                               not args.no_dense and dense_model() is not None)
            print(f"\nThrough the Memory API in process (not MCP), {args.latency_calls} questions, limit 10; load "
                  f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
            print("| call | p50 ms | p99 ms | p50 ms CPU |\n| --- | --- | --- | --- |")
            for what, p50, p99, cpu in measured:
                print(f"| {what} | {p50:.2f} | {p99:.2f} | {cpu:.2f} |")

if __name__ == "__main__":
    sys.exit(main())
