-- Phase catch up of the resharding engine (docs/resharding-engine.md,
-- "Phases"; step_catch_up in src/resharding/steps.c): one round per step
-- applies at most 10,000 entries of the change log, in order, to the tables
-- filled, and deletes them; the phase moves on to verify after a round that
-- found few (under 1,000).  The writes are counted here by PostgreSQL
-- (pg_stat_xact_user_tables), the rows by their new bucket.
\i test/engine_phase_helpers.sql

-- Each table filled, by new bucket: how many of its rows differ from the
-- rows of the table (or of its mirror) in that bucket.
CREATE FUNCTION pg_temp.filled(OUT bucket int, OUT filled text, OUT differences_from_table bigint,
                               OUT differences_from_mirror bigint) RETURNS SETOF record
LANGUAGE plpgsql AS $$
DECLARE
    s reshard_state := pg_temp.state();
BEGIN
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        bucket := b;
        filled := pg_temp.normalized((SELECT relname FROM pg_class WHERE oid = s.shadows[b + 1])::text);
        differences_from_table := pg_temp.differ(format('SELECT * FROM %s', s.shadows[b + 1]::regclass),
            format('SELECT * FROM engine_phase.ep WHERE jumpbackhash(id, %s) = %s', s.new_buckets, b));
        differences_from_mirror := pg_temp.differ(format('SELECT * FROM %s', s.shadows[b + 1]::regclass),
            format('SELECT * FROM engine_phase.mirror WHERE jumpbackhash(id, %s) = %s', s.new_buckets, b));
        RETURN NEXT;
    END LOOP;
END
$$;

CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('catch up');
SELECT phase, changes_applied, changes_waiting FROM pg_temp.state();
CREATE TEMP TABLE state_before AS SELECT * FROM pg_temp.state();

-- Writes made after the copy: some of every kind, then 10,001 inserts, more
-- than a round applies.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 10);
INSERT INTO engine_phase.ep SELECT i, 'many', i / 11.0 FROM generate_series(100001, 110001) AS i;
INSERT INTO engine_phase.mirror SELECT i, 'many', i / 11.0 FROM generate_series(100001, 110001) AS i;
INSERT INTO pg_temp.writes (inserted, updated, deleted) VALUES (10001, 0, 0);
SELECT sum(inserted + updated + deleted) AS changes_written, pg_temp.rows_in((pg_temp.state()).log) AS entries
FROM pg_temp.writes;

-- First round: 10,000 entries applied, the rest waiting; the phase stays.
CALL reshard_step('engine_phase.ep');
SELECT s.phase, s.changes_applied - b.changes_applied AS changes_applied, s.changes_waiting,
       s.changes_waiting = pg_temp.rows_in(s.log) AS waiting_as_logged
FROM pg_temp.state() s, state_before b;

-- Second round: the rest, fewer than 1,000; the phase moves on to verify.
CALL reshard_step('engine_phase.ep');
SELECT s.phase, s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes)
           AS applied_as_written,
       s.changes_waiting, pg_temp.rows_in(s.log) AS entries_left
FROM pg_temp.state() s, state_before b;
-- The tables filled hold the table's rows, each in its new bucket; the rows
-- to move are those whose bucket changes (counted from the rows).
SELECT * FROM pg_temp.filled();
SELECT s.rows_to_move = (SELECT count(*) FROM engine_phase.ep WHERE jumpbackhash(id, 4) <> jumpbackhash(id, 3)) AS rows_to_move_as_counted,
       s.rows_verified, s.sources_copied = b.sources_copied AS nothing_copied, pg_temp.differences() AS differences
FROM pg_temp.state() s, state_before b;

-- The routine of phase catch up refuses a NULL state and a state of a
-- phase it does not work on.
SELECT * FROM pg_temp.refusals(pg_temp.routine_of('catch up'), 'copy', 'finish');

CALL reshard_abort('engine_phase.ep');
CALL pg_temp.engine_phase_drop();
