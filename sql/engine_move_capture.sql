-- Phase capture of a move (partition_move; docs/resharding-engine.md,
-- "Moving a partition"; step_capture in src/reshard_steps.c): the triggers
-- that log every write to the moved partition, and that refuse to truncate
-- it, are created, and nothing else (back here, the partition is also
-- pointed at the view on the server that marks its writes as coming
-- through this server); from then on each row change of the partition is
-- in the log, and none of the others'.
\i test/engine_move_helpers.sql

-- The log's entries by kind, each against the row changes of bucket 1
-- that PostgreSQL made (pg_temp.writes: an update that moves a row to
-- another partition is a delete and an insert).
CREATE FUNCTION pg_temp.logged_as_written() RETURNS TABLE (op text, entries bigint, as_written boolean) LANGUAGE sql AS $$
    SELECT l.op, l.entries, l.entries = CASE l.op WHEN 'i' THEN w.inserted WHEN 'u' THEN w.updated WHEN 'd' THEN w.deleted END
    FROM (SELECT sum(inserted) AS inserted, sum(updated) AS updated, sum(deleted) AS deleted FROM pg_temp.writes WHERE bucket = 1) AS w,
         LATERAL (SELECT op, count(*) AS entries FROM pg_temp.log_entries() GROUP BY op) AS l
    ORDER BY 1
$$;
-- Each entry holds the partition written, and the old and the new row; the
-- last image of each key written is the mirror's row.
CREATE FUNCTION pg_temp.entries_checked(OUT other_partition bigint, OUT rows_wrong bigint, OUT last_image_not_in_mirror bigint)
LANGUAGE sql AS $$
    SELECT count(*) FILTER (WHERE e.partition <> 'engine_move.em_1'::regclass),
           count(*) FILTER (WHERE (e.op = 'i') <> (e.old_row IS NULL) OR (e.op = 'd') <> (e.new_row IS NULL)),
           count(*) FILTER (WHERE e.new_row IS NOT NULL AND e.seq = (SELECT max(seq) FROM pg_temp.log_entries() AS n
                                                                   WHERE coalesce(n.new_row, n.old_row)->'id' = e.new_row->'id')
                              AND NOT EXISTS (SELECT FROM engine_move.mirror m WHERE to_jsonb(m) = e.new_row))
    FROM pg_temp.log_entries() AS e
$$;

-- To a server.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('capture');
CREATE TEMP TABLE objects_before AS SELECT * FROM pg_temp.engine_objects() AS o(object);
CREATE TEMP TABLE remote_before AS SELECT * FROM pg_temp.remote_objects() AS o(object);
-- Before the capture, a write is not logged.
SELECT pg_temp.write_both() > 0 AS written_to_em_1, pg_temp.rows_in((pg_temp.state()).log) AS entries_logged;

-- One step: phase capture, then phase copy.
CALL reshard_step('engine_move.em');
SELECT phase, sources_copied, rows_copied, changes_applied FROM pg_temp.state();
-- What it made: a capture trigger and a TRUNCATE trigger on em_1, none on
-- the other partitions or the shadow; nothing went, nothing changed there.
SELECT made FROM (SELECT o.object FROM pg_temp.engine_objects() AS o(object) EXCEPT SELECT object FROM objects_before) AS x(made)
ORDER BY made COLLATE "C";
SELECT object AS gone FROM objects_before EXCEPT SELECT o.object FROM pg_temp.engine_objects() AS o(object);
SELECT c.relname AS partition, t.tgisinternal AS internal, t.tgenabled AS enabled, f.proname AS function
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc f ON f.oid = t.tgfoid
WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relname ~ '^em_[0-9]$' ORDER BY 1, t.tgname COLLATE "C";
SELECT (SELECT count(*) FROM (SELECT * FROM pg_temp.remote_objects() EXCEPT SELECT * FROM remote_before) AS x) AS made_there,
       (SELECT count(*) FROM (SELECT * FROM remote_before EXCEPT SELECT * FROM pg_temp.remote_objects()) AS x) AS gone_there;

-- After it, each row change of em_1 is logged (and none of the other
-- partitions'), as many entries of each kind as PostgreSQL made.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) AS written_to_em_1 FROM generate_series(1, 3);
SELECT sum(inserted + updated + deleted) AS written_elsewhere FROM pg_temp.writes WHERE bucket <> 1;
SELECT * FROM pg_temp.logged_as_written();
SELECT * FROM pg_temp.entries_checked();
SELECT pg_temp.differences() AS differences, (SELECT count(*) FROM pg_temp.remote_rows()) AS remote_rows;
-- A partition being moved cannot be truncated.
TRUNCATE engine_move.em_1;
CALL reshard_abort('engine_move.em');

-- Back here.
CALL partition_move('engine_move.em_1', 'engine_move_server');
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('capture');
TRUNCATE objects_before, remote_before;
INSERT INTO objects_before SELECT * FROM pg_temp.engine_objects();
INSERT INTO remote_before SELECT * FROM pg_temp.remote_objects();
CREATE TEMP TABLE options_before AS SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'engine_move.em_1'::regclass;
TRUNCATE pg_temp.writes;
SELECT pg_temp.write_both() > 0 AS written_to_em_1, pg_temp.rows_in((pg_temp.state()).log) AS entries_logged;

CALL reshard_step('engine_move.em');
SELECT phase, sources_copied, rows_copied, changes_applied FROM pg_temp.state();
-- What it made here: the capture trigger on the foreign partition em_1 (a
-- foreign table has no TRUNCATE trigger);
-- and em_1 now reads and writes the view of its table on the server that
-- marks its writes (reshard_all_), in the same schema.  Nothing changed
-- there.
SELECT made FROM (SELECT o.object FROM pg_temp.engine_objects() AS o(object) EXCEPT SELECT object FROM objects_before) AS x(made)
ORDER BY made COLLATE "C";
SELECT object AS gone FROM objects_before EXCEPT SELECT o.object FROM pg_temp.engine_objects() AS o(object);
SELECT c.relname AS partition, c.relkind, t.tgisinternal AS internal, t.tgenabled AS enabled, f.proname AS function
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc f ON f.oid = t.tgfoid
WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relname ~ '^em_[0-9]$' ORDER BY 1, t.tgname COLLATE "C";
SELECT b.ftoptions AS options_before, pg_temp.normalized(f.ftoptions::text) AS options_now
FROM options_before b, pg_foreign_table f WHERE f.ftrelid = 'engine_move.em_1'::regclass;
SELECT (SELECT count(*) FROM (SELECT * FROM pg_temp.remote_objects() EXCEPT SELECT * FROM remote_before) AS x) AS made_there,
       (SELECT count(*) FROM (SELECT * FROM remote_before EXCEPT SELECT * FROM pg_temp.remote_objects()) AS x) AS gone_there;

-- Each row change of em_1 is logged, and lands in its table there.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) AS written_to_em_1 FROM generate_series(1, 3);
SELECT * FROM pg_temp.logged_as_written();
SELECT * FROM pg_temp.entries_checked();
SELECT pg_temp.differences() AS differences,
       pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS remote_differences;
-- (a foreign table has no TRUNCATE trigger; its table there is reached
-- through the view now, which cannot be truncated: wrong_object_type)
SELECT pg_temp.sqlstate_of('TRUNCATE engine_move.em_1') AS truncate_em_1;
CALL reshard_abort('engine_move.em');

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
