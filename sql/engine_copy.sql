-- Phase copy of the resharding engine (docs/resharding-engine.md,
-- "Phases"; step_copy in src/resharding/steps.c): one old partition per step,
-- its rows copied into the tables of their new buckets, and its entries of
-- the change log that the copy's snapshot sees deleted (their effect is in
-- the copy); the phase moves on to catch up only after the last.  The
-- counts are checked against the rows, counted here by their buckets
-- (jumpbackhash(id, n): the bucket of HASH (id jumpbackhash<n>_int8_ops)).
\i test/engine_phase_helpers.sql

-- One step, and what it did: the partition it copied, the phase after it,
-- the rows copied and counted as moving (the state's counts grew by), and
-- the rows of that partition and those of them whose new bucket is not
-- theirs (counted here before the step).
CREATE TEMP TABLE steps (step serial, partition text, phase text, sources_copied int,
                         rows_copied bigint, rows_counted bigint, rows_to_move bigint, rows_moving bigint);
CREATE PROCEDURE pg_temp.copy_step() LANGUAGE plpgsql AS $$
DECLARE
    s reshard_state := pg_temp.state();
    source oid := s.sources[s.sources_copied + 1];
    counted bigint := 0;
    moving bigint := 0;
    after reshard_state;
BEGIN
    IF source IS NOT NULL THEN
        EXECUTE format('SELECT count(*), count(*) FILTER (WHERE jumpbackhash(id, %s) <> %s) FROM ONLY %s',
                       s.new_buckets, s.sources_copied, source::regclass)
        INTO counted, moving;
    END IF;
    CALL reshard_step(to_regclass('engine_phase.ep'));
    after := pg_temp.state();
    INSERT INTO pg_temp.steps (partition, phase, sources_copied, rows_copied, rows_counted, rows_to_move, rows_moving)
    VALUES (source::regclass::text, after.phase, after.sources_copied, after.rows_copied - s.rows_copied, counted,
            after.rows_to_move - s.rows_to_move, moving);
END
$$;
CREATE FUNCTION pg_temp.last_step() RETURNS TABLE (partition text, phase text, sources_copied int, rows_copied bigint,
                                                   as_counted boolean, rows_to_move bigint, as_moving boolean)
LANGUAGE sql AS $$
    SELECT partition, phase, sources_copied, rows_copied, rows_copied = rows_counted, rows_to_move, rows_to_move = rows_moving
    FROM pg_temp.steps ORDER BY step DESC LIMIT 1
$$;
-- Each table filled, by new bucket: its rows, and how many differ from
-- what it must hold: the rows of the old partitions copied so far whose
-- new bucket is its own (read now: no write since).
CREATE FUNCTION pg_temp.filled(OUT bucket int, OUT filled text, OUT rows bigint, OUT differences bigint) RETURNS SETOF record
LANGUAGE plpgsql AS $$
DECLARE
    s reshard_state := pg_temp.state();
    copied text := coalesce((SELECT string_agg(format('SELECT * FROM ONLY %s', u.source::regclass), ' UNION ALL ')
                             FROM unnest(s.sources[1:s.sources_copied]) AS u(source)),
                            'SELECT * FROM engine_phase.ep WHERE false');
BEGIN
    FOR b IN 0 .. s.new_buckets - 1 LOOP
        CONTINUE WHEN s.shadows[b + 1] IS NULL;
        bucket := b;
        filled := pg_temp.normalized((SELECT relname FROM pg_class WHERE oid = s.shadows[bucket + 1])::text);
        rows := pg_temp.rows_in(s.shadows[bucket + 1]);
        differences := pg_temp.differ(format('SELECT * FROM %s', s.shadows[bucket + 1]::regclass),
                                      format('SELECT * FROM (%s) AS t WHERE jumpbackhash(id, %s) = %s',
                                             copied, s.new_buckets, bucket));
        RETURN NEXT;
    END LOOP;
END
$$;
CREATE FUNCTION pg_temp.log_by_partition() RETURNS TABLE (partition text, entries bigint) LANGUAGE sql AS $$
    SELECT partition::regclass::text, count(*) FROM pg_temp.log_entries() GROUP BY 1 ORDER BY 1
$$;

-- Adding a bucket: the rows of each old partition copied into its shadow
-- (those that stay) and into the new partition (those that move).
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('copy');
SELECT phase, sources_copied, rows_copied, rows_to_move FROM pg_temp.state();
SELECT * FROM pg_temp.filled();

-- Step 1: ep_0.
CALL pg_temp.copy_step();
SELECT * FROM pg_temp.last_step();
SELECT * FROM pg_temp.filled();
-- Writes after it, to the partitions copied or not: logged.
SELECT sum(pg_temp.write_both()) = pg_temp.rows_in((pg_temp.state()).log) AS all_logged FROM generate_series(1, 5);
CREATE TEMP TABLE log_before AS SELECT * FROM pg_temp.log_by_partition();

-- Step 2: ep_1, with the writes to it; its log entries deleted (the copy
-- has their effect), the others' kept.
CALL pg_temp.copy_step();
SELECT * FROM pg_temp.last_step();
SELECT b.partition, b.entries > 0 AS had_entries, a.entries IS NULL AS deleted, a.entries = b.entries AS kept
FROM log_before b LEFT JOIN pg_temp.log_by_partition() AS a USING (partition) ORDER BY 1;
SELECT bucket, filled, differences FROM pg_temp.filled() WHERE bucket = 1;

-- Step 3: ep_2, the last; the phase is still copy.
CALL pg_temp.copy_step();
SELECT * FROM pg_temp.last_step();
SELECT bucket, filled, differences FROM pg_temp.filled() WHERE bucket = 2;
SELECT rows_copied = (SELECT sum(rows_counted) FROM steps) AS all_copied,
       rows_to_move = (SELECT sum(rows_moving) FROM steps) AS all_moving_counted,
       (SELECT count(*) FROM pg_temp.log_entries() WHERE partition <> 'engine_phase.ep_0'::regclass) AS entries_of_others
FROM pg_temp.state();

-- Step 4: no partition left; the phase moves on to catch up, nothing copied.
CALL pg_temp.copy_step();
SELECT * FROM pg_temp.last_step();
SELECT pg_temp.differences() AS differences;

-- The routine of phase copy refuses a NULL state and a state of another phase.
SELECT * FROM pg_temp.refusals(pg_temp.routine_of('copy'), 'catch up', 'capture');
CALL reshard_abort('engine_phase.ep');

-- Removing the last bucket: the rows of the partitions that stay copied
-- into their shadows, none moving; the removed partition's into the
-- shadows of their new buckets, all moving.
TRUNCATE steps;
CALL reshard_begin('engine_phase.ep', 'remove', 'engine_phase.ep_2');
CALL pg_temp.step_to('copy');
CALL pg_temp.copy_step();
CALL pg_temp.copy_step();
CALL pg_temp.copy_step();
SELECT * FROM pg_temp.filled();
CALL pg_temp.copy_step();
SELECT partition, phase, sources_copied, rows_copied, rows_copied = rows_counted AS as_counted,
       rows_to_move, rows_to_move = rows_moving AS as_moving
FROM steps ORDER BY step;
SELECT rows_copied = (SELECT count(*) FROM engine_phase.ep) AS all_copied FROM pg_temp.state();
CALL reshard_abort('engine_phase.ep');

CALL pg_temp.engine_phase_drop();
