-- 0003: named snapshots of a segment, stored in the database.

CREATE TABLE snapshots (
    id INTEGER PRIMARY KEY,
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    facts INTEGER NOT NULL,
    rules INTEGER NOT NULL,
    assumptions INTEGER NOT NULL,
    content TEXT NOT NULL,
    UNIQUE (segment_id, name)
);
