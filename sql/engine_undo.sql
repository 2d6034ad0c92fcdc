-- Phase undo of the resharding engine (docs/resharding-engine.md,
-- "Phases"; step_undo in src/resharding/steps.c): reshard_abort of a
-- resharding that has not cut over drops what it made (the log, the
-- shadows, the new parent, the triggers, the new partition's index, CHECK
-- and rows) and leaves the table as it was: its OID, partitions and layout,
-- and the rows of its mirror, with the writes made meanwhile.
\i test/engine_phase_helpers.sql

CREATE TEMP TABLE relations_before AS
SELECT c.relname, c.oid, c.relispartition FROM pg_class c
WHERE c.relnamespace = 'engine_phase'::regnamespace AND c.relkind IN ('r', 'p', 'i');
CREATE TEMP TABLE layout_before AS SELECT * FROM pg_temp.layout();
-- The table as it was: the relations that changed (or are new, or gone),
-- the layout's changes, the rows that differ from the mirror, the new
-- partition's rows, the engine's objects left.
CREATE FUNCTION pg_temp.as_it_was(OUT relations_changed bigint, OUT layout_changes bigint, OUT differences bigint,
                                  OUT rows_in_new_partition bigint, OUT engine_objects bigint) LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM ((SELECT c.relname, c.oid, c.relispartition FROM pg_class c
                                   WHERE c.relnamespace = 'engine_phase'::regnamespace AND c.relkind IN ('r', 'p', 'i'))
                                  EXCEPT ALL SELECT * FROM relations_before
                                  UNION ALL
                                  (SELECT * FROM relations_before
                                   EXCEPT ALL SELECT c.relname, c.oid, c.relispartition FROM pg_class c
                                   WHERE c.relnamespace = 'engine_phase'::regnamespace AND c.relkind IN ('r', 'p', 'i'))) AS r),
           (SELECT count(*) FROM ((SELECT bucket, partition FROM pg_temp.layout() EXCEPT SELECT bucket, partition FROM layout_before)
                                  UNION ALL
                                  (SELECT bucket, partition FROM layout_before EXCEPT SELECT bucket, partition FROM pg_temp.layout())) AS l),
           pg_temp.differences(),
           (SELECT count(*) FROM engine_phase.ep_3),
           (SELECT count(*) FROM pg_temp.engine_objects())
$$;

-- Adding a bucket, undone in phase capture (the shadows made, the capture
-- not begun), with writes made since it began.
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('capture');
SELECT pg_temp.write_both() > 0 AS written;
SELECT count(*) > 0 AS engine_objects FROM pg_temp.engine_objects();
CALL reshard_abort('engine_phase.ep');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();

-- Adding a bucket, undone in phase verify (every row copied, the writes
-- logged and applied to the copies, the new partition filled).
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('copy');
SELECT pg_temp.write_both() > 0 AS written;
CALL pg_temp.step_to('catch up');
SELECT pg_temp.write_both() > 0 AS written;
CALL pg_temp.step_to('verify');
SELECT pg_temp.write_both() > 0 AS written;
SELECT rows_copied > 0 AS copied, changes_applied > 0 AS applied, pg_temp.rows_in('engine_phase.ep_3'::regclass) > 0 AS new_partition_filled
FROM pg_temp.state();
-- The routine of phase undo refuses a NULL state and a state of another phase.
SELECT * FROM pg_temp.refusals(pg_temp.routine_of('undo'), 'verify', 'aborted');
CALL reshard_abort('engine_phase.ep');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();
-- The triggers went with the rest: the partitions can be truncated again,
-- the new partition written to.
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM relations_before) AND tgname LIKE 'reshard\_%';
BEGIN;
TRUNCATE engine_phase.ep_0;
INSERT INTO engine_phase.ep_3 VALUES (-1, 'x', 0);
ROLLBACK;

-- Removing the last bucket, undone in the middle of phase copy.
CALL reshard_begin('engine_phase.ep', 'remove', 'engine_phase.ep_2');
CALL pg_temp.step_to('copy');
CALL reshard_step('engine_phase.ep');
SELECT pg_temp.write_both() > 0 AS written;
SELECT phase, sources_copied FROM pg_temp.state();
CALL reshard_abort('engine_phase.ep');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();

-- Undone in phase cutover (verified, not cut over).
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('cutover');
SELECT pg_temp.write_both() > 0 AS written;
CALL reshard_abort('engine_phase.ep');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.as_it_was();
-- A resharding undone cannot be undone again.
CALL reshard_abort('engine_phase.ep');

CALL pg_temp.engine_phase_drop();
