-- 0004: source memories: exact text under stable ids in session/project/global namespaces,
-- their symbolic projections, lifecycle events and a full-text index.

CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    remote TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    text TEXT,
    sha256 TEXT NOT NULL,
    principal TEXT NOT NULL,
    source_class TEXT NOT NULL,
    trust TEXT NOT NULL,
    created_at TEXT NOT NULL,
    erased_at TEXT
);

CREATE TABLE source_memories (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source_id TEXT NOT NULL REFERENCES sources (id),
    namespace TEXT NOT NULL,
    lifetime TEXT NOT NULL CHECK (lifetime IN ('short_term', 'long_term')),
    kind TEXT NOT NULL CHECK (kind IN ('text', 'fact', 'episode', 'preference', 'procedure')),
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'expired', 'superseded', 'invalidated', 'archived', 'deleted')),
    superseded_by TEXT REFERENCES source_memories (id),
    idempotency_key TEXT,
    principal TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to TEXT,
    recorded_at TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    UNIQUE (namespace, idempotency_key)
);

CREATE INDEX source_memories_by_namespace ON source_memories (namespace, status);

CREATE TABLE memory_events (
    id INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL REFERENCES source_memories (id),
    at TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    principal TEXT NOT NULL
);

CREATE INDEX memory_events_by_memory ON memory_events (memory_id, at);

CREATE TABLE memory_projections (
    id TEXT PRIMARY KEY,
    memory_id TEXT NOT NULL REFERENCES source_memories (id),
    position INTEGER NOT NULL,
    predicate TEXT NOT NULL,
    arguments TEXT NOT NULL CHECK (json_valid(arguments)),
    statement TEXT,
    quality TEXT NOT NULL CHECK (quality IN ('exact', 'lossy', 'context_required')),
    fact TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (memory_id, position)
);

CREATE INDEX memory_projections_by_predicate ON memory_projections (predicate);

CREATE VIRTUAL TABLE memory_fts USING fts5 (text, statements, tokenize = 'unicode61 remove_diacritics 2');
