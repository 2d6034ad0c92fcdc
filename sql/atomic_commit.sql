--
-- Atomic commit across servers: a transaction that writes through a sharded
-- table on two servers commits on both or on neither.  The servers are two
-- databases of this cluster with the extension (atomic_commit_a, _b, set up
-- with atomic_commit_add_server) and one without it (atomic_commit_c); the
-- cluster allows prepared transactions (max_prepared_transactions above
-- zero).  Crashes between the phases, servers down and killed sessions: TAP
-- tests 033 and 034.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
CREATE EXTENSION IF NOT EXISTS dblink;
DROP SCHEMA IF EXISTS ac CASCADE;
DROP SERVER IF EXISTS atomic_commit_a, atomic_commit_b, atomic_commit_c CASCADE;
DROP DATABASE IF EXISTS atomic_commit_a WITH (FORCE);
DROP DATABASE IF EXISTS atomic_commit_b WITH (FORCE);
DROP DATABASE IF EXISTS atomic_commit_c WITH (FORCE);
DROP ROLE IF EXISTS ac_writer, ac_all_data;
CREATE DATABASE atomic_commit_a;
CREATE DATABASE atomic_commit_b;
CREATE DATABASE atomic_commit_c;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- The servers' tables; b refuses the value 'refuse' at commit (a deferred
-- constraint trigger), c has no extension.
DO $$
DECLARE
    s text;
BEGIN
    FOREACH s IN ARRAY ARRAY['atomic_commit_a', 'atomic_commit_b', 'atomic_commit_c'] LOOP
        EXECUTE format('CREATE SERVER %I FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host %L, port %L, dbname %L)',
                       s, split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port'), s);
        EXECUTE format('CREATE USER MAPPING FOR CURRENT_USER SERVER %I OPTIONS (user %L)', s, current_user);
    END LOOP;
END
$$;
SELECT dblink_exec(s,
                   'CREATE SCHEMA ac; CREATE TABLE ac.t (id bigint PRIMARY KEY, v text)')
FROM unnest(ARRAY['atomic_commit_a', 'atomic_commit_b', 'atomic_commit_c']) AS s;
SELECT dblink_exec(s, 'CREATE EXTENSION subsetting')
FROM unnest(ARRAY['atomic_commit_a', 'atomic_commit_b']) AS s;
SELECT dblink_exec('atomic_commit_b', $$
    CREATE FUNCTION ac.refuse() RETURNS trigger LANGUAGE plpgsql AS
    'BEGIN IF NEW.v = ''refuse'' THEN RAISE EXCEPTION ''refused at commit on b''; END IF; RETURN NULL; END';
    CREATE CONSTRAINT TRIGGER refuse AFTER INSERT OR UPDATE ON ac.t DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ac.refuse()$$);

-- The sharded table: bucket 0 here, 1 on a, 2 on b, 3 on c.
CREATE SCHEMA ac;
CREATE TABLE ac.t (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash4_int8_ops);
CREATE TABLE ac.t_0 PARTITION OF ac.t FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE FOREIGN TABLE ac.t_1 PARTITION OF ac.t FOR VALUES WITH (MODULUS 4, REMAINDER 1)
    SERVER atomic_commit_a OPTIONS (schema_name 'ac', table_name 't');
CREATE FOREIGN TABLE ac.t_2 PARTITION OF ac.t FOR VALUES WITH (MODULUS 4, REMAINDER 2)
    SERVER atomic_commit_b OPTIONS (schema_name 'ac', table_name 't');
CREATE FOREIGN TABLE ac.t_3 PARTITION OF ac.t FOR VALUES WITH (MODULUS 4, REMAINDER 3)
    SERVER atomic_commit_c OPTIONS (schema_name 'ac', table_name 't');
-- a key of each bucket
CREATE FUNCTION pg_temp.k(b int, n int DEFAULT 1) RETURNS bigint LANGUAGE sql AS
$$SELECT id FROM generate_series(1, 10000) AS id WHERE jumpbackhash(id, 4) = b ORDER BY id OFFSET n - 1 LIMIT 1$$;
CREATE FUNCTION pg_temp.rows() RETURNS TABLE (here bigint, a bigint, b bigint, c bigint) LANGUAGE sql AS
$$SELECT (SELECT count(*) FROM ac.t_0), (SELECT count(*) FROM ac.t_1), (SELECT count(*) FROM ac.t_2),
         (SELECT count(*) FROM ac.t_3)$$;
CREATE FUNCTION pg_temp.prepared() RETURNS bigint LANGUAGE sql AS
$$SELECT count(*) FROM pg_prepared_xacts WHERE database LIKE 'atomic\_commit\__'$$;

-- Setting the servers up: superusers only; the server needs the extension.
SELECT atomic_commit_add_server('atomic_commit_a');
SELECT atomic_commit_add_server('atomic_commit_b');
SELECT atomic_commit_add_server('atomic_commit_c');
SELECT atomic_commit_add_server('nowhere');
SELECT atomic_commit_add_server('atomic_commit_b');  -- again: made again
CREATE ROLE ac_writer LOGIN;
GRANT USAGE ON SCHEMA ac TO ac_writer;
GRANT ALL ON ac.t, ac.t_0, ac.t_1, ac.t_2, ac.t_3 TO ac_writer;
SET ROLE ac_writer;
SELECT atomic_commit_add_server('atomic_commit_a');
SELECT * FROM atomic_commit_recover();
RESET ROLE;
SELECT s.srvname, m.marker::text ~ '^atomic_commit_marker_[0-9]+$' AS marker_named
FROM atomic_commit_servers m JOIN pg_foreign_server s ON s.oid = m.server ORDER BY 1;
-- A part's marker is one statement on its server (postgres_fdw sends the
-- UPDATE whole, "Foreign Update"), not a row prepared, executed and
-- deallocated there.
CREATE FUNCTION pg_temp.marker_plan(marker regclass) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('EXPLAIN (VERBOSE, COSTS OFF) UPDATE %s SET gid = %L', marker, 'subsetting_x');
END $$;
SELECT s.srvname, regexp_replace(p, 'atomic_commit_marker_[0-9]+', 'atomic_commit_marker_<oid>') AS plan
FROM atomic_commit_servers m JOIN pg_foreign_server s ON s.oid = m.server,
     pg_temp.marker_plan(m.marker) WITH ORDINALITY AS l (p, i)
ORDER BY s.srvname, l.i;

-- b refuses at commit: a keeps nothing either, nothing stays prepared.
BEGIN;
INSERT INTO ac.t VALUES (pg_temp.k(1), 'x'), (pg_temp.k(2), 'refuse');
COMMIT;
SELECT * FROM pg_temp.rows();
SELECT pg_temp.prepared() AS prepared;
-- The same through the partitions directly, and with a row here too.
BEGIN;
INSERT INTO ac.t_0 VALUES (pg_temp.k(0), 'x');
INSERT INTO ac.t_1 VALUES (pg_temp.k(1), 'x');
UPDATE ac.t_2 SET v = 'refuse';
INSERT INTO ac.t_2 VALUES (pg_temp.k(2), 'refuse');
COMMIT;
SELECT * FROM pg_temp.rows();
SELECT pg_temp.prepared() AS prepared;

-- Both commit: rows on both, nothing left prepared; the decisions name the
-- parts of the last commit only (the next commit deletes the earlier ones).
INSERT INTO ac.t VALUES (pg_temp.k(1), 'x'), (pg_temp.k(2), 'y');
INSERT INTO ac.t VALUES (pg_temp.k(1, 2), 'x'), (pg_temp.k(2, 2), 'y');
SELECT * FROM pg_temp.rows();
SELECT pg_temp.prepared() AS prepared;
SELECT s.srvname, d.gid ~ ('^subsetting_' || (SELECT system_identifier FROM pg_control_system()) || '_'
                           || (SELECT oid FROM pg_database WHERE datname = current_database()) || '_[0-9]+_[0-9]+_[0-9]+_[0-9]+$') AS named
FROM atomic_commit_decisions d JOIN pg_foreign_server s ON s.oid = d.server ORDER BY 1;
-- Here and one server: both, or neither.
BEGIN;
INSERT INTO ac.t VALUES (pg_temp.k(0, 2), 'x'), (pg_temp.k(2, 3), 'refuse');
COMMIT;
SELECT * FROM pg_temp.rows();
INSERT INTO ac.t VALUES (pg_temp.k(0, 2), 'x'), (pg_temp.k(2, 3), 'y');
SELECT * FROM pg_temp.rows();
-- A table of 256 partitions (a third here, a third on a, a third on b, all of
-- a server's in its one table there): INSERT ... SELECT through it and COPY
-- into it commit on every server or on none (COPY's rows reach the servers
-- through postgres_fdw without the executor's end: the server of each
-- foreign partition is taken as written on).
CREATE TABLE ac.t256 (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash256_int8_ops);
DO $$
BEGIN
    FOR i IN 0..255 LOOP
        EXECUTE format('CREATE %s TABLE ac.t256_%s PARTITION OF ac.t256 FOR VALUES WITH (MODULUS 256, REMAINDER %s) %s',
                       CASE WHEN i % 3 = 0 THEN '' ELSE 'FOREIGN' END, i, i,
                       CASE i % 3 WHEN 0 THEN ''
                                  ELSE format('SERVER %I OPTIONS (schema_name %L, table_name %L)',
                                              CASE i % 3 WHEN 1 THEN 'atomic_commit_a' ELSE 'atomic_commit_b' END, 'ac', 't') END);
    END LOOP;
END
$$;
-- (the rows of t256 here, on a and on b: the servers' tables through ac.t_1 and ac.t_2)
CREATE FUNCTION pg_temp.rows256() RETURNS TABLE (here bigint, a bigint, b bigint) LANGUAGE sql AS
$$SELECT (SELECT count(*) FROM ac.t256 WHERE id > 100000 AND jumpbackhash(id, 256) % 3 = 0),
         (SELECT count(*) FROM ac.t_1 WHERE id > 100000), (SELECT count(*) FROM ac.t_2 WHERE id > 100000)$$;
INSERT INTO ac.t256 SELECT id, 'x' FROM generate_series(100001, 103000) AS id;
INSERT INTO ac.t256 SELECT id, CASE WHEN jumpbackhash(id, 256) = 2 THEN 'refuse' ELSE 'x' END
FROM generate_series(103001, 106000) AS id;
\copy ac.t256 (id) FROM PROGRAM 'seq 106001 109000'
\copy ac.t256 (id, v) FROM PROGRAM 'seq 109001 112000 | sed s/$/,refuse/' WITH (FORMAT csv)
-- (the statements that committed wrote 6,000 rows, each where its bucket is)
SELECT r.here + r.a + r.b AS rows, (r.here, r.a, r.b) = (e.here, e.a, e.b) AS each_where_its_bucket_is
FROM pg_temp.rows256() AS r,
     (SELECT count(*) FILTER (WHERE jumpbackhash(id, 256) % 3 = 0) AS here,
             count(*) FILTER (WHERE jumpbackhash(id, 256) % 3 = 1) AS a,
             count(*) FILTER (WHERE jumpbackhash(id, 256) % 3 = 2) AS b
      FROM (SELECT generate_series(100001, 103000) UNION ALL SELECT generate_series(106001, 109000)) AS ids (id)) AS e;
SELECT pg_temp.prepared() AS prepared;
DELETE FROM ac.t256 WHERE id > 100000;

-- One server only: committed as postgres_fdw commits, without a decision.
SELECT count(*) AS decisions_before FROM atomic_commit_decisions \gset
INSERT INTO ac.t VALUES (pg_temp.k(1, 3), 'x');
SELECT count(*) - :decisions_before AS new_decisions FROM atomic_commit_decisions;
-- A role's own transactions, through its own mapping.
CREATE USER MAPPING FOR ac_writer SERVER atomic_commit_a OPTIONS (user 'ac_writer', password_required 'false');
CREATE USER MAPPING FOR ac_writer SERVER atomic_commit_b OPTIONS (user 'ac_writer', password_required 'false');
SELECT dblink_exec(s,
                   'GRANT USAGE ON SCHEMA ac TO ac_writer; GRANT ALL ON ac.t TO ac_writer')
FROM unnest(ARRAY['atomic_commit_a', 'atomic_commit_b']) AS s;
SET ROLE ac_writer;
BEGIN;
INSERT INTO ac.t VALUES (pg_temp.k(1, 4), 'w'), (pg_temp.k(2, 4), 'refuse');
COMMIT;
INSERT INTO ac.t VALUES (pg_temp.k(1, 4), 'w'), (pg_temp.k(2, 4), 'w');
RESET ROLE;
SELECT * FROM pg_temp.rows();
SELECT pg_temp.prepared() AS prepared;

-- A server not set up (c): the session is warned once; the transaction
-- commits each part on its own, as postgres_fdw does.
INSERT INTO ac.t VALUES (pg_temp.k(1, 5), 'x'), (pg_temp.k(3), 'x');
INSERT INTO ac.t VALUES (pg_temp.k(1, 6), 'x'), (pg_temp.k(3, 2), 'x');
SELECT * FROM pg_temp.rows();
-- Off: each server's part commits on its own, as postgres_fdw commits it
-- (which of a and b commits first, and keeps its row when the other refuses,
-- is up to postgres_fdw): nothing is marked, nothing recorded.
SET subsetting.atomic_commit = off;
SELECT count(*) AS decisions_before FROM atomic_commit_decisions \gset
INSERT INTO ac.t VALUES (pg_temp.k(1, 7), 'x'), (pg_temp.k(2, 5), 'y');
SELECT count(*) - :decisions_before AS new_decisions FROM atomic_commit_decisions;
SELECT * FROM pg_temp.rows();
RESET subsetting.atomic_commit;

-- Recovery: a part left prepared on a whose transaction never committed here
-- is rolled back; one whose decision is recorded (a transaction of an earlier
-- start of this server) is committed; a prepared transaction of another
-- name is not touched.
SELECT 'subsetting_' || (SELECT system_identifier FROM pg_control_system()) || '_'
       || (SELECT oid FROM pg_database WHERE datname = current_database()) || '_' AS prefix \gset
SELECT dblink_exec('atomic_commit_a',
                   format('BEGIN; INSERT INTO ac.t VALUES (-1, %L); PREPARE TRANSACTION %L', 'orphan', :'prefix' || '1_10_1'));
SELECT dblink_exec('atomic_commit_a',
                   format('BEGIN; INSERT INTO ac.t VALUES (-2, %L); PREPARE TRANSACTION %L', 'decided', :'prefix' || '1_11_1'));
SELECT dblink_exec('atomic_commit_a',
                   'BEGIN; INSERT INTO ac.t VALUES (-3, ''other''); PREPARE TRANSACTION ''someone_else''');
INSERT INTO atomic_commit_decisions VALUES (:'prefix' || '1_11_1', (SELECT oid FROM pg_foreign_server WHERE srvname = 'atomic_commit_a'), 10);
SELECT server, replace(gid, :'prefix', '<prefix>') AS gid, outcome FROM atomic_commit_recover() ORDER BY 1, 2;
SELECT id, v FROM ac.t_1 WHERE id < 0 ORDER BY id;
SELECT gid FROM pg_prepared_xacts WHERE database LIKE 'atomic\_commit\__';
SELECT dblink_exec('atomic_commit_a', 'ROLLBACK PREPARED ''someone_else''');
-- The decision of a part no longer prepared is deleted; nothing is left.
SELECT count(*) AS decisions FROM atomic_commit_decisions WHERE gid LIKE '%\_1\_11\_1';
SELECT * FROM atomic_commit_recover();

-- The decisions and the servers set up: no other role writes them, members
-- of pg_write_all_data included (row-level security); every role reads the
-- servers set up, not the decisions.
CREATE ROLE ac_all_data IN ROLE pg_write_all_data, pg_read_all_data;
INSERT INTO atomic_commit_decisions VALUES ('subsetting_kept', 1, 1);
SET ROLE ac_all_data;
INSERT INTO atomic_commit_decisions VALUES ('subsetting_forged', 1, 1);
UPDATE atomic_commit_servers SET marker = 'pg_class';
DELETE FROM atomic_commit_decisions;
SELECT count(*) AS decisions_seen FROM atomic_commit_decisions;
RESET ROLE;
SELECT gid FROM atomic_commit_decisions;
SELECT count(*) AS forged FROM atomic_commit_servers WHERE marker = 'pg_class'::regclass;
DELETE FROM atomic_commit_decisions;
SET ROLE ac_writer;
SELECT count(*) > 0 AS reads_servers FROM atomic_commit_servers;
SELECT count(*) FROM atomic_commit_decisions;
RESET ROLE;

-- The setting at a role's level and at the database's, which a session
-- takes when it starts (before the library is loaded: the value waits for
-- it): a session of ac_writer's that starts with it off commits on a and b
-- as postgres_fdw does, without decisions; one whose role sets it on over
-- the database's off commits in two phases (a decision per server).
SELECT current_user AS superuser, pg_temp.k(1, 9) AS on_a, pg_temp.k(2, 9) AS on_b \gset
ALTER ROLE ac_writer SET subsetting.atomic_commit = off;
\c - ac_writer
SHOW subsetting.atomic_commit;
INSERT INTO ac.t VALUES (:on_a, 'r'), (:on_b, 'r');
\c - :superuser
SELECT count(*) AS decisions_after_role_off FROM atomic_commit_decisions;
ALTER DATABASE :"DBNAME" SET subsetting.atomic_commit = off;
ALTER ROLE ac_writer SET subsetting.atomic_commit = on;
\c - ac_writer
SHOW subsetting.atomic_commit;
DELETE FROM ac.t WHERE id IN (:on_a, :on_b);
\c - :superuser
SELECT count(*) AS decisions_after_role_on FROM atomic_commit_decisions;
ALTER ROLE ac_writer RESET subsetting.atomic_commit;
\c - ac_writer
SHOW subsetting.atomic_commit;
INSERT INTO ac.t VALUES (:on_a, 'r'), (:on_b, 'r');
\c - :superuser
SELECT count(*) AS decisions_after_database_off FROM atomic_commit_decisions;
ALTER DATABASE :"DBNAME" RESET subsetting.atomic_commit;
SELECT count(*) FILTER (WHERE v = 'r') AS rows_written FROM ac.t;
DELETE FROM atomic_commit_decisions;

-- On a server, the marker: only a coordinator's name, in a transaction block.
SELECT dblink_exec('atomic_commit_a',
                   'UPDATE atomic_commit_marker SET gid = ''not_ours''');
SELECT dblink_exec('atomic_commit_a',
                   'UPDATE atomic_commit_marker SET gid = ''subsetting_1_2_3_4_5''');
SELECT dblink_exec('atomic_commit_a',
                   'BEGIN; UPDATE atomic_commit_marker SET gid = ''subsetting_1_2_3_4_5''; COMMIT');
SELECT gid FROM pg_prepared_xacts WHERE gid = 'subsetting_1_2_3_4_5';
SELECT dblink_exec('atomic_commit_a', 'ROLLBACK PREPARED ''subsetting_1_2_3_4_5''');

-- The end: what this test made.
SET client_min_messages = warning;
DROP SCHEMA ac CASCADE;
DROP SERVER atomic_commit_a, atomic_commit_b, atomic_commit_c CASCADE;
DELETE FROM atomic_commit_servers;
DELETE FROM atomic_commit_decisions;
DROP DATABASE atomic_commit_a WITH (FORCE);
DROP DATABASE atomic_commit_b WITH (FORCE);
DROP DATABASE atomic_commit_c WITH (FORCE);
DROP ROLE ac_writer, ac_all_data;
RESET client_min_messages;
