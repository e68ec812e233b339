-- PostgreSQL 0014, the twin of migrations/0014_search_terms.sql: which analysis made memory_words' terms
-- ('1': 0011's folded words; the library re-indexes to its own analyzer's tag before it next searches).
-- memory_words is already found by word here (0013's hash index).
CREATE TABLE search_index_state (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    analyzer TEXT COLLATE "C" NOT NULL
);

INSERT INTO search_index_state (id, analyzer)
    VALUES (1, CASE WHEN EXISTS (SELECT 1 FROM memory_words) THEN '1' ELSE '' END);
