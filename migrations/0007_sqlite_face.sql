-- 0007: the SQLite face: proof edges written with materialized conclusions, and views named for
-- what people ask of the file (facts with their supports, rules, memories with their text,
-- observations with their times and members, the audit log in words, proof steps).

CREATE TABLE proof_edges (
    conclusion_id INTEGER NOT NULL REFERENCES derived (id) ON DELETE CASCADE,
    position INTEGER NOT NULL CHECK (position >= 0),
    kind TEXT NOT NULL CHECK (kind IN ('fact', 'derived', 'observation', 'builtin', 'negation', 'aggregate')),
    premise TEXT NOT NULL,
    memory TEXT,
    fact_id INTEGER REFERENCES facts (id) ON DELETE SET NULL,
    derived_id INTEGER REFERENCES derived (id) ON DELETE CASCADE,
    observation_id INTEGER REFERENCES hyperedges (id) ON DELETE SET NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (conclusion_id, position)
) WITHOUT ROWID;

CREATE INDEX proof_edges_by_derived ON proof_edges (derived_id);
CREATE INDEX proof_edges_by_fact ON proof_edges (fact_id);
CREATE INDEX proof_edges_by_observation ON proof_edges (observation_id);

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
