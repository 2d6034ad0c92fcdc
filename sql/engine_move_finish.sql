-- Phase finish of a move (partition_move; docs/resharding-engine.md,
-- "Moving a partition"; step_finish in src/reshard_steps.c): after the
-- cutover, the partition it left is dropped: to a server, the table here
-- (and the table there gets the partition's comment in place of the
-- move's, and the verification's view there goes); back here, the foreign
-- table here and, first, its table on the server with what refused direct
-- writes to it.  Then the move is done, and nothing of the engine's is
-- left, here or there.
\i test/engine_move_helpers.sql
-- (the verification sums the copy on the server: it leaves a view there)
SELECT dblink_exec('engine_move_server', 'CREATE EXTENSION subsetting');

-- To a server.  After the cutover: em_1's table here renamed away, the
-- view of the verification there, the table there marked as the move's.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('finish');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();
SELECT pg_temp.write_both() > 0 AS written;
CREATE TEMP TABLE state_before AS SELECT * FROM pg_temp.state();

-- One step: phase finish, then done; its counters as the cutover left
-- them (the finish copies and applies nothing).
CALL reshard_step('engine_move.em');
SELECT s.phase, (s.rows_to_move, s.rows_copied, s.rows_verified, s.changes_applied, s.cutover_attempts)
                = (b.rows_to_move, b.rows_copied, b.rows_verified, b.changes_applied, b.cutover_attempts) AS counters_kept,
       s.error
FROM pg_temp.state() s, state_before b;
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();
SELECT pg_temp.placement() AS em_1, pg_temp.differences() AS differences,
       pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS remote_differences,
       NOT EXISTS (SELECT FROM pg_class WHERE oid = (pg_temp.state()).partition) AS old_partition_dropped;
-- reshard_progress shows it done.
SELECT "table", operation, phase, interrupted, error
FROM reshard_progress WHERE "table" = 'engine_move.em';
-- A step of a move that is done does nothing.
CALL reshard_step('engine_move.em');
SELECT phase FROM pg_temp.state();

-- Back here.  After the cutover: the foreign table renamed away; there,
-- em_1 renamed away too (reshard_gone_o) with the triggers that refuse
-- direct writes, the views, the functions, the table of hidden keys.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('finish');
SELECT * FROM pg_temp.engine_objects();
SELECT * FROM pg_temp.remote_objects();
SELECT pg_temp.write_both() > 0 AS written;
TRUNCATE state_before;
INSERT INTO state_before SELECT * FROM pg_temp.state();
CALL reshard_step('engine_move.em');
SELECT s.phase, (s.rows_to_move, s.rows_copied, s.rows_verified, s.changes_applied, s.cutover_attempts)
                = (b.rows_to_move, b.rows_copied, b.rows_verified, b.changes_applied, b.cutover_attempts) AS counters_kept,
       s.error
FROM pg_temp.state() s, state_before b;
SELECT * FROM pg_temp.engine_objects();
-- Nothing left there.
SELECT * FROM pg_temp.remote_objects();
SELECT pg_temp.placement() AS em_1, pg_temp.differences() AS differences,
       NOT EXISTS (SELECT FROM pg_class WHERE oid = (pg_temp.state()).partition) AS old_partition_dropped;

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
