-- Phase verify of the resharding engine (docs/resharding-engine.md,
-- "Phases"; step_verify in src/resharding/steps.c): the log applied as its
-- snapshot sees it, each table filled compared with the rows of the old
-- partitions in its bucket (count and hashes of the row images), then given
-- a CHECK that implies its new bound; each shadow then attached to the new
-- parent and its CHECK dropped (the new partition keeps its CHECK until the
-- cutover attaches it); a difference fails (data_corrupted) and changes
-- nothing.
\i test/engine_phase_helpers.sql

CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('verify');
CREATE TEMP TABLE objects_before AS SELECT * FROM pg_temp.engine_objects() AS o(object);
CREATE TEMP TABLE state_before AS SELECT * FROM pg_temp.state();
SELECT phase, rows_verified FROM state_before;

-- Writes since the catch-up: the verification applies them first.
TRUNCATE pg_temp.writes;
SELECT sum(pg_temp.write_both()) > 0 AS written FROM generate_series(1, 4);

-- One step: phase verify, then phase cutover.
CALL reshard_step('engine_phase.ep');
SELECT s.phase,
       s.changes_applied - b.changes_applied = (SELECT sum(inserted + updated + deleted) FROM pg_temp.writes) AS applied_as_written,
       pg_temp.rows_in(s.log) AS entries_left,
       s.rows_verified = (SELECT count(*) FROM engine_phase.ep) AS verified_all_rows,
       s.rows_verified = (SELECT count(*) FROM engine_phase.mirror) AS verified_as_mirror,
       s.rows_copied = b.rows_copied AS nothing_copied, s.cutover_attempts
FROM pg_temp.state() s, state_before b;
-- What it made: a CHECK on the new partition that implies its bound in
-- the new layout (4 buckets, its own; the new parent's OID as N),
-- validated; the shadows, attached with that bound, have none left.
SELECT made FROM (SELECT o.object FROM pg_temp.engine_objects() AS o(object) EXCEPT SELECT object FROM objects_before) AS x(made)
ORDER BY made COLLATE "C";
SELECT object AS gone FROM objects_before EXCEPT SELECT o.object FROM pg_temp.engine_objects() AS o(object);
SELECT pg_temp.normalized(c.relname::text) AS filled, k.convalidated AS validated,
       regexp_replace(pg_get_constraintdef(k.oid), '[0-9]{4,}', 'N') AS definition
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
WHERE k.contype = 'c' AND k.conrelid IN (SELECT unnest((pg_temp.state()).shadows)) ORDER BY 1;
SELECT pg_temp.normalized(c.relname::text) AS attached, pg_get_expr(c.relpartbound, c.oid) AS bound
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = (pg_temp.state()).new_parent ORDER BY 1;
SELECT pg_temp.differences() AS differences;

-- The routine of phase verify refuses a NULL state and a state of another phase.
SELECT * FROM pg_temp.refusals(pg_temp.routine_of('verify'), 'cutover', 'catch up');
CALL reshard_abort('engine_phase.ep');

-- A copy changed behind the guard (a superuser disabling the triggers of a
-- shadow): the verification fails with data_corrupted (XX001); nothing is
-- made, the resharding stays in phase verify, and is undone.
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
CALL pg_temp.step_to('verify');
TRUNCATE objects_before;
INSERT INTO objects_before SELECT * FROM pg_temp.engine_objects();
DO $$
DECLARE
    shadow regclass := (pg_temp.state()).shadows[2];
BEGIN
    EXECUTE format('ALTER TABLE %s DISABLE TRIGGER ALL', shadow);
    EXECUTE format('UPDATE %1$s SET v = v || %2$L WHERE id = (SELECT min(id) FROM %1$s)', shadow, ' changed');
    EXECUTE format('ALTER TABLE %s ENABLE TRIGGER ALL', shadow);
END
$$;
\set VERBOSITY sqlstate
CALL reshard_step('engine_phase.ep');
\set VERBOSITY default
SELECT phase, rows_verified FROM pg_temp.state();
SELECT (SELECT count(*) FROM (SELECT * FROM pg_temp.engine_objects() EXCEPT SELECT * FROM objects_before) AS x) AS made,
       (SELECT count(*) FROM (SELECT * FROM objects_before EXCEPT SELECT * FROM pg_temp.engine_objects()) AS x) AS gone;
CALL reshard_abort('engine_phase.ep');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.differences() AS differences;

CALL pg_temp.engine_phase_drop();
