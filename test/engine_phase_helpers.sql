\set ECHO none
-- test/engine_phase_helpers.sql
--	What the tests of the resharding engine's phases share (sql/engine_*.sql,
--	one per phase: docs/resharding-engine.md, "Phases"); a test reads it
--	with \i test/engine_phase_helpers.sql (not echoed: what it makes is here)
--	and ends with CALL pg_temp.engine_phase_drop().
--
--	engine_phase.ep		the table, owned by the role engine_phase_owner (not a
--						superuser: the engine runs its routines as the owner):
--						ids 1 .. 3000 in 3 partitions ep_0 .. ep_2 of
--						HASH (id jumpbackhash3_int8_ops); ep_3, empty, to add
--	engine_phase.mirror	a plain table that takes the same writes
--	pg_temp.write_both()	writes to both (an insert, an update, an update of
--						the key, a delete, an upsert); returns the row changes
--						the partitions saw, as PostgreSQL counts them
--						(pg_stat_xact_user_tables: an update that moves a row
--						to another partition is a delete and an insert), and
--						adds them by kind to the table pg_temp.writes
--	(the generic ones, shared with the move's tests: test/engine_test_helpers.sql)
--	pg_temp.differ(a, b)	rows of query a not in query b, and of b not in a
--	pg_temp.rows_in(table)	its rows
--	pg_temp.sqlstate_of(query)	the SQLSTATE it fails with, or 'no error'
--	pg_temp.differences()	rows of ep not in mirror, and of mirror not in ep
--	pg_temp.state()		ep's row of reshard_state
--	pg_temp.log_entries()	the entries of ep's change log (rows as jsonb)
--	pg_temp.step_to(phase)	steps ep's resharding until it is in phase
--	pg_temp.engine_objects()	what the engine made in the schema (relations,
--						triggers, constraints named reshard_..., but the NOT
--						NULL ones PostgreSQL 18 catalogs), with OIDs
--						in names replaced by the relation's name in braces
--						(reshard_shadow_{ep_0}), or by N (an OID of no
--						relation, or of the relation itself: reshard_old_N),
--						and their hashes left out
--	pg_temp.layout()	ep's partitions by bucket
--	pg_temp.refusals(routine, phase...)	what routine says to a NULL state
--						and to ep's state put in each phase given
--	pg_temp.routine_of(phase)	the phase's routine (reshard_phases())
--	pg_temp.routine_taking(types)	the extension's routine outside the
--						phase table with these argument types
--						('reshard_state, text': the plan; 'reshard_state': the
--						catalog check; 'reshard_state, text, integer': the
--						shard views)
--
--	Everything is made afresh (what a test that failed left is dropped
--	first), in the schema engine_phase, in pg_temp and in ep's state row,
--	all of which engine_phase_drop() drops: no test depends on another.

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
DROP SCHEMA IF EXISTS engine_phase CASCADE;
DELETE FROM reshard_state WHERE parent_name LIKE 'engine\_phase.%';
DROP ROLE IF EXISTS engine_phase_owner;
CREATE ROLE engine_phase_owner;
CREATE SCHEMA engine_phase AUTHORIZATION engine_phase_owner;
SET ROLE engine_phase_owner;
CREATE TABLE engine_phase.ep (id bigint NOT NULL PRIMARY KEY, v text, f float8)
    PARTITION BY HASH (id jumpbackhash3_int8_ops);
SELECT format('CREATE TABLE engine_phase.ep_%s PARTITION OF engine_phase.ep FOR VALUES WITH (MODULUS 3, REMAINDER %s)', b, b)
FROM generate_series(0, 2) AS b \gexec
INSERT INTO engine_phase.ep SELECT i, 'v' || i, i / 7.0 FROM generate_series(1, 3000) AS i;
CREATE TABLE engine_phase.ep_3 (LIKE engine_phase.ep INCLUDING ALL);
RESET ROLE;
CREATE TABLE engine_phase.mirror AS SELECT * FROM engine_phase.ep;
CREATE TEMP SEQUENCE write_k START 100 INCREMENT 10;

CREATE TEMP TABLE writes (n serial, inserted bigint, updated bigint, deleted bigint);

-- The rows inserted, updated and deleted in ep's partitions so far in this
-- transaction, and (not yet reported) in the ones before.
CREATE FUNCTION pg_temp.tuple_changes(OUT inserted bigint, OUT updated bigint, OUT deleted bigint) LANGUAGE sql AS $$
    SELECT coalesce(sum(n_tup_ins), 0)::bigint, coalesce(sum(n_tup_upd), 0)::bigint, coalesce(sum(n_tup_del), 0)::bigint
    FROM pg_stat_xact_user_tables WHERE schemaname = 'engine_phase' AND relname ~ '^ep_[0-9]+$'
$$;

CREATE FUNCTION pg_temp.write_both() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    k bigint := nextval('pg_temp.write_k');
    before record := pg_temp.tuple_changes();
    after record;
BEGIN
    INSERT INTO engine_phase.ep VALUES (k + 10000, 'new', k / 3.0);
    INSERT INTO engine_phase.mirror VALUES (k + 10000, 'new', k / 3.0);
    UPDATE engine_phase.ep SET f = f + 0.1 WHERE id = k;
    UPDATE engine_phase.mirror SET f = f + 0.1 WHERE id = k;
    UPDATE engine_phase.ep SET id = id + 20000 WHERE id = k + 1;
    UPDATE engine_phase.mirror SET id = id + 20000 WHERE id = k + 1;
    DELETE FROM engine_phase.ep WHERE id = k + 2;
    DELETE FROM engine_phase.mirror WHERE id = k + 2;
    INSERT INTO engine_phase.ep VALUES (k + 3, 'upsert', 0) ON CONFLICT (id) DO UPDATE SET v = 'upserted';
    INSERT INTO engine_phase.mirror SELECT k + 3, 'upsert', 0 WHERE NOT EXISTS (SELECT FROM engine_phase.mirror WHERE id = k + 3);
    UPDATE engine_phase.mirror SET v = 'upserted' WHERE id = k + 3 AND v <> 'upsert';
    after := pg_temp.tuple_changes();
    INSERT INTO pg_temp.writes (inserted, updated, deleted)
    VALUES (after.inserted - before.inserted, after.updated - before.updated, after.deleted - before.deleted);
    RETURN (after.inserted - before.inserted) + (after.updated - before.updated) + (after.deleted - before.deleted);
END
$$;

\i test/engine_test_helpers.sql

CREATE FUNCTION pg_temp.differences() RETURNS bigint LANGUAGE sql AS $$
    SELECT pg_temp.differ('SELECT * FROM engine_phase.ep', 'SELECT * FROM engine_phase.mirror')
$$;

CREATE FUNCTION pg_temp.state() RETURNS reshard_state LANGUAGE sql AS $$
    SELECT pg_temp.state_of('engine_phase.ep')
$$;

CREATE FUNCTION pg_temp.log_entries() RETURNS TABLE (seq bigint, partition oid, op text, old_row jsonb, new_row jsonb)
LANGUAGE sql AS $$
    SELECT * FROM pg_temp.log_entries_of('engine_phase.ep')
$$;

CREATE PROCEDURE pg_temp.step_to(target text) LANGUAGE plpgsql AS $$
BEGIN
    CALL pg_temp.step_table_to('engine_phase.ep', target);
END
$$;

-- A name of the engine's with the OID in it replaced by its
-- relation's name in braces, or by N, and the hash after it
-- (reshard_object_name) left out.
CREATE FUNCTION pg_temp.normalized(name text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    m text[] := regexp_match(name, '^(reshard_[a-z_]*_)([0-9]+)(_[0-9a-f]{16})?(.*)$');
    named text;
BEGIN
    IF m IS NULL THEN
        RETURN name;
    END IF;
    named := (SELECT relname FROM pg_class WHERE oid = m[2]::oid);
    -- (a relation named by its own OID, reshard_old_N: N)
    RETURN m[1] || coalesce('{' || pg_temp.normalized(nullif(named, name)) || '}', 'N') || m[4];
END
$$;

CREATE FUNCTION pg_temp.engine_objects() RETURNS SETOF text LANGUAGE sql AS $$
    SELECT x FROM (
        SELECT format('%s %s', CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'partitioned table' WHEN 'i' THEN 'index'
                                              WHEN 'I' THEN 'partitioned index'
                                              WHEN 'S' THEN 'sequence' ELSE c.relkind::text END,
                      pg_temp.normalized(c.relname::text)) AS x
        FROM pg_class c WHERE c.relnamespace = 'engine_phase'::regnamespace AND c.relname LIKE 'reshard\_%'
        UNION ALL
        SELECT format('trigger %s on %s', regexp_replace(t.tgname, '[0-9]+$', 'N'), pg_temp.normalized(c.relname::text))
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = 'engine_phase'::regnamespace AND t.tgname LIKE 'reshard\_%'
        UNION ALL
        SELECT format('constraint %s on %s', pg_temp.normalized(k.conname::text), pg_temp.normalized(c.relname::text))
        FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
        WHERE c.relnamespace = 'engine_phase'::regnamespace AND k.conname LIKE 'reshard\_%'
          AND k.contype <> 'n') AS o
    ORDER BY x COLLATE "C"
$$;

CREATE FUNCTION pg_temp.layout(OUT bucket int, OUT partition text, OUT rows bigint) RETURNS SETOF record
LANGUAGE plpgsql AS $$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT l.bucket, l.partition FROM sharding_layout('engine_phase.ep') AS l ORDER BY l.bucket LOOP
        bucket := p.bucket;
        partition := p.partition::text;
        EXECUTE format('SELECT count(*) FROM %s', p.partition) INTO rows;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Calls routine with state s and NULLs for its other arguments: the error
-- it raises, as 'SQLSTATE: message (detail)', or 'no error'.
CREATE FUNCTION pg_temp.call_routine(routine regprocedure, s reshard_state) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    message text;
    detail text;
BEGIN
    IF routine IS NULL THEN
        RAISE EXCEPTION 'no routine';
    END IF;
    EXECUTE (SELECT format('SELECT %I.%I($1%s)', p.pronamespace::regnamespace, p.proname,
                           (SELECT string_agg(format(', NULL::%s', format_type(t, NULL)), '' ORDER BY i)
                            FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, i) WHERE i > 1))
             FROM pg_proc p WHERE p.oid = routine)
    USING s;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN format('%s: %s (%s)', SQLSTATE, message, detail);
END
$$;

CREATE FUNCTION pg_temp.refusals(routine regprocedure, VARIADIC phases text[]) RETURNS TABLE (state text, error text)
LANGUAGE plpgsql AS $$
DECLARE
    s reshard_state := pg_temp.state();
    phase text;
BEGIN
    state := 'NULL';
    error := pg_temp.call_routine(routine, NULL);
    RETURN NEXT;
    FOREACH phase IN ARRAY phases LOOP
        s.phase := phase;
        state := 'in phase ' || phase;
        error := pg_temp.call_routine(routine, s);
        RETURN NEXT;
    END LOOP;
END
$$;

-- The routine of a phase (reshard_phases()).
CREATE FUNCTION pg_temp.routine_of(phase text) RETURNS regprocedure LANGUAGE sql AS $$
    SELECT p.routine FROM reshard_phases() AS p WHERE p.phase = routine_of.phase
$$;

-- A routine of the extension the phase table does not name, by its
-- argument types (its name may change).
CREATE FUNCTION pg_temp.routine_taking(arguments text) RETURNS regprocedure LANGUAGE sql AS $$
    SELECT p.oid::regprocedure FROM pg_proc p
    JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'subsetting'
    WHERE oidvectortypes(p.proargtypes) = arguments AND p.prorettype = 'reshard_state'::regtype
      AND p.oid NOT IN (SELECT routine FROM reshard_phases() WHERE routine IS NOT NULL)
$$;

CREATE PROCEDURE pg_temp.engine_phase_drop() LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('client_min_messages', 'warning', true);
    DROP SCHEMA engine_phase CASCADE;
    DELETE FROM reshard_state WHERE parent_name LIKE 'engine\_phase.%';
    DROP ROLE engine_phase_owner;
END
$$;
RESET client_min_messages;
\set ECHO all
