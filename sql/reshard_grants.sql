-- The grants of the table, of its partitions and of their columns come back
-- after a resharding exactly, grantors included: a role that granted WITH
-- GRANT OPTION is still the grantor of what it granted, so REVOKE ...
-- CASCADE from it still reaches its grantees, and pg_shdepend still
-- records every grantee (DROP ROLE refused).  The new partition gets the
-- partitions' grants, not what the schema's default privileges gave it:
-- where the partitions disagree, only what every one of them grants.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
CREATE ROLE reshard_grants_owner;
CREATE ROLE reshard_grants_alice;
CREATE ROLE reshard_grants_bob;
CREATE ROLE reshard_grants_carol;
CREATE ROLE reshard_grants_spy;
GRANT CREATE ON SCHEMA public TO reshard_grants_owner;
ALTER DEFAULT PRIVILEGES FOR ROLE reshard_grants_owner IN SCHEMA public
    GRANT SELECT ON TABLES TO reshard_grants_spy;
SET ROLE reshard_grants_owner;
CREATE TABLE rg (id bigint NOT NULL, secret text, visible text) PARTITION BY LIST (jumpbackhash(id, 2));
CREATE TABLE rg_0 PARTITION OF rg FOR VALUES IN (0);
CREATE TABLE rg_1 PARTITION OF rg FOR VALUES IN (1);
INSERT INTO rg SELECT i, 'secret ' || i, 'visible ' || i FROM generate_series(1, 100) AS i;
-- the table's grants: no spy; alice may grant; bob and carol have what alice granted them
REVOKE ALL ON rg, rg_0, rg_1 FROM reshard_grants_spy;
GRANT SELECT, INSERT ON rg, rg_0, rg_1 TO reshard_grants_alice WITH GRANT OPTION;
GRANT UPDATE (visible) ON rg, rg_0, rg_1 TO reshard_grants_alice WITH GRANT OPTION;
SET ROLE reshard_grants_alice;
GRANT SELECT ON rg, rg_0, rg_1 TO reshard_grants_bob;
GRANT SELECT (id, visible) ON rg, rg_0, rg_1 TO reshard_grants_carol;
GRANT UPDATE (visible) ON rg, rg_0, rg_1 TO reshard_grants_carol;
-- the partitions disagree: only rg_0 lets carol insert; bob may grant
-- INSERT on rg_1 by alice, on rg_0 by the owner, and grants it to carol on both
GRANT INSERT ON rg_0 TO reshard_grants_carol;
GRANT INSERT ON rg_1 TO reshard_grants_bob WITH GRANT OPTION;
SET ROLE reshard_grants_owner;
GRANT INSERT ON rg_0 TO reshard_grants_bob WITH GRANT OPTION;
SET ROLE reshard_grants_bob;
GRANT INSERT ON rg_0, rg_1 TO reshard_grants_carol;
-- a table never resharded, with the same grants, to compare with in the end
SET ROLE reshard_grants_owner;
CREATE TABLE rg_control (LIKE rg);
REVOKE ALL ON rg_control FROM reshard_grants_spy;
GRANT SELECT, INSERT ON rg_control TO reshard_grants_alice WITH GRANT OPTION;
GRANT UPDATE (visible) ON rg_control TO reshard_grants_alice WITH GRANT OPTION;
SET ROLE reshard_grants_alice;
GRANT SELECT ON rg_control TO reshard_grants_bob;
GRANT SELECT (id, visible) ON rg_control TO reshard_grants_carol;
GRANT UPDATE (visible) ON rg_control TO reshard_grants_carol;
SET ROLE reshard_grants_owner;
-- the new partition, as the docs say: the default privileges give the spy SELECT on it
CREATE TABLE rg_2 (LIKE rg INCLUDING ALL);
RESET ROLE;
-- (the owner's MAINTAIN of PostgreSQL 17 and later left out)
CREATE FUNCTION rg_grants(tables text[]) RETURNS TABLE (relname name, grants text) LANGUAGE sql AS $$
    SELECT c.relname,
           concat_ws('; ', replace(coalesce(c.relacl::text, 'default'), '=arwdDxtm/', '=arwdDxt/'),
                     (SELECT string_agg(format('%s %s', a.attname, a.attacl), '; ' ORDER BY a.attnum)
                      FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL))
    FROM pg_class c WHERE c.relname = ANY (tables) AND c.relnamespace = 'public'::regnamespace ORDER BY c.relname
$$;
-- pg_shdepend records exactly the roles the ACLs name (but the owner)
CREATE FUNCTION rg_shdepend_right() RETURNS boolean LANGUAGE sql AS $$
    WITH acl AS (
        SELECT c.oid AS objid, 0 AS objsubid, x.grantee AS role
        FROM pg_class c, aclexplode(c.relacl) AS x
        WHERE c.relname ~ '^rg' AND c.relnamespace = 'public'::regnamespace AND c.relacl IS NOT NULL
        UNION
        SELECT c.oid, 0, x.grantor FROM pg_class c, aclexplode(c.relacl) AS x
        WHERE c.relname ~ '^rg' AND c.relnamespace = 'public'::regnamespace AND c.relacl IS NOT NULL
        UNION
        SELECT a.attrelid, a.attnum, x.grantee FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid,
               aclexplode(a.attacl) AS x
        WHERE c.relname ~ '^rg' AND c.relnamespace = 'public'::regnamespace
        UNION
        SELECT a.attrelid, a.attnum, x.grantor FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid,
               aclexplode(a.attacl) AS x
        WHERE c.relname ~ '^rg' AND c.relnamespace = 'public'::regnamespace),
    wanted AS (SELECT * FROM acl WHERE role NOT IN (0, 'reshard_grants_owner'::regrole)),
    recorded AS (
        SELECT d.objid, d.objsubid, d.refobjid AS role FROM pg_shdepend d JOIN pg_class c ON c.oid = d.objid
        WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'a' AND c.relname ~ '^rg'
          AND d.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()))
    SELECT NOT EXISTS (SELECT * FROM wanted EXCEPT SELECT * FROM recorded)
       AND NOT EXISTS (SELECT * FROM recorded EXCEPT SELECT * FROM wanted)
$$;
SELECT * FROM rg_grants('{rg, rg_0, rg_1, rg_2}');
CREATE TEMP TABLE rg_before AS SELECT * FROM rg_grants('{rg, rg_0, rg_1}');
SELECT rg_shdepend_right();

-- From the setup on, the spy cannot read the new partition's rows.
CALL reshard_begin('rg', 'add', 'rg_2');
CALL reshard_step('rg');   -- setup
CALL reshard_step('rg');   -- capture
CALL reshard_step('rg');   -- the copy of rg_0
SET ROLE reshard_grants_spy;
SELECT count(*) FROM rg_2;
RESET ROLE;

-- Stopped after the cutover, before the finish drops the old parent and
-- the old partitions: renamed away, they keep no right of any role but the
-- owner's own (which GRANT wrote when alice was granted her rights), on the
-- table or on a column, and pg_shdepend records no role for them; no role
-- can read their stale rows or write rows into them that nobody reads.
-- The tables that took their places have their grants already.
DO $$
BEGIN
    WHILE (SELECT phase FROM reshard_state) NOT IN ('finish', 'done', 'aborted') LOOP
        CALL reshard_step('rg');
    END LOOP;
END
$$;
SELECT phase FROM reshard_progress;
-- (the renamed-away tables, named by what they were)
CREATE FUNCTION rg_renamed_away() RETURNS TABLE (was text, t regclass) LANGUAGE sql AS $$
    SELECT CASE c.relkind WHEN 'p' THEN 'old parent' ELSE 'old partition' END, c.oid::regclass
    FROM pg_class c
    WHERE c.relname LIKE 'reshard\_old\_%' AND c.relkind IN ('r', 'p') AND c.relnamespace = 'public'::regnamespace
    ORDER BY 1, c.oid
$$;
SELECT r.was, replace(coalesce(c.relacl::text, 'default'), '=arwdDxtm/', '=arwdDxt/') AS acl,
       (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL) AS column_acls,
       (SELECT count(*) FROM pg_shdepend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'a') AS roles_recorded
FROM rg_renamed_away() r JOIN pg_class c ON c.oid = r.t;
-- What a role can do on each table (its rows; its columns id and
-- visible; a row inserted, updated, deleted; TRUNCATE), each tried and
-- rolled back: Y done (or past the privilege check: a row of another
-- bucket), - refused for want of a privilege.
CREATE FUNCTION rg_tries(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    statement text;
    result text := '';
BEGIN
    FOREACH statement IN ARRAY ARRAY[format('SELECT count(*) FROM %s', t), format('SELECT count(*) FROM (SELECT id, visible FROM %s) AS x', t),
                                     format('INSERT INTO %s (id) VALUES (1)', t), format('UPDATE %s SET visible = visible', t),
                                     format('DELETE FROM %s', t), format('TRUNCATE %s', t)] LOOP
        BEGIN
            EXECUTE statement;
            RAISE EXCEPTION USING ERRCODE = 'triggered_action_exception';
        EXCEPTION
            WHEN triggered_action_exception OR check_violation THEN result := result || 'Y';
            WHEN insufficient_privilege THEN result := result || '-';
        END;
    END LOOP;
    RETURN result;
END
$$;
-- (the privilege functions too, every table and column privilege)
CREATE FUNCTION rg_can(role name, t regclass) RETURNS boolean LANGUAGE sql AS $$
    SELECT has_table_privilege(role, t, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
        OR has_any_column_privilege(role, t, 'SELECT, INSERT, UPDATE, REFERENCES')
$$;
SET ROLE reshard_grants_alice;
SELECT 'alice' AS role, was, rg_tries(t), rg_can(current_user, t) FROM rg_renamed_away();
SET ROLE reshard_grants_bob;
SELECT 'bob' AS role, was, rg_tries(t), rg_can(current_user, t) FROM rg_renamed_away();
SET ROLE reshard_grants_carol;
SELECT 'carol' AS role, was, rg_tries(t), rg_can(current_user, t) FROM rg_renamed_away();
-- (what they may do on the table and its partitions, to compare: as before)
SET ROLE reshard_grants_alice;
SELECT 'alice' AS role, t, rg_tries(t::regclass) FROM unnest('{rg, rg_0, rg_1}'::text[]) AS t;
SET ROLE reshard_grants_carol;
SELECT 'carol' AS role, t, rg_tries(t::regclass) FROM unnest('{rg, rg_0, rg_1}'::text[]) AS t;
RESET ROLE;
SELECT * FROM rg_grants('{rg, rg_0, rg_1}') EXCEPT SELECT * FROM rg_before;

-- To the end: the grants are those of before, grantors included; the new
-- partition has what both partitions grant (not the spy's SELECT, not
-- bob's INSERT, whose grantors differ, nor what bob granted with it).
DO $$
BEGIN
    WHILE (SELECT phase FROM reshard_state) NOT IN ('done', 'aborted') LOOP
        CALL reshard_step('rg');
    END LOOP;
END
$$;
SELECT phase FROM reshard_progress;
SELECT * FROM rg_grants('{rg, rg_0, rg_1}') EXCEPT SELECT * FROM rg_before;
SELECT * FROM rg_grants('{rg_2}');
SELECT rg_shdepend_right();
SET ROLE reshard_grants_spy;
SELECT count(*) FROM rg_2;
RESET ROLE;

-- A grantee cannot be dropped (pg_shdepend records it).
DO $$
BEGIN
    DROP ROLE reshard_grants_carol;
EXCEPTION WHEN dependent_objects_still_exist THEN
    RAISE WARNING 'DROP ROLE refused: %', SQLERRM;
END
$$;

-- REVOKE ... CASCADE from alice reaches bob's and carol's grants, on the
-- table, on every partition and on the columns.
-- (each role's rights on each table: Select, Insert, select (visible) v, update (visible) u)
CREATE FUNCTION rg_rights() RETURNS TABLE (t text, bob text, carol text) LANGUAGE sql AS $$
    SELECT t, r.bob, r.carol
    FROM unnest('{rg, rg_0, rg_1, rg_2, rg_control}'::text[]) AS t,
         LATERAL (SELECT max(x) FILTER (WHERE role = 'reshard_grants_bob') AS bob,
                         max(x) FILTER (WHERE role = 'reshard_grants_carol') AS carol
                  FROM (SELECT role, concat(CASE WHEN has_table_privilege(role, t, 'SELECT') THEN 'S' ELSE '-' END,
                                            CASE WHEN has_table_privilege(role, t, 'INSERT') THEN 'I' ELSE '-' END,
                                            CASE WHEN has_column_privilege(role, t, 'visible', 'SELECT') THEN 'v' ELSE '-' END,
                                            CASE WHEN has_column_privilege(role, t, 'visible', 'UPDATE') THEN 'u' ELSE '-' END) AS x
                        FROM unnest('{reshard_grants_bob, reshard_grants_carol}'::name[]) AS role) AS y) AS r
    ORDER BY t
$$;
SELECT * FROM rg_rights();
REVOKE SELECT, INSERT, UPDATE ON rg, rg_0, rg_1, rg_2, rg_control FROM reshard_grants_alice CASCADE;
SELECT * FROM rg_rights();
-- rg, rg_1 and rg_2 are left as the table never resharded is (rg_0 keeps
-- the INSERT the owner let bob grant, and what bob granted with it)
SELECT * FROM rg_grants('{rg, rg_0, rg_1, rg_2, rg_control}');
SELECT rg_shdepend_right();
-- DROP OWNED BY a grantee does what it does on the table never resharded
-- (PostgreSQL revokes there what the owner granted: alice's grants stay,
-- and pg_shdepend still records them)
DROP OWNED BY reshard_grants_carol;
SELECT * FROM rg_grants('{rg, rg_0, rg_1, rg_2, rg_control}');
SELECT count(*) AS carol_dependencies FROM pg_shdepend WHERE refobjid = 'reshard_grants_carol'::regrole;

-- Removing rg_2, with rights granted to PUBLIC and column grants: after
-- the cutover, the renamed-away tables keep none of them either.
GRANT ALL ON rg, rg_0, rg_1, rg_2 TO PUBLIC;
GRANT SELECT (secret), UPDATE (secret) ON rg, rg_0, rg_1, rg_2 TO reshard_grants_bob;
CREATE TEMP TABLE rg_before_removal AS SELECT * FROM rg_grants('{rg, rg_0, rg_1}');
CALL reshard_begin('rg', 'remove', 'rg_2');
DO $$
BEGIN
    WHILE (SELECT phase FROM reshard_state) NOT IN ('finish', 'done', 'aborted') LOOP
        CALL reshard_step('rg');
    END LOOP;
END
$$;
SELECT phase FROM reshard_progress;
SELECT r.was, replace(coalesce(c.relacl::text, 'default'), '=arwdDxtm/', '=arwdDxt/') AS acl,
       (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL) AS column_acls,
       (SELECT count(*) FROM pg_shdepend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'a') AS roles_recorded
FROM rg_renamed_away() r JOIN pg_class c ON c.oid = r.t;
SET ROLE reshard_grants_spy;
SELECT 'spy' AS role, was, rg_tries(t), rg_can(current_user, t) FROM rg_renamed_away();
SET ROLE reshard_grants_bob;
SELECT 'bob' AS role, was, rg_tries(t), rg_can(current_user, t) FROM rg_renamed_away();
RESET ROLE;
SELECT * FROM rg_grants('{rg, rg_0, rg_1}') EXCEPT SELECT * FROM rg_before_removal;
CALL reshard_step('rg');
SELECT phase FROM reshard_progress;
SELECT count(*) AS renamed_away_left FROM rg_renamed_away();
SELECT * FROM rg_grants('{rg, rg_0, rg_1}') EXCEPT SELECT * FROM rg_before_removal;
DROP TABLE rg_2;

DROP TABLE rg, rg_control;
DROP FUNCTION rg_renamed_away();
DROP FUNCTION rg_tries(regclass);
DROP FUNCTION rg_can(name, regclass);
DROP FUNCTION rg_grants(text[]);
DROP FUNCTION rg_shdepend_right();
DROP FUNCTION rg_rights();
DELETE FROM reshard_state;
ALTER DEFAULT PRIVILEGES FOR ROLE reshard_grants_owner IN SCHEMA public
    REVOKE ALL ON TABLES FROM reshard_grants_spy;
REVOKE CREATE ON SCHEMA public FROM reshard_grants_owner;
DROP ROLE reshard_grants_carol;
DROP ROLE reshard_grants_bob;
DROP ROLE reshard_grants_alice;
DROP ROLE reshard_grants_spy;
DROP ROLE reshard_grants_owner;
