-- datalog-memory: the whole current schema (migrations 0001-0015), for anyone
-- opening the database with sqlite3. Generated from migrations/ by
-- `python -m memory.store.schema_file --write`, which keeps the comments below;
-- tests/test_schema.py checks that the file is what the migrations make. On
-- PostgreSQL (DATALOG_MEMORY_DB=postgresql://...) the same tables, views, columns
-- and triggers come from migrations/postgresql/, generated from the same history
-- (memory/store/postgresql_migrations.py); what PostgreSQL writes differently is in
-- migrations/postgresql/differences/.

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
    version INTEGER PRIMARY KEY,      -- NNNN of migrations/NNNN_name.sql
    name TEXT NOT NULL,               -- the file's name part
    checksum TEXT NOT NULL,           -- sha256 of the file as applied
    applied_at TEXT NOT NULL          -- when it was applied
);

-- Named memory segments. `default` always exists. Facts and rules belong to one.
CREATE TABLE segments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,        -- an atom; 'default' for the default memory
    scope TEXT NOT NULL DEFAULT 'project' CHECK (scope IN ('project', 'global')),
    mode TEXT NOT NULL DEFAULT 'rw' CHECK (mode IN ('rw', 'ro')),  -- 'ro' refuses every mutation
    mounted INTEGER NOT NULL DEFAULT 1 CHECK (mounted IN (0, 1)),  -- only mounted segments are visible to tools
    generation INTEGER NOT NULL DEFAULT 0,  -- bumped by every change to the segment's facts or rules
    created_at TEXT NOT NULL,
    vacated INTEGER NOT NULL DEFAULT 0  -- (0008) change number of the last time a predicate lost its last fact
);

-- Believed base facts: a row exists while at least one support (below) does.
CREATE TABLE facts (
    id INTEGER PRIMARY KEY,
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    functor TEXT NOT NULL,            -- predicate name
    arity INTEGER NOT NULL CHECK (arity >= 0),
    text TEXT NOT NULL,               -- canonical text, e.g. human(socrates)
    args TEXT NOT NULL CHECK (json_valid(args)),  -- arguments as JSON (see conventions)
    created_at TEXT NOT NULL,
    UNIQUE (segment_id, text)         -- one row per fact per segment
);

CREATE INDEX facts_by_predicate ON facts (segment_id, functor, arity);

-- Why a fact is believed. Forgetting or retracting removes a support; the fact
-- goes when its last support does, so a fact asserted by hand survives the
-- retraction of an assumption that also supported it.
CREATE TABLE supports (
    id INTEGER PRIMARY KEY,
    fact_id INTEGER NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('asserted', 'assumption', 'snapshot', 'source', 'observation')),
    ref TEXT NOT NULL DEFAULT '',     -- assumption name, source memory id, observation id; '' for asserted
    actor TEXT NOT NULL,              -- principal that added the support
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
    text TEXT NOT NULL,               -- e.g. mortal(X) :- human(X)
    created_at TEXT NOT NULL,
    name TEXT,                        -- (0005) optional rule id, unique per segment: reason reports rule:<name>
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
    id INTEGER PRIMARY KEY,           -- also the order of events
    at TEXT NOT NULL,                 -- UTC with microseconds
    actor TEXT NOT NULL,              -- principal (DATALOG_MEMORY_PRINCIPAL, else the OS user)
    operation TEXT NOT NULL,          -- the tool or admin operation, e.g. remember_fact
    segment TEXT,                     -- segment name, when the operation has one
    payload TEXT NOT NULL CHECK (json_valid(payload))  -- what changed, as JSON
);

-- The newest row of one operation (the last integrity check) without reading
-- the log from its end. (0013)
CREATE INDEX audit_log_by_operation ON audit_log (operation);

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
    stamp INTEGER NOT NULL,           -- derivation stamp (semi-naive round)
    generation INTEGER NOT NULL,      -- segments.generation of the inputs
    UNIQUE (segment_id, text)
);

CREATE INDEX derived_by_predicate ON derived (segment_id, functor, arity);

-- The last materialization per segment.
CREATE TABLE materializations (
    segment_id INTEGER PRIMARY KEY REFERENCES segments (id) ON DELETE CASCADE,
    generation INTEGER NOT NULL,      -- generation the rows in `derived` were computed from
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
    id INTEGER PRIMARY KEY,           -- also the order in which snapshots were taken
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    name TEXT NOT NULL,               -- an atom: [a-z][A-Za-z0-9_]*
    created_at TEXT NOT NULL,
    facts INTEGER NOT NULL,           -- asserted facts in the snapshot
    rules INTEGER NOT NULL,
    assumptions INTEGER NOT NULL,     -- assumption supports in the snapshot
    content TEXT NOT NULL,            -- the Prolog text
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
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'expired', 'superseded', 'invalidated', 'archived', 'deleted')),  -- current state; memory_events has the history
    superseded_by TEXT REFERENCES source_memories (id),  -- the memory that replaced this one
    idempotency_key TEXT,             -- caller's key: a retry with the same key and text returns the first receipt
    principal TEXT NOT NULL,
    valid_from TEXT NOT NULL,         -- valid time: when what it says became true (default: recorded_at)
    valid_to TEXT,                    -- valid time end; NULL = open
    recorded_at TEXT NOT NULL,        -- system time: when it was stored
    version INTEGER NOT NULL DEFAULT 1,  -- bumped by each lifecycle change
    text_words INTEGER,               -- (0011) words in the text, as search counts them; NULL: stored before 0011
    statement_words INTEGER,          -- (0011) words in the projection statements; NULL likewise
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

-- (0009) recall reads a pattern's projections by fact text: mentions(item42, _) reads the
-- facts that start with `mentions(item42, `.
CREATE INDEX memory_projections_by_fact ON memory_projections (predicate, fact);

-- Full-text index (rowid = source_memories.seq) over the source text and the
-- projection statements. Queries are built from quoted tokens, never spliced.
CREATE VIRTUAL TABLE memory_fts USING fts5 (text, statements, tokenize = 'unicode61 remove_diacritics 2');

-- (0011) What memory_search ranks with, kept when a memory is written, so a search reads a few
-- numbers per candidate instead of each candidate's text and every projection's JSON.
--
-- Search scores text with BM25 over the words it finds in a memory's text and projection statements
-- (case and accents folded, split on what is not a letter, digit or '_'): memory_words holds how often
-- each such word occurs in each, source_memories.text_words and statement_words how many words each
-- has. The library writes them when it stores a memory and deletes the words when it erases one. A
-- memory stored before 0011 has NULL counts; a search that meets one as a candidate reads the texts.
CREATE TABLE memory_words (
    seq INTEGER NOT NULL REFERENCES source_memories (seq),  -- the memory (= its memory_fts rowid)
    word TEXT NOT NULL,               -- a folded word of its text or statements
    in_text INTEGER NOT NULL,         -- occurrences in the source text
    in_statements INTEGER NOT NULL,   -- occurrences in the projection statements
    PRIMARY KEY (seq, word)
) WITHOUT ROWID;

-- (0014) memory_words holds terms (memory/sources/words.py: stemmed words, CJK character pairs, joined
-- compounds), found by term here on SQLite as on PostgreSQL (entries end with the key, seq).
CREATE INDEX memory_words_by_word ON memory_words (word);

-- (0014) Which analysis made memory_words' terms: '1' is 0011's folded words; the library re-indexes
-- every memory with its own analyzer in one write before it next searches, and records its tag here;
-- '' (a new store, no terms yet): the first memory's write records the tag of the analyzer that made them.
CREATE TABLE search_index_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    analyzer TEXT NOT NULL            -- words.ANALYZER_VERSION ':' the stemming language
);

-- (0015) Semantic search: one sentence embedding per memory whose text is kept, written after the
-- transaction that stored the memory (never before its acknowledgement) by the process's embedder
-- (memory/sources/embedding.py). A vector is compared only with queries embedded by the model it names;
-- the library embeds again what another model made. Erasing a memory deletes its vector.
CREATE TABLE memory_vectors (
    seq INTEGER PRIMARY KEY REFERENCES source_memories (seq),  -- the memory
    model TEXT NOT NULL,              -- the embedder that made it (all-MiniLM-L6-v2, hashed-words)
    vector BLOB NOT NULL              -- float32 little-endian, unit length
);

CREATE INDEX memory_vectors_by_model ON memory_vectors (model);  -- its entries end with the key, seq

-- Symbolic search matches a projection when a query word is one of its keys: an argument as
-- lower(CAST(value AS TEXT)), or a '_'-separated part of its predicate. `plain` says that these keys
-- are exactly the words the match counts (predicate of a-z, 0-9 and '_'; arguments ASCII strings,
-- integers, or reals with a fraction); for any other projection a search checks the match itself.
-- Kept by the triggers below, so every write of a projection (remember, rename, erase) keeps them.
CREATE TABLE memory_projection_keys (
    key TEXT NOT NULL,                -- an argument's lower(CAST(value AS TEXT)), or a predicate part
    memory_seq INTEGER NOT NULL,      -- the projection: its memory's seq and its position
    position INTEGER NOT NULL,
    plain INTEGER NOT NULL,           -- 1: the keys are exactly the words this projection matches
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

-- ---------------------------------------------------------------------------
-- 0007: the SQLite face. Proof edges, and views named for what people ask.
-- The views are for the owner of the file, who can read everything in it
-- anyway: they apply no authority. Who may see what (namespaces, capabilities)
-- is enforced by the tools, never by these views.

-- The premises of each materialized conclusion's recorded derivation, in the
-- order of the rule's body: stored facts, other conclusions, observations, and
-- builtin, negation and aggregate steps. Written by `materialize` for every row
-- of `derived` (and by explain_why with record_proof for the conclusions of one
-- proof), stamped with the same generation, so a recursive query over this one
-- table walks any proof down to stored facts (see proof_steps and the README).
-- Premises of a derivation have smaller stamps than its conclusion, so the walk
-- always ends. Deleting a conclusion deletes its edges.
CREATE TABLE proof_edges (
    conclusion_id INTEGER NOT NULL REFERENCES derived (id) ON DELETE CASCADE,  -- the conclusion (a row of derived)
    position INTEGER NOT NULL CHECK (position >= 0),  -- the premise's place in the rule body, from 0
    kind TEXT NOT NULL CHECK (kind IN ('fact', 'derived', 'observation', 'builtin', 'negation', 'aggregate')),
    premise TEXT NOT NULL,            -- canonical text: the fact, the conclusion, or the step (e.g. X > 3)
    memory TEXT,                      -- for facts read from another segment (seg:goal): its name
    fact_id INTEGER REFERENCES facts (id) ON DELETE SET NULL,  -- kind 'fact': the stored fact (NULL when in another file)
    derived_id INTEGER REFERENCES derived (id) ON DELETE CASCADE,  -- kind 'derived': the premise conclusion
    observation_id INTEGER REFERENCES hyperedges (id) ON DELETE SET NULL,  -- kind 'observation': hedge/member premises
    generation INTEGER NOT NULL,      -- the generation of the conclusion's row
    PRIMARY KEY (conclusion_id, position)
) WITHOUT ROWID;

CREATE INDEX proof_edges_by_derived ON proof_edges (derived_id);

CREATE INDEX proof_edges_by_fact ON proof_edges (fact_id);

CREATE INDEX proof_edges_by_observation ON proof_edges (observation_id);

-- Facts with their memory (segment) name and why they are believed: `supports`
-- lists them ('asserted', 'assumption:<name>', 'source:<memory id>', ...).
-- A fact with support_count 0 was inserted around the tools: believed by every
-- query, yet nothing supports it (`datalog-memory check` reports it).
CREATE VIEW facts_with_supports AS
SELECT
    f.id,
    s.name AS memory,
    f.text AS fact,
    f.functor,
    f.arity,
    (SELECT group_concat(CASE WHEN p.ref = '' THEN p.kind ELSE p.kind || ':' || p.ref END, ',')
     FROM (SELECT kind, ref FROM supports WHERE fact_id = f.id ORDER BY id) AS p) AS supports,
    (SELECT count(*) FROM supports WHERE fact_id = f.id) AS support_count,
    f.created_at
FROM facts AS f
JOIN segments AS s ON s.id = f.segment_id;

-- Rules with their memory name and head predicate (name/arity).
CREATE VIEW rules_with_heads AS
SELECT
    r.id,
    s.name AS memory,
    r.head_functor || '/' || r.head_arity AS head,
    r.text AS rule,
    r.name,
    r.confidence,
    r.created_at
FROM rules AS r
JOIN segments AS s ON s.id = r.segment_id;

-- Source memories with their namespace, status and exact text. `text` is NULL
-- once erased (memory_forget with erase): erased_at says when.
CREATE VIEW memory_texts AS
SELECT
    m.id,
    m.namespace,
    m.status,
    m.kind,
    m.lifetime,
    src.text,
    src.erased_at,
    src.sha256,
    src.source_class,
    m.principal,
    m.valid_from,
    m.valid_to,
    m.recorded_at,
    m.superseded_by,
    m.version
FROM source_memories AS m
JOIN sources AS src ON src.id = m.source_id;

-- Observations with their citation tag, the event time as ISO-8601 UTC and the
-- members as a JSON array in the order given.
CREATE VIEW observations AS
SELECT
    h.id,
    'HEDGE-' || h.id AS hedge_tag,
    strftime('%Y-%m-%dT%H:%M:%SZ', h.event_ts, 'unixepoch') AS event_time,
    h.event_ts,
    h.formation,
    h.label,
    h.weight,
    (SELECT json_group_array(name)
     FROM (SELECT e.name FROM hyperedge_members AS hm JOIN entities AS e ON e.id = hm.entity_id
           WHERE hm.edge_id = h.id ORDER BY hm.position)) AS members,
    h.principal,
    h.source,
    h.recorded_at,
    h.retracted_at,
    h.retraction_reason
FROM hyperedges AS h;

-- The audit log with a one-line summary of each operation (the payload stays
-- alongside; an operation this view does not know, or whose payload was
-- redacted, shows its name).
CREATE VIEW audit_events AS
SELECT
    a.id,
    a.at,
    a.actor,
    a.operation,
    a.segment AS memory,
    coalesce(CASE a.operation
        WHEN 'remember_fact' THEN 'remembered ' || json_extract(a.payload, '$.fact')
        WHEN 'forget_fact' THEN 'forgot ' || json_extract(a.payload, '$.fact')
            || CASE WHEN json_extract(a.payload, '$.removed') THEN ' (no support left: removed)' ELSE ' (still supported)' END
        WHEN 'define_rule' THEN 'defined rule ' || json_extract(a.payload, '$.rule')
        WHEN 'assume_fact' THEN 'assumed ' || json_extract(a.payload, '$.fact') || ' under '
            || json_extract(a.payload, '$.assumption')
        WHEN 'retract_assumption' THEN 'retracted assumption ' || json_extract(a.payload, '$.assumption')
            || ', removed ' || json_array_length(a.payload, '$.removed') || ' fact(s)'
        WHEN 'retract_assumptions' THEN 'retracted assumptions matching ' || json_extract(a.payload, '$.pattern')
            || ', removed ' || json_array_length(a.payload, '$.removed') || ' fact(s)'
        WHEN 'clear_context' THEN 'cleared ' || json_extract(a.payload, '$.pattern') || ', removed '
            || json_array_length(a.payload, '$.removed') || ' fact(s)'
        WHEN 'update_fact' THEN 'updated ' || json_extract(a.payload, '$.old') || ' to ' || json_extract(a.payload, '$.new')
        WHEN 'upsert_fact' THEN 'upserted ' || json_extract(a.payload, '$.fact')
        WHEN 'import_facts' THEN 'imported ' || json_extract(a.payload, '$.facts') || ' fact(s), '
            || json_extract(a.payload, '$.added') || ' new'
        WHEN 'import_program' THEN 'imported a program: '
            || coalesce(json_extract(a.payload, '$.facts_added'), json_extract(a.payload, '$.added')) || ' new fact(s)'
            || coalesce(', ' || json_extract(a.payload, '$.rules_added') || ' new rule(s)', '')
        WHEN 'materialize' THEN 'materialized ' || json_extract(a.payload, '$.tuples') || ' conclusion(s) at generation '
            || json_extract(a.payload, '$.generation')
        WHEN 'record_proof' THEN 'recorded the proof of ' || json_extract(a.payload, '$.fact')
        WHEN 'save_snapshot' THEN 'saved snapshot ' || json_extract(a.payload, '$.name')
        WHEN 'restore_snapshot' THEN 'restored snapshot ' || json_extract(a.payload, '$.name')
        WHEN 'rename_predicate' THEN 'renamed a predicate: ' || json_extract(a.payload, '$.renamed_facts') || ' fact(s), '
            || json_extract(a.payload, '$.rewritten_rule_bodies') || ' rule body(ies) rewritten'
        WHEN 'create_memory' THEN 'created memory ' || a.segment || ' (' || json_extract(a.payload, '$.scope') || ')'
        WHEN 'mount_memory' THEN 'mounted memory ' || a.segment || ' ' || json_extract(a.payload, '$.mode')
        WHEN 'unmount_memory' THEN 'unmounted memory ' || a.segment
        WHEN 'memory_remember' THEN 'remembered ' || json_extract(a.payload, '$.id') || ' in '
            || json_extract(a.payload, '$.namespace')
        WHEN 'memory_forget' THEN json_extract(a.payload, '$.action') || ' '
            || json_array_length(a.payload, '$.ids') || ' memory(ies)'
            || CASE WHEN json_extract(a.payload, '$.erase') THEN ', text erased' ELSE '' END
        WHEN 'remember' THEN 'observed HEDGE-' || json_extract(a.payload, '$.edge_id') || ' '
            || json_extract(a.payload, '$.formation') || ' ' || json_extract(a.payload, '$.members')
        WHEN 'remember_observations' THEN 'observed ' || json_extract(a.payload, '$.count') || ' event(s)'
        WHEN 'forget_observation' THEN 'retracted ' || json_extract(a.payload, '$.hedge_tags')
        WHEN 'integrity_check' THEN 'integrity check: ' || json_extract(a.payload, '$.result')
        WHEN 'invariant_check' THEN 'invariant check: ' || json_extract(a.payload, '$.problems') || ' problem(s)'
    END, a.operation) AS summary,
    a.payload
FROM audit_log AS a;

-- Proof edges in words: each conclusion with its memory, its rule and each
-- premise in order; `supports` is the premise fact's supports (or the
-- observation it comes from); `current` is 0 once the memory changed since.
CREATE VIEW proof_steps AS
SELECT
    d.id AS conclusion_id,
    s.name AS memory,
    d.text AS conclusion,
    r.text AS rule,
    e.position,
    e.kind,
    e.premise,
    e.derived_id,
    e.fact_id,
    e.observation_id,
    CASE
        WHEN e.kind = 'fact' THEN (SELECT supports FROM facts_with_supports WHERE id = e.fact_id)
        WHEN e.kind = 'observation' AND e.observation_id IS NOT NULL THEN 'observation:HEDGE-' || e.observation_id
        WHEN e.kind = 'observation' THEN 'observation'
    END AS supports,
    d.generation,
    d.generation = s.generation AS current
FROM proof_edges AS e
JOIN derived AS d ON d.id = e.conclusion_id
JOIN segments AS s ON s.id = d.segment_id
LEFT JOIN rules AS r ON r.id = d.rule_id;

-- Change feed for warm relations (0008). A long-running process keeps predicates' facts in memory
-- and, before it uses a copy, asks what changed since it read it: new fact rows are those with a
-- higher id (ids only grow); every other change is announced here by triggers, so every writer
-- (this process, another one, sqlite3 by hand) is seen the same way.

-- One counter for the whole file: every announced change takes the next number, so a number is never
-- reused, not even when a segment is deleted and another one takes its id.
CREATE TABLE change_counter (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL,
    kept_changes INTEGER NOT NULL DEFAULT 100000,  -- (0010) how many changes fact_changes reaches back
    deleted_high INTEGER NOT NULL DEFAULT 0  -- (0010) the highest fact id ever deleted: ids above the newest
-- row are given again, and a row given one is announced
);

-- Per predicate of a segment: the number of the last change that was more than new fact rows (a
-- fact or a support removed, a support added to a fact that already had one, a fact renamed, a
-- row inserted below the predicate's newest id). A copy read at the same `reshaped` lacks only
-- the rows with an id above the newest it read; otherwise the predicate is read again. A
-- predicate without facts has no row (its name stays nowhere); when one loses its last fact,
-- segments.vacated takes the change number instead.
CREATE TABLE predicate_versions (
    segment_id INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
    functor TEXT NOT NULL,
    arity INTEGER NOT NULL,
    reshaped INTEGER NOT NULL,
    PRIMARY KEY (segment_id, functor, arity)
) WITHOUT ROWID;

CREATE TRIGGER facts_change_feed_insert AFTER INSERT ON facts
WHEN NEW.id <= (SELECT deleted_high FROM change_counter WHERE id = 1)
  OR NEW.id < (SELECT max(id) FROM facts WHERE segment_id = NEW.segment_id AND functor = NEW.functor
               AND arity = NEW.arity) BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (NEW.segment_id, NEW.functor, NEW.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
    SELECT value, NEW.segment_id, NEW.functor, NEW.arity, NEW.id, NULL FROM change_counter WHERE id = 1;
END;

CREATE TRIGGER facts_change_feed_delete AFTER DELETE ON facts BEGIN
    UPDATE change_counter SET value = value + 1, deleted_high = max(deleted_high, OLD.id) WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (OLD.segment_id, OLD.functor, OLD.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
    SELECT value, OLD.segment_id, OLD.functor, OLD.arity, OLD.id, OLD.args FROM change_counter WHERE id = 1;
    UPDATE segments SET vacated = (SELECT value FROM change_counter WHERE id = 1)
    WHERE id = OLD.segment_id AND NOT EXISTS (SELECT 1 FROM facts WHERE segment_id = OLD.segment_id
                                              AND functor = OLD.functor AND arity = OLD.arity);
    DELETE FROM predicate_versions
    WHERE segment_id = OLD.segment_id AND functor = OLD.functor AND arity = OLD.arity
      AND NOT EXISTS (SELECT 1 FROM facts WHERE segment_id = OLD.segment_id AND functor = OLD.functor
                      AND arity = OLD.arity);
END;

CREATE TRIGGER facts_change_feed_update AFTER UPDATE OF id, segment_id, functor, arity, text, args ON facts BEGIN
    UPDATE change_counter SET value = value + 1, deleted_high = max(deleted_high, OLD.id) WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (OLD.segment_id, OLD.functor, OLD.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (NEW.segment_id, NEW.functor, NEW.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
    SELECT value, OLD.segment_id, OLD.functor, OLD.arity, OLD.id, OLD.args FROM change_counter WHERE id = 1
    UNION ALL
    SELECT value, NEW.segment_id, NEW.functor, NEW.arity, NEW.id, NULL FROM change_counter WHERE id = 1;
    UPDATE segments SET vacated = (SELECT value FROM change_counter WHERE id = 1)
    WHERE id = OLD.segment_id AND NOT EXISTS (SELECT 1 FROM facts WHERE segment_id = OLD.segment_id
                                              AND functor = OLD.functor AND arity = OLD.arity);
    DELETE FROM predicate_versions
    WHERE segment_id = OLD.segment_id AND functor = OLD.functor AND arity = OLD.arity
      AND NOT EXISTS (SELECT 1 FROM facts WHERE segment_id = OLD.segment_id AND functor = OLD.functor
                      AND arity = OLD.arity);
END;

-- A fact's first support comes with the fact in one transaction (a fact row never stands without a
-- support between transactions), so its new id announces it; a support added to a fact that
-- already has one can make an old row visible to a reader that could not see it.
CREATE TRIGGER supports_change_feed_insert AFTER INSERT ON supports
WHEN EXISTS (SELECT 1 FROM supports WHERE fact_id = NEW.fact_id AND id <> NEW.id) BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    SELECT segment_id, functor, arity, (SELECT value FROM change_counter WHERE id = 1) FROM facts
    WHERE id = NEW.fact_id
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
    SELECT (SELECT value FROM change_counter WHERE id = 1), segment_id, functor, arity, id, NULL FROM facts
    WHERE id = NEW.fact_id;
END;

CREATE TRIGGER supports_change_feed_delete AFTER DELETE ON supports BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    SELECT segment_id, functor, arity, (SELECT value FROM change_counter WHERE id = 1) FROM facts
    WHERE id = OLD.fact_id
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
    SELECT (SELECT value FROM change_counter WHERE id = 1), segment_id, functor, arity, id, args FROM facts
    WHERE id = OLD.fact_id;
END;

CREATE TRIGGER supports_change_feed_update AFTER UPDATE OF fact_id, kind, ref ON supports BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    SELECT segment_id, functor, arity, (SELECT value FROM change_counter WHERE id = 1) FROM facts
    WHERE id IN (OLD.fact_id, NEW.fact_id)
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
    SELECT (SELECT value FROM change_counter WHERE id = 1), segment_id, functor, arity, id, args FROM facts
    WHERE id IN (OLD.fact_id, NEW.fact_id);
END;

-- Which supports a caller sees depends on the namespace of a projection's source memory.
CREATE TRIGGER source_memories_change_feed AFTER UPDATE OF namespace ON source_memories BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    SELECT DISTINCT f.segment_id, f.functor, f.arity, (SELECT value FROM change_counter WHERE id = 1)
    FROM supports AS s JOIN facts AS f ON f.id = s.fact_id
    WHERE s.kind = 'source' AND s.ref = NEW.id
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
    SELECT DISTINCT (SELECT value FROM change_counter WHERE id = 1), f.segment_id, f.functor, f.arity, f.id, f.args
    FROM supports AS s JOIN facts AS f ON f.id = s.fact_id
    WHERE s.kind = 'source' AND s.ref = NEW.id;
END;

-- Facts the change feed touched (0010).
-- One row per fact a change touched: the change's number, the predicate the fact was in, and the
-- arguments it had there before the change (NULL when it was not there: a row slipped in below the
-- newest id, a fact moved in from another predicate, a support added). A reader with a copy read at
-- change number N takes the rows above N for its predicate: it drops each row's old arguments,
-- then adds back the facts it may still see. Only the last `kept_changes` changes are kept: a copy older
-- than that reads its predicate again.
CREATE TABLE fact_changes (
    number INTEGER NOT NULL,
    segment_id INTEGER NOT NULL,
    functor TEXT NOT NULL,
    arity INTEGER NOT NULL,
    fact_id INTEGER NOT NULL,
    args TEXT
);

CREATE INDEX fact_changes_by_predicate ON fact_changes (segment_id, functor, arity, number);

CREATE INDEX fact_changes_by_number ON fact_changes (number);

-- The window: a change's rows push out those older than the last `kept_changes` changes.
CREATE TRIGGER fact_changes_window AFTER INSERT ON fact_changes BEGIN
    DELETE FROM fact_changes WHERE number <= (SELECT value - kept_changes FROM change_counter WHERE id = 1);
END;

-- (0012) Bearer tokens of the HTTP transport (`datalog-memory serve --http`;
-- managed with `datalog-memory token create|list|revoke`). A token names a
-- caller: principal, the project it may use, source class and capabilities,
-- which stdio takes from the host's environment. Only the sha256 of each token
-- is kept (a token carries 256 random bits, so its digest cannot be brute
-- forced); the token itself is printed once, at creation. Creating and
-- revoking write an audit row (token_create, token_revoke) in the same
-- transaction. A revoked token stays revoked and a token's identity never
-- changes (create another one instead).
CREATE TABLE access_tokens (
    id TEXT PRIMARY KEY,              -- public id: part of the token, shown by `token list`
    digest TEXT NOT NULL UNIQUE,      -- sha256 (hex) of the whole token
    name TEXT NOT NULL,               -- the administrator's label (who or what holds it)
    principal TEXT NOT NULL,          -- who acts: audit rows and session namespaces name it
    project_remote TEXT,              -- the project namespace it may use (NULL: none)
    source_class TEXT NOT NULL,       -- provenance of what it writes (see CallerContext)
    capabilities TEXT NOT NULL CHECK (json_valid(capabilities)),  -- JSON array of capability names
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,         -- the principal that created it
    revoked_at TEXT,                  -- NULL while it is valid
    revoked_by TEXT
);

CREATE TRIGGER access_tokens_fixed BEFORE UPDATE ON access_tokens
WHEN OLD.revoked_at IS NOT NULL OR NEW.revoked_at IS NULL
    OR NEW.id IS NOT OLD.id OR NEW.digest IS NOT OLD.digest OR NEW.name IS NOT OLD.name
    OR NEW.principal IS NOT OLD.principal OR NEW.project_remote IS NOT OLD.project_remote
    OR NEW.source_class IS NOT OLD.source_class OR NEW.capabilities IS NOT OLD.capabilities
    OR NEW.created_at IS NOT OLD.created_at OR NEW.created_by IS NOT OLD.created_by
BEGIN
    SELECT RAISE(ABORT, 'an access token can only be revoked, once');
END;
