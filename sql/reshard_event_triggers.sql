-- Event triggers of the DBA's fire for the DDL the resharding engine runs
-- as the table's owner.  One that refuses DROP TABLE (a guard against
-- accidents) fails the call at its cutover, where the change log is
-- dropped, with the trigger's own error, and then fails the call's undo
-- too: the resharding is left interrupted in phase undo.  The table is
-- intact and writable all along.  reshard_abort fails the same way.  Once
-- the trigger is disabled, the same call again undoes the rest and
-- reshards the table (before, it only finished the undo and returned a
-- count of moved rows as if it had resharded).  One that refuses CREATE
-- TABLE fails the call in its setup, and nothing of the engine is left.
-- (The grants of an event trigger: reshard_privileges.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS subsetting;
-- (the engine's NOTICEs are part of what is checked)
SET client_min_messages = notice;
\set VERBOSITY terse
CREATE TABLE et (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash4_int8_ops);
SELECT format('CREATE TABLE et_%s PARTITION OF et FOR VALUES WITH (MODULUS 4, REMAINDER %s)', i, i)
FROM generate_series(0, 3) AS i \gexec
INSERT INTO et SELECT i, md5(i::text) FROM generate_series(1, 10000) AS i;
CREATE TABLE et_4 (LIKE et INCLUDING ALL);
CREATE TABLE et_mirror AS TABLE et;
-- What differs between the table and its mirror (rows of one not in the
-- other, either way), and what of the engine is left.
CREATE FUNCTION et_differs() RETURNS bigint LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM (TABLE et EXCEPT ALL TABLE et_mirror) AS a)
         + (SELECT count(*) FROM (TABLE et_mirror EXCEPT ALL TABLE et) AS b)
$$;
CREATE FUNCTION et_leftovers() RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(x, ', ' ORDER BY x), 'none') FROM (
        SELECT regexp_replace(relname, '_[0-9]+_[0-9a-f]{16}$', '_N') AS x FROM pg_class
        WHERE relname LIKE 'reshard\_%' AND relname NOT LIKE 'reshard\_state%' AND relname <> 'reshard_progress'
        UNION ALL
        SELECT regexp_replace(tgname, '_[0-9]+_[0-9a-f]{16}$', '_N') FROM pg_trigger WHERE tgname LIKE 'reshard\_%') AS t
$$;

-- The guards: a command refused.
CREATE FUNCTION et_refuse() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is not allowed here', tg_tag;
END
$$;
-- A guard against dropped tables.
CREATE EVENT TRIGGER et_no_drop ON ddl_command_start WHEN TAG IN ('DROP TABLE') EXECUTE FUNCTION et_refuse();
CALL reshard_add_partition('et', 'et_4');
SELECT phase, interrupted, error FROM reshard_progress;
-- The table: its rows, its layout, and writes.
SELECT et_differs() AS differs, (SELECT DISTINCT buckets FROM sharding_layout('et')) AS buckets;
INSERT INTO et VALUES (10001, 'written after');
INSERT INTO et_mirror VALUES (10001, 'written after');
UPDATE et SET v = 'updated' WHERE id = 17;
UPDATE et_mirror SET v = 'updated' WHERE id = 17;
DELETE FROM et WHERE id = 18;
DELETE FROM et_mirror WHERE id = 18;
SELECT et_differs() AS differs;
CALL reshard_abort('et');
SELECT phase, interrupted FROM reshard_progress;

-- The guard disabled: the same call undoes the rest and reshards.
ALTER EVENT TRIGGER et_no_drop DISABLE;
CALL reshard_add_partition('et', 'et_4');
SELECT phase, interrupted, error FROM reshard_progress;
SELECT et_differs() AS differs, (SELECT DISTINCT buckets FROM sharding_layout('et')) AS buckets,
       (SELECT sum(misplaced_rows) FROM reshard_check('et')) AS misplaced, et_leftovers() AS leftovers;
DROP EVENT TRIGGER et_no_drop;

-- A guard against new tables: the call fails in its setup, with the
-- trigger's error, and leaves nothing.
CREATE TABLE et_5 (LIKE et INCLUDING ALL);
CREATE EVENT TRIGGER et_no_create ON ddl_command_start WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION et_refuse();
CALL reshard_add_partition('et', 'et_5');
SELECT phase, interrupted FROM reshard_progress;
SELECT et_differs() AS differs, (SELECT DISTINCT buckets FROM sharding_layout('et')) AS buckets,
       et_leftovers() AS leftovers;
DROP EVENT TRIGGER et_no_create;
DROP FUNCTION et_refuse();

DROP TABLE et, et_5, et_mirror;
DROP FUNCTION et_differs(), et_leftovers();
DELETE FROM reshard_state;
