-- 0012: bearer tokens for the HTTP transport (`serve --http`). Each token names who calls: a
-- principal, the project it may use, its source class and its capabilities, exactly the caller
-- that stdio takes from the host's environment. Only the sha256 of a token is kept (a token is
-- 256 random bits, so its digest cannot be brute-forced); the token itself is shown once, when
-- it is created. A revoked token stays revoked, and a token's identity never changes: a new one
-- is created instead.
CREATE TABLE access_tokens (
    id TEXT PRIMARY KEY,               -- public id: part of the token, shown by `token list`
    digest TEXT NOT NULL UNIQUE,       -- sha256 (hex) of the whole token
    name TEXT NOT NULL,                -- the administrator's label (who or what holds it)
    principal TEXT NOT NULL,           -- who acts: audit rows and session namespaces name it
    project_remote TEXT,               -- the project namespace it may use (NULL: none)
    source_class TEXT NOT NULL,        -- provenance of what it writes (see CallerContext)
    capabilities TEXT NOT NULL CHECK (json_valid(capabilities)),  -- JSON array of capability names
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,          -- the principal that created it
    revoked_at TEXT,                   -- NULL while it is valid
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
