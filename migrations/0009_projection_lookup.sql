-- 0009: recall finds a pattern's projections through their fact text. `memory_recall` with leading
-- arguments bound (mentions(item42, _)) reads the facts that start with them, not every projection
-- of the predicate; this index replaces the one on the predicate alone (its prefix).
DROP INDEX memory_projections_by_predicate;

CREATE INDEX memory_projections_by_fact ON memory_projections (predicate, fact);
