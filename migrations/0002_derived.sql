-- 0002: materialized conclusions with their provenance, stamped with the input generation.

CREATE TABLE derived (
    id INTEGER PRIMARY KEY,
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    functor TEXT NOT NULL,
    arity INTEGER NOT NULL CHECK (arity >= 0),
    text TEXT NOT NULL,
    args TEXT NOT NULL CHECK (json_valid(args)),
    rule_id INTEGER REFERENCES rules (id) ON DELETE SET NULL,
    stamp INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    UNIQUE (segment_id, text)
);

CREATE INDEX derived_by_predicate ON derived (segment_id, functor, arity);

CREATE TABLE materializations (
    segment_id INTEGER PRIMARY KEY REFERENCES segments (id) ON DELETE CASCADE,
    generation INTEGER NOT NULL,
    materialized_at TEXT NOT NULL,
    tuples INTEGER NOT NULL,
    seconds REAL NOT NULL
);

CREATE VIEW current_derived AS
SELECT d.*
FROM derived AS d
JOIN segments AS s ON s.id = d.segment_id
WHERE d.generation = s.generation;

CREATE VIEW materialization_status AS
SELECT
    s.name AS segment,
    m.generation AS materialized_generation,
    s.generation AS current_generation,
    coalesce(m.generation = s.generation, 0) AS current,
    m.materialized_at,
    m.tuples
FROM segments AS s
LEFT JOIN materializations AS m ON m.segment_id = s.id;
