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
REVOKE CREATE ON SCHEMA public FROM reshard_privileges_owner;
DROP ROLE reshard_privileges_spy;
DROP ROLE reshard_privileges_owner;
