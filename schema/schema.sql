-- datalog-memory: the whole current schema (migrations 0001-0003), for anyone
-- opening the database with sqlite3. The migrations in migrations/ are what
-- actually builds it; tests/test_schema.py proves the two agree.
--
-- Conventions: times are UTC ISO-8601 text with microseconds ('…Z'); `args`
-- columns hold a term's arguments as JSON: an atom is a JSON string, an
-- integer a JSON integer, a float a JSON number with a '.' or exponent, a
-- "string" {"string": "..."}, a compound {"functor": "f", "args": [...]}.
-- `text` columns hold the canonical Prolog text, which parses back to the term.

-- Applied migrations, newest last. A database whose newest version is above
-- what this program knows is refused, never opened silently.
CREATE TABLE schema_migrations (
    version INTEGER PRIMARY KEY,   -- NNNN of migrations/NNNN_name.sql
    name TEXT NOT NULL,            -- the file's name part
    checksum TEXT NOT NULL,        -- sha256 of the file as applied
    applied_at TEXT NOT NULL       -- when it was applied
);

-- Named memory segments. `default` always exists. Facts and rules belong to one.
CREATE TABLE segments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,                -- an atom; 'default' for the default memory
    scope TEXT NOT NULL DEFAULT 'project' CHECK (scope IN ('project', 'global')),
    mode TEXT NOT NULL DEFAULT 'rw' CHECK (mode IN ('rw', 'ro')),  -- 'ro' refuses every mutation
    mounted INTEGER NOT NULL DEFAULT 1 CHECK (mounted IN (0, 1)),  -- only mounted segments are visible to tools
    generation INTEGER NOT NULL DEFAULT 0,    -- bumped by every change to the segment's facts or rules
    created_at TEXT NOT NULL
);

-- Believed base facts: a row exists while at least one support (below) does.
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    functor TEXT NOT NULL,             -- predicate name
    arity INTEGER NOT NULL CHECK (arity >= 0),
    text TEXT NOT NULL,                -- canonical text, e.g. human(socrates)
    args TEXT NOT NULL CHECK (json_valid(args)),  -- arguments as JSON (see conventions)
    created_at TEXT NOT NULL,
    UNIQUE (segment_id, text)          -- one row per fact per segment
);

CREATE INDEX facts_by_predicate ON facts (segment_id, functor, arity);

-- Why a fact is believed. Forgetting or retracting removes a support; the fact
-- goes when its last support does, so a fact asserted by hand survives the
-- retraction of an assumption that also supported it.
CREATE TABLE supports (
    id INTEGER PRIMARY KEY,
    fact_id INTEGER NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('asserted', 'assumption', 'snapshot', 'source', 'observation')),
    ref TEXT NOT NULL DEFAULT '',      -- assumption name, source memory id, observation id; '' for asserted
    actor TEXT NOT NULL,               -- principal that added the support
    created_at TEXT NOT NULL,
    UNIQUE (fact_id, kind, ref)
);

CREATE INDEX supports_by_ref ON supports (kind, ref);

-- Rules as canonical clause text `Head :- Body`; parsed and checked (safety,
-- stratification of the whole segment) before they are stored.
CREATE TABLE rules (
    id INTEGER PRIMARY KEY,
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    head_functor TEXT NOT NULL,
    head_arity INTEGER NOT NULL CHECK (head_arity >= 0),
    text TEXT NOT NULL,                -- e.g. mortal(X) :- human(X)
    created_at TEXT NOT NULL,
    UNIQUE (segment_id, text)
);

CREATE INDEX rules_by_head ON rules (segment_id, head_functor, head_arity);

-- Append-only audit log: every mutation writes one row in its own transaction.
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,            -- also the order of events
    at TEXT NOT NULL,                  -- UTC with microseconds
    actor TEXT NOT NULL,               -- principal (DATALOG_MEMORY_PRINCIPAL, else the OS user)
    operation TEXT NOT NULL,           -- the tool or admin operation, e.g. remember_fact
    segment TEXT,                      -- segment name, when the operation has one
    payload TEXT NOT NULL CHECK (json_valid(payload))  -- what changed, as JSON
);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

-- Derived conclusions written by `materialize`, with provenance: the rule that
-- first derived each one and its stamp (greater than the stamps of that
-- derivation's premises). Rows from an older generation stay until the next
-- materialization but are stale: read `current_derived`, which hides them.
CREATE TABLE derived (
    id INTEGER PRIMARY KEY,
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    functor TEXT NOT NULL,
    arity INTEGER NOT NULL CHECK (arity >= 0),
    text TEXT NOT NULL,
    args TEXT NOT NULL CHECK (json_valid(args)),
    rule_id INTEGER REFERENCES rules (id) ON DELETE SET NULL,  -- the rule of the first derivation
    stamp INTEGER NOT NULL,            -- derivation stamp (semi-naive round)
    generation INTEGER NOT NULL,       -- segments.generation of the inputs
    UNIQUE (segment_id, text)
);

CREATE INDEX derived_by_predicate ON derived (segment_id, functor, arity);

-- The last materialization per segment.
CREATE TABLE materializations (
    segment_id INTEGER PRIMARY KEY REFERENCES segments (id) ON DELETE CASCADE,
    generation INTEGER NOT NULL,       -- generation the rows in `derived` were computed from
    materialized_at TEXT NOT NULL,
    tuples INTEGER NOT NULL,
    seconds REAL NOT NULL
);

-- Derived rows whose generation is the segment's current one.
CREATE VIEW current_derived AS
SELECT d.*
FROM derived AS d
JOIN segments AS s ON s.id = d.segment_id
WHERE d.generation = s.generation;

-- Whether each segment's materialization is current.
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

-- Named snapshots of a segment (save_snapshot / restore_snapshot). `content` is
-- the segment as a Prolog program, exactly what `datalog-memory export` writes:
-- asserted facts as clauses, rules, and `:- assume(Fact, Name).` for facts held
-- under assumptions. Restoring replaces the segment's facts, rules and
-- assumptions with it in one transaction. Saving an existing name replaces it.
CREATE TABLE snapshots (
    id INTEGER PRIMARY KEY,            -- also the order in which snapshots were taken
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    name TEXT NOT NULL,                -- an atom: [a-z][A-Za-z0-9_]*
    created_at TEXT NOT NULL,
    facts INTEGER NOT NULL,            -- asserted facts in the snapshot
    rules INTEGER NOT NULL,
    assumptions INTEGER NOT NULL,      -- assumption supports in the snapshot
    content TEXT NOT NULL,             -- the Prolog text
    UNIQUE (segment_id, name)
);
