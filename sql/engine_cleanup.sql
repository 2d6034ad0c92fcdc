-- The cleanup records of the resharding engine (docs/resharding-engine.md,
-- "Cleanup records"; reshard_state_cleanup, src/resharding/cleanup.c): each object
-- a call makes here is recorded in the transaction that makes it (setup:
-- the shadows, the new parent, the change log and its sequence, with the
-- OID each name names, and whether it goes always or only on failure);
-- reshard_abort drops what the records name and deletes them; the
-- finish forgets every record, having dropped those that go always; the
-- records follow the state row to the new parent at the cutover.  No other
-- role may read or write them: not the table's owner, not a role with
-- every privilege on the table and BYPASSRLS; nor call the cleaner's drop.
\i test/engine_phase_helpers.sql

-- The records of ep's resharding: the object (its schema left out, names
-- normalized) and, of a constraint or trigger, its name, whether the
-- object's name still names the OID recorded, where, and the policy.
CREATE FUNCTION pg_temp.records(OUT ordinal int, OUT kind text, OUT object text, OUT member text, OUT same_oid boolean,
                                OUT server text, OUT policy text) RETURNS SETOF record LANGUAGE sql AS $$
    SELECT c.ordinal, c.kind, pg_temp.normalized(regexp_replace(c.object, '^engine_phase\.', '')),
           pg_temp.normalized(c.member), to_regclass(c.object) IS NOT DISTINCT FROM c.relation, c.server, c.policy
    FROM reshard_state_cleanup c JOIN reshard_state s ON s.parent = c.parent
    WHERE s.parent_name = 'engine_phase.ep' ORDER BY c.ordinal
$$;

-- Adding a bucket: nothing recorded by the plan (nothing is made on a
-- server); the setup's tables and sequence, and the guard on the new
-- partition (a table of the user's), once it is done.  (The new partition
-- without its primary key: the engine makes an index on its key.)
ALTER TABLE engine_phase.ep_3 DROP CONSTRAINT ep_3_pkey;
CALL reshard_begin('engine_phase.ep', 'add', 'engine_phase.ep_3');
SELECT phase FROM pg_temp.state();
SELECT * FROM pg_temp.records();
CALL pg_temp.step_to('capture');
SELECT * FROM pg_temp.records();
SELECT made IS NULL AS nothing_waiting FROM pg_temp.state();

-- Nobody else reads or writes them: the table's owner (who runs the
-- routines), nor a role with every privilege on the table and BYPASSRLS
-- (the guard refuses its writes, as reshard_state's), nor may either call
-- the cleaner's drop.
CREATE ROLE regress_cleanup_writer BYPASSRLS;
GRANT ALL ON reshard_state_cleanup TO regress_cleanup_writer;
SELECT 'engine_phase.ep'::regclass::oid AS ep, 'engine_phase.mirror'::regclass::oid AS mirror \gset
SET ROLE engine_phase_owner;
SELECT pg_temp.sqlstate_of('SELECT count(*) FROM reshard_state_cleanup') AS owner_reads;
SELECT pg_temp.sqlstate_of($$INSERT INTO reshard_state_cleanup VALUES ('engine_phase.ep'::regclass, 100, 'table',
                                'engine_phase.mirror', 'engine_phase.mirror'::regclass, NULL, NULL, 'always')$$) AS owner_inserts;
SELECT pg_temp.sqlstate_of('SELECT reshard_cleanup_drop(NULL::reshard_state, NULL::reshard_state_cleanup)') AS owner_drops;
RESET ROLE;
SET ROLE regress_cleanup_writer;
INSERT INTO reshard_state_cleanup VALUES (:ep, 100, 'table', 'engine_phase.mirror', :mirror, NULL, NULL, 'always');
UPDATE reshard_state_cleanup SET object = 'engine_phase.mirror' WHERE ordinal = 1;
DELETE FROM reshard_state_cleanup;
SELECT pg_temp.sqlstate_of('SELECT reshard_cleanup_drop(NULL::reshard_state, NULL::reshard_state_cleanup)') AS writer_drops;
RESET ROLE;
SELECT count(*) AS records FROM pg_temp.records();
DROP OWNED BY regress_cleanup_writer;
DROP ROLE regress_cleanup_writer;

-- What the routines record is checked: a kind or policy it does not know,
-- an object here that does not exist.
SELECT pg_temp.sqlstate_of($$SELECT reshard_cleanup_record(pg_temp.state(), 'schema', 'engine_phase', NULL, 'always')$$) AS unknown_kind;
SELECT pg_temp.sqlstate_of($$SELECT reshard_cleanup_record(pg_temp.state(), 'table', 'engine_phase.ep', NULL, 'sometimes')$$) AS unknown_policy;
SELECT pg_temp.sqlstate_of($$SELECT reshard_cleanup_record(pg_temp.state(), 'table', 'engine_phase.nothing', NULL, 'always')$$) AS missing;
SELECT pg_temp.sqlstate_of($$SELECT reshard_cleanup_record(pg_temp.state(), 'trigger', 'engine_phase.ep', NULL, 'always')$$) AS trigger_without_name,
       pg_temp.sqlstate_of($$SELECT reshard_cleanup_record(pg_temp.state(), 'table', 'engine_phase.ep', NULL, 'always', NULL, 'x')$$) AS table_with_member;

-- What is made on the new partition, a table of the user's, is recorded
-- too: the capture triggers on the old partitions (capture), the index on
-- the key of the new partition (once copied), and its CHECK (verified).
CALL pg_temp.step_to('cutover');
SELECT * FROM pg_temp.records() WHERE ordinal > 8;

-- Undone before its cutover: what the records name dropped (on the new
-- partition too), the records gone.
SELECT pg_temp.write_both() > 0 AS written;
CALL reshard_abort('engine_phase.ep');
SELECT phase FROM pg_temp.state();
SELECT count(*) AS records FROM pg_temp.records();
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.differences() AS differences;

-- Removing a bucket, to its end: at the cutover the records follow the
-- state row to the new parent, those of the shadows and the new parent
-- name other tables now (renamed into the old ones' places), the log is
-- gone, and the old parent, renamed away, is recorded (policy on_success:
-- the finish drops it); after the finish, no record is left, and nothing
-- of the engine's.
CALL reshard_begin('engine_phase.ep', 'remove', 'engine_phase.ep_2');
CALL pg_temp.step_to('finish');
SELECT * FROM pg_temp.records();
SELECT (SELECT parent FROM reshard_state_cleanup WHERE ordinal = 1) = 'engine_phase.ep'::regclass AS follow_the_new_parent;
CALL pg_temp.step_to('done');
SELECT count(*) AS records FROM reshard_state_cleanup;
SELECT * FROM pg_temp.engine_objects();
SELECT pg_temp.differences() AS differences;

CALL pg_temp.engine_phase_drop();
