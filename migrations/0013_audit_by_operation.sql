-- 0013: the newest audit row of one operation (`get_persistence_status` and `inspect` show the last
-- integrity check) is found through an index instead of by reading the log backwards from its end:
-- on a log of a million rows without an integrity check that read was the whole log, about 0.1 s per
-- status call. Like every SQLite index, it ends with the row id, so "newest first" is its order.
CREATE INDEX audit_log_by_operation ON audit_log (operation);
