-- datalog-memory: the whole current schema (migrations 0001-0006), for anyone
-- opening the database with sqlite3. The migrations in migrations/ are what
-- actually builds it; tests/test_schema.py proves the two agree.
--
-- Conventions: times are UTC ISO-8601 text with microseconds ('…Z'); `args`
-- columns hold a term's arguments as JSON: an atom is a JSON string, an
-- integer a JSON integer, a float a JSON number with a '.' or exponent, a
-- "string" {"string": "..."}, a compound {"functor": "f", "args": [...]}, a
-- list {"list": [...]} (with "tail" when it does not end in []), so a long list
-- is one flat array. A subterm more than 64 levels down is one flat postfix
-- array, {"postfix": [leaf, ..., {"functor": "f", "arity": N}, ...]}: the JSON
-- stays far below SQLite's nesting limit of 1000 whatever the term. Lists
-- stored before lists were flat read back as nested "." compounds.
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
    name TEXT,                         -- (0005) optional rule id, unique per segment: reason reports rule:<name>
    confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence > 0 AND confidence <= 1),  -- (0005) used by reason
    UNIQUE (segment_id, text)
);

CREATE INDEX rules_by_head ON rules (segment_id, head_functor, head_arity);

CREATE UNIQUE INDEX rules_by_name ON rules (segment_id, name) WHERE name IS NOT NULL;  -- (0005)

-- Append-only audit log: every mutation writes one row in its own transaction.
-- memory_remember and memory_forget payloads hold ids and counts, never a
-- memory's text, digest, idempotency key or facts. The one change allowed
-- (0006) is an erase redacting a payload: it replaces strings holding the
-- erased content with "[erased]" and adds "redacted_at".
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,            -- also the order of events
    at TEXT NOT NULL,                  -- UTC with microseconds
    actor TEXT NOT NULL,               -- principal (DATALOG_MEMORY_PRINCIPAL, else the OS user)
    operation TEXT NOT NULL,           -- the tool or admin operation, e.g. remember_fact
    segment TEXT,                      -- segment name, when the operation has one
    payload TEXT NOT NULL CHECK (json_valid(payload))  -- what changed, as JSON
);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NEW.id IS NOT OLD.id OR NEW.at IS NOT OLD.at OR NEW.actor IS NOT OLD.actor
    OR NEW.operation IS NOT OLD.operation OR NEW.segment IS NOT OLD.segment
    OR json_extract(NEW.payload, '$.redacted_at') IS NULL
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

-- ---------------------------------------------------------------------------
-- 0004: source memories (memory_remember / get / search / recall / forget).
-- Exact source text under stable opaque ids, in a namespace that decides who
-- may read it: 'session:<principal>/<session id>' (since 0006 a session belongs
-- to its principal; '%', '/', ':' in the principal escaped as %25, %2F, %3A),
-- 'project:<project id>' or 'global'.
-- Who the caller is (principal, session, project, capabilities) comes from the
-- server's environment, never from tool arguments.

-- Projects known to this database, keyed by their normalized git remote
-- (https://host/owner/repo) or absolute path.
CREATE TABLE projects (
    id TEXT PRIMARY KEY,              -- project_<uuid4>
    remote TEXT NOT NULL UNIQUE,      -- normalized remote or path
    created_at TEXT NOT NULL
);

-- Exact source text, byte for byte as remembered.
CREATE TABLE sources (
    id TEXT PRIMARY KEY,              -- src_<uuid4>
    text TEXT,                        -- the exact text; NULL once erased (memory_forget delete + erase)
    sha256 TEXT NOT NULL,             -- hex sha256 of the UTF-8 text; '' once erased
    principal TEXT NOT NULL,          -- who remembered it
    source_class TEXT NOT NULL,       -- host-declared class: user_explicit, model_inferred, ...
    trust TEXT NOT NULL,              -- the class for the six known classes, else 'unknown'
    created_at TEXT NOT NULL,
    erased_at TEXT                    -- when the text was erased (the tombstone keeps id and times)
);

-- One remembered memory: a source in a namespace, with its lifecycle state.
CREATE TABLE source_memories (
    seq INTEGER PRIMARY KEY,          -- row number; also the rowid of its memory_fts row
    id TEXT NOT NULL UNIQUE,          -- mem_<uuid4>: the stable id tools use
    source_id TEXT NOT NULL REFERENCES sources (id),
    namespace TEXT NOT NULL,          -- 'session:<principal>/<session id>' (0006), 'project:<project id>' or 'global'
    lifetime TEXT NOT NULL CHECK (lifetime IN ('short_term', 'long_term')),
    kind TEXT NOT NULL CHECK (kind IN ('text', 'fact', 'episode', 'preference', 'procedure')),
    status TEXT NOT NULL DEFAULT 'active'  -- current state; memory_events has the history
        CHECK (status IN ('active', 'expired', 'superseded', 'invalidated', 'archived', 'deleted')),
    superseded_by TEXT REFERENCES source_memories (id),  -- the memory that replaced this one
    idempotency_key TEXT,             -- caller's key: a retry with the same key and text returns the first receipt
    principal TEXT NOT NULL,
    valid_from TEXT NOT NULL,         -- valid time: when what it says became true (default: recorded_at)
    valid_to TEXT,                    -- valid time end; NULL = open
    recorded_at TEXT NOT NULL,        -- system time: when it was stored
    version INTEGER NOT NULL DEFAULT 1,  -- bumped by each lifecycle change
    UNIQUE (namespace, idempotency_key)
);

CREATE INDEX source_memories_by_namespace ON source_memories (namespace, status);

-- Lifecycle history: the first row is 'active' at recorded_at; each forget or
-- supersession adds one. The status at time T is that of the last row at or before T.
CREATE TABLE memory_events (
    id INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL REFERENCES source_memories (id),
    at TEXT NOT NULL,
    status TEXT NOT NULL,             -- active, expired, superseded, invalidated, archived, deleted
    reason TEXT,                      -- the caller's reason, or 'superseded by mem_…'
    principal TEXT NOT NULL
);

CREATE INDEX memory_events_by_memory ON memory_events (memory_id, at);

-- Symbolic projections of a memory. Each is also a fact in the 'default'
-- segment with a support (kind 'source', ref = memory id), so rules reason over
-- it while the memory is active and visible to the caller.
CREATE TABLE memory_projections (
    id TEXT PRIMARY KEY,              -- proj_<uuid4>
    memory_id TEXT NOT NULL REFERENCES source_memories (id),
    position INTEGER NOT NULL,        -- order given by the caller
    predicate TEXT NOT NULL,          -- functor of the fact ('' once erased)
    arguments TEXT NOT NULL CHECK (json_valid(arguments)),  -- JSON array of scalars ('[]' once erased)
    statement TEXT,                   -- plain-language statement; NULL once erased
    quality TEXT NOT NULL CHECK (quality IN ('exact', 'lossy', 'context_required')),
    fact TEXT NOT NULL,               -- canonical fact text ('' once erased)
    created_at TEXT NOT NULL,
    UNIQUE (memory_id, position)
);

CREATE INDEX memory_projections_by_predicate ON memory_projections (predicate);

-- Full-text index (rowid = source_memories.seq) over the source text and the
-- projection statements. Queries are built from quoted tokens, never spliced.
CREATE VIRTUAL TABLE memory_fts USING fts5 (text, statements, tokenize = 'unicode61 remove_diacritics 2');

-- ---------------------------------------------------------------------------
-- 0005: evidence memory (remember / recall / reason / prove / verify / detect).
-- Observations are hyperedges: one event linking several entities at a time.
-- Rules see them as the relations hedge(E, Formation, Ts, Weight),
-- member(E, Entity) and entity_type(Entity, Type) in the 'default' segment.

-- Entities named in observations. The `type:id` convention gives the type.
CREATE TABLE entities (
    id INTEGER PRIMARY KEY,           -- member id reported by remember (member_ids)
    name TEXT NOT NULL UNIQUE,        -- as given, e.g. 'account:admin'
    type TEXT NOT NULL,               -- the part before the first ':', else 'entity'
    local_name TEXT NOT NULL          -- lower-cased part after the ':' (or the whole name), for recall
);

CREATE INDEX entities_by_local_name ON entities (local_name);

-- One observation. HEDGE-<id> is its citation tag in every call.
CREATE TABLE hyperedges (
    id INTEGER PRIMARY KEY,
    formation TEXT NOT NULL,          -- structural formation inferred from member types (formation_rules)
    label TEXT NOT NULL DEFAULT '',   -- the caller's own formation label
    event_ts INTEGER NOT NULL,        -- epoch seconds of the event
    weight REAL NOT NULL CHECK (weight > 0 AND weight <= 1),  -- strength, used as confidence by reason
    principal TEXT NOT NULL,          -- who remembered it (host-set)
    source TEXT NOT NULL,             -- the host's source class
    recorded_at TEXT NOT NULL,
    content_hash TEXT NOT NULL,       -- sha256 of the canonical observation (members, time, weight, labels)
    chain_hash TEXT NOT NULL,         -- sha256(previous chain_hash + content_hash): a tamper-evident chain
    retracted_at TEXT,                -- set by forget_observation: the row stays (the chain too), unused from then on
    retraction_reason TEXT
);

CREATE INDEX hyperedges_by_time ON hyperedges (event_ts);

-- Members of an observation, in the order given.
CREATE TABLE hyperedge_members (
    edge_id INTEGER NOT NULL REFERENCES hyperedges (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    entity_id INTEGER NOT NULL REFERENCES entities (id),
    PRIMARY KEY (edge_id, position)
) WITHOUT ROWID;

CREATE INDEX hyperedge_members_by_entity ON hyperedge_members (entity_id, edge_id);

-- How an observation's structural formation is inferred: the rule with the
-- lowest priority whose member_types all occur among the members wins; none
-- gives 'OBSERVATION'. Edit with SQL; new observations use the new table.
-- Seeded with: drone -> DRONE_EVENT (10); machine+account (20) and host+account
-- (21) -> AUTH_EVENT; ip -> NETWORK_EVENT (30); process -> PROCESS_EVENT (40);
-- file -> FILE_EVENT (50).
CREATE TABLE formation_rules (
    id INTEGER PRIMARY KEY,
    priority INTEGER NOT NULL,
    formation TEXT NOT NULL,          -- e.g. DRONE_EVENT, AUTH_EVENT
    member_types TEXT NOT NULL CHECK (json_valid(member_types) AND json_type(member_types) = 'array'),
    description TEXT NOT NULL DEFAULT ''
);

-- ---------------------------------------------------------------------------
-- 0006: authority and erasure. Store-level chores: 'vacuum_on_erase' means the
-- database held source text before deleted content was overwritten with zeros
-- (every connection now runs with secure_delete), so the next erase rebuilds
-- the file once with VACUUM to drop stale copies, then removes the row.
CREATE TABLE maintenance (
    task TEXT PRIMARY KEY,            -- e.g. 'vacuum_on_erase'
    since TEXT NOT NULL
);
