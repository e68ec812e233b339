-- 0014: search matches terms (memory/sources/words.py: stemmed words, CJK character pairs, joined compounds),
-- found through memory_words on SQLite as on PostgreSQL, instead of FTS5's unstemmed tokens.
--
-- memory_words now holds terms. Which analysis made them is recorded in search_index_state: '1' is 0011's
-- folded words; the library re-indexes every memory with its own analyzer (words.ANALYZER_VERSION and the
-- stemming language) in one write before it next searches, and records that analyzer's tag. '' means no
-- terms yet (a new store): the first memory's write records the tag of the analyzer that made them. The index by
-- term (its entries end with the key, seq) is the twin of PostgreSQL's hash index of 0013.
CREATE INDEX memory_words_by_word ON memory_words (word);

CREATE TABLE search_index_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    analyzer TEXT NOT NULL
);

INSERT INTO search_index_state (id, analyzer)
    VALUES (1, CASE WHEN EXISTS (SELECT 1 FROM memory_words) THEN '1' ELSE '' END);
