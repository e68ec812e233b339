-- 0006: authority and erasure.
-- Sessions belong to their principal: 'session:<session id>' becomes 'session:<principal>/<session id>'
-- (the principal that remembered the memory; '%', '/' and ':' in it escaped as %25, %2F, %3A).
UPDATE source_memories
SET namespace = 'session:' || replace(replace(replace(principal, '%', '%25'), '/', '%2F'), ':', '%3A')
                || '/' || substr(namespace, 9)
WHERE namespace LIKE 'session:%';

-- The audit log stays append-only, except that an erase may redact a row's payload: it replaces the
-- erased content in it and marks the payload with "redacted_at". Nothing else of a row can change.
DROP TRIGGER audit_log_no_update;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NEW.id IS NOT OLD.id OR NEW.at IS NOT OLD.at OR NEW.actor IS NOT OLD.actor
    OR NEW.operation IS NOT OLD.operation OR NEW.segment IS NOT OLD.segment
    OR json_extract(NEW.payload, '$.redacted_at') IS NULL
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

-- Store-level chores. 'vacuum_on_erase': the database held source text before deleted content was
-- overwritten (secure_delete), so the next erase rebuilds the file once (VACUUM) to drop stale copies.
CREATE TABLE maintenance (
    task TEXT PRIMARY KEY,
    since TEXT NOT NULL
);

INSERT INTO maintenance (task, since)
SELECT 'vacuum_on_erase', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE EXISTS (SELECT 1 FROM sources);
