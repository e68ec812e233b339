"""Semantic search's index: each kept memory's sentence embedding (memory_vectors, migration 0015), written
off the acknowledgement path, and the memories nearest in meaning to a query among those the caller may see.

Writing: a memory is stored and acknowledged first; then this process's indexer (one daemon thread per store)
embeds the memories that have no vector by its model, newest first, BATCH at a time, computing outside the
store's lock and writing each batch in one transaction with its audit row. A search kicks it too, so vectors
also come for memories another process wrote, a store opened after an upgrade, or a change of model. A
memory without a vector yet is still found by its words; the reply says when vectors are being written.

Searching: the store's vectors of this model are held in memory as one matrix (read again only when their
count or newest seq changes), the query's embedding is compared with all of them, and the best are kept
in order of similarity only after the caller's visibility filter admits them, so a memory the caller may
not see never changes what it is shown or how it is scored."""

from __future__ import annotations

import logging
import threading
import time
import weakref
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import DatalogMemoryError
from ..lazy import LazyModule
from .embedding import BATCH, Embedder

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule("numpy")  # loaded by the first embedding or similarity, not by importing the library

log = logging.getLogger("datalog-memory")
SEMANTIC_ONLY_FLOOR = 0.35  # a memory found by meaning alone is shown from this cosine similarity up (LoCoMo: 0.25
# and 0.35 give the same figures, 0.45 a lower R@20; below 0.35 a one-word query brings unrelated memories)
QUIET_SECONDS = 0.2  # the indexer embeds once writes have paused this long...
MAX_DELAY_SECONDS = 5.0  # ...or, under a steady stream of writes, one batch this often: writes come first
IDLE_SECONDS = 30.0  # an indexer thread with nothing to do ends after this long (the next write starts one)
ROUNDS = 4  # visibility checks of ever more candidates before the nearest visible ones are given up on


@dataclass
class _Matrix:
    shape: tuple[int, int] = (0, 0)
    seqs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    marker: object = None  # the store's change marker when these were read (None: not known)


class SemanticIndex:
    """The vectors of one store by one embedder, and the thread that writes the missing ones."""

    def __init__(self, store, embedder: Embedder) -> None:
        self._store = weakref.ref(store)
        self.embedder = embedder
        self._matrix = _Matrix(rows=np.zeros((0, embedder.dimensions), dtype=np.float32))
        self._matrix_lock = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._actor = "datalog-memory"
        self.pending = False  # memories are known to lack vectors (a write stored some, or a pass found some)
        self._version: int | None = None  # the store's data_version when a pass last found nothing missing
        # Every memory up to this seq had its vector when a pass last completed, and the model had at least
        # `_counted` vectors: only newer memories are looked at again (an indexer stopped midway leaves older
        # memories without one, not only the newest) until the count falls (an erasure, or another process's
        # model replacing vectors), which makes the next search look at all of them (`_resets` counts those
        # times, so that a pass under way then does not claim what it never looked at).
        self._covered, self._counted, self._resets = 0, 0, 0
        self._last_write = 0.0  # when this process last stored a memory here (monotonic)
        self._hurry = threading.Event()  # the process is about to end: write now, without waiting for a pause

    # --- writing vectors ----------------------------------------------------------------------------------
    def kick(self, actor: str, pending: bool = False, wrote: bool = False) -> None:
        """Have the indexer look for memories without vectors; `pending`: some are known to lack one; `wrote`:
        this process just stored some (the indexer then waits for the writes to pause)."""
        with self._thread_lock:
            self._actor = actor
            self.pending = self.pending or pending
            if wrote:
                self._last_write = time.monotonic()
            self._version = None
            self._idle.clear()
            self._wake.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="datalog-memory-vectors", daemon=True)
                self._thread.start()

    def refresh(self, actor: str) -> bool:
        """Before a search: look again when the store changed since the last complete pass (another process
        may have stored memories); True while memories are known to lack vectors."""
        store = self._store()
        if store is None or not self._idle.is_set():  # a pass under way reads what was written before it ends
            return self.pending
        version = store.data_version()
        if version == self._version:  # nothing was written since the last complete pass
            return self.pending
        from ..store.repository import Repository
        with Repository(store).read() as tx:  # memories another process stored, or a store never indexed
            if tx.vectors.shape(self.embedder.name)[0] < self._counted:
                with self._thread_lock:
                    self._covered, self._counted, self._resets = 0, 0, self._resets + 1
            behind = bool(tx.vectors.missing(self.embedder.name, 1, self._covered))
        if behind:
            self.kick(actor, pending=True)
        else:  # nothing is missing as of `version` (a write after it changes the version again)
            with self._thread_lock:
                if self._idle.is_set():
                    self._version = version
        return self.pending

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every memory has its vector (or `timeout` seconds); True when it has."""
        return self._idle.wait(timeout)

    def finish(self, timeout: float) -> bool:
        """Before the process ends: write the missing vectors now rather than after writes pause, waiting up to
        `timeout` seconds; True when none is left (what is not done by then is written by a later process)."""
        self._hurry.set()
        return self._idle.wait(timeout)

    def _run(self) -> None:
        while True:
            woken = self._wake.wait(IDLE_SECONDS)
            with self._thread_lock:
                if not (woken or self._wake.is_set()) or self._store() is None:  # nothing asked for a while: it ends
                    self._thread = None
                    self._idle.set()
                    return
                self._wake.clear()
            version = None
            try:
                extent, embedded, resets = None, 0, self._resets
                while True:
                    self._wait_for_a_pause()
                    version = self._data_version()
                    if extent is None:
                        extent = self._extent()
                    done = self.embed_missing()
                    if not done:
                        break
                    embedded += done
                    self.pending = True
                with self._thread_lock:
                    if not self._wake.is_set():  # no write came meanwhile: complete as of `version`
                        self.pending, self._version = False, version
                        if extent is not None and resets == self._resets:
                            self._covered, self._counted = extent[0], extent[1] + embedded
            except Exception as exc:  # an unwritable store: its memories are still found by their words
                log.debug("vectors not written: %s", exc)
                with self._thread_lock:  # tried again once the store changes, not at every search
                    self.pending, self._version = False, version
            with self._thread_lock:
                if not self._wake.is_set():
                    self._idle.set()

    def _wait_for_a_pause(self) -> None:
        """Embedding competes with the writes for the cores and the store's lock: wait until they pause
        (QUIET_SECONDS), but no longer than MAX_DELAY_SECONDS, so vectors still come under a steady stream."""
        started = time.monotonic()
        while True:
            quiet = time.monotonic() - self._last_write
            waited = time.monotonic() - started
            if quiet >= QUIET_SECONDS or waited >= MAX_DELAY_SECONDS:
                return
            if self._hurry.wait(min(QUIET_SECONDS - quiet, MAX_DELAY_SECONDS - waited)):
                return

    def _extent(self) -> tuple[int, int] | None:
        """(the newest memory's seq, the model's vector count) before a pass looks for missing vectors (None:
        the store is closed)."""
        from ..store.repository import Repository
        store = self._store()
        if store is None:
            return None
        with store.while_open() as open_, Repository(store).read() if open_ else nullcontext() as tx:
            return None if tx is None else (tx.vectors.newest(), tx.vectors.shape(self.embedder.name)[0])

    def _data_version(self) -> int | None:
        store = self._store()
        if store is None:
            return None
        with store.while_open() as open_:
            return store.data_version() if open_ else None

    def embed_missing(self) -> int:
        """Embed and store one batch of memories without vectors; how many (0: none was missing)."""
        from ..store.repository import Repository
        store = self._store()
        if store is None:
            return 0
        repository, name = Repository(store), self.embedder.name
        with store.while_open() as open_, repository.read() if open_ else nullcontext() as tx:
            missing = tx.vectors.missing(name, BATCH, self._covered) if tx is not None else []
        if not missing:
            return 0
        vectors = self.embedder.embed([text for _, text in missing])  # outside the store's lock
        with store.while_open() as open_:
            if not open_:  # closed meanwhile by its owner: never reopened from here
                return 0
            with repository.write() as tx:
                tx.vectors.put(name, [(seq, vector.astype("<f4").tobytes()) for (seq, _), vector in
                                      zip(missing, vectors)])
                # No ids or counts: the caller whose write started it may not see the memories it embedded.
                tx.audit.record(self._actor, "embed_memories", None, {"model": name})
        return len(missing)

    # --- searching ----------------------------------------------------------------------------------------
    def _current(self, conn) -> _Matrix:
        from ..store.repository import Transaction
        store = self._store()
        marker = store.change_marker() if store is not None else None  # None: ask the table every time
        with self._matrix_lock:
            held = self._matrix
            if marker is not None and marker == held.marker:  # nothing was written since it was read
                return held
            vectors, name = Transaction(conn).vectors, self.embedder.name
            shape = vectors.shape(name)
            if shape == held.shape:
                held.marker = marker
                return held
            newer = vectors.after(name, held.shape[1])
            if shape[0] == held.shape[0] + len(newer):  # only additions since: append them
                seqs, rows = held.seqs, held.rows
            else:  # some were deleted (erased) or replaced (by another model's): read them all again
                newer = vectors.after(name, 0)
                seqs, rows = np.zeros(0, dtype=np.int64), np.zeros((0, self.embedder.dimensions), dtype=np.float32)
            if newer:
                seqs = np.concatenate([seqs, np.array([s for s, _ in newer], dtype=np.int64)])
                rows = np.vstack([rows, np.frombuffer(b"".join(v for _, v in newer), dtype="<f4").reshape(
                    len(newer), self.embedder.dimensions)])
            self._matrix = _Matrix(shape, seqs, rows, marker)
            return self._matrix

    def similarities(self, conn, query: np.ndarray, visible, want: int, also: list[int]) -> dict[int, float]:
        """Cosine similarity to `query` of the `want` nearest memories that `visible(seqs)` admits (a function
        returning the subset of the given seqs the caller may see and the search covers), and of the memories
        `also` names (already admitted) that have a vector."""
        matrix = self._current(conn)
        count = len(matrix.seqs)
        if not count:
            return {}
        cosine = matrix.rows @ query
        found: dict[int, float] = {}
        wanted = np.array(also, dtype=np.int64)
        at = np.minimum(np.searchsorted(matrix.seqs, wanted), count - 1)  # seqs are held in order
        held = matrix.seqs[at] == wanted
        known = {int(seq): float(c) for seq, c in zip(wanted[held], cosine[at[held]])}
        step = min(count, max(want * 4, 64))
        # The nearest `step` first (a partial sort); all of them in order only when too few of those are visible.
        first = np.argpartition(-cosine, step - 1)[:step] if step < count else np.arange(count)
        order = first[np.lexsort((first, -cosine[first]))]
        start = 0
        for round_ in range(ROUNDS):
            chosen = order[start:start + step]
            if not len(chosen):
                break
            admitted = visible([int(s) for s in matrix.seqs[chosen]])
            for i in chosen:
                seq = int(matrix.seqs[i])
                if seq in admitted:
                    found[seq] = float(cosine[i])
                    if len(found) == want:
                        return {**known, **found}
            if round_ == 0 and step < count:
                order = np.argsort(-cosine, kind="stable")
            start, step = start + step, step * 4
        return {**known, **found}


_indexes: "weakref.WeakKeyDictionary[object, dict[str, SemanticIndex]]" = weakref.WeakKeyDictionary()
_indexes_lock = threading.Lock()


def index_of(store, embedder: Embedder) -> SemanticIndex:
    """The one index of this store by this embedder in this process."""
    with _indexes_lock:
        by_model = _indexes.setdefault(store, {})
        index = by_model.get(embedder.name)
        if index is None:
            index = by_model[embedder.name] = SemanticIndex(store, embedder)
        return index


def finish(store, timeout: float) -> bool:
    """Before a short-lived process (a CLI call) closes `store`: let this process's indexers of it write the
    vectors they have to, for up to `timeout` seconds in all; True when none is left. Without it a process that
    stores or searches and exits would leave them unwritten each time. Loads no model: an index exists only
    where this process already stored or searched memories."""
    with _indexes_lock:
        indexes = list(_indexes.get(store, {}).values())
    deadline = time.monotonic() + timeout
    return all([index.finish(max(0.0, deadline - time.monotonic())) for index in indexes])


def after_write(repository, actor: str) -> None:
    """Called once a write that stored memories has committed: their vectors come in the background."""
    from .embedding import current_embedder
    try:
        embedder = current_embedder()
    except DatalogMemoryError:  # a mistyped setting is reported by search, where the caller asks for meaning
        return
    if embedder is not None:
        index_of(repository.store, embedder).kick(actor, pending=True, wrote=True)
