-- Phase setup of the resharding engine (docs/resharding-engine.md,
-- "Phases"; step_setup in src/resharding/steps.c): the shadows, the new parent,
-- the change log and the guards of the tables filled are made, and nothing
-- else: the table is unchanged, its writes not yet logged.
\i test/engine_phase_helpers.sql
CREATE TEMP TABLE layout_before AS SELECT * FROM pg_temp.layout();
CREATE TEMP TABLE partitions_before AS
SELECT c.relname, c.oid FROM pg_class c WHERE c.relnamespace = 'engine_phase'::regnamespace AND c.relname ~ '^ep(_[0-9]+)?$';

-- Adding a bucket.  The plan: the state row, in phase setup; nothing made.
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
SELECT phase, operation, bucket, old_buckets, new_buckets, cardinality(sources) AS sources,
       shadows = '{}' AS no_shadows, new_parent IS NULL AS no_new_parent, log IS NULL AS no_log
FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();

-- One step: phase setup, then phase capture.
CALL reshard_step('engine_phase.ep');
SELECT phase, sources_copied, rows_copied, changes_applied FROM pg_temp.state();
-- A shadow for each old local partition, in its bucket, and the new
-- partition in the new bucket; each with an index on the key; a new parent
-- partitioned by the new key, with no partition; the log and its sequence;
-- the guards on the tables filled.  No trigger on the old partitions.
SELECT * FROM pg_temp.engine_objects();
SELECT u.i - 1 AS bucket, pg_temp.normalized(c.relname::text) AS filled, pg_temp.rows_in(u.t) AS rows
FROM unnest((pg_temp.state()).shadows) WITH ORDINALITY AS u(t, i) JOIN pg_class c ON c.oid = u.t ORDER BY u.i;
SELECT pg_temp.normalized(c.relname::text) AS new_parent, pg_get_partkeydef(c.oid) AS partition_key,
       (SELECT count(*) FROM pg_inherits WHERE inhparent = c.oid) AS partitions, pg_temp.rows_in(c.oid) AS rows
FROM pg_class c WHERE c.oid = (pg_temp.state()).new_parent;
SELECT pg_temp.normalized(l.relname::text) AS log, pg_temp.rows_in(l.oid) AS entries,
       pg_temp.normalized(q.relname::text) AS sequence
FROM pg_temp.state() s JOIN pg_class l ON l.oid = s.log JOIN pg_class q ON q.oid = s.log_sequence;
-- The shadows have the columns of their partitions.
SELECT DISTINCT (SELECT string_agg(format('%s %s', attname, format_type(atttypid, atttypmod)), ', ' ORDER BY attnum)
                 FROM pg_attribute WHERE attrelid = u.t AND attnum > 0 AND NOT attisdropped) AS shadow_columns
FROM unnest((pg_temp.state()).shadows) AS u(t);
-- The guards: nobody writes to the tables filled.
SELECT pg_temp.normalized(c.relname::text) AS filled,
       pg_temp.sqlstate_of(format('INSERT INTO %s VALUES (-1, %L, 0)', c.oid::regclass, 'x')) AS insert,
       pg_temp.sqlstate_of(format('TRUNCATE %s', c.oid::regclass)) AS truncate
FROM unnest((pg_temp.state()).shadows) AS u(t) JOIN pg_class c ON c.oid = u.t ORDER BY 1;

-- The table is unchanged: the same OID, partitions, layout and rows; a
-- write to it is not logged (the capture has not begun).
SELECT pg_temp.write_both() > 0 AS written;
SELECT pg_temp.differences() AS differences,
       pg_temp.rows_in((pg_temp.state()).log) AS entries_logged,
       (SELECT count(*) FROM partitions_before b WHERE b.oid <> to_regclass('engine_phase.' || b.relname)) AS oids_changed,
       (SELECT count(*) FROM pg_inherits WHERE inhparent = 'engine_phase.ep'::regclass) AS partitions,
       (SELECT count(*) FROM (SELECT bucket, partition FROM pg_temp.layout() EXCEPT SELECT bucket, partition FROM layout_before) AS l)
           AS layout_changes;

-- The routine of phase setup refuses a NULL state and a state of another
-- phase; so do the routines called in it that the phase table does not
-- name (by their arguments: the plan, the catalog check, the shard views).
SELECT * FROM pg_temp.refusals(pg_temp.routine_of('setup'), 'capture', 'done');
SELECT a.arguments, r.state, r.error
FROM (VALUES (1, 'reshard_state, text'), (2, 'reshard_state'), (3, 'reshard_state, text, integer')) AS a(n, arguments),
     pg_temp.refusals(pg_temp.routine_taking(a.arguments), 'done') AS r
ORDER BY a.n;
CALL reshard_abort('engine_phase.ep');

-- Removing the last bucket: a shadow for each bucket that stays, none for
-- the partition removed, which is not guarded (its rows are copied out).
CALL reshard_begin('engine_phase.ep', 'remove', 'engine_phase.ep_2');
CALL reshard_step('engine_phase.ep');
SELECT phase, operation, bucket, old_buckets, new_buckets FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT u.i - 1 AS bucket, pg_temp.normalized(c.relname::text) AS filled
FROM unnest((pg_temp.state()).shadows) WITH ORDINALITY AS u(t, i) JOIN pg_class c ON c.oid = u.t ORDER BY u.i;
SELECT pg_get_partkeydef((pg_temp.state()).new_parent) AS partition_key;
SELECT pg_temp.write_both() > 0 AS written;
SELECT pg_temp.differences() AS differences, pg_temp.rows_in((pg_temp.state()).log) AS entries_logged;
CALL reshard_abort('engine_phase.ep');

CALL pg_temp.engine_phase_drop();
