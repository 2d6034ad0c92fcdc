\set ECHO none
-- test/engine_move_helpers.sql
--	What the tests of a move's phases share (sql/engine_move_*.sql, one per
--	phase: docs/resharding-engine.md, "Phases" and "Moving a partition"); a
--	test reads it with \i test/engine_move_helpers.sql (not echoed: what it
--	makes is here), and ends with CALL pg_temp.engine_move_drop() and
--	DROP DATABASE engine_move_server WITH (FORCE).
--
--	The server: the database engine_move_server of this cluster (a move
--	makes the partition's table there under its schema and name, so it
--	cannot be this database), reached through this cluster's socket and
--	port as the foreign server engine_move_server (postgres_fdw), with a
--	user mapping for the role running the tests, and the schema
--	engine_move there.  dblink and postgres_fdw here (dropped at the end if
--	the helper created them).  The table is that role's, a superuser:
--	dblink lets a role that is not one connect only with a password that the
--	server asks for, and a regression cluster trusts its local connections
--	(TAP 024_partition_move_hostile.pl moves as a role that is not one).
--
--	engine_move.em		the table: ids 1 .. 3000 in 3 partitions em_0 .. em_2
--						of HASH (id jumpbackhash3_int8_ops), a default, a
--						CHECK and an index (no unique one: PostgreSQL allows
--						none on a table with a foreign partition); em_1, the
--						partition moved (bucket 1), has a comment, and the
--						role engine_move_reader may read it
--	engine_move.mirror	a plain table that takes the same writes
--	pg_temp.write_both()	writes to both, through the parent: in bucket 1,
--						an insert, an update, a delete, an update of the key
--						out of it (in it, while em_1 is a foreign table) and
--						one into it; elsewhere, an insert and an update;
--						records each row change (an update that
--						moves a row to another partition: a delete there and
--						an insert in the other) in pg_temp.writes by bucket,
--						and returns those of bucket 1, the moved partition's
--	pg_temp.differ(a, b)	rows of query a not in query b, and of b not in a
--	pg_temp.differences()	rows of em not in mirror, and of mirror not in em
--	pg_temp.rows_in(table)	its rows
--	pg_temp.sqlstate_of(query)	the SQLSTATE it fails with, or 'no error'
--	pg_temp.state()		em's row of reshard_state
--	pg_temp.log_entries()	the entries of em's change log (rows as jsonb)
--	pg_temp.step_to(phase)	steps em's move until it is in phase
--	pg_temp.normalized(text)	the names of the engine's in a text, the OID in
--						each replaced by its relation's name in braces
--						(reshard_shadow_{em_1}), or by N (an OID of no
--						relation, or of the relation itself: reshard_old_N),
--						and their hashes left out
--	pg_temp.engine_objects()	what the engine made in the schema here
--						(relations, triggers, constraints named reshard_...,
--						but the NOT NULL ones PostgreSQL 18 catalogs)
--	pg_temp.remote(query)	the rows of a query of one text column on the server
--	pg_temp.remote_objects()	what is in the schema engine_move on the
--						server: relations, triggers, functions, comments,
--						and the roles but the owner with a privilege on
--						a relation, names normalized
--	pg_temp.remote_rows()	the rows of engine_move.em_1 on the server
--	pg_temp.bucket_1(table)	a query of the rows of a table in bucket 1
--	pg_temp.placement()	where em_1 is: 'here' or its server, and its kind
--
--	Everything is made afresh (what a test that failed left is dropped
--	first), in the schema engine_move, in pg_temp, in the database
--	engine_move_server and in em's state row, all of which the end drops: no
--	test depends on another.

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
DROP SCHEMA IF EXISTS engine_move CASCADE;
DELETE FROM reshard_state WHERE parent_name LIKE 'engine\_move.%';
DROP SERVER IF EXISTS engine_move_server CASCADE;
DROP ROLE IF EXISTS engine_move_reader;
DROP DATABASE IF EXISTS engine_move_server WITH (FORCE);
CREATE DATABASE engine_move_server;
CREATE TEMP TABLE engine_move_extensions AS
SELECT x AS extension FROM unnest(ARRAY['postgres_fdw', 'dblink']) AS x
WHERE NOT EXISTS (SELECT FROM pg_extension WHERE extname = x);
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
CREATE EXTENSION IF NOT EXISTS dblink;
DO $$
BEGIN
    EXECUTE format('CREATE SERVER engine_move_server FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host %L, port %L, dbname %L)',
                   split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port'),
                   'engine_move_server');
    EXECUTE format('CREATE USER MAPPING FOR CURRENT_USER SERVER engine_move_server OPTIONS (user %L)', current_user);
    PERFORM dblink_exec('engine_move_server', 'CREATE SCHEMA engine_move');
END
$$;

CREATE SCHEMA engine_move;
CREATE TABLE engine_move.em (id bigint NOT NULL, v text DEFAULT 'none', f float8 CHECK (f >= 0))
    PARTITION BY HASH (id jumpbackhash3_int8_ops);
SELECT format('CREATE TABLE engine_move.em_%s PARTITION OF engine_move.em FOR VALUES WITH (MODULUS 3, REMAINDER %s)', b, b)
FROM generate_series(0, 2) AS b \gexec
CREATE INDEX em_id_idx ON engine_move.em (id);
COMMENT ON TABLE engine_move.em_1 IS 'bucket one';
INSERT INTO engine_move.em SELECT i, 'v' || i, i / 7.0 FROM generate_series(1, 3000) AS i;
CREATE TABLE engine_move.mirror AS SELECT * FROM engine_move.em;
CREATE ROLE engine_move_reader;
GRANT USAGE ON SCHEMA engine_move TO engine_move_reader;
GRANT SELECT ON engine_move.em, engine_move.em_1 TO engine_move_reader;
CREATE TEMP SEQUENCE write_k START 100 INCREMENT 50;

CREATE TEMP TABLE writes (n serial, bucket int, inserted bigint, updated bigint, deleted bigint);

-- One row written in both tables (old_id NULL: inserted; new_id NULL:
-- deleted; the same: updated; else its key updated), and its changes
-- recorded by bucket; it must be there (or not, to insert it) in both.
CREATE FUNCTION pg_temp.write_row(old_id bigint, new_id bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    t text;
    n bigint;
    old_bucket int := jumpbackhash(old_id, 3);
    new_bucket int := jumpbackhash(new_id, 3);
BEGIN
    FOREACH t IN ARRAY ARRAY['engine_move.em', 'engine_move.mirror'] LOOP
        IF old_id IS NULL THEN
            EXECUTE format('INSERT INTO %s VALUES (%s, %L, %s / 3.0)', t, new_id, 'new', new_id);
        ELSIF new_id IS NULL THEN
            EXECUTE format('DELETE FROM %s WHERE id = %s', t, old_id);
        ELSIF new_id = old_id THEN
            EXECUTE format('UPDATE %s SET f = f + 0.1, v = %L WHERE id = %s', t, 'updated', old_id);
        ELSE
            EXECUTE format('UPDATE %s SET id = %s WHERE id = %s', t, new_id, old_id);
        END IF;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n <> 1 THEN
            RAISE EXCEPTION 'write_row(%, %) changed % rows of %', old_id, new_id, n, t;
        END IF;
    END LOOP;
    IF old_bucket IS NOT DISTINCT FROM new_bucket THEN
        INSERT INTO pg_temp.writes (bucket, inserted, updated, deleted) VALUES (old_bucket, 0, 1, 0);
    ELSE
        INSERT INTO pg_temp.writes (bucket, inserted, updated, deleted)
        SELECT b, i, 0, d FROM (VALUES (old_bucket, 0, 1), (new_bucket, 1, 0)) AS x(b, i, d) WHERE b IS NOT NULL;
    END IF;
END
$$;

-- The n-th id of bucket b among first .. first + 49.
CREATE FUNCTION pg_temp.id_in(b int, first bigint, n int DEFAULT 1) RETURNS bigint LANGUAGE sql AS $$
    SELECT i FROM generate_series(first, first + 49) AS i WHERE jumpbackhash(i, 3) = b ORDER BY i OFFSET n - 1 LIMIT 1
$$;

CREATE FUNCTION pg_temp.write_both() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    k bigint := nextval('pg_temp.write_k');   -- (ids k .. k + 49 untouched so far)
    last int := (SELECT coalesce(max(n), 0) FROM pg_temp.writes);
BEGIN
    IF k + 49 > 3000 THEN
        RAISE EXCEPTION 'write_both has no rows left to write';
    END IF;
    PERFORM pg_temp.write_row(NULL, pg_temp.id_in(1, k + 10000));
    PERFORM pg_temp.write_row(pg_temp.id_in(1, k), pg_temp.id_in(1, k));
    PERFORM pg_temp.write_row(pg_temp.id_in(1, k, 2), NULL);
    -- (PostgreSQL moves no row out of a foreign partition: an update of
    -- the key there leaves the row where it is, of another bucket; while
    -- em_1 is a foreign table, that key stays in bucket 1)
    PERFORM pg_temp.write_row(pg_temp.id_in(1, k, 3),
                              CASE (SELECT relkind FROM pg_class WHERE oid = 'engine_move.em_1'::regclass)
                                   WHEN 'f' THEN pg_temp.id_in(1, k + 20000, 2) ELSE pg_temp.id_in(2, k + 20000) END);
    PERFORM pg_temp.write_row(pg_temp.id_in(0, k), pg_temp.id_in(1, k + 20000));
    PERFORM pg_temp.write_row(NULL, pg_temp.id_in(0, k + 10000));
    PERFORM pg_temp.write_row(pg_temp.id_in(2, k), pg_temp.id_in(2, k));
    RETURN (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes WHERE n > last AND bucket = 1);
END
$$;

\i test/engine_test_helpers.sql

CREATE FUNCTION pg_temp.differences() RETURNS bigint LANGUAGE sql AS $$
    SELECT pg_temp.differ('SELECT * FROM engine_move.em', 'SELECT * FROM engine_move.mirror')
$$;

CREATE FUNCTION pg_temp.state() RETURNS reshard_state LANGUAGE sql AS $$
    SELECT pg_temp.state_of('engine_move.em')
$$;

CREATE FUNCTION pg_temp.log_entries() RETURNS TABLE (seq bigint, partition oid, op text, old_row jsonb, new_row jsonb)
LANGUAGE sql AS $$
    SELECT * FROM pg_temp.log_entries_of('engine_move.em')
$$;

CREATE PROCEDURE pg_temp.step_to(target text) LANGUAGE plpgsql AS $$
BEGIN
    CALL pg_temp.step_table_to('engine_move.em', target);
END
$$;

-- Each name of the engine's in a text with the OID in it replaced by its
-- relation's name in braces, or by N, and the hash after it
-- (reshard_object_name) left out.
CREATE FUNCTION pg_temp.normalized(x text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    m text[];
    named text;
    result text := '';
BEGIN
    LOOP
        m := regexp_match(x, '^(.*?)\m(reshard_[a-z_]*_)([0-9]+)(_[0-9a-f]{16})?(.*)$');
        EXIT WHEN m IS NULL;
        named := (SELECT relname FROM pg_class WHERE oid = m[3]::oid);
        -- (a relation named by its own OID, reshard_old_N: N)
        result := result || m[1] || m[2]
                  || coalesce('{' || pg_temp.normalized(nullif(named, m[2] || m[3] || coalesce(m[4], ''))) || '}', 'N');
        x := m[5];
    END LOOP;
    RETURN result || x;
END
$$;

CREATE FUNCTION pg_temp.engine_objects() RETURNS SETOF text LANGUAGE sql AS $$
    SELECT x FROM (
        SELECT format('%s %s', CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table' WHEN 'i' THEN 'index'
                                              WHEN 'I' THEN 'partitioned index' WHEN 'f' THEN 'foreign table'
                                              WHEN 'S' THEN 'sequence' ELSE c.relkind::text END,
                      pg_temp.normalized(c.relname::text)) AS x
        FROM pg_class c WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relname LIKE 'reshard\_%'
        UNION ALL
        SELECT format('trigger %s on %s', regexp_replace(t.tgname, '[0-9]+$', 'N'), pg_temp.normalized(c.relname::text))
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = 'engine_move'::regnamespace AND t.tgname LIKE 'reshard\_%'
        UNION ALL
        SELECT format('constraint %s on %s', pg_temp.normalized(k.conname::text), pg_temp.normalized(c.relname::text))
        FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
        WHERE c.relnamespace = 'engine_move'::regnamespace AND k.conname LIKE 'reshard\_%'
          AND k.contype <> 'n') AS o
    ORDER BY x COLLATE "C"
$$;

CREATE FUNCTION pg_temp.remote(query text) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT x FROM dblink('engine_move_server', query) AS t(x text)
$$;

CREATE FUNCTION pg_temp.remote_objects() RETURNS SETOF text LANGUAGE sql AS $$
    SELECT pg_temp.normalized(x) FROM pg_temp.remote($remote$
        SELECT pg_catalog.format('%s %s', CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'i' THEN 'index'
                                                         ELSE c.relkind::text END, c.relname)
        FROM pg_catalog.pg_class c WHERE c.relnamespace = 'engine_move'::regnamespace
        UNION ALL
        SELECT pg_catalog.format('trigger %s on %s', t.tgname, c.relname)
        FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = 'engine_move'::regnamespace AND NOT t.tgisinternal
        UNION ALL
        SELECT pg_catalog.format('function %s', p.proname) FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = 'engine_move'::regnamespace
        UNION ALL
        SELECT pg_catalog.format('comment on %s: %s', c.relname, d.description)
        FROM pg_catalog.pg_description d JOIN pg_catalog.pg_class c ON c.oid = d.objoid
        WHERE d.classoid = 'pg_catalog.pg_class'::regclass AND c.relnamespace = 'engine_move'::regnamespace
        UNION ALL
        SELECT DISTINCT pg_catalog.format('privilege on %s for %s', c.relname, a.grantee::regrole)
        FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) AS a
        WHERE c.relnamespace = 'engine_move'::regnamespace AND a.grantee <> c.relowner
    $remote$) AS r(x)
    ORDER BY pg_temp.normalized(x) COLLATE "C"
$$;

CREATE FUNCTION pg_temp.remote_rows(name text DEFAULT 'em_1') RETURNS TABLE (id bigint, v text, f float8) LANGUAGE sql AS $$
    SELECT * FROM dblink('engine_move_server', format('SELECT id, v, f FROM engine_move.%I', name)) AS t(id bigint, v text, f float8)
$$;

CREATE FUNCTION pg_temp.bucket_1(rel text) RETURNS text LANGUAGE sql AS $$
    SELECT format('SELECT * FROM %s WHERE jumpbackhash(id, 3) = 1', rel)
$$;

CREATE FUNCTION pg_temp.placement() RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(p.server, 'here') || ', ' || CASE c.relkind WHEN 'r' THEN 'table' WHEN 'f' THEN 'foreign table' END
    FROM partition_placement p JOIN pg_class c ON c.oid = p.partition
    WHERE p."table" = 'engine_move.em'::regclass AND p.bucket = 1
$$;

CREATE PROCEDURE pg_temp.engine_move_drop() LANGUAGE plpgsql AS $$
DECLARE
    x text;
BEGIN
    PERFORM set_config('client_min_messages', 'warning', true);
    PERFORM postgres_fdw_disconnect_all();
    DROP SCHEMA engine_move CASCADE;
    DELETE FROM reshard_state WHERE parent_name LIKE 'engine\_move.%';
    DROP SERVER engine_move_server CASCADE;
    DROP ROLE engine_move_reader;
    FOR x IN SELECT extension FROM pg_temp.engine_move_extensions LOOP
        EXECUTE format('DROP EXTENSION %I', x);
    END LOOP;
END
$$;
RESET client_min_messages;
\set ECHO all
