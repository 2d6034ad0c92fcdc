--
-- Nothing the resharding engine executes or trusts comes from a table
-- another role may write.  The engine executes the SQL text of its state
-- row (reshard_state: new_bucket_sql, ...) as the owner of the table
-- resharded, and applies the change log's entries to the tables it fills.
-- Members of pg_write_all_data may write every table, and those of
-- pg_read_all_data read every table, whatever the grants.  Against an
-- interrupted resharding of a superuser's table, the writer changes nothing
-- in reshard_state or in the change log, nor does a writer that also has
-- BYPASSRLS, even as a subscription's apply worker writes
-- (session_replication_role replica); the reader reads no row of
-- reshard_state (its name_key names what the engine makes); and
-- reshard_progress shows a role that may not read the table nothing of
-- it.  The superuser then continues the call: the forged SQL does not run,
-- no forged change is applied, the table ends right.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
DROP TABLE IF EXISTS rst, rst_2;
DROP SCHEMA IF EXISTS rst_attacker CASCADE;
DROP ROLE IF EXISTS regress_rst_writer;
DROP ROLE IF EXISTS regress_rst_bypass_writer;
DROP ROLE IF EXISTS regress_rst_reader;
DROP ROLE IF EXISTS regress_rst_nobody;
RESET client_min_messages;
\set SHOW_CONTEXT never
\i test/regress_helpers.sql
-- (the error a statement raises, the names the engine made normalized)
CREATE FUNCTION pg_temp.outcome(statement text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(pg_temp.error_of(statement), 'reshard_([a-z]+)_[0-9]+_[0-9a-f]{16}', 'reshard_\1_N', 'g')
$$;

CREATE ROLE regress_rst_writer IN ROLE pg_write_all_data;
CREATE ROLE regress_rst_bypass_writer BYPASSRLS IN ROLE pg_write_all_data;
CREATE ROLE regress_rst_reader IN ROLE pg_read_all_data;
CREATE ROLE regress_rst_nobody;

-- The writer's schema, with what it wants the engine to run as the
-- superuser: a bucket function that records who runs it.
CREATE SCHEMA rst_attacker AUTHORIZATION regress_rst_writer;
SET ROLE regress_rst_writer;
CREATE TABLE rst_attacker.ran (superuser boolean);
CREATE FUNCTION rst_attacker.bucket(id bigint) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rst_attacker.ran SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user;
    RETURN public.jumpbackhash(id, 3);
END $$;
RESET ROLE;

-- The superuser's table, and an interrupted resharding of it: the state
-- row, the shadows and the change log made, the writes captured, both
-- partitions copied; then a write, which waits in the change log.
CREATE TABLE rst (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash2_int8_ops);
CREATE TABLE rst_0 PARTITION OF rst FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE rst_1 PARTITION OF rst FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO rst SELECT i, 'v' || i FROM generate_series(1, 100) AS i;
CREATE TABLE rst_2 (LIKE rst INCLUDING ALL);
CALL reshard_begin('rst', 'add', 'rst_2');
CALL reshard_step('rst');   -- setup
CALL reshard_step('rst');   -- capture
CALL reshard_step('rst');   -- the copy of rst_0
CALL reshard_step('rst');   -- the copy of rst_1
UPDATE rst SET v = 'changed' WHERE id = 1;
SELECT "table", phase, interrupted FROM reshard_progress WHERE "table" = 'public.rst';
-- (the change log, as anyone finds it: in pg_class)
SELECT c.oid::regclass AS log FROM pg_class c WHERE c.relname LIKE 'reshard\_log\_' || 'rst'::regclass::oid || '\_%'
\gset
GRANT SELECT ON rst_attacker.ran TO regress_rst_reader;

-- The writer: its updates and deletes of reshard_state find no row (the
-- deletes rolled back, so that what the update did shows), its insert is
-- refused; so are its writes to the change log.
SET ROLE regress_rst_writer;
BEGIN;
WITH d AS (DELETE FROM reshard_state RETURNING 1) SELECT count(*) AS deleted FROM d;
ROLLBACK;
WITH u AS (UPDATE reshard_state SET new_bucket_sql = 'rst_attacker.bucket(id)' RETURNING 1)
SELECT count(*) AS updated FROM u;
INSERT INTO reshard_state (parent, parent_name, operation, partition, bucket, method, key, old_buckets, new_buckets,
                           old_bucket_sql, new_bucket_sql, new_partition_by, new_bound, sources, shadows, name_key, phase)
VALUES ('rst_2'::regclass, 'public.rst_2', 'add', 'rst_2'::regclass, 0, 'x', 'id', 1, 2, '0',
        'rst_attacker.bucket(id)', 'x', 'x', '{}', '{}', 'x', 'setup');
SELECT pg_temp.outcome(format('DELETE FROM %s', :'log')) AS log_delete;
SELECT pg_temp.outcome(format('INSERT INTO %s VALUES (1, %L, %L, NULL, ROW(1001, %L))',
                               :'log', 'rst_0'::regclass::oid, 'i', 'forged')) AS log_insert;
RESET ROLE;

-- The same writer with BYPASSRLS: refused, also as a subscription's apply
-- worker writes (the trigger fires always).
SET ROLE regress_rst_bypass_writer;
UPDATE reshard_state SET new_bucket_sql = 'rst_attacker.bucket(id)';
BEGIN;
DELETE FROM reshard_state;
ROLLBACK;
SELECT pg_temp.outcome(format('INSERT INTO %s VALUES (1, %L, %L, NULL, ROW(1002, %L))',
                               :'log', 'rst_0'::regclass::oid, 'i', 'forged')) AS log_insert;
RESET ROLE;
SET session_replication_role = replica;
SET ROLE regress_rst_bypass_writer;
UPDATE reshard_state SET new_bucket_sql = 'rst_attacker.bucket(id)';
SELECT pg_temp.outcome(format('INSERT INTO %s VALUES (1, %L, %L, NULL, ROW(1003, %L))',
                               :'log', 'rst_0'::regclass::oid, 'i', 'forged')) AS log_insert;
RESET ROLE;
RESET session_replication_role;

-- The reader: no row of reshard_state, no name_key; reshard_progress
-- still shows it the resharding (it may read the table).
SET ROLE regress_rst_reader;
SELECT count(*) AS rows, count(name_key) AS name_keys FROM reshard_state;
SELECT "table", operation, phase, interrupted FROM reshard_progress WHERE "table" = 'public.rst';
RESET ROLE;
-- A role that may not read the table: nothing of it, not even to a
-- function in its WHERE, however cheap (a security barrier).
CREATE FUNCTION pg_temp.seen(t text, phase text) RETURNS boolean LANGUAGE plpgsql COST 0.000001 AS $$
BEGIN
    RAISE NOTICE 'seen: % in phase %', t, phase;
    RETURN true;
END $$;
SET ROLE regress_rst_nobody;
SELECT count(*) AS reshardings FROM reshard_progress WHERE pg_temp.seen("table", phase);
RESET ROLE;

-- The state row is the engine's still.
SELECT new_bucket_sql, phase FROM reshard_state WHERE parent = 'rst'::regclass;
SELECT count(*) AS forged_rows FROM reshard_state WHERE parent = 'rst_2'::regclass;

-- The superuser continues the call: nothing of the writer's runs or is
-- applied, and the table is resharded, every row in its partition.
CALL reshard_add_partition('rst', 'rst_2');
SELECT "table", phase, interrupted, error FROM reshard_progress WHERE "table" = 'public.rst';
SELECT count(*) AS forged_sql_ran, count(*) FILTER (WHERE superuser) AS as_superuser FROM rst_attacker.ran;
SELECT DISTINCT buckets FROM sharding_layout('rst');
SELECT count(*) AS rows, count(DISTINCT id) AS ids, count(*) FILTER (WHERE v = 'changed') AS changed,
       count(*) FILTER (WHERE v = 'forged') AS forged_rows,
       count(*) FILTER (WHERE tableoid <> format('rst_%s', jumpbackhash(id, 3))::regclass) AS misplaced
FROM rst;

DELETE FROM reshard_state WHERE parent IN ('rst'::regclass, 'rst_2'::regclass);
DROP TABLE rst;
DROP SCHEMA rst_attacker CASCADE;
DROP ROLE regress_rst_writer;
DROP ROLE regress_rst_bypass_writer;
DROP ROLE regress_rst_reader;
DROP ROLE regress_rst_nobody;
