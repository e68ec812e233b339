-- 0015: semantic search (memory/sources/semantic.py): one sentence embedding per memory whose text is kept,
-- written after the transaction that stored the memory (never before its acknowledgement) by the embedder the
-- process has (memory/sources/embedding.py). A vector is compared only with queries embedded by the model it
-- names; the library embeds again what another model made. Erasing a memory deletes its vector.
CREATE TABLE memory_vectors (
    seq INTEGER PRIMARY KEY REFERENCES source_memories (seq),
    model TEXT NOT NULL,
    vector BLOB NOT NULL
);

CREATE INDEX memory_vectors_by_model ON memory_vectors (model);  -- its entries end with the key, seq
