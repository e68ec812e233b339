-- 0008: a change feed for warm relations. A long-running process keeps predicates' facts in memory
-- and, before it uses a copy, asks what changed since it read it: new fact rows are those with a
-- higher id (ids only grow); every other change is announced here by triggers, so every writer
-- (this process, another one, sqlite3 by hand) is seen the same way.

-- One counter for the whole file: every announced change takes the next number, so a number is never
-- reused, not even when a segment is deleted and another one takes its id.
CREATE TABLE change_counter (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);

INSERT INTO change_counter (id, value) VALUES (1, 0);

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

-- The number of the last change that took a predicate's last fact from the segment.
ALTER TABLE segments ADD COLUMN vacated INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER facts_change_feed_insert AFTER INSERT ON facts
WHEN NEW.id < (SELECT max(id) FROM facts WHERE segment_id = NEW.segment_id AND functor = NEW.functor
               AND arity = NEW.arity) BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (NEW.segment_id, NEW.functor, NEW.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
END;

CREATE TRIGGER facts_change_feed_delete AFTER DELETE ON facts BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (OLD.segment_id, OLD.functor, OLD.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    UPDATE segments SET vacated = (SELECT value FROM change_counter WHERE id = 1)
    WHERE id = OLD.segment_id AND NOT EXISTS (SELECT 1 FROM facts WHERE segment_id = OLD.segment_id
                                              AND functor = OLD.functor AND arity = OLD.arity);
    DELETE FROM predicate_versions
    WHERE segment_id = OLD.segment_id AND functor = OLD.functor AND arity = OLD.arity
      AND NOT EXISTS (SELECT 1 FROM facts WHERE segment_id = OLD.segment_id AND functor = OLD.functor
                      AND arity = OLD.arity);
END;

CREATE TRIGGER facts_change_feed_update AFTER UPDATE OF id, segment_id, functor, arity, text, args ON facts BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (OLD.segment_id, OLD.functor, OLD.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (NEW.segment_id, NEW.functor, NEW.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
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
END;

CREATE TRIGGER supports_change_feed_delete AFTER DELETE ON supports BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    SELECT segment_id, functor, arity, (SELECT value FROM change_counter WHERE id = 1) FROM facts
    WHERE id = OLD.fact_id
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
END;

CREATE TRIGGER supports_change_feed_update AFTER UPDATE OF fact_id, kind, ref ON supports BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    SELECT segment_id, functor, arity, (SELECT value FROM change_counter WHERE id = 1) FROM facts
    WHERE id IN (OLD.fact_id, NEW.fact_id)
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
END;

-- Which supports a caller sees depends on the namespace of a projection's source memory.
CREATE TRIGGER source_memories_change_feed AFTER UPDATE OF namespace ON source_memories BEGIN
    UPDATE change_counter SET value = value + 1 WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    SELECT DISTINCT f.segment_id, f.functor, f.arity, (SELECT value FROM change_counter WHERE id = 1)
    FROM supports AS s JOIN facts AS f ON f.id = s.fact_id
    WHERE s.kind = 'source' AND s.ref = NEW.id
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
END;
