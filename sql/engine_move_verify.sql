-- Phase verify of a move (partition_move; docs/resharding-engine.md,
-- "Moving a partition"; step_verify in src/reshard_steps.c): the log
-- applied as its snapshot sees it, then the table filled compared with the
-- partition (count and hashes of the row images).  To a server, the copy
-- is summed there when the server has the extension, of this version
-- (through a view made there), else read back; back here, the table here
-- then gets a CHECK that implies its bound (attached at the cutover).  A
-- difference fails (data_corrupted) and changes nothing.
\i test/engine_move_helpers.sql

-- To a server without the extension: the copy read back.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('verify');
CREATE TEMP TABLE objects_before AS SELECT * FROM pg_temp.engine_objects() AS o(object);
CREATE TEMP TABLE remote_before AS SELECT * FROM pg_temp.remote_objects() AS o(object);
CREATE TEMP TABLE state_before AS SELECT * FROM pg_temp.state();
SELECT phase, rows_verified FROM state_before;
-- Writes since the catch-up: the verification applies them first.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 4);

-- One step: phase verify, then phase cutover.
CALL reshard_step('engine_move.em');
SELECT s.phase,
       s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes WHERE bucket = 1)
           AS applied_as_written,
       pg_temp.rows_in(s.log) AS entries_left,
       s.rows_verified = (SELECT count(*) FROM engine_move.em_1) AS verified_all_rows,
       s.rows_verified = (SELECT count(*) FROM engine_move.mirror WHERE jumpbackhash(id, 3) = 1) AS verified_as_mirror,
       s.rows_copied = b.rows_copied AS nothing_copied, s.cutover_attempts
FROM pg_temp.state() s, state_before b;
-- Nothing made or gone, here or there (a foreign table gets no CHECK).
SELECT (SELECT count(*) FROM (SELECT * FROM pg_temp.engine_objects() EXCEPT SELECT * FROM objects_before) AS x) AS made,
       (SELECT count(*) FROM (SELECT * FROM objects_before EXCEPT SELECT * FROM pg_temp.engine_objects()) AS x) AS gone,
       (SELECT count(*) FROM (SELECT * FROM pg_temp.remote_objects() EXCEPT SELECT * FROM remote_before) AS x) AS made_there,
       (SELECT count(*) FROM (SELECT * FROM remote_before EXCEPT SELECT * FROM pg_temp.remote_objects()) AS x) AS gone_there;
SELECT pg_temp.differences() AS differences,
       pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS remote_differences;
CALL reshard_abort('engine_move.em');

-- To a server with the extension: the view there of its copy's count and
-- sum (reshard_images_), which the finish or the undo drops.
SELECT dblink_exec('engine_move_server', 'CREATE EXTENSION subsetting');
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('verify');
TRUNCATE remote_before;
INSERT INTO remote_before SELECT * FROM pg_temp.remote_objects();
SELECT pg_temp.write_both() > 0 AS written;
CALL reshard_step('engine_move.em');
SELECT phase, rows_verified = (SELECT count(*) FROM engine_move.em_1) AS verified_all_rows, pg_temp.rows_in(log) AS entries_left
FROM pg_temp.state();
SELECT made FROM (SELECT * FROM pg_temp.remote_objects() EXCEPT SELECT * FROM remote_before) AS x(made) ORDER BY made COLLATE "C";
-- (read here through dblink: the count and the sum of the partition's rows)
SELECT v.n = (SELECT count(*) FROM engine_move.em_1) AS count_as_partition,
       v.total = (SELECT sum(reshard_row_image_hash(ROW(t.id, t.v, t.f)))::numeric FROM engine_move.em_1 AS t) AS sum_as_partition
FROM pg_temp.remote($$SELECT relname::text FROM pg_class WHERE relname LIKE 'reshard\_images\_%'$$) AS r(name),
     LATERAL dblink('engine_move_server', format('SELECT n, total FROM engine_move.%I', r.name)) AS v(n bigint, total numeric);
CALL reshard_abort('engine_move.em');
SELECT * FROM pg_temp.remote_objects();

-- A copy changed behind the engine's back (directly on the server): the
-- sums there differ, the copy is read back and differs too; the
-- verification fails with data_corrupted (XX001), nothing is made here
-- (there, the view of its sums stays until the undo drops it), the move
-- stays in phase verify, and is undone.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('verify');
TRUNCATE objects_before, remote_before;
INSERT INTO objects_before SELECT * FROM pg_temp.engine_objects();
INSERT INTO remote_before SELECT * FROM pg_temp.remote_objects();
-- (past the table's guard there, which refuses direct writes, as only a
-- superuser can: session_replication_role)
SELECT dblink_exec('engine_move_server', $$SET session_replication_role = replica; UPDATE engine_move.em_1 SET v = v || ' changed' WHERE id = (SELECT min(id) FROM engine_move.em_1)$$);
\set VERBOSITY sqlstate
CALL reshard_step('engine_move.em');
\set VERBOSITY default
SELECT phase, rows_verified FROM pg_temp.state();
SELECT (SELECT count(*) FROM (SELECT * FROM pg_temp.engine_objects() EXCEPT SELECT * FROM objects_before) AS x) AS made,
       (SELECT count(*) FROM (SELECT * FROM objects_before EXCEPT SELECT * FROM pg_temp.engine_objects()) AS x) AS gone,
       (SELECT count(*) FROM (SELECT * FROM pg_temp.remote_objects() EXCEPT SELECT * FROM remote_before) AS x) AS made_there,
       (SELECT count(*) FROM (SELECT * FROM remote_before EXCEPT SELECT * FROM pg_temp.remote_objects()) AS x) AS gone_there;
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();
SELECT pg_temp.placement() AS em_1, pg_temp.differences() AS differences;

-- Back here: the table here gets a CHECK that implies its bound in the
-- table (its OID as N), validated, not attached yet.
CALL partition_move('engine_move.em_1', 'engine_move_server');
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('verify');
TRUNCATE objects_before, state_before;
INSERT INTO objects_before SELECT * FROM pg_temp.engine_objects();
INSERT INTO state_before SELECT * FROM pg_temp.state();
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 4);
CALL reshard_step('engine_move.em');
SELECT s.phase,
       s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes WHERE bucket = 1)
           AS applied_as_written,
       pg_temp.rows_in(s.log) AS entries_left,
       s.rows_verified = (SELECT count(*) FROM pg_temp.remote_rows()) AS verified_all_rows,
       s.rows_verified = (SELECT count(*) FROM engine_move.mirror WHERE jumpbackhash(id, 3) = 1) AS verified_as_mirror,
       s.rows_copied = b.rows_copied AS nothing_copied, s.cutover_attempts
FROM pg_temp.state() s, state_before b;
SELECT made FROM (SELECT o.object FROM pg_temp.engine_objects() AS o(object) EXCEPT SELECT object FROM objects_before) AS x(made)
ORDER BY made COLLATE "C";
SELECT object AS gone FROM objects_before EXCEPT SELECT o.object FROM pg_temp.engine_objects() AS o(object);
SELECT pg_temp.normalized(c.relname::text) AS filled, k.convalidated AS validated,
       regexp_replace(pg_get_constraintdef(k.oid), '[0-9]{4,}', 'N') AS definition,
       c.relispartition AS attached
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
WHERE k.contype = 'c' AND k.conrelid = (pg_temp.state()).shadows[2] AND k.conname LIKE 'reshard\_%';
SELECT pg_temp.differences() AS differences;
CALL reshard_abort('engine_move.em');

-- A copy changed here behind the guard (a superuser disabling the
-- triggers of the table here): data_corrupted, and undone.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('verify');
TRUNCATE objects_before;
INSERT INTO objects_before SELECT * FROM pg_temp.engine_objects();
DO $$
DECLARE
    shadow regclass := (pg_temp.state()).shadows[2];
BEGIN
    EXECUTE format('ALTER TABLE %s DISABLE TRIGGER ALL', shadow);
    EXECUTE format('UPDATE %1$s SET v = v || %2$L WHERE id = (SELECT min(id) FROM %1$s)', shadow, ' changed');
    EXECUTE format('ALTER TABLE %s ENABLE TRIGGER ALL', shadow);
END
$$;
\set VERBOSITY sqlstate
CALL reshard_step('engine_move.em');
\set VERBOSITY default
SELECT phase, rows_verified FROM pg_temp.state();
SELECT (SELECT count(*) FROM (SELECT * FROM pg_temp.engine_objects() EXCEPT SELECT * FROM objects_before) AS x) AS made,
       (SELECT count(*) FROM (SELECT * FROM objects_before EXCEPT SELECT * FROM pg_temp.engine_objects()) AS x) AS gone;
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.placement() AS em_1, pg_temp.differences() AS differences;

-- A row of another bucket in the partition on the server: its key updated
-- through the table (PostgreSQL moves no row out of a foreign partition:
-- it stays there, with a key of bucket 2; reshard_check counts it).  The
-- move back copies it, and the verification refuses it, naming the
-- partition and saying why a row can be there (check_violation); the move
-- is undone.
SELECT pg_temp.id_in(1, 2900) AS misplaced_from, pg_temp.id_in(2, 30000) AS misplaced_to \gset
UPDATE engine_move.em SET id = :misplaced_to WHERE id = :misplaced_from;
UPDATE engine_move.mirror SET id = :misplaced_to WHERE id = :misplaced_from;
SELECT partition, bucket, misplaced_rows FROM reshard_check('engine_move.em') WHERE misplaced_rows > 0;
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
\set VERBOSITY terse
CALL pg_temp.step_to('cutover');
\set VERBOSITY default
SELECT phase, rows_verified FROM pg_temp.state();
CALL reshard_abort('engine_move.em');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.placement() AS em_1, pg_temp.differences() AS differences;
DELETE FROM engine_move.em_1 WHERE id = :misplaced_to;
DELETE FROM engine_move.mirror WHERE id = :misplaced_to;

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
