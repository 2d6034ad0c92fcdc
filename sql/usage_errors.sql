--
-- The errors a new user meets, each saying what is wrong and what to do:
-- calls PostgreSQL's parser refuses before the extension runs (and why the
-- extension adds no overload to explain them), a table named as its own
-- partition, a resharding called from a DO block, NULL where a function
-- would otherwise return no rows, sharding_layout of a table that is not
-- sharded, and reshard_bucket_sql's checks.
--
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION IF NOT EXISTS subsetting;
RESET client_min_messages;
\i test/regress_helpers.sql

--
-- Calls the parser refuses: "function ... does not exist" (42883), with
-- PostgreSQL's hint to add explicit casts; docs/reference.md ("Errors") says
-- what each means.  A bucket count beyond int (2147483647 is the most), a
-- numeric key (cast it to bigint, or hash it), a numeric for xxh3_64.
--
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT jumpbackhash(42, 2147483648)',
    'SELECT jumphash(42, 2147483648)',
    'SELECT jumpbackhash(42.5, 16)',
    'SELECT xxh3_64(42.5)']) AS q;
-- What to do instead, as the documentation says.
SELECT jumpbackhash(42, 2147483647) AS most_buckets, jumpbackhash(42.5::bigint, 16) AS rounded_key,
       jumpbackhash(xxh3_64(numeric_send(42.5)), 16) AS hashed_key, xxh3_64(42) = xxh3_64(42::bigint) AS integer_key;
-- Why no overload of jumpbackhash(numeric, ...) or (..., bigint) says it
-- better: these calls, of drivers that send small integers as smallint
-- (psycopg 3) or a NULL as unknown, resolve today to jumpbackhash(bigint,
-- int), and would find two candidates, "not unique", with a second numeric
-- overload.  Shown with one in a schema of its own, then gone.
PREPARE small_ints(smallint, smallint) AS SELECT jumpbackhash($1, $2);
EXECUTE small_ints(42, 16);
SELECT jumpbackhash(42, NULL) IS NULL AS null_buckets;
CREATE SCHEMA usage_errors_overload;
CREATE FUNCTION usage_errors_overload.jumpbackhash(key numeric, buckets bigint) RETURNS int
    LANGUAGE sql IMMUTABLE AS 'SELECT -1';
SET search_path = public, usage_errors_overload;
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT jumpbackhash(42::smallint, 16::smallint)',
    'SELECT jumpbackhash(42, NULL)']) AS q;
RESET search_path;
DROP SCHEMA usage_errors_overload CASCADE;

--
-- A table named as its own new partition (and as the partition to remove).
--
CREATE TABLE ue (id bigint NOT NULL) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE ue_0 PARTITION OF ue FOR VALUES IN (0);
CREATE TABLE ue_1 PARTITION OF ue FOR VALUES IN (1);
INSERT INTO ue SELECT generate_series(1, 100);
\set VERBOSITY default
CALL reshard_add_partition('ue', 'ue');
CALL reshard_remove_partition('ue', 'ue');

--
-- sharding_layout of a table that is not sharded: 22023 naming it, as
-- reshard_check; missing_ok gives no row (the views ask so).
--
SELECT * FROM sharding_layout('ue_0');
SELECT * FROM reshard_check('ue_0');
SELECT count(*) AS rows_missing_ok FROM sharding_layout('ue_0', missing_ok => true);
SELECT count(*) AS rows_of_ue FROM sharding_layout('ue');
\set VERBOSITY terse

--
-- CALL reshard_add_partition inside a DO block: PL/pgSQL needs a variable
-- for the INOUT argument moved_rows (a constant or an argument left out is
-- refused); with one, it runs.
--
CREATE TABLE ue_2 (LIKE ue INCLUDING ALL);
DO $$ BEGIN CALL reshard_add_partition('ue', 'ue_2'); END $$;
DO $$ BEGIN CALL reshard_add_partition('ue', 'ue_2', NULL); END $$;
DO $$
DECLARE
    moved bigint;
BEGIN
    CALL reshard_add_partition('ue', 'ue_2', moved);
    RAISE NOTICE 'moved % rows', moved;
END $$;
SELECT buckets, (SELECT sum(misplaced_rows) FROM reshard_check('ue')) AS misplaced_rows, (SELECT count(*) FROM ue) AS rows
FROM sharded_tables WHERE parent = 'ue'::regclass;

--
-- NULL where no rows would read as "nothing to do" or "no problems": 22004.
--
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    'SELECT * FROM jumpbackhash_create_operator_classes(NULL)',
    'SELECT * FROM jumpbackhash_partitioning_problems(NULL)']) AS q;

--
-- reshard_bucket_sql refuses what would not be one key's bucket by one of
-- the extension's functions.
--
SELECT q, pg_temp.error_of(q) FROM unnest(ARRAY[
    $$SELECT reshard_bucket_sql('public.no_such_function', 'id', 4)$$,
    $$SELECT reshard_bucket_sql('pg_catalog.abs', 'id', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash(', 'id', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', 'id', 0)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', 'id', -5)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', 'id); DROP TABLE ue; --', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', 'id, 4) FROM ue; --', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', 'id /* comment', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', '(id', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', 'id]', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', 'a, b', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', '''unterminated', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', '"unterminated', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', E'$q$x$q$', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', ' ', 4)$$,
    $$SELECT reshard_bucket_sql(NULL, 'id', 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', NULL, 4)$$,
    $$SELECT reshard_bucket_sql('public.jumpbackhash', 'id', NULL)$$]) AS q;
-- Keys as sharding_layout gives them still make their expression: a column,
-- quoted names and literals holding commas, parentheses, semicolons and
-- comment marks, calls and subscripts.
SELECT reshard_bucket_sql(f, k, n, r) AS expression
FROM (VALUES ('public.jumpbackhash', 'id', 9, '{}'::int[]),
             ('public.jumphash', '"we;ird, (name"', 3, '{}'),
             ('public.jumpbackhash', 'lower((email || '';--, )/*''::text))', 4, '{}'),
             ('public.jumpbackhash', '(a[1] + b[2:3][1])', 4, '{}'),
             ('public.jumpbackhash', E'E''it\\''s, (''', 4, '{}'),
             ('public.jumpbackanchorhash', 'id', 5, '{3,1}')) AS v(f, k, n, r);

DROP TABLE ue, ue_2;
DELETE FROM reshard_state WHERE parent_name = 'ue';
