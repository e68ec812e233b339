-- PostgreSQL 0015, the twin of migrations/0015_memory_vectors.sql: one sentence embedding per kept memory
-- (float32 little-endian in a bytea; compared in the library, so no vector extension is needed).
CREATE TABLE memory_vectors (
    seq BIGINT PRIMARY KEY REFERENCES source_memories (seq),
    model TEXT COLLATE "C" NOT NULL,
    vector BYTEA NOT NULL
);

CREATE INDEX memory_vectors_by_model ON memory_vectors (model, seq);  -- SQLite's (model) index, whose entries end with seq
