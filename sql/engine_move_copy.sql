-- Phase copy of a move (partition_move; docs/resharding-engine.md,
-- "Moving a partition"; step_copy in src/reshard_steps.c): the first step
-- empties the table filled (what a step cut short left there) and copies
-- the whole partition into it, in one snapshot, and deletes the partition's
-- log entries that snapshot sees; the next finds no partition left, builds
-- the indexes of the table filled, and moves on to catch up.  To a server,
-- the rows go with COPY (reshard_copy_rows) and the table there gets the
-- partition's indexes; back here, the rows are read from the server, which
-- from that step on refuses direct writes to the partition's table, and the
-- table here gets the parent's indexes.
\i test/engine_move_helpers.sql

-- To a server.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('copy');
SELECT phase, sources_copied, rows_copied, rows_to_move FROM pg_temp.state();
-- Writes before the copy: logged, and then in the copy.
SELECT pg_temp.write_both() > 0 AS written_to_em_1, pg_temp.rows_in((pg_temp.state()).log) > 0 AS logged;
-- A row left in the table there (as by a step cut short after the server
-- committed its copy; written past the table's guard there, which refuses
-- direct writes, as only a superuser can: session_replication_role): the
-- copy empties it first.
SELECT dblink_exec('engine_move_server', $$SET session_replication_role = replica; INSERT INTO engine_move.em_1 VALUES (-1, 'left', 0)$$);
CREATE TEMP TABLE em_1_before AS SELECT * FROM engine_move.em_1;
CREATE TEMP TABLE state_before AS SELECT * FROM pg_temp.state();

-- Step 1: em_1 copied; the phase stays copy.
CALL reshard_step('engine_move.em');
SELECT s.phase, s.sources_copied, s.rows_copied - b.rows_copied AS rows_copied,
       s.rows_copied - b.rows_copied = (SELECT count(*) FROM em_1_before) AS copied_as_counted,
       s.rows_to_move - b.rows_to_move = (SELECT count(*) FROM em_1_before) AS moving_as_counted,
       pg_temp.rows_in(s.log) AS entries_left
FROM pg_temp.state() s, state_before b;
SELECT pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', 'SELECT * FROM em_1_before') AS remote_differences,
       (SELECT count(*) FROM pg_temp.remote_rows() WHERE id = -1) AS row_left_there;
-- No index there yet.
SELECT * FROM pg_temp.remote_objects();
-- Writes after it: logged, not in the copy.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) = pg_temp.rows_in((pg_temp.state()).log) AS all_logged FROM generate_series(1, 3);
SELECT pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', 'SELECT * FROM em_1_before') AS remote_differences;

-- Step 2: no partition left; the table there gets the partition's index
-- (under its name); the phase moves on to catch up, nothing copied.
TRUNCATE state_before;
INSERT INTO state_before SELECT * FROM pg_temp.state();
CALL reshard_step('engine_move.em');
SELECT s.phase, s.sources_copied, s.rows_copied = b.rows_copied AS nothing_copied, s.rows_to_move = b.rows_to_move AS nothing_moving,
       pg_temp.rows_in(s.log) = pg_temp.rows_in(b.log) AS entries_kept
FROM pg_temp.state() s, state_before b;
SELECT * FROM pg_temp.remote_objects();
SELECT * FROM pg_temp.remote($$SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'engine_move.em_1'::regclass$$) AS remote_index;
SELECT pg_temp.differences() AS differences;
CALL reshard_abort('engine_move.em');

-- Back here.
CALL partition_move('engine_move.em_1', 'engine_move_server');
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('copy');
CREATE TEMP TABLE remote_before AS SELECT * FROM pg_temp.remote_objects() AS o(object);
SELECT pg_temp.write_both() > 0 AS written_to_em_1, pg_temp.rows_in((pg_temp.state()).log) > 0 AS logged;
TRUNCATE em_1_before, state_before;
INSERT INTO em_1_before SELECT * FROM pg_temp.remote_rows();
INSERT INTO state_before SELECT * FROM pg_temp.state();

-- Step 1: the server arms the triggers that refuse direct writes to em_1
-- there; em_1 copied here.
CALL reshard_step('engine_move.em');
SELECT s.phase, s.sources_copied, s.rows_copied - b.rows_copied AS rows_copied,
       s.rows_copied - b.rows_copied = (SELECT count(*) FROM em_1_before) AS copied_as_counted,
       s.rows_to_move - b.rows_to_move = (SELECT count(*) FROM em_1_before) AS moving_as_counted,
       pg_temp.rows_in(s.log) AS entries_left,
       pg_temp.differ(format('SELECT * FROM %s', s.shadows[2]::regclass), 'SELECT * FROM em_1_before') AS shadow_differences
FROM pg_temp.state() s, state_before b;
SELECT made FROM (SELECT * FROM pg_temp.remote_objects() EXCEPT SELECT * FROM remote_before) AS x(made) ORDER BY made COLLATE "C";
SELECT object AS gone FROM remote_before EXCEPT SELECT * FROM pg_temp.remote_objects();
-- A write on the server that does not come through this one is refused
-- (object_in_use), a truncation too; one through the table goes through,
-- logged.
\set VERBOSITY terse
SELECT dblink_exec('engine_move_server', 'DELETE FROM engine_move.em_1 WHERE id = (SELECT min(id) FROM engine_move.em_1)');
\set VERBOSITY default
SELECT pg_temp.sqlstate_of($$SELECT dblink_exec('engine_move_server', 'INSERT INTO engine_move.em_1 VALUES (-1, ''direct'', 0)')$$) AS direct_insert,
       pg_temp.sqlstate_of($$SELECT dblink_exec('engine_move_server', 'UPDATE engine_move.em_1 SET v = ''direct''')$$) AS direct_update,
       pg_temp.sqlstate_of($$SELECT dblink_exec('engine_move_server', 'TRUNCATE engine_move.em_1')$$) AS direct_truncate;
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) = pg_temp.rows_in((pg_temp.state()).log) AS all_logged FROM generate_series(1, 3);
SELECT pg_temp.differences() AS differences,
       pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS remote_differences;

-- Step 2: no partition left; the table here gets the parent's index (no
-- index of the engine's: it leads with the key); catch up.
TRUNCATE state_before;
INSERT INTO state_before SELECT * FROM pg_temp.state();
CALL reshard_step('engine_move.em');
SELECT s.phase, s.sources_copied, s.rows_copied = b.rows_copied AS nothing_copied,
       pg_temp.rows_in(s.log) = pg_temp.rows_in(b.log) AS entries_kept
FROM pg_temp.state() s, state_before b;
SELECT pg_temp.normalized(i.relname::text) AS index, regexp_replace(pg_get_indexdef(i.oid), '^.* USING ', 'USING ') AS definition
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = (pg_temp.state()).shadows[2];
CALL reshard_abort('engine_move.em');

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
