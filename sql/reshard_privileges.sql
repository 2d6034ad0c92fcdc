-- What the resharding engine makes (the tables it fills, the new parent, the
-- change log and its sequence) is usable by nobody but the table's owner,
-- whatever the schema's default privileges grant: a role they would let
-- read and write every new table of the owner's can neither read a shadow
-- (every column of every row, where it may read two columns of the table)
-- nor touch the change log, while the call runs.  After the cutover, the
-- table and its partitions have the grants they had.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
CREATE ROLE reshard_privileges_owner;
CREATE ROLE reshard_privileges_spy;
GRANT CREATE ON SCHEMA public TO reshard_privileges_owner;
ALTER DEFAULT PRIVILEGES FOR ROLE reshard_privileges_owner IN SCHEMA public
    GRANT ALL ON TABLES TO reshard_privileges_spy;
ALTER DEFAULT PRIVILEGES FOR ROLE reshard_privileges_owner IN SCHEMA public
    GRANT ALL ON SEQUENCES TO PUBLIC;
SET ROLE reshard_privileges_owner;
CREATE TABLE rp (id bigint NOT NULL, secret text, visible text) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE rp_0 PARTITION OF rp FOR VALUES IN (0);
CREATE TABLE rp_1 PARTITION OF rp FOR VALUES IN (1);
INSERT INTO rp SELECT i, 'secret ' || i, 'visible ' || i FROM generate_series(1, 100) AS i;
CREATE TABLE rp_2 (LIKE rp INCLUDING ALL);
-- the table's own grants: two columns for the spy (the default privileges
-- gave it everything on the partitions; the table's grants are the owner's choice)
REVOKE ALL ON rp, rp_0, rp_1, rp_2 FROM reshard_privileges_spy;
GRANT SELECT (id, visible) ON rp TO reshard_privileges_spy;
RESET ROLE;
CREATE FUNCTION rp_grants() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(format('%s %s', c.relname, coalesce(c.relacl::text, 'default')), ', ' ORDER BY c.relname)
    FROM pg_class c WHERE c.relname IN ('rp', 'rp_0', 'rp_1', 'rp_2')
$$;
SELECT rp_grants() AS before \gset

CALL reshard_begin('rp', 'add', 'rp_2');
CALL reshard_step('rp');   -- setup
CALL reshard_step('rp');   -- capture
CALL reshard_step('rp');   -- the copy of rp_0
SELECT phase, rows_copied > 0 AS copied FROM reshard_progress;
-- What the engine made, as the spy.
CREATE TEMP TABLE rp_made AS
SELECT t.oid::regclass AS t FROM reshard_state s, unnest(s.shadows || s.new_parent || s.log || s.log_sequence) AS t(oid)
WHERE t.oid IS NOT NULL AND t.oid <> 'rp_2'::regclass;
GRANT SELECT ON rp_made TO reshard_privileges_spy;
SET ROLE reshard_privileges_spy;
DO $$
DECLARE
    t regclass;
    outcome text;
BEGIN
    FOR t IN SELECT m.t FROM rp_made m ORDER BY m.t::text LOOP
        BEGIN
            EXECUTE format('SELECT FROM %s LIMIT 1', t);
            outcome := 'read';
        EXCEPTION WHEN insufficient_privilege THEN
            outcome := 'refused';
        END;
        RAISE WARNING 'select from %: %', regexp_replace(t::text, '_[0-9]+_[0-9a-f]{16}$', '_N'), outcome;
    END LOOP;
END
$$;
RESET ROLE;
SELECT count(*) AS spy_privileges
FROM reshard_state s, unnest(s.shadows || s.new_parent || s.log || s.log_sequence) AS t(oid), pg_class c,
     aclexplode(c.relacl) AS a
WHERE c.oid = t.oid AND t.oid <> 'rp_2'::regclass AND a.grantee IN (0, 'reshard_privileges_spy'::regrole);

-- To the end: the grants are those of before.
DO $$
BEGIN
    WHILE (SELECT phase FROM reshard_state) NOT IN ('done', 'aborted') LOOP
        CALL reshard_step('rp');
    END LOOP;
END
$$;
SELECT phase FROM reshard_progress;
SELECT rp_grants() = :'before' AS same_grants;

DROP TABLE rp, rp_made;
DROP FUNCTION rp_grants();
DELETE FROM reshard_state;

ALTER DEFAULT PRIVILEGES FOR ROLE reshard_privileges_owner IN SCHEMA public
    REVOKE ALL ON TABLES FROM reshard_privileges_spy;
ALTER DEFAULT PRIVILEGES FOR ROLE reshard_privileges_owner IN SCHEMA public
    REVOKE ALL ON SEQUENCES FROM PUBLIC;
-- Without those default privileges, an event trigger of the DBA's that
-- grants the spy the columns of every table made (as scripts that stand in
-- for default privileges do; it notes each table), the table's own grants
-- taken back from the spy: the spy gets no column of what the engine
-- makes either (before the fix, it could read and update every column of
-- the shadows, the new parent and the change log).
CREATE TABLE rq_granted (relid oid);
GRANT INSERT ON rq_granted TO reshard_privileges_owner;
CREATE FUNCTION rq_grant_columns() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT c.objid FROM pg_event_trigger_ddl_commands() AS c WHERE c.command_tag = 'CREATE TABLE' LOOP
        EXECUTE (SELECT format('GRANT SELECT (%s), UPDATE (%1$s) ON %s TO reshard_privileges_spy',
                               string_agg(quote_ident(attname), ', ' ORDER BY attnum), r.objid::regclass)
                 FROM pg_attribute WHERE attrelid = r.objid AND attnum > 0 AND NOT attisdropped);
        INSERT INTO public.rq_granted VALUES (r.objid);
    END LOOP;
END
$$;
CREATE EVENT TRIGGER rq_grant_columns ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION rq_grant_columns();
SET ROLE reshard_privileges_owner;
CREATE TABLE rq (id bigint NOT NULL, secret text) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE rq_0 PARTITION OF rq FOR VALUES IN (0);
CREATE TABLE rq_1 PARTITION OF rq FOR VALUES IN (1);
INSERT INTO rq SELECT i, 'secret ' || i FROM generate_series(1, 100) AS i;
CREATE TABLE rq_2 (LIKE rq INCLUDING ALL);
REVOKE ALL ON rq, rq_0, rq_1, rq_2 FROM reshard_privileges_spy;
GRANT SELECT (id) ON rq TO reshard_privileges_spy;
RESET ROLE;
CREATE FUNCTION rq_spy_columns() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(format('%s.%s', c.relname, a.attname), ', ' ORDER BY c.relname, a.attnum)
    FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE c.relname ~ '^(rq|reshard_)' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
      AND has_column_privilege('reshard_privileges_spy', c.oid, a.attnum, 'SELECT, UPDATE')
$$;
SELECT rq_spy_columns() AS spy_columns_before;
CALL reshard_begin('rq', 'add', 'rq_2');
CALL reshard_step('rq');   -- setup
CALL reshard_step('rq');   -- capture
CALL reshard_step('rq');   -- the copy of rq_0
SELECT phase FROM reshard_progress;
-- The event trigger did grant the spy the columns of each table the engine made.
SELECT count(*) AS made_and_granted
FROM reshard_state s, unnest(s.shadows || s.new_parent || s.log) AS t(oid)
WHERE t.oid <> 'rq_2'::regclass AND t.oid IN (SELECT relid FROM rq_granted);
SELECT rq_spy_columns() AS spy_columns_during;
DO $$
BEGIN
    WHILE (SELECT phase FROM reshard_state) NOT IN ('done', 'aborted') LOOP
        CALL reshard_step('rq');
    END LOOP;
END
$$;
SELECT phase FROM reshard_progress;
SELECT rq_spy_columns() AS spy_columns_after;
DROP EVENT TRIGGER rq_grant_columns;
DROP FUNCTION rq_grant_columns(), rq_spy_columns();
DROP TABLE rq, rq_granted;
DELETE FROM reshard_state;
REVOKE CREATE ON SCHEMA public FROM reshard_privileges_owner;
DROP ROLE reshard_privileges_spy;
DROP ROLE reshard_privileges_owner;
