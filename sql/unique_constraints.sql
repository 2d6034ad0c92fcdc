--
-- A table with a PRIMARY KEY and UNIQUE constraints scales out (issue 44,
-- item 1; docs/scaling-out.md, "Tables with a primary key"):
-- unique_constraints_to_partitions hands them to the partitions, each of
-- which keeps the index it had (the same file: nothing built); a duplicate
-- is refused in every partition, here and on the server, through the table
-- and directly; a partition moved to the server and back has them there
-- and here again; a resharding's new partition must have them;
-- unique_constraints_to_parent gives them back once every partition is
-- here (the same files again); what the records hold only the engine
-- writes, and a dropped table takes its records with it.
--
\i test/engine_move_helpers.sql
SET client_min_messages = warning;
DROP ROLE IF EXISTS unique_other;
SET client_min_messages = notice;
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE TABLE engine_move.users (id bigint PRIMARY KEY, email text, n int,
                                CONSTRAINT users_email UNIQUE NULLS NOT DISTINCT (id, email) INCLUDE (n))
    PARTITION BY HASH (id jumpbackhash3_int8_ops);
SELECT format('CREATE TABLE engine_move.users_%s PARTITION OF engine_move.users FOR VALUES WITH (MODULUS 3, REMAINDER %s)', b, b)
FROM generate_series(0, 2) AS b \gexec
INSERT INTO engine_move.users SELECT i, 'u' || i, i FROM generate_series(1, 300) AS i;
CREATE TEMP TABLE files AS
SELECT x.indexrelid::regclass::text AS index, pg_relation_filenode(x.indexrelid) AS file
FROM pg_index x WHERE x.indrelid IN (SELECT relid FROM pg_partition_tree('engine_move.users') WHERE isleaf);
CREATE FUNCTION pg_temp.same_files() RETURNS boolean LANGUAGE sql AS $$
    SELECT count(*) = 6 AND bool_and(pg_relation_filenode(f.index::regclass) = f.file) FROM files f
$$;
CREATE FUNCTION pg_temp.constraints(t regclass) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT format('%s %s', conname, pg_get_constraintdef(oid)) FROM pg_constraint
    WHERE conrelid = t AND contype IN ('p', 'u') ORDER BY conname
$$;

-- Refused before: the move (its hint is the call), a table that is not
-- sharded, another role's table, a foreign key that refers to the table,
-- a unique index that is no constraint's.
CALL partition_move('engine_move.users_1', 'engine_move_server');
CALL unique_constraints_to_partitions('engine_move.mirror');
CALL unique_constraints_to_partitions(NULL);
CALL unique_constraints_to_partitions('engine_move.users', cutover_budget => '0 s');
CALL unique_constraints_to_partitions('engine_move.users', cutover_attempts => 0);
CREATE ROLE unique_other;
GRANT USAGE ON SCHEMA engine_move TO unique_other;
SET ROLE unique_other;
CALL unique_constraints_to_partitions('engine_move.users');
RESET ROLE;
CREATE TABLE engine_move.refers (id bigint REFERENCES engine_move.users);
CREATE UNIQUE INDEX users_n ON engine_move.users (id, n);
CALL unique_constraints_to_partitions('engine_move.users');
DROP TABLE engine_move.refers;
DROP INDEX engine_move.users_n;
-- Nothing to give back yet.
CALL unique_constraints_to_parent('engine_move.users');

-- An event trigger of the DBA's that grants ALL to PUBLIC on every table
-- a DDL command alters: what it grants for the hand-overs' DDL is taken
-- back.
CREATE FUNCTION public.unique_grant_all() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE object_type = 'table' LOOP
        EXECUTE format('GRANT ALL ON %s TO PUBLIC', r.object_identity);
    END LOOP;
END
$$;
CREATE EVENT TRIGGER unique_grant_all ON ddl_command_end WHEN TAG IN ('ALTER TABLE')
EXECUTE FUNCTION public.unique_grant_all();
CREATE FUNCTION pg_temp.public_may() RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(DISTINCT c.relname, ', '), 'none') FROM pg_class c, aclexplode(c.relacl) AS a
    WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relname ~ '^users' AND a.grantee = 0
$$;

-- Handed to the partitions: each keeps its indexes as they were.
CALL unique_constraints_to_partitions('engine_move.users');
SELECT pg_temp.public_may();
SELECT * FROM pg_temp.constraints('engine_move.users');
SELECT * FROM pg_temp.constraints('engine_move.users_1');
SELECT pg_temp.same_files();
SELECT name, definition FROM partition_unique_constraints WHERE parent = 'engine_move.users'::regclass ORDER BY name;
CALL unique_constraints_to_partitions('engine_move.users');
-- Duplicates refused, through the table and into a partition.
INSERT INTO engine_move.users VALUES (7, 'again', 0);
INSERT INTO engine_move.users_1 SELECT * FROM engine_move.users_1 LIMIT 1;
-- Only the engine writes the records, whoever may write every table.
GRANT pg_write_all_data TO unique_other;
SET ROLE unique_other;
DELETE FROM partition_unique_constraints;
INSERT INTO partition_unique_constraints VALUES ('engine_move.users'::regclass, 'x', 'UNIQUE (n)');
SELECT count(*) FROM partition_unique_constraints WHERE parent = 'engine_move.users'::regclass;
RESET ROLE;
REVOKE pg_write_all_data FROM unique_other;

-- Writing through the table: ON CONFLICT DO NOTHING without a conflict
-- target finds the partition's constraints; a target needs the table's.
INSERT INTO engine_move.users VALUES (7, 'again', 0) ON CONFLICT DO NOTHING;
INSERT INTO engine_move.users VALUES (7, 'again', 0) ON CONFLICT (id) DO NOTHING;
-- An upsert instead: UPDATE, then INSERT what it did not find.
WITH updated AS (UPDATE engine_move.users SET n = n + 1000 WHERE id IN (7, 1001) RETURNING id)
INSERT INTO engine_move.users SELECT i, 'u' || i, 0 FROM unnest(ARRAY[7, 1001]) AS i
WHERE i NOT IN (SELECT id FROM updated) ON CONFLICT DO NOTHING;
SELECT * FROM engine_move.users WHERE id IN (7, 1001) ORDER BY id;

-- Published, with or without publish_via_partition_root: updates and
-- deletes through the table are accepted (each partition's replica
-- identity is its PRIMARY KEY).
SET client_min_messages = error;
CREATE PUBLICATION users_root FOR TABLE engine_move.users WITH (publish_via_partition_root = true);
CREATE PUBLICATION users_leaves FOR TABLE engine_move.users;
SET client_min_messages = notice;
UPDATE engine_move.users SET n = n + 1 WHERE id = 1001;
DELETE FROM engine_move.users WHERE id = 1001;
SELECT c.relname, c.relreplident, i.relname AS identity_index FROM pg_class c
JOIN pg_index x ON x.indrelid = c.oid AND x.indisprimary JOIN pg_class i ON i.oid = x.indexrelid
WHERE c.oid IN (SELECT relid FROM pg_partition_tree('engine_move.users') WHERE isleaf) ORDER BY 1;
DROP PUBLICATION users_root, users_leaves;

-- The move: the table on the server has the constraints, which refuse a
-- duplicate there, directly or through the table.
CALL partition_move('engine_move.users_1', 'engine_move_server');
SELECT * FROM pg_temp.remote($$SELECT pg_catalog.format('%s %s', conname, pg_catalog.pg_get_constraintdef(oid))
                               FROM pg_catalog.pg_constraint WHERE conrelid = 'engine_move.users_1'::pg_catalog.regclass
                                 AND contype IN ('p', 'u') ORDER BY 1$$);
SELECT id AS id_of_bucket_1 FROM engine_move.users_1 ORDER BY id LIMIT 1 \gset
INSERT INTO engine_move.users VALUES (:id_of_bucket_1, 'again', 0);
SELECT dblink_exec('engine_move_server', format('INSERT INTO engine_move.users_1 VALUES (%s, NULL, 0)', :id_of_bucket_1));
INSERT INTO engine_move.users VALUES (:id_of_bucket_1, 'again', 0) ON CONFLICT DO NOTHING;
-- (NULLS NOT DISTINCT on the server too)
INSERT INTO engine_move.users VALUES (:id_of_bucket_1 + 3000, NULL, 0);
SELECT dblink_exec('engine_move_server', format('INSERT INTO engine_move.users_1 VALUES (%s, NULL, 0)', :id_of_bucket_1 + 3000));
-- Not given back while a partition is on the server.
CALL unique_constraints_to_parent('engine_move.users');
-- A resharding's new partition, here, must have them.
CREATE TABLE engine_move.users_3 (LIKE engine_move.users INCLUDING ALL);
CALL reshard_add_partition('engine_move.users', 'engine_move.users_3');
DROP TABLE engine_move.users_3;

-- Back here: the table made here has them, named after the partition.
CALL partition_move('engine_move.users_1', NULL);
SELECT * FROM pg_temp.constraints('engine_move.users_1');
INSERT INTO engine_move.users VALUES (:id_of_bucket_1, 'again', 0);
SELECT count(*), count(DISTINCT id) FROM engine_move.users;

-- Given back: the table takes each partition's as its partition.
CALL unique_constraints_to_parent('engine_move.users');
SELECT pg_temp.public_may();
DROP EVENT TRIGGER unique_grant_all;
DROP FUNCTION public.unique_grant_all();
SELECT * FROM pg_temp.constraints('engine_move.users');
SELECT count(*) AS indexes_of_partitions FROM pg_index x JOIN pg_inherits i ON i.inhrelid = x.indexrelid
WHERE x.indrelid IN (SELECT relid FROM pg_partition_tree('engine_move.users') WHERE isleaf);
SELECT (SELECT bool_and(pg_relation_filenode(f.index::regclass) = f.file) FROM files f
        WHERE f.index NOT LIKE '%users\_1\_%') AS same_files_but_the_moved;
SELECT count(*) FROM partition_unique_constraints WHERE parent = 'engine_move.users'::regclass;
INSERT INTO engine_move.users VALUES (7, 'again', 0) ON CONFLICT (id) DO UPDATE SET n = -1;
SELECT n FROM engine_move.users WHERE id = 7;

-- A table dropped takes its records with it.
CALL unique_constraints_to_partitions('engine_move.users');
SELECT 'engine_move.users'::regclass::oid AS users_oid \gset
DROP TABLE engine_move.users;
SELECT count(*) FROM partition_unique_constraints WHERE parent = :users_oid;

CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
DROP ROLE unique_other;
