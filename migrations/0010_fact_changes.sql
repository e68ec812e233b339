-- 0010: the change feed names the facts. Besides moving a predicate's `reshaped` number, every change
-- that is more than new rows now records which fact it touched, so a warm copy takes those facts
-- alone instead of reading the whole predicate again. The triggers of 0008 are replaced by the same
-- triggers with one more statement each.

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

-- How many changes `fact_changes` reaches back.
ALTER TABLE change_counter ADD COLUMN kept_changes INTEGER NOT NULL DEFAULT 100000;

-- The highest fact id ever deleted (or moved): SQLite gives a new row the highest id in use plus one, so once
-- the newest rows are gone their ids are given again. A row inserted at or below it is announced like a
-- row slipped in below the newest: a copy that read the old row at that id learns of the new one.
ALTER TABLE change_counter ADD COLUMN deleted_high INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER facts_change_feed_insert;
DROP TRIGGER facts_change_feed_delete;
DROP TRIGGER facts_change_feed_update;
DROP TRIGGER supports_change_feed_insert;
DROP TRIGGER supports_change_feed_delete;
DROP TRIGGER supports_change_feed_update;
DROP TRIGGER source_memories_change_feed;

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
    DELETE FROM fact_changes WHERE number <= (SELECT value - kept_changes FROM change_counter WHERE id = 1);
END;

CREATE TRIGGER facts_change_feed_delete AFTER DELETE ON facts BEGIN
    UPDATE change_counter SET value = value + 1, deleted_high = max(deleted_high, OLD.id) WHERE id = 1;
    INSERT INTO predicate_versions (segment_id, functor, arity, reshaped)
    VALUES (OLD.segment_id, OLD.functor, OLD.arity, (SELECT value FROM change_counter WHERE id = 1))
    ON CONFLICT (segment_id, functor, arity) DO UPDATE SET reshaped = excluded.reshaped;
    INSERT INTO fact_changes (number, segment_id, functor, arity, fact_id, args)
    SELECT value, OLD.segment_id, OLD.functor, OLD.arity, OLD.id, OLD.args FROM change_counter WHERE id = 1;
    DELETE FROM fact_changes WHERE number <= (SELECT value - kept_changes FROM change_counter WHERE id = 1);
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
    DELETE FROM fact_changes WHERE number <= (SELECT value - kept_changes FROM change_counter WHERE id = 1);
    UPDATE segments SET vacated = (SELECT value FROM change_counter WHERE id = 1)
    WHERE id = OLD.segment_id AND NOT EXISTS (SELECT 1 FROM facts WHERE segment_id = OLD.segment_id
                                              AND functor = OLD.functor AND arity = OLD.arity);
    DELETE FROM predicate_versions
    WHERE segment_id = OLD.segment_id AND functor = OLD.functor AND arity = OLD.arity
      AND NOT EXISTS (SELECT 1 FROM facts WHERE segment_id = OLD.segment_id AND functor = OLD.functor
                      AND arity = OLD.arity);
END;

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
    DELETE FROM fact_changes WHERE number <= (SELECT value - kept_changes FROM change_counter WHERE id = 1);
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
    DELETE FROM fact_changes WHERE number <= (SELECT value - kept_changes FROM change_counter WHERE id = 1);
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
    DELETE FROM fact_changes WHERE number <= (SELECT value - kept_changes FROM change_counter WHERE id = 1);
END;

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
    DELETE FROM fact_changes WHERE number <= (SELECT value - kept_changes FROM change_counter WHERE id = 1);
END;
