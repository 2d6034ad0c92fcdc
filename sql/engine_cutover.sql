-- Phase cutover of the resharding engine (docs/resharding-engine.md,
-- "Phases"; step_cutover in src/resharding/cutover.c): under ACCESS EXCLUSIVE,
-- the last changes applied and the new layout put in the place of the old:
-- the new parent and the shadows take the names of the parent and of the
-- old partitions (the table's OID changes), the new partition is attached
-- (adding) or the removed one detached (removing), and the engine's tables,
-- triggers and helpers go.  Writers waiting for the lock: the isolation
-- spec reshard_engine_cutover.
\i test/engine_phase_helpers.sql

-- The relations of the table and of the resharding, with their OIDs.
CREATE FUNCTION pg_temp.relations() RETURNS TABLE (name text, oid oid) LANGUAGE sql AS $$
    SELECT c.relname::text, c.oid FROM pg_class c
    WHERE c.relnamespace = 'engine_phase'::regnamespace AND c.relkind IN ('r', 'p') AND c.relname <> 'mirror'
$$;
-- Each partition in the layout: its rows, and how many differ from the
-- rows of the mirror in its bucket.
CREATE FUNCTION pg_temp.partitions(OUT bucket int, OUT partition text, OUT rows bigint, OUT differences bigint) RETURNS SETOF record
LANGUAGE plpgsql AS $$
DECLARE
    buckets int := (SELECT count(*) FROM pg_inherits WHERE inhparent = 'engine_phase.ep'::regclass);
BEGIN
    FOR bucket, partition, rows IN SELECT * FROM pg_temp.layout() LOOP
        differences := pg_temp.differ(format('SELECT * FROM %s', partition),
                                      format('SELECT * FROM engine_phase.mirror WHERE jumpbackhash(id, %s) = %s', buckets, bucket));
        RETURN NEXT;
    END LOOP;
END
$$;

-- Adding a bucket.
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('cutover');
CREATE TEMP TABLE before AS SELECT * FROM pg_temp.relations();
-- A relation as it was named before, the OID in its name replaced by the
-- name of the relation it was then (and the hash after it left out).
CREATE FUNCTION pg_temp.was(relation oid) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(m[1] || '{' || (SELECT o.name FROM before o WHERE o.oid = m[2]::oid) || '}', b.name)
    FROM before b, regexp_match(b.name, '^(reshard_[a-z_]*_)([0-9]+)(_[0-9a-f]{16})?$') AS m WHERE b.oid = relation
$$;
CREATE TEMP TABLE state_before AS SELECT * FROM pg_temp.state();
SELECT * FROM pg_temp.partitions();
-- Writes since the verification: the cutover applies them.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 4);

-- One step: phase cutover (attempts within the budget: a lock that autovacuum
-- holds may fail one), then phase finish.
CALL reshard_step('engine_phase.ep');
SELECT s.phase, s.cutover_attempts > 0 AS cut_over_in_attempts,
       s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes) AS applied_as_written,
       s.parent <> b.parent AS parent_replaced, s.parent = 'engine_phase.ep'::regclass AS state_follows_parent
FROM pg_temp.state() s, state_before b;
-- The new layout: 4 buckets, each partition holding the mirror's rows of
-- its bucket; the table equals its mirror.
SELECT * FROM pg_temp.partitions();
SELECT pg_get_partkeydef('engine_phase.ep'::regclass) AS partition_key, pg_temp.differences() AS differences,
       (SELECT sum(misplaced_rows) FROM reshard_check('engine_phase.ep')) AS misplaced;
-- Which tables took which place: the new parent the table's (the table's
-- OID is the new parent's), each shadow its old partition's, the new
-- partition its own; the old parent and partitions renamed away
-- (reshard_old_ and their OID), the finish drops them.
SELECT pg_temp.was(b.oid) AS before, pg_temp.normalized(c.relname::text) AS now FROM before b LEFT JOIN pg_class c ON c.oid = b.oid ORDER BY pg_temp.was(b.oid) COLLATE "C";
-- Nothing else of the engine's left: the log, the triggers, the keys' indexes,
-- the CHECKs.
SELECT * FROM pg_temp.engine_objects();
-- Writes go to the new layout.
SELECT pg_temp.write_both() > 0 AS written;
SELECT pg_temp.differences() AS differences, (SELECT sum(misplaced_rows) FROM reshard_check('engine_phase.ep')) AS misplaced;

-- The routine of phase cutover refuses a NULL state and a state of another phase.
SELECT * FROM pg_temp.refusals(pg_temp.routine_of('cutover'), 'finish', 'verify');
CALL pg_temp.step_to('done');

-- Removing the bucket just added: the removed partition detached (its
-- rows, which the others now hold, are deleted by the finish).
CALL reshard_begin('engine_phase.ep', 'remove', 'engine_phase.ep_3');
CALL pg_temp.step_to('cutover');
TRUNCATE before;
INSERT INTO before SELECT * FROM pg_temp.relations();
CREATE TEMP TABLE rows_of_bucket_3 AS SELECT * FROM engine_phase.ep_3;
CALL reshard_step('engine_phase.ep');
SELECT phase, cutover_attempts > 0 AS cut_over_in_attempts FROM pg_temp.state();
SELECT * FROM pg_temp.partitions();
SELECT pg_get_partkeydef('engine_phase.ep'::regclass) AS partition_key, pg_temp.differences() AS differences,
       (SELECT sum(misplaced_rows) FROM reshard_check('engine_phase.ep')) AS misplaced;
SELECT pg_temp.was(b.oid) AS before, pg_temp.normalized(c.relname::text) AS now FROM before b LEFT JOIN pg_class c ON c.oid = b.oid ORDER BY pg_temp.was(b.oid) COLLATE "C";
SELECT relispartition AS attached, pg_temp.differ('SELECT * FROM engine_phase.ep_3', 'SELECT * FROM rows_of_bucket_3') AS rows_changed
FROM pg_class WHERE oid = 'engine_phase.ep_3'::regclass;
-- (the removed partition has the engine's guard until the finish empties
-- it: nothing else writes to it meanwhile)
SELECT * FROM pg_temp.engine_objects();
CALL pg_temp.step_to('done');
-- The finish drops the old parent and partitions, renamed away.
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.was(b.oid) AS gone FROM before b WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = b.oid) ORDER BY pg_temp.was(b.oid) COLLATE "C";

-- What the takeover cannot carry over, found as the cutover begins (before
-- its lock; here an index made on an old partition after the verification,
-- which the shadow lacks): the call that continues the resharding fails,
-- saying what, and undoes itself.
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('cutover');
CREATE INDEX ep_1_v ON engine_phase.ep_1 (v);
\set VERBOSITY terse
CALL reshard_add_partition('engine_phase.ep', 'engine_phase.ep_3');
\set VERBOSITY default
SELECT phase, error FROM pg_temp.state();
SELECT count(*) AS partitions, pg_temp.differences() AS differences FROM pg_inherits WHERE inhparent = 'engine_phase.ep'::regclass;
SELECT * FROM pg_temp.engine_objects();
DROP INDEX engine_phase.ep_1_v;

CALL pg_temp.engine_phase_drop();
