-- PostgreSQL 0013, generated from migrations/0013_audit_by_operation.sql and
-- migrations/postgresql/differences/0013.sql by `python -m memory.store.postgresql_migrations
-- --write`: edit those, not this file (tests/test_postgresql_migrations.py checks it).
--
-- On PostgreSQL this migration also mends the indexes the first PostgreSQL schema (before the generator) copied
-- from SQLite without their last column. A SQLite index ends with the row id, implicitly, so it is also in id
-- order within each key; a PostgreSQL index is not. "The newest fact of a predicate" (max(id), which the change
-- feed's insert trigger asks for every inserted row, and every warm lookup asks for to know whether its copy is
-- current) therefore read every index entry of the predicate: importing 100,000 edges took 605 s (1.9 s on
-- SQLite), and a bound lookup slowed as the predicate grew. Each index of a table with an integer key now ends
-- with that key, as on SQLite (the generator adds it; tests/test_postgresql.py checks all). On a store 0012 made
-- since, these statements build the same indexes again.

CREATE INDEX audit_log_by_operation ON audit_log (operation, id);

DROP INDEX facts_by_predicate;
CREATE INDEX facts_by_predicate ON facts (segment_id, functor, arity, id);

DROP INDEX supports_by_ref;
CREATE INDEX supports_by_ref ON supports (kind, ref, id);

DROP INDEX rules_by_head;
CREATE INDEX rules_by_head ON rules (segment_id, head_functor, head_arity, id);

DROP INDEX derived_by_predicate;
CREATE INDEX derived_by_predicate ON derived (segment_id, functor, arity, id);

DROP INDEX source_memories_by_namespace;
CREATE INDEX source_memories_by_namespace ON source_memories (namespace, status, seq);

DROP INDEX memory_events_by_memory;
CREATE INDEX memory_events_by_memory ON memory_events (memory_id, at, id);

DROP INDEX entities_by_local_name;
CREATE INDEX entities_by_local_name ON entities (local_name, id);

DROP INDEX hyperedges_by_time;
CREATE INDEX hyperedges_by_time ON hyperedges (event_ts, id);

-- The change feed's insert trigger asks whether the predicate holds a newer row as an EXISTS over the index
-- range above the new id (one probe), not as max(id): PL/pgSQL keeps the plan it made for the first row, when
-- the table looked empty, and that plan aggregated over every entry of the predicate for each row inserted.
-- The range is closed above by the largest id: with both bounds the planner takes it for a narrow range even in
-- the generic plan PL/pgSQL switches to after five rows (with one bound it expected a third of the table to
-- match and chose to scan the table until the first: 8 ms per fact at 100,000 facts, for an answer of none).
CREATE OR REPLACE FUNCTION facts_change_feed_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    number bigint;
BEGIN
    IF NEW.id <= (SELECT deleted_high FROM change_counter WHERE id = 1)
       OR EXISTS (SELECT 1 FROM facts WHERE segment_id = NEW.segment_id AND functor = NEW.functor
                  AND arity = NEW.arity AND id > NEW.id AND id <= 9223372036854775807) THEN
        number := change_feed_next();
        PERFORM change_feed_reshape(number, NEW.segment_id, NEW.functor, NEW.arity);
        INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
        VALUES (number, NEW.segment_id, NEW.functor, NEW.arity, NEW.id, NULL);
    END IF;
    RETURN NEW;
END $$;

-- A memory's words were unique by (seq, word) in a B-tree, whose entries hold about 2,700 bytes after compression:
-- a memory whose text held one long unbroken token (a key, a base64 blob) could not be stored, where SQLite's
-- FTS5 takes it. Words are distinct per memory by construction (memory/sources/words.py counts them), so no
-- unique key is needed: a B-tree on seq serves erasing a memory's words and the join by memory, and a hash index
-- (which keeps a 4-byte hash of the value, whatever its length) serves finding memories by word.
ALTER TABLE memory_words DROP CONSTRAINT memory_words_pkey;
CREATE INDEX memory_words_by_memory ON memory_words (seq);
DROP INDEX IF EXISTS memory_words_by_word;  -- the first PostgreSQL schema's (word, seq)
CREATE INDEX memory_words_by_word ON memory_words USING hash (word);
