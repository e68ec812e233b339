-- PostgreSQL 0014, generated from migrations/0014_search_terms.sql and
-- migrations/postgresql/differences/0014.sql by `python -m memory.store.postgresql_migrations
-- --write`: edit those, not this file (tests/test_postgresql_migrations.py checks it).
--
-- memory_words is already found by term here: 0013's hash index (a B-tree entry cannot hold a long term).

CREATE TABLE search_index_state (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    analyzer TEXT COLLATE "C" NOT NULL
);

INSERT INTO search_index_state (id, analyzer)
    VALUES (1, CASE WHEN EXISTS (SELECT 1 FROM memory_words) THEN '1' ELSE '' END);
