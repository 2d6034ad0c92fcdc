-- Phase catch up of a move (partition_move; docs/resharding-engine.md,
-- "Moving a partition"; step_catch_up in src/reshard_steps.c): one round per
-- step applies at most 10,000 entries of the change log, in order, to the
-- table filled (to a server: through the foreign table on its table there;
-- back here: the table here), and deletes them; the phase moves on to
-- verify after a round that found few (under 1,000).  The writes are
-- counted by bucket as they are made (pg_temp.writes).
\i test/engine_move_helpers.sql

-- The table filled against the mirror's rows of bucket 1.
CREATE FUNCTION pg_temp.filled_differences() RETURNS bigint LANGUAGE sql AS $$
    SELECT pg_temp.differ(CASE WHEN (pg_temp.state()).server IS NULL
                               THEN format('SELECT * FROM %s', (pg_temp.state()).shadows[2]::regclass)
                               ELSE 'SELECT * FROM pg_temp.remote_rows()' END,
                          pg_temp.bucket_1('engine_move.mirror'))
$$;

-- To a server.
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', 'engine_move_server');
CALL pg_temp.step_to('catch up');
SELECT phase, changes_applied, changes_waiting FROM pg_temp.state();
CREATE TEMP TABLE state_before AS SELECT * FROM pg_temp.state();

-- Writes made after the copy: some of every kind, then 10,001 inserts into
-- em_1, more than a round applies.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 10);
CREATE TEMP TABLE many AS SELECT i AS id, 'many' AS v, i / 11.0 AS f FROM generate_series(100001, 150000) AS i
WHERE jumpbackhash(i, 3) = 1 ORDER BY i LIMIT 10001;
INSERT INTO engine_move.em SELECT * FROM many;
INSERT INTO engine_move.mirror SELECT * FROM many;
INSERT INTO pg_temp.writes (bucket, inserted, updated, deleted) SELECT 1, count(*), 0, 0 FROM many;
SELECT sum(inserted + updated + deleted) AS changes_written, pg_temp.rows_in((pg_temp.state()).log) AS entries
FROM pg_temp.writes WHERE bucket = 1;

-- First round: 10,000 entries applied, the rest waiting; the phase stays.
CALL reshard_step('engine_move.em');
SELECT s.phase, s.changes_applied - b.changes_applied AS changes_applied, s.changes_waiting,
       s.changes_waiting = pg_temp.rows_in(s.log) AS waiting_as_logged
FROM pg_temp.state() s, state_before b;

-- Second round: the rest, fewer than 1,000; the phase moves on to verify.
CALL reshard_step('engine_move.em');
SELECT s.phase, s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes WHERE bucket = 1)
           AS applied_as_written,
       s.changes_waiting, pg_temp.rows_in(s.log) AS entries_left
FROM pg_temp.state() s, state_before b;
-- The table there holds em_1's rows; nothing was copied again.
SELECT pg_temp.filled_differences() AS remote_differences, pg_temp.differences() AS differences,
       s.rows_copied = b.rows_copied AS nothing_copied, s.rows_verified
FROM pg_temp.state() s, state_before b;
CALL reshard_abort('engine_move.em');

-- Back here (fewer writes: one round, then verify).
CALL partition_move('engine_move.em_1', 'engine_move_server');
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('catch up');
TRUNCATE state_before;
INSERT INTO state_before SELECT * FROM pg_temp.state();
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 10);
SELECT pg_temp.rows_in((pg_temp.state()).log) = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes WHERE bucket = 1)
    AS logged_as_written,
       pg_temp.filled_differences() > 0 AS table_here_behind;
CALL reshard_step('engine_move.em');
SELECT s.phase, s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes WHERE bucket = 1)
           AS applied_as_written,
       s.changes_waiting, pg_temp.rows_in(s.log) AS entries_left,
       pg_temp.filled_differences() AS shadow_differences, pg_temp.differences() AS differences,
       pg_temp.differ('SELECT * FROM pg_temp.remote_rows()', pg_temp.bucket_1('engine_move.mirror')) AS remote_differences,
       s.rows_copied = b.rows_copied AS nothing_copied
FROM pg_temp.state() s, state_before b;
CALL reshard_abort('engine_move.em');

-- The key of a row of em_1 changed through the table to one of bucket 2
-- while em_1 moves back here: PostgreSQL updates it in place on the
-- server (it moves no row out of a foreign partition), the log has a row
-- of bucket 2 written to em_1, and the catch-up refuses it, naming the
-- partition; the move stays in phase catch up and is undone, the row left
-- on the server (reshard_check counts it).
CALL reshard_begin('engine_move.em', 'move', 'engine_move.em_1', NULL);
CALL pg_temp.step_to('catch up');
SELECT pg_temp.id_in(1, 2900) AS misplaced_from, pg_temp.id_in(2, 30000) AS misplaced_to \gset
UPDATE engine_move.em SET id = :misplaced_to WHERE id = :misplaced_from;
UPDATE engine_move.mirror SET id = :misplaced_to WHERE id = :misplaced_from;
\set VERBOSITY terse
CALL reshard_step('engine_move.em');
\set VERBOSITY default
SELECT phase, changes_applied FROM pg_temp.state();
CALL reshard_abort('engine_move.em');
SELECT partition, bucket, misplaced_rows FROM reshard_check('engine_move.em') WHERE misplaced_rows > 0;
SELECT pg_temp.placement() AS em_1, pg_temp.differences() AS differences;
DELETE FROM engine_move.em_1 WHERE id = :misplaced_to;
DELETE FROM engine_move.mirror WHERE id = :misplaced_to;

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
