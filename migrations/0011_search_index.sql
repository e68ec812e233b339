-- 0011: what memory_search ranks with, kept when a memory is written, so a search reads a few numbers
-- per candidate instead of each candidate's text and every projection's JSON.
--
-- Search scores text with BM25 over the words it finds in a memory's text and projection statements
-- (case and accents folded, split on what is not a letter, digit or '_'): memory_words holds how often
-- each such word occurs in each, source_memories.text_words and statement_words how many words each
-- has. The library writes them when it stores a memory and deletes the words when it erases one. A
-- memory stored before this migration has NULL counts; a search that meets one as a candidate reads
-- the texts instead.
ALTER TABLE source_memories ADD COLUMN text_words INTEGER;
ALTER TABLE source_memories ADD COLUMN statement_words INTEGER;

CREATE TABLE memory_words (
    seq INTEGER NOT NULL REFERENCES source_memories (seq),
    word TEXT NOT NULL,
    in_text INTEGER NOT NULL,
    in_statements INTEGER NOT NULL,
    PRIMARY KEY (seq, word)
) WITHOUT ROWID;

-- Symbolic search matches a projection when a query word is one of its keys: an argument as
-- lower(CAST(value AS TEXT)), or a '_'-separated part of its predicate. `plain` says that these keys
-- are exactly the words the match counts (predicate of a-z, 0-9 and '_'; arguments ASCII strings,
-- integers, or reals with a fraction); for any other projection a search checks the match itself.
-- Kept by the triggers below, so every write of a projection (remember, rename, erase) keeps them.
CREATE TABLE memory_projection_keys (
    key TEXT NOT NULL,
    memory_seq INTEGER NOT NULL,
    position INTEGER NOT NULL,
    plain INTEGER NOT NULL,
    PRIMARY KEY (key, memory_seq, position)
) WITHOUT ROWID;

CREATE INDEX memory_projection_keys_by_projection ON memory_projection_keys (memory_seq, position);

-- A projection's keys, as the triggers and this migration write them.
CREATE VIEW memory_projection_key_rows AS
WITH projection AS (
    SELECT pr.id, m.seq, pr.position, pr.predicate, pr.arguments,
           pr.predicate NOT GLOB '*[^a-z0-9_]*' AND NOT EXISTS (
               SELECT 1 FROM json_each(pr.arguments) AS a WHERE NOT (typeof(a.value) = 'integer'
                   OR (typeof(a.value) = 'real' AND a.value <> round(a.value))
                   OR (a.type = 'text' AND a.value NOT GLOB '*[^' || char(1) || '-' || char(127) || ']*'))) AS plain
    FROM memory_projections AS pr JOIN source_memories AS m ON m.id = pr.memory_id
    WHERE pr.predicate <> '')
SELECT p.id AS projection_id, lower(CAST(j.value AS TEXT)) AS key, p.seq AS memory_seq, p.position, p.plain
FROM projection AS p, json_each(p.arguments) AS j
UNION ALL
SELECT p.id, part.value, p.seq, p.position, p.plain
FROM projection AS p, json_each('[' || replace(json_quote(p.predicate), '_', '","') || ']') AS part;

CREATE TRIGGER memory_projection_keys_insert AFTER INSERT ON memory_projections BEGIN
    INSERT OR IGNORE INTO memory_projection_keys (key, memory_seq, position, plain)
    SELECT key, memory_seq, position, plain FROM memory_projection_key_rows WHERE projection_id = NEW.id;
END;

CREATE TRIGGER memory_projection_keys_delete AFTER DELETE ON memory_projections BEGIN
    DELETE FROM memory_projection_keys
    WHERE memory_seq = (SELECT seq FROM source_memories WHERE id = OLD.memory_id) AND position = OLD.position;
END;

CREATE TRIGGER memory_projection_keys_update AFTER UPDATE OF id, memory_id, position, predicate, arguments
ON memory_projections BEGIN
    DELETE FROM memory_projection_keys
    WHERE memory_seq = (SELECT seq FROM source_memories WHERE id = OLD.memory_id) AND position = OLD.position;
    INSERT OR IGNORE INTO memory_projection_keys (key, memory_seq, position, plain)
    SELECT key, memory_seq, position, plain FROM memory_projection_key_rows WHERE projection_id = NEW.id;
END;

-- The projections stored before this migration.
INSERT OR IGNORE INTO memory_projection_keys (key, memory_seq, position, plain)
SELECT key, memory_seq, position, plain FROM memory_projection_key_rows;
