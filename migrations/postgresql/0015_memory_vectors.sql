-- PostgreSQL 0015, generated from migrations/0015_memory_vectors.sql and
-- migrations/postgresql/differences/0015.sql by `python -m memory.store.postgresql_migrations
-- --write`: edit those, not this file (tests/test_postgresql_migrations.py checks it).

CREATE TABLE memory_vectors (
    seq BIGINT PRIMARY KEY REFERENCES source_memories (seq),
    model TEXT COLLATE "C" NOT NULL,
    vector BYTEA NOT NULL
);

CREATE INDEX memory_vectors_by_model ON memory_vectors (model, seq);
