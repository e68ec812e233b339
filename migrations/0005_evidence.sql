-- 0005: evidence memory: time-stamped hyperedge observations, entities, the formation table,
-- and rule names and confidences.

CREATE TABLE entities (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    local_name TEXT NOT NULL
);

CREATE INDEX entities_by_local_name ON entities (local_name);

CREATE TABLE hyperedges (
    id INTEGER PRIMARY KEY,
    formation TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    event_ts INTEGER NOT NULL,
    weight REAL NOT NULL CHECK (weight > 0 AND weight <= 1),
    principal TEXT NOT NULL,
    source TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    chain_hash TEXT NOT NULL,
    retracted_at TEXT,
    retraction_reason TEXT
);

CREATE INDEX hyperedges_by_time ON hyperedges (event_ts);

CREATE TABLE hyperedge_members (
    edge_id INTEGER NOT NULL REFERENCES hyperedges (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    entity_id INTEGER NOT NULL REFERENCES entities (id),
    PRIMARY KEY (edge_id, position)
) WITHOUT ROWID;

CREATE INDEX hyperedge_members_by_entity ON hyperedge_members (entity_id, edge_id);

CREATE TABLE formation_rules (
    id INTEGER PRIMARY KEY,
    priority INTEGER NOT NULL,
    formation TEXT NOT NULL,
    member_types TEXT NOT NULL CHECK (json_valid(member_types) AND json_type(member_types) = 'array'),
    description TEXT NOT NULL DEFAULT ''
);

INSERT INTO formation_rules (priority, formation, member_types, description) VALUES
    (10, 'DRONE_EVENT', '["drone"]', 'any drone among the members'),
    (20, 'AUTH_EVENT', '["machine", "account"]', 'an account on a machine'),
    (21, 'AUTH_EVENT', '["host", "account"]', 'an account on a host'),
    (30, 'NETWORK_EVENT', '["ip"]', 'an IP address among the members'),
    (40, 'PROCESS_EVENT', '["process"]', 'a process among the members'),
    (50, 'FILE_EVENT', '["file"]', 'a file among the members');

ALTER TABLE rules ADD COLUMN name TEXT;
ALTER TABLE rules ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence > 0 AND confidence <= 1);

CREATE UNIQUE INDEX rules_by_name ON rules (segment_id, name) WHERE name IS NOT NULL;
