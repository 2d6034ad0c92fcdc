-- Phase capture of the resharding engine (docs/resharding-engine.md,
-- "Phases"; step_capture in src/resharding/steps.c): the triggers that log
-- every write to an old partition, and that refuse to truncate one, are
-- created, and nothing else; from then on each row change is in the log.
\i test/engine_phase_helpers.sql

CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('capture');
CREATE TEMP TABLE objects_before AS SELECT * FROM pg_temp.engine_objects() AS o(object);
-- Before the capture, a write is not logged.
SELECT pg_temp.write_both() > 0 AS written, pg_temp.rows_in((pg_temp.state()).log) AS entries_logged;

-- One step: phase capture, then phase copy.
CALL reshard_step('engine_phase.ep');
SELECT phase, sources_copied, rows_copied, changes_applied FROM pg_temp.state();
-- What it made: a capture trigger and a TRUNCATE trigger on each old
-- partition (not on the new one); nothing went.
SELECT made FROM (SELECT o.object FROM pg_temp.engine_objects() AS o(object) EXCEPT SELECT object FROM objects_before) AS x(made)
ORDER BY made COLLATE "C";
SELECT object AS gone FROM objects_before EXCEPT SELECT o.object FROM pg_temp.engine_objects() AS o(object);
SELECT c.relname AS partition, t.tgisinternal AS internal, t.tgenabled AS enabled, f.proname AS function
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc f ON f.oid = t.tgfoid
WHERE c.oid IN (SELECT unnest((pg_temp.state()).sources)) ORDER BY 1, t.tgname COLLATE "C";

-- After it, each row change to an old partition is logged: as many entries
-- of each kind as PostgreSQL counted inserts, updates and deletes (an
-- update that moves a row to another partition: a delete and an insert).
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 3);
SELECT l.op, l.entries, l.entries = CASE l.op WHEN 'i' THEN w.inserted WHEN 'u' THEN w.updated WHEN 'd' THEN w.deleted END AS as_counted
FROM (SELECT sum(inserted) AS inserted, sum(updated) AS updated, sum(deleted) AS deleted FROM pg_temp.writes) AS w,
     LATERAL (SELECT op, count(*) AS entries FROM pg_temp.log_entries() GROUP BY op) AS l
ORDER BY 1;
-- Each entry holds the partition written, and the old and the new row.
SELECT count(*) FILTER (WHERE e.partition NOT IN (SELECT unnest((pg_temp.state()).sources))) AS other_partition,
       count(*) FILTER (WHERE (e.op = 'i') <> (e.old_row IS NULL) OR (e.op = 'd') <> (e.new_row IS NULL)) AS rows_wrong,
       count(*) FILTER (WHERE e.new_row IS NOT NULL AND e.seq = (SELECT max(seq) FROM pg_temp.log_entries() AS n
                                                               WHERE n.new_row->'id' = e.new_row->'id')
                          AND NOT EXISTS (SELECT FROM engine_phase.mirror m WHERE to_jsonb(m) = e.new_row)) AS last_image_not_in_mirror
FROM pg_temp.log_entries() AS e;
SELECT pg_temp.differences() AS differences;
-- A partition being copied cannot be truncated.
TRUNCATE engine_phase.ep_0;

-- Phase capture has no routine of its own.
SELECT routine IS NULL AS no_routine FROM reshard_phases() WHERE phase = 'capture';
-- The shard views routine, which it calls with shard_views (found by its
-- arguments), refuses a NULL state and a state of a phase it is not called in.
SELECT * FROM pg_temp.refusals(pg_temp.routine_taking('reshard_state, text, integer'), 'done');

CALL reshard_abort('engine_phase.ep');
CALL pg_temp.engine_phase_drop();
