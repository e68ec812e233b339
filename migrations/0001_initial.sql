-- 0001: segments, facts with their supports, rules, and the audit log.

CREATE TABLE segments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL DEFAULT 'project' CHECK (scope IN ('project', 'global')),
    mode TEXT NOT NULL DEFAULT 'rw' CHECK (mode IN ('rw', 'ro')),
    mounted INTEGER NOT NULL DEFAULT 1 CHECK (mounted IN (0, 1)),
    generation INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

INSERT INTO segments (name, created_at) VALUES ('default', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    functor TEXT NOT NULL,
    arity INTEGER NOT NULL CHECK (arity >= 0),
    text TEXT NOT NULL,
    args TEXT NOT NULL CHECK (json_valid(args)),
    created_at TEXT NOT NULL,
    UNIQUE (segment_id, text)
);

CREATE INDEX facts_by_predicate ON facts (segment_id, functor, arity);

CREATE TABLE supports (
    id INTEGER PRIMARY KEY,
    fact_id INTEGER NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('asserted', 'assumption', 'snapshot', 'source', 'observation')),
    ref TEXT NOT NULL DEFAULT '',
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (fact_id, kind, ref)
);

CREATE INDEX supports_by_ref ON supports (kind, ref);

CREATE TABLE rules (
    id INTEGER PRIMARY KEY,
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    head_functor TEXT NOT NULL,
    head_arity INTEGER NOT NULL CHECK (head_arity >= 0),
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (segment_id, text)
);

CREATE INDEX rules_by_head ON rules (segment_id, head_functor, head_arity);

CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    operation TEXT NOT NULL,
    segment TEXT,
    payload TEXT NOT NULL CHECK (json_valid(payload))
);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
