-- An event trigger of the DBA's that grants ALL to PUBLIC on every table
-- a DDL command creates or alters, here and on the server a partition
-- moves to.  The engine's own DDL fires it (its CREATE, ALTER, COMMENT,
-- CREATE INDEX statements, here and through dblink there): what it grants
-- on the table's relations is revoked after the last such statement, so
-- that a table that was its owner's only is still its owner's only after
-- a move to a server, a move back, and a resharding.  (The grants of an
-- event trigger on the engine's own objects while a call runs:
-- reshard_privileges.)
\i test/engine_move_helpers.sql
-- The trigger, here and there (the same statements); each call records
-- the tables it granted.
\set etg_setup 'CREATE TABLE public.etg_granted (relation text); GRANT INSERT ON public.etg_granted TO PUBLIC; CREATE FUNCTION public.etg_grant_all() RETURNS event_trigger LANGUAGE plpgsql AS $$ DECLARE r record; BEGIN FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE object_type IN (''table'', ''foreign table'', ''view'') LOOP EXECUTE format(''GRANT ALL ON %s TO PUBLIC'', r.object_identity); INSERT INTO public.etg_granted VALUES (r.object_identity); END LOOP; END $$; CREATE EVENT TRIGGER etg_grant_all ON ddl_command_end WHEN TAG IN (''CREATE TABLE'', ''ALTER TABLE'', ''COMMENT'', ''CREATE INDEX'', ''CREATE FOREIGN TABLE'', ''ALTER FOREIGN TABLE'', ''CREATE VIEW'') EXECUTE FUNCTION public.etg_grant_all()'
:etg_setup;
SELECT dblink_exec('engine_move_server', :'etg_setup') AS server_trigger;
-- The relations of the table here on which PUBLIC has a privilege (none: the helper
-- grants engine_move_reader only), and those of the schema there.
CREATE FUNCTION pg_temp.public_here() RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(DISTINCT c.relname, ', '), 'none')
    FROM pg_class c, LATERAL (SELECT c.relacl UNION ALL SELECT attacl FROM pg_attribute WHERE attrelid = c.oid) AS x(acl),
         aclexplode(x.acl) AS a
    WHERE c.relnamespace = 'engine_move'::regnamespace AND c.relname ~ '^em' AND a.grantee = 0
$$;
CREATE FUNCTION pg_temp.public_there() RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(DISTINCT x, ', '), 'none') FROM pg_temp.remote($q$
        SELECT c.relname::text
        FROM pg_class c, LATERAL (SELECT c.relacl UNION ALL SELECT attacl FROM pg_attribute WHERE attrelid = c.oid) AS x(acl),
             aclexplode(x.acl) AS a
        WHERE c.relnamespace = 'engine_move'::regnamespace AND a.grantee = 0$q$) AS r(x)
$$;
-- (each operation below starts from a table PUBLIC has no privilege on)
CREATE FUNCTION pg_temp.revoke_public() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT oid::regclass AS rel FROM pg_class
             WHERE relnamespace = 'engine_move'::regnamespace AND relname ~ '^em' AND relkind IN ('r', 'p', 'f') LOOP
        EXECUTE format('REVOKE ALL ON %s FROM PUBLIC', r.rel);
    END LOOP;
    TRUNCATE public.etg_granted;
END
$$;
SELECT pg_temp.public_here() AS public_here, pg_temp.public_there() AS public_there;
TRUNCATE public.etg_granted;

-- A move to the server: the trigger fired here and there; PUBLIC has
-- nothing on the table, its partitions, or the table there.
CALL partition_move('engine_move.em_1', 'engine_move_server');
SELECT pg_temp.placement() AS em_1;
SELECT count(*) > 0 AS granted_here FROM public.etg_granted;
SELECT * FROM pg_temp.remote('SELECT (count(*) > 0)::text FROM public.etg_granted') AS r(granted_there);
SELECT pg_temp.public_here() AS public_here, pg_temp.public_there() AS public_there;
SELECT pg_temp.revoke_public();

-- And back here.
CALL partition_move('engine_move.em_1', NULL);
SELECT pg_temp.placement() AS em_1;
SELECT count(*) > 0 AS granted_here FROM public.etg_granted;
SELECT pg_temp.public_here() AS public_here, pg_temp.public_there() AS public_there;
SELECT pg_temp.revoke_public();

-- A resharding: a partition added, and removed again.
CREATE TABLE engine_move.em_3 (LIKE engine_move.em INCLUDING ALL);
SELECT pg_temp.revoke_public();
CALL reshard_add_partition('engine_move.em', 'engine_move.em_3');
SELECT count(*) > 0 AS granted_here FROM public.etg_granted;
SELECT pg_temp.public_here() AS public_here;
SELECT pg_temp.revoke_public();
CALL reshard_remove_partition('engine_move.em');
SELECT count(*) > 0 AS granted_here FROM public.etg_granted;
SELECT pg_temp.public_here() AS public_here;
SELECT pg_temp.differences() AS differences;

DROP EVENT TRIGGER etg_grant_all;
DROP FUNCTION public.etg_grant_all();
DROP TABLE public.etg_granted;
DROP TABLE engine_move.em_3;
CALL pg_temp.engine_move_drop();
DROP DATABASE engine_move_server WITH (FORCE);
