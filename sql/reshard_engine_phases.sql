-- The resharding engine of 1.2 (src/resharding/), phase by phase and
-- whole: writes through the parent in every phase land exactly once, the
-- tables it fills take writes from nobody else, an interrupted resharding
-- is undone by reshard_abort, a change of the table meanwhile undoes it at
-- the cutover, and the caller's settings change nothing.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;

-- The library's phase table (reshard_phases(), src/resharding/phases.h) has
-- exactly the phases reshard_state's CHECK allows, in the same order; each
-- phase but the final ones has a step, and goes on to a phase of the table.
SELECT (SELECT array_agg(phase ORDER BY ordinal) FROM reshard_phases())
       = ARRAY(SELECT m[1] FROM pg_constraint c, regexp_matches(pg_get_constraintdef(c.oid), '''([a-z ]+)''::text', 'g') AS m
               WHERE c.conrelid = 'reshard_state'::regclass AND c.contype = 'c'
                 AND pg_get_constraintdef(c.oid) LIKE '%phase%') AS same_phases,
       (SELECT bool_and((step IS NULL) = (next = phase)) FROM reshard_phases()) AS steps_but_final,
       (SELECT bool_and(next IN (SELECT phase FROM reshard_phases())) FROM reshard_phases()) AS next_in_table;
-- Its operation table (reshard_operations(), src/resharding/operations.h)
-- has exactly the operations reshard_state's CHECK allows, in the same
-- order; what each does with the partition it names, and its units.
SELECT (SELECT array_agg(operation ORDER BY ordinal) FROM reshard_operations())
       = ARRAY(SELECT m[1] FROM pg_constraint c, regexp_matches(pg_get_constraintdef(c.oid), '''([a-z ]+)''::text', 'g') AS m
               WHERE c.conrelid = 'reshard_state'::regclass AND c.contype = 'c'
                 AND pg_get_constraintdef(c.oid) LIKE '%operation%') AS same_operations;
SELECT operation, partition, rebuilds, plan, cutover FROM reshard_operations() ORDER BY ordinal;
-- The routine of each phase that has one, by operation: the phase table's,
-- but a move's own where its work differs (src/sql/placement/move_phase_*),
-- each a routine of the extension that takes the state row; the catch-up
-- (the change log's apply) is every operation's.
SELECT o.operation, p.phase, r.routine
FROM reshard_operations() AS o, unnest(o.routines) WITH ORDINALITY AS r(routine, i),
     LATERAL (SELECT phase FROM reshard_phases() WHERE routine IS NOT NULL ORDER BY ordinal OFFSET r.i - 1 LIMIT 1) AS p
ORDER BY o.ordinal, r.i;
SELECT bool_and(p.proargtypes[0] = 'reshard_state'::regtype AND d.deptype = 'e') AS routines_of_the_extension_taking_the_state
FROM reshard_operations() AS o, unnest(o.routines) AS r(routine)
JOIN pg_proc p ON p.oid = r.routine JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
                                                     AND d.refclassid = 'pg_extension'::regclass;
CREATE ROLE reshard_engine_owner;
CREATE ROLE reshard_engine_reader;
GRANT CREATE ON SCHEMA public TO reshard_engine_owner;
SET ROLE reshard_engine_owner;
CREATE TABLE re (id bigint NOT NULL PRIMARY KEY, v text, f float8) PARTITION BY HASH (id jumpbackhash3_int8_ops);
SELECT format('CREATE TABLE re_%s PARTITION OF re FOR VALUES WITH (MODULUS 3, REMAINDER %s)', b, b)
FROM generate_series(0, 2) AS b \gexec
CREATE INDEX re_v ON re (v);
COMMENT ON TABLE re IS 'resharded by the engine';
GRANT SELECT ON re TO reshard_engine_reader;
INSERT INTO re SELECT i, 'v' || i, i / 7.0 FROM generate_series(1, 3000) AS i;
CREATE TABLE re_3 (LIKE re INCLUDING ALL);
-- The same writes go to a plain table, the table must end equal to it.
CREATE TABLE mirror AS SELECT * FROM re;
RESET ROLE;

CREATE PROCEDURE write_both(k bigint) LANGUAGE sql AS $$
    INSERT INTO re VALUES (k + 10000, 'new', k / 3.0);
    INSERT INTO mirror VALUES (k + 10000, 'new', k / 3.0);
    UPDATE re SET f = f + 0.1 WHERE id = k;
    UPDATE mirror SET f = f + 0.1 WHERE id = k;
    UPDATE re SET id = id + 20000 WHERE id = k + 1;
    UPDATE mirror SET id = id + 20000 WHERE id = k + 1;
    DELETE FROM re WHERE id = k + 2;
    DELETE FROM mirror WHERE id = k + 2;
    INSERT INTO re VALUES (k + 3, 'upsert', 0) ON CONFLICT (id) DO UPDATE SET v = 'upserted';
    INSERT INTO mirror SELECT k + 3, 'upsert', 0 WHERE NOT EXISTS (SELECT FROM mirror WHERE id = k + 3);
    UPDATE mirror SET v = 'upserted' WHERE id = k + 3 AND v <> 'upsert';
$$;
CREATE FUNCTION differences() RETURNS bigint LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM (SELECT * FROM re EXCEPT ALL SELECT * FROM mirror) AS a)
         + (SELECT count(*) FROM (SELECT * FROM mirror EXCEPT ALL SELECT * FROM re) AS b)
$$;
CREATE FUNCTION engine_leftovers() RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(x, ', ' ORDER BY x), 'none') FROM (
        SELECT regexp_replace(relname, '[0-9]+', 'N') AS x FROM pg_class
        WHERE relname LIKE 'reshard\_%' AND relname NOT LIKE 'reshard\_state%' AND relname <> 'reshard_progress'
        UNION ALL
        SELECT regexp_replace(tgname, '[0-9]+', 'N') FROM pg_trigger WHERE tgname LIKE 'reshard\_%'
        UNION ALL
        SELECT conname FROM pg_constraint WHERE conname LIKE 'reshard\_%' AND conrelid <> 'reshard_state'::regclass) AS t
$$;

-- Adding a bucket, one step at a time, with writes in every phase.
CALL reshard_begin('re', 'add', 're_3');
SELECT "table", operation, phase, interrupted FROM reshard_progress;
DO $$
DECLARE
    k int := 100;
    phase text;
BEGIN
    LOOP
        SELECT s.phase INTO phase FROM reshard_state s;
        EXIT WHEN phase = 'done';
        CALL write_both(k);
        k := k + 10;
        CALL reshard_step('re');
        RAISE WARNING 'after %: %', phase, (SELECT s.phase FROM reshard_state s);
    END LOOP;
END
$$;
-- (how many cutover attempts it took depends on the machine's load: at least one)
SELECT "table", operation, phase, rows_copied, rows_verified, cutover_attempts >= 1 AS cut_over, pid IS NULL AS ended,
       interrupted
FROM reshard_progress;
SELECT differences(), engine_leftovers();
SELECT method, buckets, count(*) AS partitions FROM sharding_layout('re') GROUP BY 1, 2;
SELECT sum(misplaced_rows) AS misplaced FROM reshard_check('re');
SELECT obj_description('re'::regclass) AS comment, has_table_privilege('reshard_engine_reader', 're', 'SELECT') AS readable,
       pg_get_userbyid(relowner) AS owner FROM pg_class WHERE oid = 're'::regclass;
SELECT indexrelid::regclass AS index FROM pg_index WHERE indrelid = 're'::regclass ORDER BY 1;

-- The tables it fills take writes from nobody else.
SET ROLE reshard_engine_owner;
CREATE TABLE re_4 (LIKE re INCLUDING ALL);
RESET ROLE;
CALL reshard_begin('re', 'add', 're_4');
CALL reshard_step('re');
INSERT INTO re_4 VALUES (1, 'x', 0);
TRUNCATE re_4;
-- The partitions being copied cannot be truncated.
CALL reshard_step('re');
TRUNCATE re_0;

-- Interrupted (here: stopped between steps), it is undone by reshard_abort.
CALL reshard_step('re');
CALL reshard_step('re');
CALL write_both(500);
SELECT phase, interrupted FROM reshard_progress;
CALL reshard_abort('re');
SELECT phase, interrupted FROM reshard_progress;
SELECT differences(), engine_leftovers(), (SELECT count(*) FROM re_4) AS rows_in_new_partition;
SELECT DISTINCT buckets FROM sharding_layout('re');
CALL reshard_abort('re');

-- A trigger created on a partition meanwhile: the next step refuses,
-- naming it (and the cutover would too), the call undoes everything.
CALL reshard_begin('re', 'add', 're_4');
CALL reshard_step('re');
CALL reshard_step('re');
CREATE FUNCTION re_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER re_noop AFTER INSERT ON re_1 FOR EACH ROW EXECUTE FUNCTION re_noop();
\set VERBOSITY terse
DO $$
BEGIN
    LOOP
        EXIT WHEN (SELECT phase FROM reshard_state) NOT IN ('copy', 'catch up', 'verify');
        CALL reshard_step('re');
    END LOOP;
END
$$;
CALL reshard_step('re');
\set VERBOSITY default
CALL reshard_abort('re');
SELECT phase FROM reshard_progress;
DROP TRIGGER re_noop ON re_1;
SELECT differences(), engine_leftovers();

-- Whole, with odd settings of the caller: removing the bucket added above
-- and adding it again.
SET extra_float_digits = -15;
SET default_transaction_isolation = 'serializable';
SET lock_timeout = '1ms';
SET search_path = pg_catalog;
CALL public.reshard_engine_run('public.re', 'remove', 'public.re_3', '500 ms', 10);
CALL public.reshard_engine_run('public.re', 'add', 'public.re_3', '500 ms', 10);
RESET ALL;
SET client_min_messages = warning;
SELECT phase, error FROM reshard_progress;
SELECT differences(), engine_leftovers(), (SELECT count(*) FROM re_3) > 0 AS new_partition_filled;
SELECT sum(misplaced_rows) AS misplaced FROM reshard_check('re');

-- Only the table's owner (or a superuser) reshards; the engine's
-- procedures are not executable by others.
SET ROLE reshard_engine_reader;
CALL reshard_abort('re');
CALL reshard_engine_run('re', 'add', 're_4', '500 ms', 10);
CALL reshard_step('re');
RESET ROLE;

-- Bad arguments.
CALL reshard_engine_run('re', 'add', 're_4', '0 s', 10);
CALL reshard_engine_run('re', 'add', 're_4', '500 ms', 0);
CALL reshard_engine_run('re', 'add', 're_4', NULL, 10);
BEGIN;
CALL reshard_engine_run('re', 'add', 're_4', '500 ms', 10);
ROLLBACK;

DROP TABLE re, re_4, mirror;
DROP PROCEDURE write_both(bigint);
DROP FUNCTION differences(), engine_leftovers(), re_noop();
DELETE FROM reshard_state;
REVOKE CREATE ON SCHEMA public FROM reshard_engine_owner;
DROP ROLE reshard_engine_owner, reshard_engine_reader;
